#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of make bench-regress.

    regress-report.py OUT_DIR

OUT_DIR/runs.jsonl has one line per benchmark run of
scripts/regress-guest.sh: kernel (series or base), round, bench, options,
value and whether higher is better. Per benchmark, the series' speed
over the base's in the same round (for a time, the base's time over the
series'), its 95% bootstrap interval and the verdict with a 2% margin
(scripts/paired.py). Writes OUT_DIR/results.md (also printed) and
OUT_DIR/regress.png; exits 1 if the series trails anywhere or a
benchmark has fewer than two paired rounds.
"""
import json
import sys
from collections import defaultdict
from pathlib import Path

from paired import Judge, plot_comparisons

MARGIN = 0.02


def main(out):
    out = Path(out)
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()
            if line.startswith("{")]
    speed = defaultdict(lambda: defaultdict(dict))   # bench -> kernel -> round -> speed
    order = []
    for r in runs:
        key = f"{r['bench']} {r['options']}".strip()
        if key not in order:
            order.append(key)
        v = r["value"]
        speed[key][r["kernel"]][r["round"]] = v if r["higher_better"] else 1.0 / v
    judge = Judge(MARGIN)
    results = [(key, judge.compare(speed[key]["series"], speed[key]["base"]))
               for key in order]

    vm = dict(line.partition("=")[::2] for line in
              (out / "vm.txt").read_text().splitlines()) if (out / "vm.txt").exists() else {}
    releases = ", ".join(sorted({f"{r['kernel']} {r['release']}" for r in runs}))
    clock = ("The guests' clocks count instructions (QEMU `-icount`, 1 ns per "
             "instruction, idle time skipped): a speed is per instruction executed, "
             "not per second of the host. " if vm.get("accel") == "tcg-icount" else
             f"The guests ran on the wall clock ({vm.get('accel', '?')}). ")
    md = ["# Upstream's futex benchmarks with the series and without it", "",
          f"Host: {vm.get('host', '?')}; guest: {vm.get('vcpus', '?')} vCPUs; "
          f"kernels: {releases}. `make bench-regress`. " + clock
          + "Per benchmark, the series' speed over the base "
          "kernel's in the same round (operations/s; for wake, wake-parallel and "
          "requeue, the base's time over the series'), the geometric mean over the "
          f"rounds, its 95% bootstrap interval, and the verdict: trail if the "
          f"interval lies below {1 - MARGIN:.2f}, lead above {1 + MARGIN:.2f}, "
          "parity otherwise.", "",
          "| benchmark | series / base | 95% interval | rounds | verdict "
          "| P(not parity \\| equal) |", "|---|---:|---|---:|---|---:|"]
    bad = False
    for key, c in results:
        if not c:
            md.append(f"| `{key}` | - | - | - | too few rounds | - |")
            bad = True
            continue
        bad |= c.verdict == "trail"
        md.append(f"| `{key}` | {c.ratio:.3f} | {c.lo:.3f} to {c.hi:.3f} | {c.rounds} "
                  f"| {c.verdict} | {c.false_chance:.3f} |")
    text = "\n".join(md) + "\n"
    (out / "results.md").write_text(text)
    print(text)
    plot_comparisons(out / "regress.png", "Does the series slow upstream's futex "
                     "benchmarks? (series / base, 95% interval)",
                     results, MARGIN, "series / base (speed)")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
