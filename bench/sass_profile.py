#!/usr/bin/env python3
"""sass_profile.py: where a kernel's instructions and warp samples go, by SASS line.

Reads the source page Nsight Compute prints for one profiled launch,

    ncu --set full --import-source no -k regex:NAME -c 1 -o R BENCH ARGS
    ncu -i R.ncu-rep --page source --csv --print-source sass > R_sass.csv
    python3 bench/sass_profile.py R_sass.csv [--top 20] [--range A:B ...]

and prints, on the CPU:
- the totals: instructions executed, warp stall samples, the largest stall
  reasons;
- the regions: runs of consecutive lines that execute the same number of
  times (a loop body, a tile's code, a producer's stage), each with its
  share of the samples and instructions and its commonest opcodes. A line's
  execution count says how often its code runs: divide by the count of the
  loop's body to get a line's weight per iteration;
- the barrier polls: every mbarrier try_wait line, how often it ran and the
  share of all instructions it and its branch took (a retry loop's line runs
  once a retry: a producer's spin shows there);
- the hottest lines, with their two largest stall reasons;
- with --range A:B (line indices as printed, inclusive), the samples and
  instructions of those lines.

The figures are ncu's sampled counters of one launch: compare regions within
a run, and builds only by cycles (bench/cycles.py).
"""

import argparse
import collections
import csv
import re
import sys


def kernels(path):
    """(kernel name, header, rows) for each kernel the file holds."""
    out, name, header, rows = [], None, None, []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                if header:
                    out.append((name, header, rows))
                name, header, rows = row[1] if len(row) > 1 else "?", None, []
            elif row[0] == "Address":
                header = row
            elif header:
                rows.append(row)
    if header:
        out.append((name, header, rows))
    return out


def opcode(source):
    """The opcode's first part (FFMA of FFMA.FTZ), past a predicate."""
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def num(text):
    try:
        return int(text.replace(",", ""))
    except ValueError:
        return 0


def report(name, header, rows, top, ranges):
    col = {h: i for i, h in enumerate(header)}
    for need in ("Source", "Instructions Executed", "Warp Stall Sampling (All Samples)"):
        if need not in col:
            sys.exit(f"sass_profile.py: no column '{need}': is this ncu's --page source --csv --print-source sass?")
    src, ex, sm = col["Source"], col["Instructions Executed"], col["Warp Stall Sampling (All Samples)"]
    stalls = [h for h in header if h.startswith("stall_") and "(Not Issued)" not in h]
    lines = [(r[src].strip(), num(r[ex]), num(r[sm]), r) for r in rows]
    inst = sum(l[1] for l in lines) or 1
    samples = sum(l[2] for l in lines) or 1

    print(f"kernel: {name}")
    print(f"{len(lines)} SASS lines, {inst:,} instructions executed, {samples:,} warp samples")
    totals = sorted(((sum(num(l[3][col[s]]) for l in lines), s[6:]) for s in stalls), reverse=True)
    print("stall reasons: " + ", ".join(f"{n} {100 * v / samples:.1f} %" for v, n in totals[:8] if v))

    print("\nregions (consecutive lines run the same number of times), 1 % of the samples or more:")
    print(f"{'lines':>11} {'runs':>10} {'samples':>8} {'instr':>7}  opcodes")
    start = 0
    for i in range(1, len(lines) + 1):
        if i < len(lines) and lines[i][1] == lines[start][1]:
            continue
        part = lines[start:i]
        s = sum(l[2] for l in part)
        if part[0][1] and s >= 0.01 * samples:
            ops = collections.Counter(opcode(l[0]) for l in part).most_common(6)
            print(f"{start:>5}-{i - 1:<5} {part[0][1]:>10,} {100 * s / samples:>7.1f}% "
                  f"{100 * sum(l[1] for l in part) / inst:>6.1f}%  " + " ".join(f"{o}:{n}" for o, n in ops))
        start = i

    polls = [(i, l) for i, l in enumerate(lines) if "TRYWAIT" in l[0]]
    if polls:
        print("\nbarrier polls (try_wait): line, runs, the share of the instructions of the poll and its branch:")
        for i, l in polls:
            if l[1]:
                print(f"{i:>5} {l[1]:>12,} {100 * 2 * l[1] / inst:>6.2f}%  {l[0][:70]}")

    print(f"\nhottest {top} lines:")
    for i, l in sorted(enumerate(lines), key=lambda x: -x[1][2])[:top]:
        why = sorted(((num(l[3][col[s]]), s[6:]) for s in stalls), reverse=True)[:2]
        print(f"{i:>5} {100 * l[2] / samples:>5.1f}% runs {l[1]:>10,}  {l[0][:60]:<60} "
              + ", ".join(f"{n} {v}" for v, n in why if v))

    for r in ranges:
        m = re.fullmatch(r"(\d+):(\d+)", r)
        if not m:
            sys.exit(f"sass_profile.py: --range {r}: expected A:B")
        a, b = int(m.group(1)), int(m.group(2))
        part = lines[a:b + 1]
        print(f"\nlines {a}-{b}: {100 * sum(l[2] for l in part) / samples:.1f} % of the samples, "
              f"{100 * sum(l[1] for l in part) / inst:.1f} % of the instructions")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--top", type=int, default=20, help="how many of the hottest lines to print")
    ap.add_argument("--range", action="append", default=[], help="A:B, line indices to sum (repeatable)")
    args = ap.parse_args()
    found = kernels(args.csv)
    if not found:
        sys.exit(f"sass_profile.py: {args.csv}: no kernel's source page found")
    for k, (name, header, rows) in enumerate(found):
        if k:
            print("\n" + "=" * 80 + "\n")
        report(name, header, rows, args.top, args.range)


if __name__ == "__main__":
    main()
