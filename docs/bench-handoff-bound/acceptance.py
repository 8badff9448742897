#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Issue 14's acceptance, cell by cell, from one make bench run.

    acceptance.py [results.csv]     (default: build/bench/results.csv)

Per cell: spin's throughput over the best other type's, the slowest
thread's share, spin's and ww's p99 acquisition latency, and spin's lead
over ww; figures are means over the runs, as in results.md. Then, per
criterion, the cells that fail it with spin's single runs:
  - every cell: spin >= 0.95x the best other type;
  - threads > CPUs (2): slowest share >= 0.25, spin's p99 <= ww's;
  - threads <= 16 and load <= 10: spin >= 1.2x ww.
"""

import collections
import csv
import statistics
import sys

CPUS = 2
OTHERS = ("ww", "pi", "glibc", "glibc-adaptive", "tas")


def main(path):
    runs = collections.defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            if not r["error"]:
                cell = (int(r["threads"]), int(r["load"]), int(r["wait"]))
                runs[cell, r["mutex"]].append(r)

    def values(cell, mutex, key):
        return [float(r[key]) for r in runs[cell, mutex] if r[key]]

    def mean(cell, mutex, key):
        return statistics.mean(values(cell, mutex, key))

    fails = collections.defaultdict(list)
    for cell in sorted({c for c, _ in runs}):
        name = "%d/%d/%d" % cell
        spin = mean(cell, "spin", "ops_per_sec")
        best = max(OTHERS, key=lambda m: mean(cell, m, "ops_per_sec"))
        ratio = spin / mean(cell, best, "ops_per_sec")
        vs_ww = spin / mean(cell, "ww", "ops_per_sec")
        slowest = mean(cell, "spin", "slowest_share")
        p99 = mean(cell, "spin", "lat_p99_ns") / 1e3
        p99_ww = mean(cell, "ww", "lat_p99_ns") / 1e3
        ops = ", ".join("%.0fk" % (v / 1e3)
                        for v in values(cell, "spin", "ops_per_sec"))
        print(f"{name:10} {ratio:.2f}x {best:15} slowest {slowest:.2f} "
              f"p99 {p99:.2f} / ww {p99_ww:.2f} us  vs ww {vs_ww - 1:+.1%}")

        if ratio < 0.95:
            fails["throughput >= 0.95x best other"].append(
                f"{name} {ratio:.3f}x {best} (spin runs {ops})")
        if cell[0] > CPUS and slowest < 0.25:
            shares = ", ".join("%.2f" % v for v in
                               values(cell, "spin", "slowest_share"))
            fails["slowest share >= 0.25"].append(
                f"{name} {slowest:.2f} (runs {shares})")
        if cell[0] > CPUS and p99 > p99_ww:
            lat = ", ".join("%.1f" % (v / 1e3) for v in
                            values(cell, "spin", "lat_p99_ns"))
            fails["p99 <= ww's"].append(
                f"{name} {p99:.2f} against {p99_ww:.2f} us (runs {lat})")
        if cell[0] <= 16 and cell[1] <= 10 and vs_ww < 1.2:
            fails[">= 1.2x ww"].append(f"{name} {vs_ww - 1:+.1%}")

    for criterion, cells in fails.items():
        print(f"fails {criterion}: {len(cells)}")
        for c in cells:
            print("  " + c)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/bench/results.csv")
