#!/usr/bin/env python3
"""peers.py: the peers a user would pick instead of kiln, on the same shapes.

Runs one of kiln's benches (its BENCH lines), then the same ops, shapes and
dtype through PyTorch eager and torch.compile in the same process, and prints
GB/s and kiln/peer ratios. Bytes are counted as the kiln bench counts them;
each figure is the median of samples of 10 back-to-back calls, as in kiln's.

    python3 bench/peers.py --bench path/to/bench_elementwise
    python3 bench/peers.py --bench path/to/bench_norm [--only softmax]
    python3 bench/peers.py --bench path/to/bench_attention --iters 10
    python3 bench/peers.py --bench path/to/bench_attention --iters 10 --only prefill -- --seq 1024 --hdim 128
    python3 bench/peers.py --bench path/to/bench_linear --iters 10

bench_linear's FP8 lines (dtype=e4m3) get torch._scaled_mm, per-tensor and
rowwise, plain and with kiln's bias + gelu_tanh epilogue; its lines of other
epilogues (epilogue=residual, f32_out, residual_f32) get no PyTorch peer:
bench_linear sets cuBLASLt beside them. bench_attention's
varlen lines get SDPA on nested (jagged) tensors of the same lengths, the
form PyTorch takes variable lengths in; its FP8 lines (dtype=e4m3), which
PyTorch has no FP8 attention to set beside, get kiln's own bf16 figure of the
same run and SDPA's cuDNN backend in bf16 for context. Its backward lines
(op=attention_bwd; `--only bwd` runs these alone) get SDPA's backward
through the flash and cuDNN backends on the same shapes: the forward run once
under the backend, then autograd's backward of it timed (dq, dk, dv for a
random dout), FLOPs counted as kiln counts them (2.5 × the forward's); the
table sets kiln's default and deterministic figures beside them. Arguments
after `--` go to the bench.

    python3 bench/peers.py --bench path/to/bench_attention --iters 10 --only bwd

--lib path/to/libkiln.so (bazel-bin/runtime/shared): bench_attention's bf16
prefill lines also time kiln's selected variant (called through ctypes on
the same tensors) and SDPA's cuDNN backend in turn, a sample of each back
to back, and print the median of the pairs' ratios (PEER ...
peer=sdpa_cudnn_in_turn in_turn=): the ratio at the clock both meet, where
each figure timed alone runs at the clock the power management gives it.
kiln's output is checked against cuDNN's first.
"""
import argparse
import os
import re
import subprocess
import sys

import torch
import torch.nn.functional as F

BATCH = 10  # calls per timed sample, back to back, as in kiln's bench


def gelu_tanh(u):
    return F.gelu(u, approximate="tanh")


# What autograd runs for the backward passes: aten's fused backward kernels.
def _bwd_bias(t):
    g = torch.ops.aten.gelu_backward(t["dy"], t["x"] + t["b"], approximate="tanh")
    return (g, g.sum(0))


# label -> (n-element tensors read + written, bias-sized tensors moved, function)
ELEMENTWISE = {
    "bias+gelu_tanh": (2, 1, lambda t: gelu_tanh(t["x"] + t["b"])),
    "bias+gelu_erf": (2, 1, lambda t: F.gelu(t["x"] + t["b"])),
    "bias+silu": (2, 1, lambda t: F.silu(t["x"] + t["b"])),
    "bias+relu": (2, 1, lambda t: F.relu(t["x"] + t["b"])),
    "swiglu": (3, 0, lambda t: F.silu(t["g"]) * t["u"]),
    "geglu_tanh": (3, 0, lambda t: gelu_tanh(t["g"]) * t["u"]),
    "bias+gelu_tanh bwd+dbias": (3, 2, _bwd_bias),
    "swiglu bwd": (5, 0, lambda t: (torch.ops.aten.silu_backward(t["dy"] * t["u"], t["g"]),
                                    t["dy"] * F.silu(t["g"]))),
}


def _add_norm(norm):
    def fn(t):
        s = t["x"] + t["r"]
        return s, norm(s, t)
    return fn


def _ln(s, t):
    return F.layer_norm(s, (s.shape[-1],), t["w"], t["b"], 1e-5)


