#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The make bench-apps table from a guest run directory: per program and
variant, the mean throughput with its relative standard deviation over the
repeats, the ratio to glibc paired by repeat with its 95% bootstrap
interval and verdict (a 5% margin, scripts/paired.py), futex system calls
and context switches per 1000 operations, and p99 latency where the tool
gives it. Markdown on stdout."""
import statistics
import sys
from pathlib import Path

from paired import Judge

MARGIN = 0.05

VARIANTS = ["glibc", "spin", "tid-ww"]
OPS = {
    "sysbench-mutex": "lock/unlock pairs of 8 threads on 4 mutexes (20 empty loops outside)",
    "sysbench-threads": "events of 8 threads on 2 mutexes, each 10 times lock, "
                        "sched_yield(), unlock",
    "cache_bench": "cache operations of 8 threads on 4 LRU shards",
    "memcached": "get/set requests from memcaslap (2 threads, 32 connections) to 4 workers",
}


def kv(path):
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                out[k] = v
    return out


def main():
    run = Path(sys.argv[1])
    rows = {}       # (program, variant) -> repeat -> its figures
    for line in (run / "results.txt").read_text().splitlines():
        f = line.split()
        if len(f) != 8:
            continue
        prog, var, rep, ops, tput, p99, futex, cs = f
        rows.setdefault((prog, var), {})[int(rep)] = (
            float(ops), float(tput), None if p99 == "-" else float(p99),
            float(futex), float(cs))
    vm, guest = kv(run / "vm.txt"), kv(run / "guest.txt")
    print(f"`make bench-apps`: QEMU {vm.get('accel', '?')} on a host of "
          f"{vm.get('host', '?')}, {vm.get('date', '?')}. Guest kernel {guest.get('kernel', '?')}, "
          f"{guest.get('cpus', '?')} vCPUs, {guest.get('repeat', '?')} rounds, "
          "each running every variant once in an order that rotates. glibc: "
          "no preload; spin: LD_PRELOAD=libfutex-spin-preload.so; tid-ww: the preload with "
          "FUTEX_SPIN_MODE=waitwake (same library, FUTEX_WAIT/WAKE instead "
          "of FUTEX_SPIN_LOCK). sd% = relative stddev of throughput; / glibc "
          "= the geometric mean over the rounds of the variant's throughput "
          "over glibc's in the same round, with its 95% bootstrap interval "
          f"and the verdict: lead above {1 + MARGIN:.2f}, trail below "
          f"{1 - MARGIN:.2f}, parity otherwise; futex "
          "and cs = futex system calls and context switches per 1000 "
          "operations (memcached: the server's).")
    if guest.get("debug"):
        print("\n**Debug kernel: these numbers are not worth keeping.**")
    print()
    print("| program | variant | ops/s | sd% | / glibc | 95% interval | verdict "
          "| p99 us | futex/kop | cs/kop |")
    print("|---|---|---:|---:|---:|---|---|---:|---:|---:|")
    judge = Judge(MARGIN)
    expected = 0.0
    by_round = {k: {rep: x[1] for rep, x in r.items()} for k, r in rows.items()}
    for prog in OPS:
        for var in VARIANTS:
            r = list(rows.get((prog, var), {}).values())
            if not r:
                print(f"| {prog} | {var} | failed | | | | | | | |")
                continue
            t = [x[1] for x in r]
            mean = statistics.mean(t)
            sd = (f"{100 * statistics.stdev(t) / mean:.1f}"
                  if len(t) > 1 and mean else "-")
            c = (judge.compare(by_round[(prog, var)], by_round[(prog, "glibc")])
                 if var != "glibc" and (prog, "glibc") in by_round else None)
            rel = (f"{c.ratio:.2f} | {c.lo:.2f} to {c.hi:.2f} | {c.verdict}" if c
                   else "| |" if var == "glibc" else "- | - | -")
            if c and var == "spin":
                expected += c.false_chance
            p = [x[2] for x in r if x[2] is not None]
            p99 = f"{statistics.mean(p):.1f}" if p else "-"
            fut = statistics.mean(1000 * x[3] / x[0] for x in r)
            cs = statistics.mean(1000 * x[4] / x[0] for x in r)
            print(f"| {prog} | {var} | {mean:.0f} | {sd} | {rel} | "
                  f"{p99} | {fut:.1f} | {cs:.1f} |")
    print(f"\nHad spin been as fast as glibc, its {len(OPS)} comparisons would "
          f"show {expected:.1f} verdicts other than parity on average.\n")
    for prog, what in OPS.items():
        print(f"- {prog}: {what}")


if __name__ == "__main__":
    main()
