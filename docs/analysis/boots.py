#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Spin against the best other type, boot by boot, from runs of guest.sh.

    boots.py NAME

Reads build/runs/NAME-*/output.txt, each the output of one boot running
guest.sh with several TYPES (spin among them) and REP rounds: guest.sh
runs every type once per round, one after the other. Per cell and boot
prints spin's mean throughput over the best other type's of that boot,
the stddev of the per-round ratios (as the `±` of make bench's table),
and which type was best; then per cell the range over the boots. A
within-boot spread much narrower than the range over boots says that a
single boot, as one make bench is, samples the boot as much as the lock.
"""
import collections
import glob
import os
import re
import statistics
import sys

from ab import RUNS


def boot_runs(path):
    """{cell: {type: [ops/s per round]}} of one boot"""
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    for line in open(path):
        m = re.match(r'(\S+)\s+(\d+,\d+,\d+)\s+ops_per_sec=([\d.]+)', line)
        if m:
            cells[m.group(2)][m.group(1)].append(float(m.group(3)))
    return cells


def spin_vs_best(types):
    """spin's mean over the best other's, stddev of per-round ratios, best"""
    others = {t: statistics.mean(v) for t, v in types.items() if t != 'spin'}
    best = max(others, key=others.get)
    pairs = [s / b for s, b in zip(types['spin'], types[best])]
    sd = statistics.stdev(pairs) if len(pairs) > 1 else 0.0
    return statistics.mean(types['spin']) / others[best], sd, best


def main(name):
    paths = sorted(glob.glob(f'{RUNS}/{name}-*/output.txt'))
    if not paths:
        sys.exit(f'boots.py: no {RUNS}/{name}-*/output.txt')
    table = collections.defaultdict(list)
    for path in paths:
        boot = os.path.basename(os.path.dirname(path))
        for cell, types in sorted(boot_runs(path).items()):
            if 'spin' in types and len(types) > 1:
                table[cell].append((boot,) + spin_vs_best(types))
    for cell, rows in table.items():
        print(f'{cell}:')
        for boot, ratio, sd, best in rows:
            print(f'  {boot:24} {ratio:.3f}x ±{sd:.3f} ({best})')
        ratios = [r[1] for r in rows]
        print(f'  over {len(rows)} boots: {min(ratios):.3f}x to {max(ratios):.3f}x, '
              f'mean within-boot ± {statistics.mean(r[2] for r in rows):.3f}')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
