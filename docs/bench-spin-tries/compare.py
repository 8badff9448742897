#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Per cell of guest-sweep.sh's runs: ww, glibc-adaptive and tas in kops/s,
then for each --spin-tries value spin's ratio to the best of those three,
its slowest thread's share (sl), its p99 over ww's (p) and its lock
syscalls per 1000 ops (y); last the worst and the geometric mean ratio.

    compare.py runs.jsonl
"""
import json
import statistics as st
import sys
from collections import defaultdict

OTHERS = ('ww', 'glibc-adaptive', 'tas')


def main(path):
    runs = defaultdict(list)
    for line in open(path):
        if line.startswith('{'):
            r = json.loads(line)
            label = f"s{r['spin_tries']}" if r['mutex'] == 'spin' else r['mutex']
            runs[(label, r['threads'], r['load'], r['wait'])].append(r)

    def mean(key, field='ops_per_sec'):
        return st.mean(r[field] for r in runs[key])

    labels = sorted({k[0] for k in runs if k[0] not in OTHERS},
                    key=lambda s: int(s[1:]))
    cells = sorted({k[1:] for k in runs})
    ratios = defaultdict(list)
    print('cell', 'ww gad tas', *labels, sep=' | ')
    for c in cells:
        best = max(mean((t,) + c) for t in OTHERS)
        row = [f'{c[0]}/{c[1]}/{c[2]}',
               ' '.join(f'{mean((t,) + c) / 1e3:.0f}' for t in OTHERS)]
        for s in labels:
            k = (s,) + c
            ratios[s].append(mean(k) / best)
            p99 = mean(k, 'lat_p99_ns') / mean(('ww',) + c, 'lat_p99_ns')
            row.append(f"{ratios[s][-1]:.2f} sl{mean(k, 'slowest_share'):.2f} "
                       f"p{p99:.2f} y{mean(k, 'lock_syscalls_per_kop'):.0f}")
        print(' | '.join(row))
    print('worst ratio:', ' '.join(f'{s} {min(ratios[s]):.2f}' for s in labels))
    print('geomean ratio:',
          ' '.join(f'{s} {st.geometric_mean(ratios[s]):.3f}' for s in labels))


if __name__ == '__main__':
    main(sys.argv[1])
