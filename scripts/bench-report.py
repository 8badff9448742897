#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guest's mutex benchmark runs into a CSV, a Markdown table and a plot.

    bench-report.py RUN_DIR OUT_DIR

RUN_DIR holds results.jsonl (one `perf bench futex mutex --json` object per
run) and guest.txt from scripts/bench-guest.sh. Writes OUT_DIR/results.csv
(every run), OUT_DIR/results.md (per cell: mean kops/s and stddev% over the
repeats; also printed) and OUT_DIR/throughput.png.
"""
import csv
import json
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path

TYPES = ["ww", "spin", "pi", "glibc", "glibc-adaptive", "tas"]
FIELDS = ["mutex", "threads", "load", "wait", "futexes", "shared", "pinned",
          "runtime", "ops", "ops_per_sec", "thread_mean", "thread_min",
          "thread_max", "thread_stddev", "lock_syscalls_per_kop",
          "unlock_syscalls_per_kop", "vcsw_per_kop", "ivcsw_per_kop",
          "exclusion", "error"]


def mean_sd(values):
    """Mean and relative sample stddev (%) of a list of numbers."""
    if not values:
        return None, None
    m = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return m, (100.0 * sd / m if m else 0.0)


def read_keys(path):
    """The key=value lines of a file, as a dict."""
    return dict(line.split("=", 1) for line in path.read_text().splitlines()
                if "=" in line)


def fmt(v, spec=".0f", none="-"):
    return none if v is None else format(v, spec)


def main(run_dir, out_dir):
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()
            if line.startswith("{")]
    guest = read_keys(run_dir / "guest.txt")
    vm = read_keys(run_dir / "vm.txt") if (run_dir / "vm.txt").exists() else {}

    with open(out_dir / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows({k: int(v) if isinstance(v, bool) else v for k, v in r.items()}
                    for r in runs)

    # Unsupported types come as one line with only an error and no cell.
    missing = {r["mutex"]: r["error"] for r in runs if "threads" not in r}
    errors = [r for r in runs if "threads" in r and (r.get("error") or r["exclusion"] != "ok")]
    rate = defaultdict(list)            # (type, threads, load) -> [kops/s]
    sysc = defaultdict(list)            # (type, threads, load) -> [syscalls/kop]
    vcsw = defaultdict(list)
    for r in runs:
        if "ops_per_sec" not in r:
            continue
        key = (r["mutex"], r["threads"], r["load"])
        rate[key].append(r["ops_per_sec"] / 1000.0)
        if r["lock_syscalls_per_kop"] is not None:
            sysc[key].append(r["lock_syscalls_per_kop"] + r["unlock_syscalls_per_kop"])
        vcsw[key].append(r["vcsw_per_kop"])
    types = [t for t in TYPES if any(k[0] == t for k in rate)]
    cells = sorted({k[1:] for k in rate})

    where = (f"QEMU {vm['accel']} on a host of {vm['host']}, {vm['date']}. "
             if vm else "")
    md = ["# futex mutex benchmark", "",
          where + f"Guest kernel {guest.get('kernel', '?')}, {guest.get('cpus', '?')} CPUs; "
          f"{guest.get('repeat', '?')} runs of {guest.get('runtime', '?')} s per cell "
          f"and type; extra options: `{guest.get('args') or 'none'}`. kops/s = thousand "
          "lock/unlock pairs per second, all threads; sd% = relative stddev over the runs. "
          + (f"Host load average (1, 5, 15 min) at boot: {vm['load_start']}, "
             f"at the end: {vm['load_end']}." if "load_end" in vm else
             "Host load average (1, 5, 15 min) when the report was made: "
             + ", ".join(f"{x:.1f}" for x in os.getloadavg()) + "."), ""]
    if guest.get("debug"):
        md += ["**DEBUG KERNEL (lockdep/KASAN/kmemleak): functional run only, "
               "these numbers are no benchmark result.**", ""]
    for t, why in missing.items():
        md.append(f"**{t}: not measured, the kernel does not support it ({why}).**")
        md.append("")
    for r in errors:
        md.append(f"**FAILED: {r['mutex']} threads={r['threads']} load={r['load']}: "
                  f"{r.get('error') or 'mutual exclusion broken'}**")
        md.append("")

    md += ["| threads | load | ww kops/s | sd% | spin kops/s | sd% | spin vs ww "
           "| pi | glibc | glibc-adaptive | tas | spin / best other |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for n, load in cells:
        m = {t: mean_sd(rate.get((t, n, load), [])) for t in TYPES}
        ww, spin = m["ww"][0], m["spin"][0]
        change = fmt(100.0 * (spin - ww) / ww, "+.1f") + "%" if ww and spin else "-"
        others = [(m[t][0], t) for t in TYPES if t != "spin" and m[t][0]]
        best = max(others) if others else None
        ratio = f"{spin / best[0]:.2f}x ({best[1]})" if spin and best else "-"
        md.append(f"| {n} | {load} | {fmt(ww)} | {fmt(m['ww'][1], '.1f')} | {fmt(spin)} "
                  f"| {fmt(m['spin'][1], '.1f')} | {change} | "
                  + " | ".join(fmt(m[t][0]) for t in ("pi", "glibc", "glibc-adaptive", "tas"))
                  + f" | {ratio} |")

    md += ["", "Lock + unlock syscalls and voluntary context switches per 1000 ops (means):", "",
           "| threads | load | " + " | ".join(f"{t} sys | {t} vcsw" for t in ("ww", "spin", "pi"))
           + " |", "|---:|---:|" + "---:|" * 6]
    for n, load in cells:
        row = []
        for t in ("ww", "spin", "pi"):
            row.append(fmt(mean_sd(sysc.get((t, n, load), []))[0], ".1f"))
            row.append(fmt(mean_sd(vcsw.get((t, n, load), []))[0], ".1f"))
        md.append(f"| {n} | {load} | " + " | ".join(row) + " |")
    text = "\n".join(md) + "\n"
    (out_dir / "results.md").write_text(text)
    print(text)

    plot(out_dir / "throughput.png", rate, types, cells, guest)
    print(f"bench: wrote {out_dir}/results.csv, results.md, throughput.png")
    return 1 if errors else 0


def plot(path, rate, types, cells, guest):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    loads = sorted({load for _, load in cells})
    threads = sorted({n for n, _ in cells})
    cols = 2 if len(loads) > 1 else 1
    rows = (len(loads) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4.2 * rows), squeeze=False)
    for ax, load in zip(axes.flat, loads):
        for t in types:
            xs, ys, es = [], [], []
            for n in threads:
                v = rate.get((t, n, load))
                if v:
                    xs.append(n)
                    ys.append(statistics.mean(v))
                    es.append(statistics.stdev(v) if len(v) > 1 else 0.0)
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=t,
                        linewidth=2.5 if t == "spin" else 1.2)
        ax.set_title(f"load {load} pauses")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(threads, [str(n) for n in threads])
        ax.set_xlabel("threads")
        ax.set_ylabel("kops/s")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(loads):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize="small")
    fig.suptitle(("DEBUG KERNEL, NOT A RESULT: " if guest.get("debug") else "")
                 + f"perf bench futex mutex, kernel {guest.get('kernel', '?')}, "
                 f"{guest.get('cpus', '?')} CPUs (mean and stddev of "
                 f"{guest.get('repeat', '?')} runs)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
