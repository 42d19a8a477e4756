#!/usr/bin/env python3
"""cycles.py: a bench's kernels in cycles at a locked clock, for A/B tests.

Runs a kiln bench under Nsight Compute, which locks the SM clock to base for
each launch it profiles. It reads `gpc__cycles_elapsed.max` of every launch
whose kernel name matches --kernel, and prints per kernel name the launches,
the median and the range. The figures of one binary repeat within about
0.5 %. Free-clock TFLOP/s of the same binary move by ±5 % between rounds on
an H100 (docs/attention.md, 2026-11-26), so compare builds in these cycles.
Arguments after `--` are the bench and its arguments.

    python3 bench/cycles.py --kernel attention_tma -- path/to/bench_attention --only prefill --hdim 256 --mask causal --iters 3
    python3 bench/cycles.py --kernel linear_kernel -- path/to/bench_linear --fp8 --only 8192x8192x8192 --iters 3

--parts N also splits each kernel's launches, in launch order, into N equal
runs and prints each run's median: where one kernel serves several cases in
turn (bench_linear --fp8 runs the per-tensor and rowwise cases of a shape
through the same kernel, `--parts 2`; block scales into bf16 run an instance
of their own on sm_90a). --demangled names kernels with their namespaces and
template arguments, so that --kernel can tell a kernel's instances apart:
--demangled --kernel 'linear_kernel<__nv_bfloat16, (false|\\(bool\\)0), (false|\\(bool\\)0)>'.
"""
import argparse
import csv
import io
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", required=True, help="a regular expression a kernel's name must match")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--parts", type=int, default=1, help="medians of N equal runs of each kernel's launches, in order")
    ap.add_argument("--demangled", action="store_true", help="kernel names with namespaces and template arguments")
    ap.add_argument("bench", nargs="+", help="after --: the bench and its arguments")
    args = ap.parse_args()
    cmd = [args.ncu] + (["--kernel-name-base", "demangled"] if args.demangled else []) + [
        "--csv", "--metrics", "gpc__cycles_elapsed.max", "--kernel-name", "regex:" + args.kernel] + args.bench
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stdout[-2000:] + run.stderr[-2000:])
        sys.exit("cycles.py: %s exited with %d" % (" ".join(cmd), run.returncode))
    # ncu's CSV starts at its header line; the bench's own output comes before it.
    text = run.stdout[run.stdout.find('"ID"'):] if '"ID"' in run.stdout else ""
    by_kernel = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row.get("Metric Name") == "gpc__cycles_elapsed.max":
            by_kernel.setdefault(row["Kernel Name"], []).append(float(row["Metric Value"].replace(",", "")))
    if not by_kernel:
        sys.exit("cycles.py: no launch matched --kernel %s" % args.kernel)
    for name, v in by_kernel.items():
        print("%-90s launches %3d  median %12.0f  min %12.0f  max %12.0f cycles" %
              (name[:90], len(v), statistics.median(v), min(v), max(v)))
        if args.parts > 1:
            n = len(v) // args.parts
            if n == 0 or len(v) % args.parts:
                sys.exit("cycles.py: %d launches of %s do not split into %d equal runs" % (len(v), name, args.parts))
            print("    medians of %d runs of %d launches: %s" %
                  (args.parts, n, "  ".join("%.0f" % statistics.median(v[i * n:(i + 1) * n]) for i in range(args.parts))))


if __name__ == "__main__":
    main()
