#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the variants of one cell from a run of variants.sh.

    variants.py RUN_DIR [BASE]

Per variant: the medians over the rounds of its throughput and counters
(lock and unlock system calls, reads of the word in user space and
voluntary context switches per 1000 operations, hold and gap in ns, the
last releaser's share), and BASE's throughput over the variant's, paired
by round, with its 95% bootstrap interval and the verdict of make bench
(a 5% margin; scripts/paired.py). BASE is the first variant if not given.
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from paired import Judge  # noqa: E402

FIGURES = ("ops_per_sec", "lock_syscalls_per_kop", "unlock_syscalls_per_kop",
           "user_spun_per_kop", "vcsw_per_kop", "hold_ns", "gap_ns",
           "last_releaser_share")


def main(run_dir, base=None):
    runs = [json.loads(line) for line in
            (Path(run_dir) / "variants.jsonl").read_text().splitlines()]
    by = {}
    for r in runs:
        by.setdefault(r["variant"], {})[r["round"]] = r
    base = base or runs[0]["variant"]
    judge = Judge(0.05)
    print("variant | " + " | ".join(f.replace("_per_kop", "/kop") for f in FIGURES)
          + f" | {base} / variant [95%] verdict")
    for v, rounds in by.items():
        med = []
        for f in FIGURES:
            vals = [r[f] for r in rounds.values() if r.get(f) is not None]
            med.append(f"{statistics.median(vals):.4g}" if vals else "-")
        c = None if v == base else judge.compare(
            {k: r["ops_per_sec"] for k, r in by[base].items()},
            {k: r["ops_per_sec"] for k, r in rounds.items()})
        verdict = (f"{c.ratio:.3f} [{c.lo:.3f}, {c.hi:.3f}] {c.verdict}, {c.rounds} rounds"
                   if c else "-")
        print(f"{v} | " + " | ".join(med) + f" | {verdict}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])
