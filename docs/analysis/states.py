#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where each thread's time went in one run of trace.sh.

For every worker of the run: its share of the mean acquisitions, and how
long it was on a CPU, preempted (runnable after a switch out in state R),
woken and waiting for a CPU, asleep after a futex_spin_sleep event (spin
only) and asleep otherwise (ww's FUTEX_WAIT, or anything else), over the
run's window. Prints the five slowest and three fastest threads, the means
and how long each CPU idled. Where turns.py follows the lock, this follows
the threads: with 64 threads on 2 CPUs a thread's share is its time on a
CPU, and that is decided by how long it sleeps.

    states.py RUN_DIR NAME
"""

import collections
import re
import statistics
import sys

from turns import idle_periods, idle_within, per_thread_ops, read_events, workers

SWITCH = re.compile(r"prev_pid=(\d+) .*prev_state=(\S+) ==> .*next_pid=(\d+)")
STATES = ("cpu", "preempted", "woken-wait", "futex-sleep", "other-sleep")


class Timeline:
    """Time per state of each worker within [start, end]."""

    def __init__(self, tids, start, end):
        self.start, self.end = start, end
        self.state = {}
        self.time = collections.defaultdict(collections.Counter)
        self.workers = set(tids)

    def move(self, tid, new, ts):
        old, since = self.state.get(tid, (None, self.start))
        if old:
            span = min(ts, self.end) - max(since, self.start)
            self.time[tid][old] += max(0.0, span)
        self.state[tid] = (new, ts)

    def close(self):
        for tid in self.workers:
            self.move(tid, self.state.get(tid, (None, 0))[0], self.end)


def follow(events, tids, start, end):
    """The timeline of the workers and the futex_spin events of each."""
    line = Timeline(tids, start, end)
    last_futex = {}
    counts = collections.defaultdict(collections.Counter)
    for tid, _, ts, event, rest in events:
        if event == "sched_switch":
            prev, prev_state, nxt = SWITCH.search(rest).groups()
            prev, nxt = int(prev), int(nxt)
            if prev in line.workers:
                if prev_state.startswith("R"):
                    line.move(prev, "preempted", ts)
                elif last_futex.get(prev) == "sleep":
                    line.move(prev, "futex-sleep", ts)
                else:
                    line.move(prev, "other-sleep", ts)
            if nxt in line.workers:
                line.move(nxt, "cpu", ts)
        elif event == "sched_wakeup":
            woken = int(re.search(r"pid=(\d+)", rest).group(1))
            if woken in line.workers and line.state.get(woken, ("",))[0] != "cpu":
                line.move(woken, "woken-wait", ts)
        elif event.startswith("futex_spin_") and tid in line.workers:
            step = event[len("futex_spin_"):]
            last_futex[tid] = step
            counts[tid][step] += 1
    line.close()
    return line.time, counts


def main():
    run_dir, name = sys.argv[1], sys.argv[2]
    with open(f"{run_dir}/pid-{name}.txt") as f:
        pid = int(f.read())
    ops = per_thread_ops(f"{run_dir}/bench-{name}.txt")
    events = read_events(f"{run_dir}/trace-{name}.txt")
    tids = workers(events, pid)[:len(ops)]
    switches = [ts for tid, _, ts, event, _ in events
                if event == "sched_switch" and tid in tids]
    futex = [ts for _, _, ts, event, _ in events if event.startswith("futex_spin")]
    start = min(futex) if futex else min(switches)
    end = max(switches)
    time, counts = follow(events, tids, start, end)

    mean = statistics.mean(ops.values())
    share = {tid: ops[i] / mean for i, tid in enumerate(tids)}
    print(f"{name}: {len(tids)} threads, window {end - start:.3f} s, "
          f"mean {mean:.0f} acquisitions")
    print("thread share " + "".join(f"{s:>13}" for s in STATES) +
          "  sleeps respins")
    order = sorted(tids, key=share.get)
    for tid in order[:5] + order[-3:]:
        row = "".join(f"{1000 * time[tid][s]:11.1f}ms" for s in STATES)
        print(f"{tids.index(tid):6d} {share[tid]:5.2f}{row}"
              f"  {counts[tid]['sleep']:6d} {counts[tid]['respin']:7d}")
    means = "".join(f"{1000 * statistics.mean(time[t][s] for t in tids):11.1f}ms"
                    for s in STATES)
    print(f"  mean      {means}")
    idle = {cpu: idle_within(periods, start, end)
            for cpu, periods in sorted(idle_periods(events).items())}
    print("idle: " + ", ".join(f"CPU {c} {1000 * v:.1f} ms" for c, v in idle.items()))


if __name__ == "__main__":
    main()
