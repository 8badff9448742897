#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns of the lock and each thread's share, in one run of trace.sh.

    turnshare.py RUN_DIR NAME [--all]

A turn starts when a thread takes the lock in the kernel (by spinning, or
handed it) and lasts until another thread does; in between the owner
relocks in user space, unseen. Prints:

- how often a sleeper that was asleep and not woken saw a wakeup or a
  handoff go to a waiter that queued after it (the wake order the lock
  promises; 0 when it holds);
- per thread (the five slowest and three fastest, or --all): its share of
  the mean acquisitions, its turns, and how long it owned the lock on its
  CPU and off it; then how well the shares follow each;
- the turns by how they ended: handed over or taken by a spinner, with
  the owner still on its CPU or switched out since the turn began.
"""

import collections
import re
import statistics
import sys

from turns import field, per_thread_ops, read_events, workers

SWITCH = re.compile(r"prev_pid=(\d+) .*==> .*next_pid=(\d+)")


def overtakes(events):
    """Wakeups and handoffs that passed a sleeper not woken yet which had
    queued earlier. lock_locked() clears a sleeper's wakeup before its
    sleep event, so a wakeup between its last spin and that event is
    still pending."""
    queued_at, asleep, woken, decided, woke_at = {}, set(), set(), {}, {}
    count = 0
    for tid, _, t, name, rest in events:
        step = name[len("futex_spin_"):] if name.startswith("futex_spin_") else None
        val = field(rest, "val") if "val=" in rest else tid
        if step == "contended":
            queued_at[val], decided[val] = t, t
            woken.discard(val)
        elif step == "spin_aborted":
            decided[tid] = t
        elif step == "sleep":
            asleep.add(val)
            if woke_at.get(val, -1) <= decided.get(val, -1):
                woken.discard(val)
        elif step == "respin":
            asleep.discard(val)
        elif step in ("wake", "handoff"):
            count += sum(1 for x in asleep - woken - {val}
                         if queued_at.get(x, 1e9) < queued_at.get(val, -1))
            if step == "wake":
                woken.add(val)
                woke_at[val] = t
            else:
                asleep.discard(val)
                queued_at.pop(val, None)
        elif step == "spin_acquired":
            queued_at.pop(val, None)
    return count


def turns(events):
    """Per owner: turns, seconds owning on its CPU and off it; per way a
    turn ended: its lengths."""
    on, owner, start, last, switched = set(), None, 0.0, None, False
    n = collections.Counter()
    owned = {True: collections.Counter(), False: collections.Counter()}
    ends = collections.defaultdict(list)
    for tid, _, t, name, rest in events:
        if owner is not None and last is not None:
            owned[owner in on][owner] += t - last
        last = t
        if name == "sched_switch":
            prev, nxt = (int(x) for x in SWITCH.search(rest).groups())
            on.discard(prev)
            on.add(nxt)
            switched |= prev == owner
        elif name in ("futex_spin_spin_acquired", "futex_spin_handoff"):
            val = field(rest, "val")
            if val == owner:
                continue
            if owner is not None:
                how = "handed" if name.endswith("handoff") else "spun"
                where = "owner switched out" if switched else "owner on its CPU"
                ends[f"{how}, {where}"].append(t - start)
            owner, start, switched = val, t, False
            n[val] += 1
    return n, owned[True], owned[False], ends


def corr(a, b):
    ma, mb = statistics.mean(a), statistics.mean(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    den = (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5
    return num / den if den else 0.0


def main():
    run, name = sys.argv[1], sys.argv[2]
    with open(f"{run}/pid-{name}.txt") as f:
        pid = int(f.read())
    events = read_events(f"{run}/trace-{name}.txt")
    tids = workers(events, pid)
    ops = per_thread_ops(f"{run}/bench-{name}.txt")
    mean = statistics.mean(ops.values())
    share = {tid: ops.get(i, 0) / mean for i, tid in enumerate(tids)}
    n, on_cpu, off_cpu, ends = turns(events)

    print(f"{name}: {overtakes(events)} wakeups or handoffs passed an earlier sleeper")
    order = sorted(tids, key=share.get)
    print("thread share  turns  owning on CPU / off CPU (ms)")
    for tid in order if "--all" in sys.argv else order[:5] + order[-3:]:
        print(f"  {tids.index(tid):4d} {share[tid]:5.2f} {n[tid]:6d}"
              f"  {1000 * on_cpu[tid]:8.1f} / {1000 * off_cpu[tid]:6.1f}")
    shares = [share[t] for t in tids]
    print(f"turns per thread {min(n[t] for t in tids)} to {max(n[t] for t in tids)}; "
          f"share against turns r = {corr(shares, [n[t] for t in tids]):.2f}, "
          f"against time owning on its CPU r = {corr(shares, [on_cpu[t] for t in tids]):.2f}")
    total = sum(sum(v) for v in ends.values())
    for how, lengths in sorted(ends.items()):
        print(f"  {how:32s} {len(lengths):5d} turns, mean {1000 * statistics.mean(lengths):6.3f} ms,"
              f" median {1000 * statistics.median(lengths):6.3f} ms, {sum(lengths) / total:4.0%} of the time")


if __name__ == "__main__":
    main()