def _rms(s, t):
    return F.rms_norm(s, (s.shape[-1],), t["w"], 1e-5)


def _fp8(y):
    # kiln's e4m3 output: y·64, saturated to ±448.
    return (y * 64.0).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)


def _ln_bwd(t):
    # What autograd runs for F.layer_norm's backward.
    return torch.ops.aten.native_layer_norm_backward(
        t["dy"], t["x"], (t["x"].shape[-1],), t["mean"], t["rstd"], t["w"], t["b"], [True, True, True])


def _rms_bwd(t):
    # RMSNorm's backward written out (PyTorch has no fused kernel for it).
    x, dy, rstd = t["x"].float(), t["dy"].float(), t["rstd"]
    xh = x * rstd
    g = dy * t["w"].float()
    dx = rstd * (g - xh * (g * xh).mean(-1, keepdim=True))
    return dx.to(t["x"].dtype), (dy * xh).sum(0).to(t["x"].dtype)


# label -> (row tensors read + written, in bf16 elements: an FP8 one counts
# half; hidden-sized tensors read or written, function)
NORM = {
    "layernorm": (2, 2, lambda t: _ln(t["x"], t)),
    "rmsnorm": (2, 1, lambda t: _rms(t["x"], t)),
    "add+layernorm": (4, 2, _add_norm(_ln)),
    "add+rmsnorm": (4, 1, _add_norm(_rms)),
    "rmsnorm->fp8": (1.5, 1, lambda t: _fp8(_rms(t["x"], t))),
    "add+rmsnorm->fp8": (3.5, 1, lambda t: (lambda s: (s, _fp8(_rms(s, t))))(t["x"] + t["r"])),
    "softmax": (2, 0, lambda t: torch.softmax(t["x"], -1)),
    "log_softmax": (2, 0, lambda t: torch.log_softmax(t["x"], -1)),
    "layernorm bwd": (3, 3, _ln_bwd),
    "rmsnorm bwd": (3, 2, _rms_bwd),
}


