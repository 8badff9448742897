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

EVENT = re.compile(r"-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (\w+): (.*)")
SWITCH = re.compile(r"prev_pid=(\d+) .*prev_state=(\S+) ==> .*next_pid=(\d+)")
STATES = ("cpu", "preempted", "woken-wait", "futex-sleep", "other-sleep")


def read_events(path):
    """(tid, cpu, time, event, rest) for each line of the trace."""
    events = []
    with open(path) as f:
        for line in f:
            m = EVENT.search(line)
            if m:
                events.append((int(m.group(1)), int(m.group(2)),
                               float(m.group(3)), m.group(4), m.group(5)))
    return events


def workers_of(events, pid, nthreads):
    """Worker TIDs in creation order: perf's threads, not perf itself."""
    tids = set()
    for _, _, _, event, rest in events:
        if event == "sched_switch":
            m = re.search(r"next_comm=futex-mutex next_pid=(\d+)", rest)
            if m and int(m.group(1)) != pid:
                tids.add(int(m.group(1)))
    return sorted(tids)[:nthreads]


class Timeline:
    """Time per state of each worker within [start, end]."""

    def __init__(self, workers, start, end):
        self.start, self.end = start, end
        self.state = {}
        self.time = collections.defaultdict(collections.Counter)
        self.workers = set(workers)

    def move(self, tid, new, ts):
        old, since = self.state.get(tid, (None, self.start))
        if old:
            span = min(ts, self.end) - max(since, self.start)
            self.time[tid][old] += max(0.0, span)
        self.state[tid] = (new, ts)

    def close(self):
        for tid in self.workers:
            self.move(tid, self.state.get(tid, (None, 0))[0], self.end)


def follow(events, workers, start, end):
    """The timeline of the workers and the futex_spin events of each."""
    line = Timeline(workers, start, end)
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


def idle_per_cpu(events, start, end):
    idle, since = collections.Counter(), {}
    for _, cpu, ts, event, rest in events:
        if event != "sched_switch" or not start <= ts <= end:
            continue
        prev, _, nxt = SWITCH.search(rest).groups()
        if prev == "0" and cpu in since:
            idle[cpu] += ts - since.pop(cpu)
        if nxt == "0":
            since[cpu] = ts
    return idle


def main():
    run_dir, name = sys.argv[1], sys.argv[2]
    with open(f"{run_dir}/pid-{name}.txt") as f:
        pid = int(f.read())
    with open(f"{run_dir}/bench-{name}.txt") as f:
        ops = [int(n) for n in re.findall(r"\[\s*(\d+) ops/sec", f.read())]
    events = read_events(f"{run_dir}/trace-{name}.txt")
    workers = workers_of(events, pid, len(ops))
    switches = [ts for tid, _, ts, event, _ in events
                if event == "sched_switch" and tid in workers]
    futex = [ts for _, _, ts, event, _ in events if event.startswith("futex_spin")]
    start = min(futex) if futex else min(switches)
    end = max(switches)
    time, counts = follow(events, workers, start, end)

    mean = statistics.mean(ops)
    share = {tid: ops[i] / mean for i, tid in enumerate(workers)}
    print(f"{name}: {len(workers)} threads, window {end - start:.3f} s, "
          f"mean {mean:.0f} acquisitions")
    print("thread share " + "".join(f"{s:>13}" for s in STATES) +
          "  sleeps respins")
    order = sorted(workers, key=share.get)
    for tid in order[:5] + order[-3:]:
        row = "".join(f"{1000 * time[tid][s]:11.1f}ms" for s in STATES)
        print(f"{workers.index(tid):6d} {share[tid]:5.2f}{row}"
              f"  {counts[tid]['sleep']:6d} {counts[tid]['respin']:7d}")
    means = "".join(f"{1000 * statistics.mean(time[t][s] for t in workers):11.1f}ms"
                    for s in STATES)
    print(f"  mean      {means}")
    idle = idle_per_cpu(events, start, end)
    print("idle: " + ", ".join(f"CPU {c} {1000 * v:.1f} ms" for c, v in sorted(idle.items())))


if __name__ == "__main__":
    main()
