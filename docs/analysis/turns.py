#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns of a spinning futex from one run of trace.sh.

A turn runs from one ownership change the kernel sees (futex_spin_handoff
or futex_spin_spin_acquired) to the next; acquisitions in user space
between them are not seen, and in cells without outside work they are
mostly the owner taking the word back. Prints how long the turns were,
how much of the lock's time the long ones (over 1 ms) took, how long the
CPU not running the owner idled meanwhile, and how many long turns began
with the owner waking a sleeper onto its own CPU. Then the slowest and
fastest threads: their share of the mean acquisitions, turns, time in
turns and time on a CPU. Then what the task that left a CPU idle for
over 1 ms did last, and last where the scheduler placed the sleepers
woken by a waiter that gave way at its starvation bound, and those woken
by an unlock.
For a type whose kernel path is not traced (ww), only how long each CPU
idled during the run.

    turns.py RUN_DIR NAME
"""

import re
import statistics
import sys
from collections import defaultdict

EVENT = re.compile(r"-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (\w+): (.*)")
OWNERSHIP = ("futex_spin_handoff", "futex_spin_spin_acquired")
LONG = 1e-3


def field(rest, name):
    return int(re.search(name + r"=(\d+)", rest).group(1))


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


def futex_step(name, rest):
    """A futex_spin event as a step: "sleep", "spin_aborted:bound"."""
    why = rest.split("reason=")[1] if "reason=" in rest else ""
    return name[len("futex_spin_"):] + (":" + why if why else "")


def idle_periods(events):
    """Per CPU, the (start, end, steps) of each stretch it ran the idle
    task; steps are the last futex_spin events (up to three) of the task
    that left the CPU idle, as in "spin_aborted:bound > sleep"."""
    periods, since, recent = defaultdict(list), {}, defaultdict(list)
    for _, cpu, t, name, rest in events:
        if name.startswith("futex_spin_"):
            recent[cpu] = recent[cpu][-2:] + [futex_step(name, rest)]
        if name != "sched_switch":
            continue
        if field(rest, "prev_pid") == 0 and cpu in since:
            start, steps = since.pop(cpu)
            periods[cpu].append((start, t, steps))
        if field(rest, "next_pid") == 0:
            since[cpu] = (t, " > ".join(recent[cpu]) or "(none)")
        recent[cpu] = []
    return periods


def cpu_time(events):
    """Per task, the seconds it ran on a CPU during the trace."""
    ran, since = defaultdict(float), {}
    for _, cpu, t, name, rest in events:
        if name != "sched_switch":
            continue
        if cpu in since:
            tid, start = since[cpu]
            ran[tid] += t - start
        since[cpu] = (field(rest, "next_pid"), t)
    return ran


def idle_within(periods, a, b):
    return sum(max(0.0, min(b, y) - max(a, x)) for x, y, _ in periods)


def run_idle(events, idle):
    """Per CPU, its idle share of the run, less 0.1 s at either end."""
    times = [e[2] for e in events if e[3] == "sched_switch" and
             "futex-mutex" in e[4]]
    a, b = times[0] + 0.1, times[-1] - 0.1
    return {cpu: idle_within(ps, a, b) / (b - a)
            for cpu, ps in sorted(idle.items())}


def owner_cpu(events, owner):
    """The CPU of the owner's first event in its turn."""
    return next((e[1] for e in events if e[0] == owner), events[0][1])


def woke_onto_own_cpu(events, owner, cpu, start):
    """Whether the owner woke a task onto its own CPU as the turn began."""
    for tid, _, t, name, rest in events:
        if t - start > 100e-6:
            break
        if (name == "sched_wakeup" and tid == owner and
                field(rest, "target_cpu") == cpu):
            return True
    return False


def turns(events, idle):
    """(owner, length, idle time of the other CPU, woke onto own CPU)."""
    marks = [i for i, e in enumerate(events) if e[3] in OWNERSHIP]
    for a, b in zip(marks, marks[1:]):
        start, end = events[a][2], events[b][2]
        owner = field(events[a][4], "val")
        inside = events[a:b + 1]
        cpu = owner_cpu(inside, owner)
        other = [p for c, ps in idle.items() if c != cpu for p in ps]
        yield (owner, end - start, idle_within(other, start, end),
               woke_onto_own_cpu(inside, owner, cpu, start))


def idle_causes(idle):
    """Seconds of idle stretches over 1 ms, by the steps before them."""
    causes = defaultdict(float)
    for start, end, steps in (p for ps in idle.values() for p in ps):
        if end - start > LONG:
            causes[steps] += end - start
    return causes