def sample_ms(fn, tensors):
    """One sample: BATCH calls back to back, ms a call."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(BATCH):
        fn(tensors)
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) / BATCH


def bench(fn, tensors, iters):
    for _ in range(5):
        fn(tensors)
    times = sorted(sample_ms(fn, tensors) for _ in range(iters))
    return times[len(times) // 2]


def in_turn(fa, fb, iters):
    """The median over iters pairs of sample(fb) / sample(fa), taken back to
    back, A first in even pairs and B first in odd ones (bench_util's
    bench_time_pair_ms): > 1 where A is faster."""
    for _ in range(5):
        fa(None)
        fb(None)
    ratios = []
    for i in range(iters):
        if i % 2 == 0:
            a = sample_ms(fa, None)
            b = sample_ms(fb, None)
        else:
            b = sample_ms(fb, None)
            a = sample_ms(fa, None)
        ratios.append(b / a)
    ratios.sort()
    return ratios[len(ratios) // 2]


def kiln_attention(lib_path):
    """kiln_attention_fwd from libkiln.so through ctypes: returns prepare(q,
    k, v, o, causal), whose result run() calls kiln's selected variant on
    those torch tensors, (batch, heads, seq, head dim) views with a unit last
    stride, on torch's current stream (the params built once, so that a call
    costs the host one ctypes call) with the workspace the call asks for,
    and raises on a status other than success."""
    import ctypes as C

    class Params(C.Structure):  # kiln.h's kiln_attention_params, field for field
        _fields_ = [("batch", C.c_int), ("seq_q", C.c_int), ("seq_k", C.c_int), ("heads_q", C.c_int),
                    ("heads_kv", C.c_int), ("head_dim", C.c_int), ("q", C.c_void_p), ("k", C.c_void_p),
                    ("v", C.c_void_p), ("o", C.c_void_p), ("q_stride", C.c_int64 * 3),
                    ("k_stride", C.c_int64 * 3), ("v_stride", C.c_int64 * 3), ("o_stride", C.c_int64 * 3),
                    ("scale", C.c_float), ("causal", C.c_int), ("window_left", C.c_int), ("window_right", C.c_int),
                    ("cu_seqlens_q", C.c_void_p), ("cu_seqlens_k", C.c_void_p), ("lse", C.c_void_p),
                    ("workspace", C.c_void_p), ("workspace_bytes", C.c_size_t), ("o_dtype", C.c_int),
                    ("q_descale", C.c_void_p), ("k_descale", C.c_void_p), ("v_descale", C.c_void_p),
                    ("descale_per_head", C.c_int)]

    lib = C.CDLL(lib_path)
    lib.kiln_attention_fwd.argtypes = [C.c_int, C.POINTER(Params), C.c_void_p]
    lib.kiln_attention_fwd.restype = C.c_int
    lib.kiln_attention_fwd_workspace.argtypes = [C.c_int, C.POINTER(Params), C.POINTER(C.c_size_t)]
    lib.kiln_attention_fwd_workspace.restype = C.c_int
    lib.kiln_last_error.restype = C.c_char_p
    dtypes = {torch.float16: 1, torch.bfloat16: 2}  # kiln_dtype

    def prepare(q, k, v, o, causal):
        def strides(t):  # kiln's order: batch, seq, head
            return (C.c_int64 * 3)(t.stride(0), t.stride(2), t.stride(1))
        b, h, s, d = q.shape
        p = Params(batch=b, seq_q=s, seq_k=k.shape[2], heads_q=h, heads_kv=k.shape[1], head_dim=d,
                   q=q.data_ptr(), k=k.data_ptr(), v=v.data_ptr(), o=o.data_ptr(), q_stride=strides(q),
                   k_stride=strides(k), v_stride=strides(v), o_stride=strides(o), scale=d ** -0.5,
                   causal=int(causal), window_left=-1, window_right=-1)
        need = C.c_size_t(0)  # the workspace the call asks for (a causal call's tile counter), as bench_attention gives it
        if lib.kiln_attention_fwd_workspace(dtypes[q.dtype], C.byref(p), C.byref(need)) != 0:
            raise RuntimeError(f"kiln_attention_fwd_workspace: {lib.kiln_last_error().decode()}")
        ws = torch.empty(need.value, dtype=torch.uint8, device="cuda") if need.value else None
        if ws is not None:
            p.workspace, p.workspace_bytes = ws.data_ptr(), need.value
        args = (dtypes[q.dtype], C.byref(p), C.c_void_p(torch.cuda.current_stream().cuda_stream))

        def run(ws=ws):  # (ws kept alive with run)
            st = lib.kiln_attention_fwd(*args)
            if st != 0:
                raise RuntimeError(f"kiln_attention_fwd: status {st}: {lib.kiln_last_error().decode()}")

        return run

    return prepare


def rand(shape, gen, lo, hi, dtype):
    return (torch.rand(shape, device="cuda", dtype=torch.float32, generator=gen) * (hi - lo) + lo).to(dtype)


def attention_peers(out, iters, lib=None):
    """SDPA's flash, cuDNN and memory-efficient backends on kiln's shapes;
    with lib (kiln_attention's prepare), the bf16 prefill lines also in turn
    with cuDNN."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    if any(l.startswith("BENCH op=attention") and " dtype=e4m3 " not in l and not l.startswith("BENCH op=attention_bwd")
           for l in out.splitlines()):
        print(f"\n{'mask':8s} {'hdim':>5s} {'kiln':>8s} " + " ".join(f"{b:>10s}" for b in backends) + "   (TFLOP/s)")
    decode_seen = set()
    prefill = {}  # (batch, heads, seq, hdim, causal) -> SDPA's TFLOP/s per backend, of the bf16 lines
    fp8, bwd = [], []
    for line in out.splitlines():
        if line.startswith("BENCH op=attention_bwd"):
            bwd.append(line)
            continue
        if line.startswith("BENCH op=attention_decode"):
            f = dict(kv.split("=", 1) for kv in line.split()[1:])
            b, h, s, d = int(f["batch"]), int(f["heads"]), int(f["seq_k"]), int(f["hdim"])
            if (b, h, s, d) in decode_seen:
                continue
            decode_seen.add((b, h, s, d))
            dt = torch.bfloat16 if f["dtype"] == "bf16" else torch.float16
            q = torch.rand(b, h, 1, d, device="cuda", dtype=dt).sub_(0.5)
            k, v = (torch.rand(b, h, s, d, device="cuda", dtype=dt).sub_(0.5) for _ in range(2))
            moved = 2.0 * b * h * s * d * 2
            res = {}
            for name, be in backends.items():
                try:
                    with sdpa_kernel([be]):
                        ms = bench(lambda t: F.scaled_dot_product_attention(q, k, v), None, iters)
                    res[name] = moved / (ms * 1e-3) / 1e9
                except RuntimeError:
                    res[name] = float("nan")
                print(f"PEER op=attention_decode batch={b} heads={h} seq_k={s} hdim={d} peer=sdpa_{name} "
                      f"GBps={res[name]:.1f}")
            print(f"{'decode':8s} {d:5d} {float(f['GBps']):8.1f} " + " ".join(f"{res[n]:10.1f}" for n in backends) +
                  f"   (GB/s, batch {b}, kiln workspace {f['workspace']} B)")
            del q, k, v
            torch.cuda.empty_cache()
            continue
        if line.startswith("BENCH op=attention_varlen"):
            varlen_peers(line, backends, iters)
            continue
        if line.startswith("BENCH op=attention ") and " dtype=e4m3 " in line:
            fp8.append(line)
            continue
        if not (line.startswith("BENCH op=attention") and "selected=1" in line):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        b, h, s, d = int(f["batch"]), int(f["heads"]), int(f["seq"]), int(f["hdim"])
        causal = f["mask"] == "causal"
        dt = torch.bfloat16 if f["dtype"] == "bf16" else torch.float16
        q, k, v = (torch.rand(b, s, h, d, device="cuda", dtype=dt).sub_(0.5).transpose(1, 2) for _ in range(3))
        flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
        res = sdpa_tflops(q, k, v, causal, flops, backends, iters, f"op=attention mask={f['mask']} hdim={d}")
        if f["dtype"] == "bf16":
            prefill[(b, h, s, d, causal)] = res
            if lib:
                cudnn_in_turn(lib, q, k, v, causal, iters, f"op=attention mask={f['mask']} hdim={d}")
        print(f"{f['mask']:8s} {d:5d} {float(f['TFLOPs']):8.1f} " + " ".join(f"{res[n]:10.1f}" for n in backends))
    if fp8:
        fp8_attention_peers(fp8, prefill, iters)
    if bwd:
        bwd_attention_peers(bwd, iters)


