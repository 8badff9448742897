#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of make bench-uncontended, from its guest run directory.

    uncontended-report.py RUN_DIR

The library's microbenchmark prints its own paired ratios; this repeats
its last two lines per mode. For pthread_mutex2 (mutex2.txt), each
round's ratio of a preload mode's ops/s to glibc's in the same round, per
thread count: the median over the rounds and a 95% bootstrap interval of
it. "at least 0.95x" holds where the interval's lower bound is 0.95 or
more.
"""
import random
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def bootstrap(ratios, n=4000, seed=1):
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                  for _ in range(n))
    return meds[n * 25 // 1000], meds[n * 975 // 1000]


def main():
    run = Path(sys.argv[1])
    print("# uncontended pthread mutex: the preload against glibc\n")
    guest = run / "guest.txt"
    if guest.exists():
        print(f"Guest: {guest.read_text().strip()}\n")
    for mode in ("spin", "waitwake"):
        f = run / f"micro-{mode}.txt"
        if f.exists():
            tail = f.read_text().strip().splitlines()[-2:]
            print(f"- bench-uncontended, mode {mode}: " + "; ".join(tail))
    ops = defaultdict(dict)
    f = run / "mutex2.txt"
    for line in f.read_text().split("\n") if f.exists() else []:
        fields = line.split()
        if len(fields) == 4 and fields[3] != "-":
            ops[int(fields[0]), int(fields[2])][fields[1]] = int(fields[3])
    if not ops:
        return
    print("\nwill-it-scale pthread_mutex2, threads mode; ratio = the "
          "preload's ops/s over glibc's in the same round\n")
    print("| threads | mode | rounds | glibc ops/s (median) | ratio median "
          "| 95% interval | >= 0.95x |")
    print("|---|---|---|---|---|---|---|")
    for threads in sorted({t for _, t in ops}):
        rounds = [v for (r, t), v in sorted(ops.items()) if t == threads]
        glibc = statistics.median(v["glibc"] for v in rounds if "glibc" in v)
        for mode in ("spin", "waitwake"):
            ratios = [v[mode] / v["glibc"] for v in rounds
                      if mode in v and v.get("glibc")]
            if not ratios:
                continue
            lo, hi = bootstrap(ratios)
            print(f"| {threads} | {mode} | {len(ratios)} | {glibc:.0f} | "
                  f"{statistics.median(ratios):.3f} | [{lo:.3f}, {hi:.3f}] | "
                  f"{'yes' if lo >= 0.95 else 'no'} |")


if __name__ == "__main__":
    main()
