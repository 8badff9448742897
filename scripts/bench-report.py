#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guest's mutex benchmark runs into CSV, Markdown tables and a plot.

    bench-report.py RUN_DIR OUT_DIR [COUNT_DIR]

RUN_DIR holds results.jsonl (one `perf bench futex mutex --json` object per
run) and guest.txt from scripts/bench-guest.sh, and vm.txt from
scripts/vm-run.sh (the guest's accelerator, marked when it is TCG, and
vCPU pinning) or machine.txt from scripts/bench-host.sh (the machine's
summary line, which heads the report). COUNT_DIR, if given, holds
counts.jsonl and guest.txt of its count pass (COUNT=1) on the debug kernel:
hash-bucket lock acquisitions and queue heads created per run. Writes
OUT_DIR/results.csv (every run), OUT_DIR/counts.csv (every count run),
OUT_DIR/results.md (per cell: spin's verdict against every other type
from its ratios paired by round; per cell and type: means over the
rounds; also printed) and OUT_DIR/throughput.png (throughput, slowest
thread's share and p99 latency against threads, one column per load).

The verdict of spin against a type in a cell: the geometric mean of
spin's throughput over the type's in the same round, and its 95%
percentile bootstrap interval over the rounds. lead: the interval lies
above 1.05; trail: below 0.95; parity: otherwise. Beside it, how often
a type exactly as fast as spin would get a verdict other than parity,
with the noise of the run's own ratios (docs/statistics.md).
"""
import csv
import json
import os
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from paired import LEVEL, Judge, plot_comparisons

TYPES = ["ww", "ww-global", "spin", "spin-slice", "pi", "glibc", "glibc-adaptive",
         "tas", "slice", "none"]
# No lock at all: the bound of the cell, not a rival to beat.
CEILING = "none"
MARGIN = 0.05           # lead: the interval above 1.05; trail: below 0.95
FIELDS = ["mutex", "threads", "load", "wait", "load_kind", "futexes", "shared",
          "pinned", "runtime", "ops", "ops_per_sec", "thread_mean", "thread_min",
          "thread_max", "thread_stddev", "lock_syscalls_per_kop",
          "unlock_syscalls_per_kop", "user_spun_per_kop", "vcsw_per_kop",
          "ivcsw_per_kop",
          "slowest_share", "fastest_share", "jain", "last_releaser_share",
          "timed_last_releaser_share",
          "hold_ns", "gap_ns", "lat_p50_ns", "lat_p99_ns", "lat_max_ns",
          "clock_pair_ns", "time_every", "timed_ops", "slice_yields_per_kop",
          "hash_slots", "round", "exclusion", "error"]
# futex_spin/stats counted around each run of the count pass, per 1000 ops
SPIN_COUNTS = {"heads_created": "heads", "wakes": "wakes", "handoffs": "handoffs",
               "unanswered_wakes": "passed over"}
COUNT_FIELDS = FIELDS[:10] + ["hb_lock_acquisitions", "hb_lock_per_kop"] + [
    f for k in SPIN_COUNTS for f in (k, k + "_per_kop")] + [
    "hb_lock_class", "exclusion", "error"]
# Figures averaged over a cell's repeats; the max latency is the max.
FIGURES = ["ops_per_sec", "hold_ns", "gap_ns", "last_releaser_share",
           "slowest_share", "fastest_share", "jain", "lat_p50_ns", "lat_p99_ns"]


def mean(values):
    return statistics.mean(values) if values else None


def by_round(runs):
    """(type, cell) -> {round: throughput} of the runs that have a round."""
    out = defaultdict(dict)
    for r in runs:
        if r.get("ops_per_sec") is not None and "round" in r and not r.get("error"):
            out[(r["mutex"], cell_of(r))][r["round"]] = r["ops_per_sec"]
    return out


def read_keys(path):
    """The key=value lines of a file, as a dict."""
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text().splitlines()
                if "=" in line)


def read_runs(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()
            if line.startswith("{")]


def fmt(v, spec=".0f", none="-"):
    return none if v is None else format(v, spec)


def fmt_us(ns, none="-"):
    """ns as µs, with about three significant digits."""
    if ns is None:
        return none
    us = ns / 1000.0
    return format(us, ".2f" if us < 10 else ".1f" if us < 100 else ".0f")


def per_kop(n, ops):
    return 1000.0 * n / ops if n is not None and ops else None


def write_csv(path, fields, runs):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows({k: int(v) if isinstance(v, bool) else v for k, v in r.items()}
                    for r in runs)


def cell_of(r):
    return (r["threads"], r["load"], r.get("wait", 0))


def verdict_table(verdicts, cells, rivals, rounds, fig):
    """Markdown: spin's verdicts per cell, then every comparison in full."""
    short = {"lead": "lead", "parity": "par.", "trail": "**trail**"}
    md = [f"spin against every type: the geometric mean over the rounds of spin's "
          f"throughput over the type's in the same round, and the verdict from its "
          f"{LEVEL:.0%} bootstrap interval (lead: above {1 + MARGIN:.2f}; trail: below "
          f"{1 - MARGIN:.2f}; par.: parity, otherwise). none: the same work with no "
          f"lock at all; where spin / none is near 1, the CPUs bound the cell, not "
          f"the lock.",
          "", "| threads | load | wait | spin kops/s | none kops/s | spin / none | "
          + " | ".join(rivals) + " |", "|---:|---:|---:|---:|---:|---:|"
          + "---|" * len(rivals)]
    for cell in cells:
        spin = mean(fig.get(("spin", cell), {}).get("ops_per_sec", []))
        ceiling = mean(fig.get((CEILING, cell), {}).get("ops_per_sec", []))
        share = compare_plain(rounds, cell, CEILING)
        row = [fmt(spin and spin / 1000), fmt(ceiling and ceiling / 1000),
               fmt(share, ".2f")]
        for t in rivals:
            c = verdicts.get((cell, t))
            row.append(f"{c.ratio:.2f} {short[c.verdict]}" if c else "-")
        md.append(f"| {cell[0]} | {cell[1]} | {cell[2]} | " + " | ".join(row) + " |")

    tally = defaultdict(lambda: defaultdict(int))
    for (_, t), c in verdicts.items():
        tally[t][c.verdict] += 1
    expected = sum(c.false_chance for c in verdicts.values())
    md += ["", "Verdicts per type (lead / parity / trail): "
           + "; ".join(f"{t} {tally[t]['lead']} / {tally[t]['parity']} / {tally[t]['trail']}"
                       for t in rivals if t in tally) + ".",
           "", f"Had every type been exactly as fast as spin in every cell, the "
           f"{len(verdicts)} comparisons, each with its own noise, would have given "
           f"{expected:.1f} verdicts other than parity on average: the sum over the "
           f"comparisons of the chance in the last column of their list.", "",
           "| threads | load | wait | type | spin / type | 95% interval | rounds | verdict "
           "| P(not parity \\| equal) |", "|---:|---:|---:|---|---:|---|---:|---|---:|"]
    order = sorted(verdicts, key=lambda k: (k[0], rivals.index(k[1])))
    for cell, t in order:
        c = verdicts[(cell, t)]
        md.append(f"| {cell[0]} | {cell[1]} | {cell[2]} | {t} | {c.ratio:.3f} "
                  f"| {c.lo:.3f} to {c.hi:.3f} | {c.rounds} | {c.verdict} "
                  f"| {c.false_chance:.3f} |")
    return md


def where_guest(vm):
    """The guest's line of the report: the accelerator, its vCPUs' pinning, the host."""
    pin = vm.get("pin", "none")
    line = (f"QEMU {vm['accel']} on a host of {vm['host']}, {vm['date']}; vCPU threads "
            + ("not pinned." if pin == "none" else f"pinned (vCPU:host CPU {pin})."))
    if vm["accel"].startswith("tcg"):
        line = ("**TCG: QEMU emulates the vCPUs. Timings are distorted; compare lock "
                "types within this run, not with other machines.** " + line)
    return line


def compare_plain(rounds, cell, t):
    """The geometric mean of spin's throughput over t's, paired by round."""
    a, b = rounds.get(("spin", cell), {}), rounds.get((t, cell), {})
    common = set(a) & set(b)
    if not common:
        return None
    return math.exp(statistics.mean(math.log(a[r] / b[r]) for r in common))


def main(run_dir, out_dir, count_dir=None):
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = read_runs(run_dir / "results.jsonl")
    guest = read_keys(run_dir / "guest.txt")
    vm = read_keys(run_dir / "vm.txt")
    write_csv(out_dir / "results.csv", FIELDS, runs)

    # Unsupported types come as one line with only an error and no cell.
    missing = {r["mutex"]: r["error"] for r in runs if "threads" not in r}
    # none breaks exclusion by design: bench-guest.sh fails it if it does not.
    errors = [r for r in runs if "threads" in r and
              (r.get("error") or (r["exclusion"] != "ok" and r["mutex"] != CEILING))]
    fig = defaultdict(lambda: defaultdict(list))   # (type, cell) -> figure -> [values]
    for r in runs:
        if "ops_per_sec" not in r:
            continue
        f = fig[(r["mutex"], cell_of(r))]
        for k in FIGURES + ["lat_max_ns", "clock_pair_ns", "time_every", "vcsw_per_kop"]:
            if r.get(k) is not None:
                f[k].append(r[k])
        if r["lock_syscalls_per_kop"] is not None:
            f["sys"].append(r["lock_syscalls_per_kop"] + r["unlock_syscalls_per_kop"])
    types = [t for t in TYPES if any(k[0] == t for k in fig)]
    cells = sorted({k[1] for k in fig})

    def m(t, cell, key):
        return mean(fig.get((t, cell), {}).get(key, []))

    def mx(t, cell, key):
        v = fig.get((t, cell), {}).get(key, [])
        return max(v) if v else None

    counts, count_guest, count_errors = {}, {}, []
    if count_dir:
        count_runs = read_runs(Path(count_dir) / "counts.jsonl")
        count_guest = read_keys(Path(count_dir) / "guest.txt")
        for r in count_runs:
            if "threads" not in r:
                continue
            if r.get("error") or r.get("exclusion") != "ok":
                count_errors.append(r)
            r["hb_lock_per_kop"] = per_kop(r.get("hb_lock_acquisitions"), r.get("ops"))
            for k in SPIN_COUNTS:
                r[k + "_per_kop"] = per_kop(r.get(k), r.get("ops"))
            counts[(r["mutex"], cell_of(r))] = r
        write_csv(out_dir / "counts.csv", COUNT_FIELDS, count_runs)
    classes = sorted({r["hb_lock_class"] for r in counts.values() if r.get("hb_lock_class")})

    kind = guest.get("load_kind", "pause")
    machine = read_keys(run_dir / "machine.txt")
    md = ["# futex mutex benchmark", ""]
    if machine or vm:
        md += [machine["summary"] if machine else where_guest(vm), ""]
    md += [f"{'Guest kernel' if vm and not machine else 'Kernel'} {guest.get('kernel', '?')}, {guest.get('cpus', '?')} CPUs; "
          f"{guest.get('repeat', '?')} rounds of a run of {guest.get('runtime', '?')} s "
          f"per cell and type; glibc's rseq registration off; extra options: `{guest.get('args') or 'none'}`. "
          f"Unit of work (`--load-kind`): **{kind}**"
          + (" (one word read, multiplied and written back on each of 4 cache lines: "
             "the lock's inside the lock, the thread's own outside)" if kind == "rmw" else
             " (one pause instruction)" if kind == "pause" else "")
          + "; load = units inside the lock, wait = units outside it. "
          "kops/s = thousand lock/unlock pairs per second, all threads; "
          "A round runs each type once, each round starting one type later. "
          + (f"Host load average (1, 5, 15 min) at boot: {vm['load_start']}, "
             f"at the end: {vm['load_end']}." if "load_end" in vm else
             "Host load average (1, 5, 15 min) when the report was made: "
             + ", ".join(f"{x:.1f}" for x in os.getloadavg()) + "."), ""]
    if guest.get("debug"):
        md += ["**DEBUG KERNEL (lockdep/KASAN/kmemleak): functional run only, "
               "these numbers are no benchmark result.**", ""]
    for t, why in missing.items():
        md.append(f"**{t}: not measured, it could not run here: {why}.**")
        md.append("")
    for r in errors + count_errors:
        md.append(f"**FAILED{' (count pass)' if r in count_errors else ''}: "
                  f"{r['mutex']} threads={r['threads']} load={r['load']} "
                  f"wait={r.get('wait', 0)}: {r.get('error') or 'mutual exclusion broken'}**")
        md.append("")

    judge = Judge(MARGIN)
    rounds = by_round(runs)
    rivals = [t for t in types if t not in ("spin", CEILING)]
    verdicts = {(cell, t): c for cell in cells for t in rivals
                if (c := judge.compare(rounds.get(("spin", cell), {}),
                                       rounds.get((t, cell), {})))}
    md += verdict_table(verdicts, cells, rivals, rounds, fig)

    if count_dir:
        where = (f"one run per cell and type on the debug kernel "
                 f"{count_guest.get('kernel', '?')} (KASAN, lockdep, lock_stat): counts, "
                 "not timings")
        hb_what = (f"acquisitions of the lock_stat class{'es' if len(classes) > 1 else ''} "
                   + ", ".join(f"`{c}`" for c in classes)
                   + ", including the benchmark's start and exit" if classes else
                   "no lock_stat class matched, or the kernel has no lock_stat")
        md += ["", "Lock + unlock syscalls and voluntary context switches per 1000 ops "
               "(means); hash-bucket lock acquisitions (hb), and spin's queue heads created, "
               "wakeups, handoffs and wakeups passed over by a pass-over timer, per "
               f"1000 ops ({where}; hb: {hb_what}; n/a: the kernel does not count it):", ""]
    else:
        md += ["", "Lock + unlock syscalls and voluntary context switches per 1000 ops "
               "(means; no count pass, so no hash-bucket lock counts):", ""]
    md += ["| threads | load | wait | "
           + " | ".join(f"{t} sys | {t} vcsw" for t in ("ww", "spin", "pi"))
           + " | ww hb | spin hb | "
           + " | ".join(f"spin {v}" for v in SPIN_COUNTS.values()) + " |",
           "|---:|---:|---:|" + "---:|" * (8 + len(SPIN_COUNTS))]
    for cell in cells:
        row = []
        for t in ("ww", "spin", "pi"):
            row.append(fmt(m(t, cell, "sys"), ".1f"))
            row.append(fmt(m(t, cell, "vcsw_per_kop"), ".1f"))
        for t, key in [("ww", "hb_lock_per_kop"), ("spin", "hb_lock_per_kop")] + [
                ("spin", k + "_per_kop") for k in SPIN_COUNTS]:
            c = counts.get((t, cell))
            row.append(fmt(c.get(key), ".1f", "n/a") if c else "-")
        md.append(f"| {cell[0]} | {cell[1]} | {cell[2]} | " + " | ".join(row) + " |")

    clock = [v for f in fig.values() for v in f.get("clock_pair_ns", [])]
    every = "/".join(str(v) for v in sorted({v for f in fig.values()
                                             for v in f.get("time_every", [])}))
    if clock:
        md += ["", "Fairness and latency, ww / spin (means over the runs; max: the "
               "longest of all runs). gap: from a release to the next acquisition by "
               "any thread; last rel.: share of acquisitions by the thread that "
               "released last; slowest: the slowest thread's acquisitions over the "
               "mean of all threads; Jain: Jain's fairness index over the threads' "
               "acquisitions (1: all equal, 1/threads: one thread does all); p99 and "
               "max: acquisition latency, from a failed first attempt to owning "
               "the lock (0 when the first attempt took it). "
               "Timed: " + (f"one operation in {every} at random (max: the longest of "
                            "those)" if every not in ("", "1") else "every operation")
               + ", with 2 clock reads inside the lock and one more before the "
               "lock call after a failed first attempt; a pair of "
               f"reads cost {statistics.median(clock):.0f} ns before the runs "
               f"(median, {min(clock):.0f} to {max(clock):.0f}).", "",
               "| threads | load | wait | gap µs | last rel. % | slowest | Jain "
               "| p99 µs | max ms |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

        def pair(cell, key, f):
            return " / ".join(f(m(t, cell, key)) for t in ("ww", "spin"))
        for cell in cells:
            md.append(
                f"| {cell[0]} | {cell[1]} | {cell[2]} "
                f"| {pair(cell, 'gap_ns', fmt_us)} "
                f"| {pair(cell, 'last_releaser_share', lambda v: fmt(v and 100 * v, '.0f'))} "
                f"| {pair(cell, 'slowest_share', lambda v: fmt(v, '.2f'))} "
                f"| {pair(cell, 'jain', lambda v: fmt(v, '.2f'))} "
                f"| {pair(cell, 'lat_p99_ns', fmt_us)} "
                f"| {' / '.join(fmt(v and v / 1e6, '.1f') for v in (mx('ww', cell, 'lat_max_ns'), mx('spin', cell, 'lat_max_ns')))} |")

    md += ["", "Every type (means over the runs; hold: from owning the lock to "
           "releasing it, with 2 clock reads; p50, p99, max: acquisition latency; "
           "slowest and fastest thread over the mean):", "",
           "| threads | load | wait | type | kops/s | hold µs | gap µs | last rel. % "
           "| slowest | fastest | Jain | p50 µs | p99 µs | max µs |",
           "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for cell in cells:
        for t in types:
            if (t, cell) not in fig:
                continue
            md.append(
                f"| {cell[0]} | {cell[1]} | {cell[2]} | {t} "
                f"| {fmt(m(t, cell, 'ops_per_sec') and m(t, cell, 'ops_per_sec') / 1000)} "
                f"| {fmt_us(m(t, cell, 'hold_ns'))} | {fmt_us(m(t, cell, 'gap_ns'))} "
                f"| {fmt(m(t, cell, 'last_releaser_share') and 100 * m(t, cell, 'last_releaser_share'), '.0f')} "
                f"| {fmt(m(t, cell, 'slowest_share'), '.2f')} "
                f"| {fmt(m(t, cell, 'fastest_share'), '.2f')} "
                f"| {fmt(m(t, cell, 'jain'), '.3f')} "
                f"| {fmt_us(m(t, cell, 'lat_p50_ns'))} | {fmt_us(m(t, cell, 'lat_p99_ns'))} "
                f"| {fmt_us(mx(t, cell, 'lat_max_ns'))} |")

    text = "\n".join(md) + "\n"
    (out_dir / "results.md").write_text(text)
    print(text)

    plot(out_dir / "throughput.png", fig, types, cells, guest)
    # One plot per question: does the private hash close the gap, and does
    # user-space spinning with a time-slice extension?
    for name, question, against in (
            ("private-hash.png", "spin against ww on the private and the global hash",
             ("ww", "ww-global")),
            ("slice.png", "spin against the rseq time-slice extension",
             ("slice", "spin-slice", "glibc-adaptive"))):
        plot_comparisons(out_dir / name, f"{question} (95% interval)",
                         [(f"{t} {'/'.join(map(str, cell))}", verdicts.get((cell, t)))
                          for cell in cells for t in against],
                         MARGIN, "spin / type (throughput; threads/load/wait)")
    print(f"bench: wrote {out_dir}/results.csv, "
          + ("counts.csv, " if count_dir else "")
          + "results.md, throughput.png, private-hash.png, slice.png")
    return 1 if errors or count_errors else 0


def plot(path, fig, types, cells, guest):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    loads = sorted({c[1] for c in cells})
    # The outside work is a multiple of the load: one set of rows per factor.
    wait_of = {(c[2] / c[1] if c[1] else c[2], c[1]): c[2] for c in cells}
    factors = sorted({f for f, _ in wait_of})
    threads = sorted({c[0] for c in cells})
    rows = [("ops_per_sec", "kops/s", 1e-3, "log"),
            ("slowest_share", "slowest thread / mean", 1, "linear"),
            ("lat_p99_ns", "p99 acquisition latency, µs", 1e-3, "log")]
    nrows = len(rows) * len(factors)
    figure, axes = plt.subplots(nrows, len(loads), figsize=(5 * len(loads), 3.6 * nrows),
                                squeeze=False)
    for fi, factor in enumerate(factors):
        for ri, (key, label, scale, yscale) in enumerate(rows):
            for ci, load in enumerate(loads):
                ax = axes[fi * len(rows) + ri][ci]
                wait = wait_of.get((factor, load))
                if wait is None:
                    ax.axis("off")
                    continue
                for t in types:
                    xs, ys, es = [], [], []
                    for n in threads:
                        v = [x * scale for x in fig.get((t, (n, load, wait)), {}).get(key, [])]
                        if v:
                            xs.append(n)
                            ys.append(statistics.mean(v))
                            es.append(statistics.stdev(v) if len(v) > 1 else 0.0)
                    if xs:
                        ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=t,
                                    linewidth=2.5 if t == "spin" else 1.2)
                ax.set_title(f"load {load}, wait {wait}: {label}", fontsize="medium")
                ax.set_xscale("log", base=2)
                ax.set_yscale(yscale)
                if yscale == "linear":
                    ax.set_ylim(bottom=0)
                ax.set_xticks(threads, [str(n) for n in threads])
                ax.set_xlabel("threads")
                ax.set_ylabel(label)
                ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize="small")
    figure.suptitle(("DEBUG KERNEL, NOT A RESULT: " if guest.get("debug") else "")
                    + f"perf bench futex mutex ({guest.get('load_kind', 'pause')} work),\n"
                    f"kernel {guest.get('kernel', '?')}, {guest.get('cpus', '?')} CPUs "
                    f"(mean and stddev of {guest.get('repeat', '?')} runs)")
    # Room for the title above the top row's titles.
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.8 / (3.6 * nrows)))
    figure.savefig(path, dpi=80)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