def bwd_attention_peers(lines, iters):
    """SDPA's backward (flash and cuDNN backends) on kiln's backward shapes:
    BSHD tensors seen as (batch, heads, seq, hdim), values uniform in
    [-0.5, 0.5), the forward run once under the backend, then
    torch.autograd.grad of its output for a random dout timed (the kernels
    autograd runs for that backend's backward: its dO·O row sums, the main
    kernel, any dQ conversion), nan where the backend has no kernel for the
    shape. One row per shape: kiln default and deterministic beside them."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    rows = {}  # (dtype, batch, heads, seq, hdim, mask) -> {"kiln": TFLOP/s, "kiln_det": TFLOP/s}
    for line in lines:
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        key = (f["dtype"], int(f["batch"]), int(f["heads"]), int(f["seq"]), int(f["hdim"]), f["mask"])
        rows.setdefault(key, {})["kiln_det" if f["deterministic"] == "1" else "kiln"] = float(f["TFLOPs"])
    print(f"\n{'mask':8s} {'hdim':>5s} {'kiln':>8s} {'kiln det':>9s} " + " ".join(f"{b:>8s}" for b in backends) +
          " " + " ".join(f"{'kiln/' + b:>11s}" for b in backends) + "   (TFLOP/s, backward: dq, dk, dv)")
    for (dtype, b, h, s, d, mask), kiln in rows.items():
        causal = mask == "causal"
        dt = torch.bfloat16 if dtype == "bf16" else torch.float16
        q, k, v = (torch.rand(b, s, h, d, device="cuda", dtype=dt).sub_(0.5).transpose(1, 2).requires_grad_()
                   for _ in range(3))
        dout = torch.rand(b, s, h, d, device="cuda", dtype=dt).sub_(0.5).transpose(1, 2)
        flops = 2.5 * 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
        res = {}
        for name, be in backends.items():
            try:
                with sdpa_kernel([be]):
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    ms = bench(lambda t: torch.autograd.grad(o, (q, k, v), dout, retain_graph=True), None, iters)
                res[name] = flops / (ms * 1e-3) / 1e12
            except (RuntimeError, NotImplementedError) as e:  # no kernel of this backend for the shape
                print(f"# sdpa_{name} backward {mask} hdim {d}: {str(e).splitlines()[0][:160]}")
                res[name] = float("nan")
            o = None
            print(f"PEER op=attention_bwd mask={mask} hdim={d} dtype={dtype} batch={b} heads={h} seq={s} "
                  f"peer=sdpa_{name} TFLOPs={res[name]:.1f}")
        kn, kd = kiln.get("kiln", float("nan")), kiln.get("kiln_det", float("nan"))
        print(f"{mask:8s} {d:5d} {kn:8.1f} {kd:9.1f} " + " ".join(f"{res[n]:8.1f}" for n in backends) + " " +
              " ".join(f"{kn / res[n]:11.2f}" for n in backends))
        del q, k, v, dout
        torch.cuda.empty_cache()
        sys.stdout.flush()


def fp8_attention_peers(lines, prefill, iters):
    """kiln's e4m3 attention lines (e4m3 Q, K, V; bf16 O). PyTorch has no FP8
    attention (FA3's FP8 path is not in it), so the peer is kiln's own bf16
    call of the same run (the line's bf16_TFLOPs; "in turn": the line's
    in_turn_ratio, the two timed in alternation at a shared clock), with SDPA's cuDNN backend
    in bf16 on the same shape for context: the bf16 lines' figure where they
    measured that shape, else measured here."""
    from torch.nn.attention import SDPBackend
    print(f"\n{'mask':8s} {'hdim':>5s} {'e4m3':>8s} {'bf16':>8s} {'e4m3/bf16':>10s} {'in turn':>8s} {'cudnn bf16':>11s} "
          f"{'e4m3/cudnn':>11s}   (TFLOP/s; kiln e4m3 -> bf16 O beside kiln bf16 and SDPA cuDNN bf16)")
    for line in lines:
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        b, h, s, d = int(f["batch"]), int(f["heads"]), int(f["seq"]), int(f["hdim"])
        causal = f["mask"] == "causal"
        key = (b, h, s, d, causal)
        if key not in prefill:
            q, k, v = (torch.rand(b, s, h, d, device="cuda", dtype=torch.bfloat16).sub_(0.5).transpose(1, 2)
                       for _ in range(3))
            flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
            prefill[key] = sdpa_tflops(q, k, v, causal, flops, {"cudnn": SDPBackend.CUDNN_ATTENTION}, iters,
                                       f"op=attention mask={f['mask']} hdim={d}")
            del q, k, v
            torch.cuda.empty_cache()
        kiln, kiln16, cudnn = float(f["TFLOPs"]), float(f["bf16_TFLOPs"]), prefill[key]["cudnn"]
        print(f"{f['mask']:8s} {d:5d} {kiln:8.1f} {kiln16:8.1f} {kiln / kiln16:10.2f} "
              f"{float(f.get('in_turn_ratio', 'nan')):8.2f} {cudnn:11.1f} "
              f"{kiln / cudnn:11.2f}")
        sys.stdout.flush()


def cudnn_in_turn(lib, q, k, v, causal, iters, key):
    """kiln (lib: kiln_attention's prepare) and SDPA's cuDNN backend on q, k,
    v timed in turn: a PEER line with `key`, the median ratio cuDNN's time /
    kiln's (in_turn=), and kiln's output's error against cuDNN's (rel_err=;
    the ratio is nan where that passes 2e-2, or where either fails)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    o = torch.empty(q.shape[0], q.shape[2], q.shape[1], q.shape[3], device="cuda", dtype=q.dtype).transpose(1, 2)
    ratio, err = float("nan"), float("nan")
    try:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal).float()
            run = lib(q, k, v, o, causal)
            run()
            err = ((o.float() - ref).norm() / ref.norm()).item()
            if err <= 2e-2:
                ratio = in_turn(lambda _: run(), lambda _: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                iters)
    except (RuntimeError, NotImplementedError) as e:
        print(f"# in turn with cuDNN, {key}: {str(e).splitlines()[0][:160]}")
    print(f"PEER {key} peer=sdpa_cudnn_in_turn in_turn={ratio:.3f} rel_err={err:.2e}")


def sdpa_tflops(q, k, v, causal, flops, backends, iters, key):
    """TFLOP/s of SDPA on q, k, v through each backend (nan where it has no
    kernel for them), each printed as a PEER line with `key`."""
    from torch.nn.attention import sdpa_kernel
    res = {}
    for name, be in backends.items():
        try:
            with sdpa_kernel([be]):
                ms = bench(lambda t: F.scaled_dot_product_attention(q, k, v, is_causal=causal), None, iters)
            res[name] = flops / (ms * 1e-3) / 1e12
        except (RuntimeError, NotImplementedError):
            res[name] = float("nan")
        print(f"PEER {key} peer=sdpa_{name} TFLOPs={res[name]:.1f}")
    return res


def varlen_peers(line, backends, iters):
    """SDPA on nested (jagged) tensors of the varlen line's lengths."""
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    lens = [int(x) for x in f["lens"].split(",")]
    h, d, causal = int(f["heads"]), int(f["hdim"]), f["mask"] == "causal"
    dt = torch.bfloat16 if f["dtype"] == "bf16" else torch.float16
    flops = sum(4.0 * h * s * s * d * (0.5 if causal else 1.0) for s in lens)
    q, k, v = (torch.nested.nested_tensor([torch.rand(s, h, d, device="cuda", dtype=dt).sub_(0.5) for s in lens],
                                          layout=torch.jagged).transpose(1, 2) for _ in range(3))
    res = sdpa_tflops(q, k, v, causal, flops, backends, iters,
                      f"op=attention_varlen mask={f['mask']} hdim={d} lens={f['lens']}")
    print(f"{f['mask']:8s} {d:5d} {float(f['TFLOPs']):8.1f} " + " ".join(f"{res[n]:10.1f}" for n in backends) +
          f"   (varlen {f['lens']})")


def linear_peers(out, iters):
    """PyTorch eager and torch.compile on kiln's linear shapes (bf16, bias)."""
    print(f"\n{'m x n x k':22s} {'epilogue':10s} {'kiln':>8s} {'eager':>8s} {'compile':>8s} {'cuBLASLt+':>10s}"
          "   (TFLOP/s)")
    for line in out.splitlines():
        if not line.startswith("BENCH op=linear") and not line.startswith("BENCH op=gated_linear"):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        if f["dtype"] in ("e4m3", "e5m2"):
            continue  # fp8_linear_peers
        if "epilogue" in f:
            continue  # the other epilogues' lines: their peer is cuBLASLt, in bench_linear's own process
        m, n, k = int(f["m"]), int(f["n"]), int(f["k"])
        gated = f["op"] == "gated_linear"
        dt = torch.bfloat16 if f["dtype"] == "bf16" else torch.float16
        gen = torch.Generator(device="cuda").manual_seed(0)
        t = {"x": rand((m, k), gen, -1, 1, dt), "w": rand((n, k), gen, -1, 1, dt), "b": rand((n,), gen, -1, 1, dt)}
        if gated:
            t["wu"], t["bu"] = rand((n, k), gen, -1, 1, dt), rand((n,), gen, -1, 1, dt)

            def fn(t):
                return F.silu(F.linear(t["x"], t["w"], t["b"])) * F.linear(t["x"], t["wu"], t["bu"])
        else:
            def fn(t):
                return F.gelu(F.linear(t["x"], t["w"], t["b"]), approximate="tanh")
        flops = 2.0 * m * n * k * (2 if gated else 1)
        res = {}
        for mode in ("eager", "compile"):
            g = fn if mode == "eager" else torch.compile(fn)
            res[mode] = flops / (bench(g, t, iters) * 1e-3) / 1e12
            print(f"PEER op={f['op']} m={m} n={n} k={k} peer=torch_{mode} TFLOPs={res[mode]:.1f}")
        print(f"{m}x{n}x{k:<14} {f['act']:10s} {float(f['TFLOPs']):8.1f} {res['eager']:8.1f} {res['compile']:8.1f} "
              f"{float(f['cublaslt_epilogue_TFLOPs']):10.1f}")
        del t
        torch.cuda.empty_cache()
        sys.stdout.flush()


def fp8_linear_peers(out, iters):
    """torch._scaled_mm on kiln's FP8 linear shapes: e4m3 X [m][k] and W [n][k]
    (W.t(), column-major, as _scaled_mm wants its second operand), bf16 out,
    fp32 scales: per tensor (scalars), rowwise (scale_a [m, 1], scale_b
    [1, n]) or in blocks (scale_a [m, k/128] m-major as torch's 1 x 128 mode
    takes it, scale_b [k/128, n/128] for 128 x 128; a PyTorch without that
    mode gives nan, and bench_linear's cuBLASLt column is the peer); use_fast_accum
    off (it promotes, as kiln does). Plain, and with
    kiln's epilogue: bias (bf16, inside _scaled_mm) then gelu_tanh (eager: a
    kernel of its own; compile: what Inductor makes of it). kiln's plain
    lines (act=none: no bias either) get the plain peer alone, the same work."""
    lines = [l for l in out.splitlines()
             if l.startswith("BENCH op=linear") and " dtype=e4m3 " in l and " epilogue=" not in l]
    if not lines:
        return
    print(f"\n{'m x n x k':22s} {'scaling':8s} {'kiln':>8s} {'_scaled_mm':>11s} {'+bias+gelu':>11s} {'compile':>8s} "
          f"{'cuBLASLt+':>10s} {'kiln/mm':>8s} {'kiln/+':>7s}   (TFLOP/s; FP8 e4m3 -> bf16)")
    for line in lines:
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        m, n, k, mode = int(f["m"]), int(f["n"]), int(f["k"]), f["scaling"]
        gen = torch.Generator(device="cuda").manual_seed(0)
        e4m3 = torch.float8_e4m3fn
        t = {"x": rand((m, k), gen, -448, 448, torch.float32).to(e4m3),
             "w": rand((n, k), gen, -448, 448, torch.float32).to(e4m3),
             "b": rand((n,), gen, -1, 1, torch.bfloat16)}
        if mode == "rowwise":
            t["sa"] = rand((m, 1), gen, 1 / 448, 1.5 / 448, torch.float32)
            t["sb"] = rand((1, n), gen, 1 / 448, 1.5 / 448, torch.float32)
        elif mode == "block":
            t["sa"] = rand((k // 128, m), gen, 1 / 448, 1.5 / 448, torch.float32).t()
            t["sb"] = rand((n // 128, k // 128), gen, 1 / 448, 1.5 / 448, torch.float32).t()
        else:
            t["sa"] = torch.tensor(1 / 448, device="cuda", dtype=torch.float32)
            t["sb"] = torch.tensor(1 / 448, device="cuda", dtype=torch.float32)

        def plain(t):
            return torch._scaled_mm(t["x"], t["w"].t(), scale_a=t["sa"], scale_b=t["sb"], out_dtype=torch.bfloat16)

        def epilogue(t):
            y = torch._scaled_mm(t["x"], t["w"].t(), scale_a=t["sa"], scale_b=t["sb"], bias=t["b"],
                                 out_dtype=torch.bfloat16)
            return F.gelu(y, approximate="tanh")

        flops = 2.0 * m * n * k
        res = {}
        for name, fn in (("scaled_mm", plain), ("scaled_mm_bias_gelu", epilogue),
                         ("scaled_mm_bias_gelu_compile", None)):
            if f["act"] == "none" and name != "scaled_mm":
                res[name] = float("nan")
                continue
            try:
                g = fn if fn is not None else torch.compile(epilogue)
                res[name] = flops / (bench(g, t, iters) * 1e-3) / 1e12
            except (RuntimeError, NotImplementedError) as e:  # a mode this PyTorch or GPU lacks
                print(f"# {name} {m}x{n}x{k} {f['scaling']}: {str(e).splitlines()[0][:160]}")
                res[name] = float("nan")
            print(f"PEER op=linear act={f['act']} dtype=e4m3 out=bf16 scaling={f['scaling']} m={m} n={n} k={k} "
                  f"peer=torch_{name} TFLOPs={res[name]:.1f}")
        kiln = float(f["TFLOPs"])
        print(f"{m}x{n}x{k:<14} {f['scaling'] + ('/plain' if f['act'] == 'none' else ''):8s} {kiln:8.1f} {res['scaled_mm']:11.1f} "
              f"{res['scaled_mm_bias_gelu']:11.1f} {res['scaled_mm_bias_gelu_compile']:8.1f} "
              f"{float(f['cublaslt_epilogue_TFLOPs']):10.1f} {kiln / res['scaled_mm']:8.2f} "
              f"{kiln / res['scaled_mm_bias_gelu']:7.2f}")
        del t
        torch.cuda.empty_cache()
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--only", help="passed on to the bench: the labels to run")
    ap.add_argument("--compile", default="all",
                    help="labels also timed through torch.compile (comma-separated, or 'all')")
    ap.add_argument("--lib", help="libkiln.so: bench_attention's bf16 prefill lines also timed in turn with cuDNN")
    ap.add_argument("bench_args", nargs="*", help="after --: passed on to the bench (e.g. --seq 1024 --hdim 128)")
    args = ap.parse_args()
    norm = "norm" in os.path.basename(args.bench)

    cmd = [args.bench, "--iters", str(args.iters)] + (["--only", args.only] if args.only else []) + args.bench_args
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    print(out, end="")
    if "attention" in os.path.basename(args.bench):
        attention_peers(out, args.iters, kiln_attention(args.lib) if args.lib else None)
        return
    if "linear" in os.path.basename(args.bench):
        linear_peers(out, args.iters)
        fp8_linear_peers(out, args.iters)
        return
    kiln = {}
    for line in out.splitlines():
        if line.startswith("BENCH ") and "selected=1" in line:
            op = re.search(r'op="([^"]+)"', line).group(1)
            hidden = re.search(r"hidden=(\d+)", line)
            kiln[(op, int(hidden.group(1)) if hidden else 0)] = float(re.search(r"GBps=([\d.]+)", line).group(1))
    copy = float(re.search(r"BENCH op=copy .*GBps=([\d.]+)", out).group(1))
    n = int(re.search(r"BENCH op=copy .*n=(\d+)", out).group(1))

    dt, es = torch.bfloat16, 2
    gen = torch.Generator(device="cuda").manual_seed(0)
    shapes = [(n // h, h) for h in (768, 4096, 8192)] if norm else [(n // 4096, 4096)]
    peers = NORM if norm else ELEMENTWISE
    print(f"\n{'op':26s} {'hidden':>6s} {'kiln GB/s':>10s} {'eager':>8s} {'compile':>8s} "
          f"{'kiln/eager':>11s} {'kiln/compile':>13s}")
    for rows, cols in shapes:
        t = {k: rand((rows, cols), gen, -2, 2, dt) for k in ("x", "g", "u", "dy", "r")}
        t["b"] = rand((cols,), gen, -0.5, 0.5, dt)
        t["w"] = rand((cols,), gen, 0.5, 1.5, dt)
        if norm:
            xf = t["x"].float()
            t["mean"] = xf.mean(-1, keepdim=True)
            t["rstd"] = torch.rsqrt(xf.var(-1, unbiased=False, keepdim=True) + 1e-5)
        for label, (nrow, nvec, fn) in peers.items():
            if label not in {k for k, _ in kiln} and norm:
                continue  # not in this run of kiln's bench (--only)
            moved = nrow * rows * cols * es + nvec * cols * es
            res = {"compile": float("nan")}
            modes = ("eager", "compile") if args.compile == "all" or label in args.compile.split(",") else ("eager",)
            for mode in modes:
                f = fn if mode == "eager" else torch.compile(fn)
                res[mode] = moved / (bench(f, t, args.iters) * 1e-3) / 1e9
                print(f"PEER op=\"{label}\" hidden={cols} peer=torch_{mode} dtype=bf16 n={rows * cols} "
                      f"GBps={res[mode]:.1f} frac_copy={res[mode] / copy:.3f}")
            k = kiln.get((label, cols if norm else 0), float("nan"))
            print(f"{label:26s} {cols:6d} {k:10.1f} {res['eager']:8.1f} {res['compile']:8.1f} "
                  f"{k / res['eager']:11.2f} {k / res['compile']:13.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
