#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare two make bench runs of the same grid, cell by cell.

    bench-compare.py BEFORE/results.csv AFTER/results.csv [TYPE...]

For each lock type (default: spin) and cell, the mean kops/s of each run
with its relative stddev over the repeats, and after/before. A change is
called out only when it is larger than the two runs' stddevs together:
two runs of the same kernel under TCG differ by that much.
"""
import csv
import statistics
import sys
from collections import defaultdict

CELL = ("threads", "load", "wait")


def load(path):
    """(type, cell) -> [ops_per_sec] of the runs that kept mutual exclusion."""
    runs = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["error"] or r["exclusion"] != "ok" or not r["ops_per_sec"]:
                continue
            cell = tuple(int(r[k]) for k in CELL)
            runs[r["mutex"], cell].append(float(r["ops_per_sec"]))
    return runs


def mean_sd(values):
    m = statistics.mean(values)
    sd = statistics.stdev(values) / m * 100 if len(values) > 1 and m else 0.0
    return m, sd


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    before, after = load(sys.argv[1]), load(sys.argv[2])
    types = sys.argv[3:] or ["spin"]
    print("| type | threads | load | wait | before kops/s | sd% | after kops/s | sd% "
          "| after/before | beyond the noise |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for t in types:
        for key in sorted(k for k in after if k[0] == t and k in before):
            (b, bsd), (a, asd) = mean_sd(before[key]), mean_sd(after[key])
            ratio = a / b
            noise = (bsd + asd) / 100
            verdict = ""
            if abs(ratio - 1) > noise:
                verdict = "faster" if ratio > 1 else "slower"
            print(f"| {t} | {key[1][0]} | {key[1][1]} | {key[1][2]} | {b / 1000:.0f} "
                  f"| {bsd:.1f} | {a / 1000:.0f} | {asd:.1f} | {ratio:.2f} | {verdict} |")


if __name__ == "__main__":
    main()
