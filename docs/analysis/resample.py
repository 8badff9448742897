#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How often one make bench would pass acceptance.py's criteria.

    resample.py RESULTS.CSV [--repeat 3] [--draws 2000]

RESULTS.CSV is a make bench run with many runs per cell and type
(make bench REPEAT=8 COUNTS=0 BENCH_OUT=...). Prints, per cell, the
criteria of acceptance.py on the means over all its runs, then the share
of simulated make bench runs that fail each criterion there: each draws
--repeat runs per cell and type with replacement, a run's figures kept
together. Last, over the whole grid, how many cells such a run fails.

The throughput criterion takes the best of five other types' means, and
the highest of several noisy means is biased upwards: the column "best
other itself" is how often the best other type would fail the same test
against the four types left (spin left out), for comparison.
"""

import argparse
import collections
import random
import statistics

from acceptance import CRITERIA, OTHERS, failures, figures, load, values


def draw(runs, cell, repeat, rng):
    return {key: rng.choices(rows, k=repeat) for key, rows in runs.items()
            if key[0] == cell}


def best_other_fails(sample, cell, best):
    """Whether the best other type fails >= 0.95x the best of the other
    others: spin left out, the bias of the maximum alone."""
    def mean(mutex):
        return statistics.mean(values(sample[cell, mutex], "ops_per_sec"))

    rest = [m for m in OTHERS if m != best]
    return mean(best) < 0.95 * max(mean(m) for m in rest)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--draws", type=int, default=2000)
    args = ap.parse_args()
    rng = random.Random(1)
    runs = load(args.results)
    cells = sorted({c for c, _ in runs})
    per_draw = [collections.Counter() for _ in range(args.draws)]

    print(f"{'cell':10} {'all runs':58} fails in a run of {args.repeat}: "
          + ", ".join(CRITERIA) + ", best other itself")
    for cell in cells:
        f = figures(runs, cell)
        n = min(len(rows) for (c, _), rows in runs.items() if c == cell)
        counts = collections.Counter()
        for d in range(args.draws):
            sample = draw(runs, cell, args.repeat, rng)
            for criterion in failures(cell, figures(sample, cell)):
                counts[criterion] += 1
                per_draw[d][criterion] += 1
            counts["best"] += best_other_fails(sample, cell, f["best"])
        name = "%d/%d/%d" % cell
        shares = " ".join("%4.0f%%" % (100 * counts[c] / args.draws)
                          for c in CRITERIA + ("best",))
        print(f"{name:10} {f['ratio']:.2f}x {f['best']:14} slowest {f['slowest']:.2f} "
              f"p99 {f['p99']:8.2f}/{f['p99_ww']:8.2f} us ({n} runs)  {shares}"
              f"  {' '.join(failures(cell, f))}")

    print(f"over {args.draws} simulated runs of the grid:")
    for criterion in CRITERIA:
        failing = [d[criterion] for d in per_draw]
        print(f"  {criterion}: {sum(failing) / len(failing):.1f} cells fail on average, "
              f"none in {100 * failing.count(0) / len(failing):.0f}% of runs")
    clean = sum(1 for d in per_draw if not sum(d.values()))
    print(f"  every criterion in every cell: {100 * clean / len(per_draw):.1f}% of runs")


if __name__ == "__main__":
    main()
