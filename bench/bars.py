#!/usr/bin/env python3
"""bars.py: the open issues' performance bars, measured in one go.

Runs peers.py on kiln's benches with the arguments each bar needs, keeps
every run's output, and prints one row per bar: kiln's figure, the peer's,
their ratio as timed alone (each at the clock the power management gives it)
and, where the bench times the two again in turn (`in_turn_vs_cublaslt=`,
`in_turn_ratio=`), the ratio at the clock both meet. The bars are issue 17's
(linear) and issue 18's (attention forward) "done means", as the issues
state them:

    python3 bench/bars.py --dir DIR [--iters 10] [--only linear|attention] [--out LOGDIR]
    python3 bench/bars.py --from LOG [LOG ...]      (the table from saved runs, no GPU)

DIR holds bench_linear, bench_attention and peers.py (the layout
`tests/gpu_suite.sh --pack` makes); the default is this script's folder.
Where DIR also holds libkiln.so, the attention bf16 rows are timed in turn
with cuDNN too (peers.py --lib).
Runs (about 200 s at --iters 10 on an H200): bench_linear's 16-bit
shapes (`-- --no-fp8`), its FP8 shapes 8192³ and 16384 × 4096 × 1024
(`--only S -- --fp8`), bench_attention's prefill and FP8 lines (`--only
prefill`, `--only fp8`). Exits 0 when every bar was read, whether met or
not, and 1 when a run failed or a bar's figures are missing.
"""
import argparse
import math
import os
import subprocess
import sys

# (issue, cell, bar): what each row reads is in rows() below.
LINEAR_BF16 = [((8192, 8192, 8192), 1.0), ((16384, 4096, 1024), 0.95), ((128, 4096, 4096), 0.9)]
LINEAR_FP8 = [(8192, 8192, 8192), (16384, 4096, 1024)]
ATTN_HDIMS = [64, 128, 256]
ATTN_FP8_HDIMS = [128, 256]


def fields(line):
    """A BENCH or PEER line's key=value pairs."""
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def num(f, key):
    try:
        return float(f[key])
    except (KeyError, ValueError):
        return math.nan


def shape_of(f):
    return (int(f["m"]), int(f["n"]), int(f["k"]))


def rows(lines):
    """The bar rows from the runs' output lines: (issue, cell, kiln, peer name,
    peer, ratio alone, ratio in turn, bar)."""
    bench = [fields(l) for l in lines if l.startswith("BENCH ")]
    peer = [fields(l) for l in lines if l.startswith("PEER ")]

    def last(items, **want):
        hit = [f for f in items if all(f.get(k) == str(v) for k, v in want.items())]
        return hit[-1] if hit else {}

    out = []
    for (m, n, k), bar in LINEAR_BF16:
        f = last(bench, op="linear", act="gelu_tanh", dtype="bf16", m=m, n=n, k=k)
        kiln, lt = num(f, "TFLOPs"), num(f, "cublaslt_epilogue_TFLOPs")
        out.append(("17", f"bf16 {m}x{n}x{k} + bias + gelu_tanh", kiln, "cuBLASLt+GELU_BIAS", lt, kiln / lt,
                    num(f, "in_turn_vs_cublaslt"), bar))
    f = last(bench, op="gated_linear", act="silu", dtype="bf16", m=8192, n=4096, k=4096)
    p = last(peer, op="gated_linear", m=8192, n=4096, k=4096, peer="torch_eager")
    kiln, eager = num(f, "TFLOPs"), num(p, "TFLOPs")
    out.append(("17", "bf16 SwiGLU 8192x4096x4096", kiln, "PyTorch eager", eager, kiln / eager, math.nan, 1.0))
    for m, n, k in LINEAR_FP8:
        for scaling in ("tensor", "rowwise"):
            f = last(bench, op="linear", act="none", dtype="e4m3", scaling=scaling, m=m, n=n, k=k)
            p = last(peer, op="linear", act="none", dtype="e4m3", scaling=scaling, m=m, n=n, k=k,
                     peer="torch_scaled_mm")
            kiln, mm = num(f, "TFLOPs"), num(p, "TFLOPs")
            # in turn: against cuBLASLt plain, the kernel _scaled_mm runs (bench_linear's pair)
            out.append(("17", f"e4m3 {m}x{n}x{k} plain, {scaling}", kiln, "_scaled_mm (in turn: cuBLASLt)", mm,
                        kiln / mm, num(f, "in_turn_vs_cublaslt"), 1.0))
    for d in ATTN_HDIMS:
        for mask in ("none", "causal"):
            f = last(bench, op="attention", mask=mask, hdim=d, dtype="bf16", selected=1)
            p = last(peer, op="attention", mask=mask, hdim=d, peer="sdpa_cudnn")
            t = last(peer, op="attention", mask=mask, hdim=d, peer="sdpa_cudnn_in_turn")
            kiln, cudnn = num(f, "TFLOPs"), num(p, "TFLOPs")
            out.append(("18", f"bf16 h{d} {mask}, seq {f.get('seq', '?')}", kiln, "cuDNN", cudnn, kiln / cudnn,
                        num(t, "in_turn"), 1.0))
    for d in ATTN_FP8_HDIMS:
        f = last(bench, op="attention", dtype="e4m3", mask="none", hdim=d)
        out.append(("18", f"e4m3 h{d} none, seq {f.get('seq', '?')}", num(f, "TFLOPs"), "kiln bf16",
                    num(f, "bf16_TFLOPs"), num(f, "ratio"), num(f, "in_turn_ratio"), 1.5))
    return out


