#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The acceptance criteria, cell by cell, from one make bench run.

    acceptance.py [results.csv]     (default: build/bench/results.csv)

Per cell: spin's throughput over the best other type's (for a failing
cell also run by run, each run of spin over the best type's run of the
same round), the slowest
thread's share, spin's and ww's p99 acquisition latency, and spin's lead
over ww; figures are means over the runs, as in results.md. Then, per
criterion, the cells that fail it with spin's single runs:
  - every cell: spin >= 0.95x the best other type;
  - threads > CPUs (2): slowest share >= 0.25, spin's p99 <= ww's;
  - threads <= 16 and load <= 10: spin >= 1.2x ww.
resample.py uses the same criteria on resampled runs.
"""

import collections
import csv
import statistics
import sys

CPUS = 2
RATIO_MIN = 0.95    # spin's throughput over the best other type's
OTHERS = ("ww", "pi", "glibc", "glibc-adaptive", "tas")
THROUGHPUT = "throughput >= 0.95x best other"
SLOWEST = "slowest share >= 0.25"
P99 = "p99 <= ww's"
VS_WW = ">= 1.2x ww"
CRITERIA = (THROUGHPUT, SLOWEST, P99, VS_WW)


def load(path):
    """The runs of each (cell, lock type), a cell being (threads, load, wait)."""
    runs = collections.defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            if not r["error"]:
                cell = (int(r["threads"]), int(r["load"]), int(r["wait"]))
                runs[cell, r["mutex"]].append(r)
    return runs


def values(runs, key):
    return [float(r[key]) for r in runs if r[key]]


def figures(runs, cell):
    """The means that the criteria look at, from runs[(cell, type)]."""
    def mean(mutex, key):
        return statistics.mean(values(runs[cell, mutex], key))

    spin = mean("spin", "ops_per_sec")
    best = max(OTHERS, key=lambda m: mean(m, "ops_per_sec"))
    return {
        "best": best,
        "ratio": spin / mean(best, "ops_per_sec"),
        "vs_ww": spin / mean("ww", "ops_per_sec"),
        "slowest": mean("spin", "slowest_share"),
        "p99": mean("spin", "lat_p99_ns") / 1e3,
        "p99_ww": mean("ww", "lat_p99_ns") / 1e3,
    }


def failures(cell, f):
    """The criteria that cell fails with figures f."""
    failed = []
    if f["ratio"] < RATIO_MIN:
        failed.append(THROUGHPUT)
    if cell[0] > CPUS and f["slowest"] < 0.25:
        failed.append(SLOWEST)
    if cell[0] > CPUS and f["p99"] > f["p99_ww"]:
        failed.append(P99)
    if cell[0] <= 16 and cell[1] <= 10 and f["vs_ww"] < 1.2:
        failed.append(VS_WW)
    return failed


def detail(runs, cell, f, criterion):
    spin = runs[cell, "spin"]
    if criterion == THROUGHPUT:
        ops = values(spin, "ops_per_sec")
        best = values(runs[cell, f["best"]], "ops_per_sec")
        paired = ", ".join("%.2f" % (s / b) for s, b in zip(ops, best))
        return (f"{f['ratio']:.3f}x {f['best']} (spin runs "
                + ", ".join("%.0fk" % (v / 1e3) for v in ops)
                + f"; over {f['best']}'s run of the same round {paired})")
    if criterion == SLOWEST:
        shares = ", ".join("%.2f" % v for v in values(spin, "slowest_share"))
        return f"{f['slowest']:.2f} (runs {shares})"
    if criterion == P99:
        lat = ", ".join("%.1f" % (v / 1e3) for v in values(spin, "lat_p99_ns"))
        return f"{f['p99']:.2f} against {f['p99_ww']:.2f} us (runs {lat})"
    return f"{f['vs_ww'] - 1:+.1%}"


def main(path):
    runs = load(path)
    fails = collections.defaultdict(list)
    for cell in sorted({c for c, _ in runs}):
        name = "%d/%d/%d" % cell
        f = figures(runs, cell)
        print(f"{name:10} {f['ratio']:.2f}x {f['best']:15} slowest {f['slowest']:.2f} "
              f"p99 {f['p99']:.2f} / ww {f['p99_ww']:.2f} us  vs ww {f['vs_ww'] - 1:+.1%}")
        for criterion in failures(cell, f):
            fails[criterion].append(f"{name} {detail(runs, cell, f, criterion)}")

    for criterion, cells in fails.items():
        print(f"fails {criterion}: {len(cells)}")
        for c in cells:
            print("  " + c)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/bench/results.csv")