def wake_placement(events):
    """Per kind of waker ("gave way" at its bound, else "unlock"), the
    sleepers woken and how many the scheduler placed on the waker's CPU."""
    steps, pending = defaultdict(list), {}
    woken, same = defaultdict(int), defaultdict(int)
    for tid, cpu, _, name, rest in events:
        if name == "futex_spin_wake":
            gave_way = steps[tid][-2:] == ["spin_aborted:bound", "contended"]
            pending[field(rest, "val")] = ("gave way" if gave_way
                                           else "unlock", cpu)
        elif name == "sched_wakeup" and field(rest, "pid") in pending:
            kind, waker_cpu = pending.pop(field(rest, "pid"))
            woken[kind] += 1
            same[kind] += field(rest, "target_cpu") == waker_cpu
        if name.startswith("futex_spin_"):
            steps[tid] = steps[tid][-1:] + [futex_step(name, rest)]
    return woken, same


def workers(events, pid):
    """perf's workers by TID. perf creates them in order, so thread i has
    the i-th TID; a kthread may take a TID between perf's and its first
    worker's."""
    return sorted({field(rest, "next_pid") for _, _, _, name, rest in events
                   if name == "sched_switch" and
                   "next_comm=futex-mutex " in rest and
                   field(rest, "next_pid") > pid})


def per_thread_ops(path):
    ops = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\[thread\s+(\d+)\].*\[ (\d+) ops/sec \]", line)
            if m:
                ops[int(m.group(1))] = int(m.group(2))
    return ops


def main():
    run, name = sys.argv[1], sys.argv[2]
    with open(f"{run}/pid-{name}.txt") as f:
        pid = int(f.read())
    events = read_events(f"{run}/trace-{name}.txt")
    idle = idle_periods(events)
    shares = run_idle(events, idle)
    print("CPU idle during the run: " +
          ", ".join(f"cpu{c} {100 * s:.0f}%" for c, s in shares.items()))
    all_turns = list(turns(events, idle))
    if not all_turns:
        return
    total = sum(t[1] for t in all_turns)
    lengths = sorted(t[1] * 1e6 for t in all_turns)

    def quantile(p):
        return lengths[min(len(lengths) - 1, int(p * len(lengths)))]

    print(f"{len(lengths)} turns, length p50 {quantile(0.5):.0f} us, "
          f"p90 {quantile(0.9):.0f}, p99 {quantile(0.99):.0f}, "
          f"max {lengths[-1]:.0f}")
    for label, pick in (("all", lambda t: True),
                        ("over 1 ms", lambda t: t[1] > LONG),
                        ("over 1 ms, began with a wakeup onto the owner's CPU",
                         lambda t: t[1] > LONG and t[3])):
        chosen = [t for t in all_turns if pick(t)]
        held = sum(t[1] for t in chosen)
        idled = sum(t[2] for t in chosen)
        print(f"  {label}: {len(chosen)} turns, {100 * held / total:.0f}% "
              f"of the time, the other CPU idle "
              f"{100 * idled / held if held else 0:.0f}% of it")

    ops = per_thread_ops(f"{run}/bench-{name}.txt")
    mean = statistics.mean(ops.values())
    count, time = defaultdict(int), defaultdict(float)
    for owner, length, _, _ in all_turns:
        count[owner] += 1
        time[owner] += length
    tids = workers(events, pid)
    rows = sorted((ops[i] / mean, tids[i]) for i in ops)
    ran = cpu_time(events)
    print("  share of the mean, thread, turns, ms in turns, ms on a CPU:")
    for share, tid in rows if len(rows) <= 6 else rows[:3] + rows[-3:]:
        print(f"    {share:.2f} {tid} {count[tid]} {time[tid] * 1e3:.1f} "
              f"{ran[tid] * 1e3:.1f}")

    causes = idle_causes(idle)
    long_idle = sum(causes.values())
    print("  idle stretches over 1 ms, by what the task leaving the CPU "
          "did last:")
    for steps, secs in sorted(causes.items(), key=lambda c: -c[1])[:5]:
        print(f"    {100 * secs / long_idle:3.0f}% {steps}")

    woken, same = wake_placement(events)
    print("  sleepers woken, and placed on the waker's CPU:")
    for kind, label in (("gave way", "a waiter giving way at its bound"),
                        ("unlock", "an unlock (or a waiter leaving)")):
        print(f"    by {label}: {woken[kind]}, {same[kind]}")


if __name__ == "__main__":
    main()
