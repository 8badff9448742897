#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of make bench-peers, from its guest run directory.

    peers-report.py RUN_DIR OUT_DIR

RUN_DIR/peers.txt has one line per will-it-scale run of
scripts/peers-guest.sh: round, test, tasks, variant, ops/s. Per
pthread_mutex test and task count, the preload's ops/s over glibc's in
the same round, in spin and in waitwake mode: the geometric mean over the
rounds, its 95% bootstrap interval and the verdict with a 5% margin
(scripts/paired.py). The futex tests, which the preload does not reach,
get their mean ops/s. Spin over waitwake, both the preload, separates
what FUTEX_SPIN_LOCK brings from what the library's own fast path and
spinning bring. Writes OUT_DIR/results.md (also printed) and
OUT_DIR/peers.png; exits 1 if spin trails glibc anywhere, leads it
nowhere, or a run failed. The machine's summary in machine.txt (make
bench-host) heads the report, else the host of vm.txt.
"""
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from paired import Judge, plot_comparisons

MARGIN = 0.05
MODES = ("spin", "waitwake")


def main(run_dir, out_dir):
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ops = defaultdict(dict)     # (test, tasks, variant) -> round -> ops/s
    failed = 0
    for line in (run_dir / "peers.txt").read_text().splitlines():
        r, test, n, variant, value = line.split()
        if value == "-":
            failed += 1
            continue
        ops[(test, int(n), variant)][int(r)] = float(value)
    points = sorted({(t, n) for t, n, _ in ops})
    judge = Judge(MARGIN)
    cmp = {(t, n, m): judge.compare(ops[(t, n, m)], ops[(t, n, "glibc")])
           for t, n in points if t.startswith("pthread_mutex") for m in MODES}
    kernel = {(t, n): judge.compare(ops[(t, n, "spin")], ops[(t, n, "waitwake")])
              for t, n in points if t.startswith("pthread_mutex")}

    guest = (run_dir / "guest.txt").read_text().strip() if (run_dir / "guest.txt").exists() else "?"
    keys = {name: dict(line.partition("=")[::2] for line in (run_dir / name).read_text().splitlines())
            for name in ("vm.txt", "machine.txt") if (run_dir / name).exists()}
    # make bench-host writes the machine's summary, make bench-peers the guest's host.
    where = (f"{keys['machine.txt']['summary']} Run: {guest}." if "machine.txt" in keys else
             f"Host: {keys.get('vm.txt', {}).get('host', '?')}; guest: {guest}. `make bench-peers`.")
    md = ["# will-it-scale under the preload", "",
          f"{where} Per "
          "test and number of tasks (threads mode), the preload's ops/s over "
          "glibc's in the same round: the geometric mean over the rounds, its 95% "
          f"bootstrap interval, and the verdict: lead above {1 + MARGIN:.2f}, trail "
          f"below {1 - MARGIN:.2f}, parity otherwise. spin: the preload's pthread "
          "mutexes on FUTEX_SPIN_LOCK; waitwake: the preload forced to its wait-wake "
          "fallback.", "",
          "| test | tasks | glibc kops/s | spin / glibc | 95% interval | verdict "
          "| waitwake / glibc | 95% interval | verdict |",
          "|---|---:|---:|---:|---|---|---:|---|---|"]
    tally = defaultdict(int)
    for t, n in points:
        if not t.startswith("pthread_mutex"):
            continue
        glibc = ops[(t, n, "glibc")]
        row = [t, str(n), f"{statistics.mean(glibc.values()) / 1000:.0f}" if glibc else "-"]
        for m in MODES:
            c = cmp[(t, n, m)]
            if m == "spin":
                tally[c.verdict if c else "missing"] += 1
            row += ([f"{c.ratio:.2f}", f"{c.lo:.2f} to {c.hi:.2f}", c.verdict] if c
                    else ["-", "-", "-"])
        md.append("| " + " | ".join(row) + " |")
    md += ["", "What the kernel's operations add: spin over waitwake, the same "
           "library with the same fast path and the same spinning in user space "
           "before it enters the kernel:", "",
           "| test | tasks | spin / waitwake | 95% interval | verdict |",
           "|---|---:|---:|---|---|"]
    for (t, n), c in kernel.items():
        md.append(f"| {t} | {n} | " + (f"{c.ratio:.2f} | {c.lo:.2f} to {c.hi:.2f} | "
                                       f"{c.verdict} |" if c else "- | - | - |"))
    futex = [(t, n) for t, n in points if not t.startswith("pthread_mutex")]
    if futex:
        md += ["", "The futex tests (glibc only: they make the futex system calls "
               "themselves), mean kops/s over the rounds:", "",
               "| test | tasks | kops/s |", "|---|---:|---:|"]
        for t, n in futex:
            v = ops[(t, n, "glibc")]
            md.append(f"| {t} | {n} | {statistics.mean(v.values()) / 1000:.0f} |"
                      if v else f"| {t} | {n} | - |")
    md += ["", f"spin against glibc: {tally['lead']} lead, {tally['parity']} parity, "
           f"{tally['trail']} trail" + (f", {tally['missing']} without two rounds"
                                       if tally["missing"] else "")
           + (f"; {failed} runs failed" if failed else "") + ". Had spin been exactly "
           "as fast as glibc, its comparisons would show "
           f"{sum(c.false_chance for (_, _, m), c in cmp.items() if c and m == 'spin'):.1f} "
           "verdicts other than parity on average."]
    text = "\n".join(md) + "\n"
    (out_dir / "results.md").write_text(text)
    print(text)
    plot_comparisons(out_dir / "peers.png", "will-it-scale: the preload (spin) against "
                     "glibc (95% interval)",
                     [(f"{t} x{n}", cmp[(t, n, "spin")]) for t, n in points
                      if t.startswith("pthread_mutex")], MARGIN, "spin / glibc (ops/s)")
    return 1 if failed or tally["trail"] or tally["missing"] or not tally["lead"] else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
