#!/usr/bin/env python3
"""peers.py: the peers a user would pick instead of kiln, on the same shapes.

Runs kiln's bench (its BENCH lines), then the same ops, shapes and dtypes
through PyTorch eager and torch.compile in the same call, and prints GB/s
and kiln/peer ratios. Bytes are counted as the kiln bench counts them.

    python3 bench/peers.py --bench path/to/bench_elementwise [--n N] [--cols C]
"""
import argparse
import re
import subprocess
import sys

import torch
import torch.nn.functional as F


def gelu_tanh(u):
    return F.gelu(u, approximate="tanh")


def silu_grad(g):
    s = torch.sigmoid(g)
    return s * (1 + g * (1 - s))


def gelu_tanh_grad(u):
    k0, k1 = 0.7978845608028654, 0.044715
    t = torch.tanh(k0 * (u + k1 * u * u * u))
    return 0.5 * (1 + t) + 0.5 * u * (1 - t * t) * k0 * (1 + 3 * k1 * u * u)


# label -> (number of n-element tensors read + written, bias tensors moved, function)
PEERS = {
    "bias+gelu_tanh": (2, 1, lambda t: gelu_tanh(t["x"] + t["b"])),
    "bias+gelu_erf": (2, 1, lambda t: F.gelu(t["x"] + t["b"])),
    "bias+silu": (2, 1, lambda t: F.silu(t["x"] + t["b"])),
    "bias+relu": (2, 1, lambda t: F.relu(t["x"] + t["b"])),
    "swiglu": (3, 0, lambda t: F.silu(t["g"]) * t["u"]),
    "geglu_tanh": (3, 0, lambda t: gelu_tanh(t["g"]) * t["u"]),
    "bias+gelu_tanh bwd+dbias": (3, 2, lambda t: _bwd_bias(t)),
    "swiglu bwd": (5, 0, lambda t: (t["dy"] * t["u"] * silu_grad(t["g"].float()), t["dy"] * F.silu(t["g"]))),
}


def _bwd_bias(t):
    g = t["dy"] * gelu_tanh_grad((t["x"] + t["b"]).float())
    return (g.to(t["x"].dtype), g.sum(0).to(t["x"].dtype))


BATCH = 10  # calls per timed sample, back to back, as in kiln's bench


def bench(fn, tensors, iters):
    for _ in range(5):
        fn(tensors)
    times = []
    for _ in range(iters):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(BATCH):
            fn(tensors)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) / BATCH)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--n", type=int, default=64 << 20)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--compile", default="bias+gelu_tanh,swiglu,bias+gelu_tanh bwd+dbias",
                    help="ops also timed through torch.compile (comma-separated labels, or 'all')")
    args = ap.parse_args()

    out = subprocess.run([args.bench, "--n", str(args.n), "--cols", str(args.cols), "--iters", str(args.iters)],
                         check=True, capture_output=True, text=True).stdout
    print(out, end="")
    kiln = {}
    for line in out.splitlines():
        if line.startswith("BENCH ") and "selected=1" in line:
            op = re.search(r'op="([^"]+)"', line).group(1)
            kiln[op] = float(re.search(r"GBps=([\d.]+)", line).group(1))
    copy = float(re.search(r"BENCH op=copy .*GBps=([\d.]+)", out).group(1))

    rows, cols, dt = args.n // args.cols, args.cols, torch.bfloat16
    gen = torch.Generator(device="cuda").manual_seed(0)
    t = {k: (torch.rand(rows, cols, device="cuda", dtype=torch.float32, generator=gen) * 6 - 3).to(dt)
         for k in ("x", "g", "u", "dy")}
    t["b"] = (torch.rand(cols, device="cuda", generator=gen) * 2 - 1).to(dt)
    es = 2
    print(f"\n{'op':26s} {'kiln GB/s':>10s} {'eager':>10s} {'compile':>10s} {'kiln/eager':>11s} {'kiln/compile':>13s}")
    for label, (ntensors, nbias, fn) in PEERS.items():
        moved = ntensors * rows * cols * es + nbias * cols * es
        res = {"compile": float("nan")}
        modes = ("eager", "compile") if args.compile == "all" or label in args.compile.split(",") else ("eager",)
        for mode in modes:
            f = fn if mode == "eager" else torch.compile(fn)
            ms = bench(f, t, args.iters)
            res[mode] = moved / (ms * 1e-3) / 1e9
            print(f"PEER op=\"{label}\" peer=torch_{mode} dtype=bf16 n={rows * cols} GBps={res[mode]:.1f} "
                  f"frac_copy={res[mode] / copy:.3f}")
        k = kiln.get(label, float("nan"))
        print(f"{label:26s} {k:10.1f} {res['eager']:10.1f} {res['compile']:10.1f} "
              f"{k / res['eager']:11.2f} {k / res['compile']:13.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
