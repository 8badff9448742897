#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How often "spin >= 0.95x the best other" fails when spin is no worse.

    parity.py [results.csv] [--draws N]   (default: build/bench/results.csv)

The criterion divides spin's mean by the largest of the other types'
means. Each mean is of a few noisy runs, and the largest of several noisy
means is biased upwards: if spin and its rivals had the same throughput,
the ratio would still fall below 1, and below 0.95 as often as the noise
allows. Per cell this takes the rivals (the other types whose mean is
within 10% of the best; the rest never win), the relative stddev of one
run (pooled over spin and the rivals), and the number of runs per type,
and draws equal locks with that noise: the share of draws below 0.95x is
the chance that the cell fails with spin exactly as fast as its rivals.
Then, over the cells where spin's ratio is below 1.10 (where it is about
as fast as its rivals), the number of cells expected to fail if it were
exactly as fast, beside the number that failed in the file.
"""

import random
import statistics
import sys

from acceptance import OTHERS, RATIO_MIN, load, values

RIVAL = 0.90        # a type within 10% of the best other type's mean
NEAR = 1.10         # spin's ratio below this: about as fast as its rivals


def pooled_sd(groups):
    """Relative stddev of one run, pooled over groups of runs."""
    dev = n = 0
    for runs in groups:
        m = statistics.mean(runs)
        dev += sum((x / m - 1) ** 2 for x in runs)
        n += len(runs) - 1
    return (dev / n) ** 0.5 if n else 0.0


def fail_chance(rivals, sd, runs, draws, rng):
    """P(mean of spin < RATIO_MIN x max of rivals' means), all alike."""
    def mean():
        return statistics.mean(rng.gauss(1.0, sd) for _ in range(runs))

    fails = sum(mean() < RATIO_MIN * max(mean() for _ in range(rivals))
                for _ in range(draws))
    return fails / draws


def main(path, draws):
    rng = random.Random(1)
    expected = failed = near = 0
    print(f"{'cell':10} {'ratio':>6} {'rivals':>6} {'sd/run':>7} {'P(fail | equal)':>16}")
    runs = load(path)
    for cell in sorted({c for c, _ in runs}):
        types = {m: values(runs[cell, m], "ops_per_sec") for m in ("spin",) + OTHERS}
        means = {t: statistics.mean(v) for t, v in types.items() if t != "spin" and v}
        best = max(means.values())
        rivals = [t for t, m in means.items() if m >= RIVAL * best]
        ratio = statistics.mean(types["spin"]) / best
        sd = pooled_sd([types["spin"]] + [types[t] for t in rivals])
        p = fail_chance(len(rivals), sd, len(types["spin"]), draws, rng)
        if ratio < NEAR:
            near += 1
            expected += p
        failed += ratio < RATIO_MIN
        print(f"{'%d/%d/%d' % cell:10} {ratio:5.2f}x {len(rivals):6} {sd:7.3f} {p:16.2f}"
              + ("  fails" if ratio < RATIO_MIN else ""))
    print(f"{near} cells with spin below {NEAR:.2f}x the best other; "
          f"expected to fail if spin equalled its rivals there: {expected:.1f}; "
          f"failed: {failed}")


if __name__ == "__main__":
    args = sys.argv[1:]
    n = 4000
    if "--draws" in args:
        i = args.index("--draws")
        n = int(args[i + 1])
        del args[i:i + 2]
    main(args[0] if args else "build/bench/results.csv", n)
