#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Pool the runs of ab.sh and compare kernel A with kernel B, per cell.

    ab.py TAG[,TAG...] KERNEL_A KERNEL_B

KERNEL_A and KERNEL_B are the basenames of the kernel directories given to
ab.sh. Prints per cell: mean throughput and the change, the slowest
thread's share (mean and minimum over the runs), sleeps per run, p99
acquisition latency in us, the lock's turns per thread and run (a turn
ends when a thread other than the last releaser takes the lock:
ops x (1 - last releaser's share) / threads), and the number of runs.
Then, per cell, 90% intervals of the throughput change and of the change
of the mean slowest share, by resampling whole boots with replacement
(runs of one boot are not independent: a boot can be slow throughout): a
change whose interval holds 0 is not told apart from the spread between
boots.

When the runs include ww (ab.sh with TYPES="ww spin"), also spin's
throughput over ww's in the same boot, per kernel: the median of those
per-boot ratios and a 90% interval of it, resampling boots.
"""
import collections
import glob
import os
import random
import re
import statistics
import sys

RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../build/runs')
DRAWS = 2000


def fields(line):
    return dict(x.split('=', 1) for x in line.split())


def runs(tags, kernel, mutex='spin'):
    """{cell: [(ops/s, slowest share, sleeps, p99 ns, boot, turns)]}"""
    cells = collections.defaultdict(list)
    for tag in tags:
        for path in sorted(glob.glob(f'{RUNS}/ab{tag}-{kernel}-*/output.txt')):
            lines = open(path).read().splitlines()
            for i, line in enumerate(lines):
                m = re.match(mutex + r'\s+(\S+)\s+(.*)', line)
                if not m:
                    continue
                f = fields(m.group(2))
                nxt = lines[i + 1] if i + 1 < len(lines) else ''
                stats = fields(nxt) if nxt.startswith('  ') else {}
                ops = float(f['ops_per_sec'])
                threads = int(m.group(1).split(',')[0])
                turns = ops * (1 - float(f['last_releaser_share'])) / threads
                cells[m.group(1)].append((ops, float(f['slowest_share']),
                                          int(stats.get('sleeps', 0)),
                                          float(f['lat_p99_ns']), path,
                                          turns))
    return cells


def by_boot(rows):
    boots = collections.defaultdict(list)
    for r in rows:
        boots[r[4]].append(r)
    return list(boots.values())


def interval(ra, rb, rng):
    """90% intervals of the throughput change and the slowest share's change"""
    ba, bb = by_boot(ra), by_boot(rb)
    ops, slowest = [], []
    for _ in range(DRAWS):
        da = [r for boot in rng.choices(ba, k=len(ba)) for r in boot]
        db = [r for boot in rng.choices(bb, k=len(bb)) for r in boot]
        ops.append(statistics.mean(r[0] for r in db) /
                   statistics.mean(r[0] for r in da) - 1)
        slowest.append(statistics.mean(r[1] for r in db) -
                       statistics.mean(r[1] for r in da))
    ops.sort()
    slowest.sort()
    lo, hi = int(0.05 * DRAWS), int(0.95 * DRAWS) - 1
    return ops[lo], ops[hi], slowest[lo], slowest[hi]


def versus_ww(spin, ww, rng):
    """Per cell: per-boot spin/ww ratios, their median and 90% interval"""
    out = {}
    for cell, rows in spin.items():
        ww_boots = {b[0][4]: statistics.mean(r[0] for r in b)
                    for b in by_boot(ww.get(cell, []))}
        ratios = [statistics.mean(r[0] for r in b) / ww_boots[b[0][4]]
                  for b in by_boot(rows) if b[0][4] in ww_boots]
        if not ratios:
            continue
        meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                      for _ in range(DRAWS))
        out[cell] = (statistics.median(ratios), meds[int(0.05 * DRAWS)],
                     meds[int(0.95 * DRAWS) - 1], len(ratios))
    return out


def main():
    tags, ka, kb = sys.argv[1].split(','), sys.argv[2], sys.argv[3]
    a, b = runs(tags, ka), runs(tags, kb)
    mean = statistics.mean
    print(f'cell       ops/s {ka} / {kb} (change)  slowest mean,min a / b'
          '  sleeps/run a / b  p99 us a / b  turns/thread a / b  n')
    for cell in a:
        ra, rb = a[cell], b.get(cell)
        if not rb:
            continue
        oa, ob = mean(r[0] for r in ra), mean(r[0] for r in rb)
        print('%-10s %8.0f / %8.0f (%+5.1f%%)  %.2f,%.2f / %.2f,%.2f'
              '  %5.0f / %5.0f  %5.0f / %5.0f  %5.0f / %5.0f  %d/%d' % (
                  cell, oa, ob, 100 * (ob / oa - 1),
                  mean(r[1] for r in ra), min(r[1] for r in ra),
                  mean(r[1] for r in rb), min(r[1] for r in rb),
                  mean(r[2] for r in ra), mean(r[2] for r in rb),
                  mean(r[3] for r in ra) / 1000, mean(r[3] for r in rb) / 1000,
                  mean(r[5] for r in ra), mean(r[5] for r in rb),
                  len(ra), len(rb)))
    rng = random.Random(1)
    print('90% intervals, resampling boots: ops/s change, slowest share change')
    for cell in a:
        if cell in b:
            o1, o2, s1, s2 = interval(a[cell], b[cell], rng)
            print('%-10s %+6.1f%% .. %+6.1f%%   %+.2f .. %+.2f' % (
                cell, 100 * o1, 100 * o2, s1, s2))
    for k in (ka, kb):
        vs = versus_ww(runs(tags, k), runs(tags, k, 'ww'), rng)
        if vs:
            print(f'spin / ww in the same boot, kernel {k}: median over '
                  'boots [90% interval], boots')
        for cell, (med, lo, hi, n) in vs.items():
            print('%-10s %.3f [%.3f, %.3f]  %d' % (cell, med, lo, hi, n))


if __name__ == '__main__':
    main()