def table(out):
    """Prints the rows; returns how many lack a figure."""
    print(f"{'issue':5s} {'cell':40s} {'kiln':>8s} {'peer':>8s} {'alone':>6s} {'in turn':>7s} {'bar':>5s}  met  peer")
    missing = 0
    for issue, cell, kiln, name, peer, alone, turn, bar in out:
        if math.isnan(alone):
            missing += 1
        met = "?" if math.isnan(alone) else ("yes" if alone >= bar else "no")
        if not math.isnan(turn):
            met += " / " + ("yes" if turn >= bar else "no")
        print(f"{issue:5s} {cell:40s} {kiln:8.1f} {peer:8.1f} {alone:6.3f} {turn:7.3f} {bar:5.2f}  {met:9s} {name}")
    print("(TFLOP/s; met: alone, and / in turn where the bench times the pair in turn; "
          "the e4m3 attention peer is kiln's bf16 kernel on the same data)")
    return missing


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=os.path.dirname(os.path.abspath(__file__)),
                    help="the folder of bench_linear, bench_attention and peers.py")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--only", choices=("linear", "attention"))
    ap.add_argument("--out", help="a folder for each run's output")
    ap.add_argument("--from", dest="logs", nargs="+", help="saved runs' output: print the table, run nothing")
    args = ap.parse_args()
    if args.logs:
        lines = []
        for path in args.logs:
            with open(path) as fh:
                lines += fh.read().splitlines()
        sys.exit(1 if table(rows(lines)) else 0)
    peers = os.path.join(args.dir, "peers.py")
    runs = []
    if args.only != "attention":
        bl = os.path.join(args.dir, "bench_linear")
        runs += [("linear_bf16", [bl, "--iters", str(args.iters), "--", "--no-fp8"])]
        runs += [(f"linear_fp8_{m}x{n}x{k}", [bl, "--iters", str(args.iters), "--only", f"{m}x{n}x{k}", "--", "--fp8"])
                 for m, n, k in LINEAR_FP8]
    if args.only != "linear":
        ba = os.path.join(args.dir, "bench_attention")
        lib = os.path.join(args.dir, "libkiln.so")
        runs += [("attention_prefill", [ba, "--iters", str(args.iters), "--only", "prefill"] +
                  (["--lib", lib] if os.path.exists(lib) else []))]
        runs += [("attention_fp8", [ba, "--iters", str(args.iters), "--only", "fp8"])]
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    lines, failed = [], 0
    for name, rest in runs:
        cmd = [sys.executable, peers, "--bench"] + rest
        print(f"== {name}: {' '.join(cmd)}", flush=True)
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if args.out:
            with open(os.path.join(args.out, name + ".txt"), "w") as fh:
                fh.write(r.stdout)
        if r.returncode != 0:
            failed += 1
            print(f"{name}: exit {r.returncode}\n" + "\n".join(r.stdout.splitlines()[-20:]))
        lines += r.stdout.splitlines()
    out = rows(lines)
    if args.only == "linear":
        out = [row for row in out if row[0] == "17"]
    elif args.only == "attention":
        out = [row for row in out if row[0] == "18"]
    missing = table(out)
    sys.exit(1 if failed or missing else 0)


if __name__ == "__main__":
    main()
