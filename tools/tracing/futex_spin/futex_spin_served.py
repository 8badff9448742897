#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How FUTEX_SPIN_LOCK calls were served, from the tracepoints alone.

Runs a command with the futex_spin events and the futex system call's
entry and exit traced (tracefs, as root), then prints:

- each futex_spin event's count, spin_aborted by reason;
- the lock calls that returned with the word (0 or EOWNERDEAD), by what
  ended them: a spin that took the word (spin_acquired), a handoff to the
  caller (handoff), or a look at a free word under the head lock (neither);
  and how many of them slept first (sleep);
- the lock calls that failed, by error.

These are the figures that the kernel's counters taken_at_look,
taken_after_sleep and respins gave before they were dropped. With
--check it also reads debugfs futex_spin/stats before and after and
fails unless every event that has a counter was traced as often as it
was counted: the tracepoints miss nothing that the counters see.

    futex_spin_served.py [--check] -- COMMAND [ARG...]

Not part of the upstream series: a tool of this repository, kept at the
path where such a tool would live.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

TRACEFS = "/sys/kernel/tracing"
STATS = "/sys/kernel/debug/futex_spin/stats"
SYS_FUTEX = {"x86_64": 202, "aarch64": 98}
FUTEX_CMD_MASK = 0x7f
FUTEX_SPIN_LOCK, FUTEX_SPIN_UNLOCK = 14, 15
EOWNERDEAD = 130
# A counter of futex_spin/stats and the event that must match it.
COUNTED = {"contended": "contended", "sleeps": "sleep", "wakes": "wake",
           "handoffs": "handoff", "timeouts": "timeout",
           "owner_died": "owner_died", "spin_acquired": "spin_acquired",
           "lock_calls": "lock call", "unlock_calls": "unlock call"}
COUNTED.update({f"spin_aborted_{r}": f"spin_aborted {r}" for r in
                ("owner", "resched", "fault", "cap", "bound", "limit")})
LINE = re.compile(r"^\s*.+?-(\d+)\s+\[\d+\].*?\s(\S+): (\S+): (.*)$")
ENTER = re.compile(r"NR (\d+) \((\w+), (\w+)")
EXIT = re.compile(r"NR (\d+) = (-?\d+)")
VAL = re.compile(r"val=(\d+)")
REASON = re.compile(r"reason=(\w+)")


def write(name, text):
    with open(f"{TRACEFS}/{name}", "w") as f:
        f.write(text)


def stats():
    with open(STATS) as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def record(argv, nr):
    """Run @argv with the events on; the trace's lines, and its status."""
    if not os.path.isdir(f"{TRACEFS}/events/futex_spin"):
        sys.exit(f"no {TRACEFS}/events/futex_spin: mount tracefs, as root")
    write("tracing_on", "0")
    write("buffer_size_kb", "65536")
    write("trace", "")
    write("events/futex_spin/enable", "1")
    for e in ("sys_enter", "sys_exit"):
        write(f"events/raw_syscalls/{e}/filter", f"id == {nr}")
        write(f"events/raw_syscalls/{e}/enable", "1")
    write("tracing_on", "1")
    try:
        status = subprocess.call(argv)
    finally:
        write("tracing_on", "0")
        write("events/futex_spin/enable", "0")
        for e in ("sys_enter", "sys_exit"):
            write(f"events/raw_syscalls/{e}/enable", "0")
            write(f"events/raw_syscalls/{e}/filter", "0")
    with open(f"{TRACEFS}/trace") as f:
        lines = f.read().splitlines()
    return lines, status


def lost(lines):
    """Events the buffer dropped, from the header's entries line."""
    for line in lines:
        m = re.match(r"# entries-in-buffer/entries-written: (\d+)/(\d+)", line)
        if m:
            return int(m.group(2)) - int(m.group(1))
    return 0


class Served:
    """Follows each task's lock calls through the events."""

    def __init__(self, nr):
        self.nr = nr
        self.events = collections.Counter()
        self.served = collections.Counter()     # how -> lock calls
        self.slept = collections.Counter()      # how -> of them after a sleep
        self.failed = collections.Counter()
        self.call = {}          # tid -> the events seen in its lock call

    def enter(self, tid, rest):
        m = ENTER.search(rest)
        if not m or int(m.group(1)) != self.nr:
            return
        cmd = int(m.group(3), 16) & FUTEX_CMD_MASK
        if cmd == FUTEX_SPIN_LOCK:
            self.events["lock call"] += 1
            self.call[tid] = set()
        elif cmd == FUTEX_SPIN_UNLOCK:
            self.events["unlock call"] += 1

    def exit(self, tid, rest):
        m = EXIT.search(rest)
        seen = self.call.pop(tid, None)
        if not m or seen is None:
            return
        ret = int(m.group(2))
        if ret not in (0, -EOWNERDEAD):
            self.failed[-ret] += 1
            return
        if "handoff" in seen:
            how = "handoff"
        elif "spin_acquired" in seen:
            how = "spin"
        else:
            how = "look"
        self.served[how] += 1
        if "sleep" in seen:
            self.slept[how] += 1

    def event(self, tid, name, rest):
        name = name[len("futex_spin_"):]
        if name == "spin_aborted":
            m = REASON.search(rest)
            self.events[f"spin_aborted {m.group(1) if m else '?'}"] += 1
        else:
            self.events[name] += 1
        m = VAL.search(rest)
        # A handoff is traced by the unlocker, and names the new owner.
        who = int(m.group(1)) if m and name == "handoff" else tid
        if who in self.call:
            self.call[who].add(name)

    def feed(self, lines):
        for line in lines:
            m = LINE.match(line)
            if not m:
                continue
            tid, name, rest = int(m.group(1)), m.group(3), m.group(4)
            if name == "sys_enter":
                self.enter(tid, rest)
            elif name == "sys_exit":
                self.exit(tid, rest)
            elif name.startswith("futex_spin_"):
                self.event(tid, name, rest)


def report(s):
    print("events (and system calls):")
    for name, n in sorted(s.events.items()):
        print(f"  {name:24} {n}")
    print(f"lock calls that got the word: {sum(s.served.values())}")
    for how in ("spin", "handoff", "look"):
        print(f"  by {how:8} {s.served[how]:8}"
              f"   of them after a sleep {s.slept[how]}")
    for err, n in sorted(s.failed.items()):
        print(f"lock calls that failed with {os.strerror(err)}: {n}")


def check(s, before, after, dropped):
    """0 if every counted event was traced as often as counted."""
    bad = 0
    if dropped:
        print(f"not ok: the trace buffer dropped {dropped} events")
        return 1
    for counter, event in COUNTED.items():
        counted = after[counter] - before[counter]
        traced = s.events[event]
        ok = counted == traced
        bad += not ok
        print(f"{'ok' if ok else 'not ok'}: {counter} counted {counted}, "
              f"{event} traced {traced}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("command", nargs="+")
    args = ap.parse_args()
    nr = SYS_FUTEX.get(os.uname().machine)
    if nr is None:
        sys.exit(f"futex's system call number on {os.uname().machine}?")
    before = stats() if args.check else None
    lines, status = record(args.command, nr)
    after = stats() if args.check else None
    s = Served(nr)
    s.feed(lines)
    report(s)
    bad = check(s, before, after, lost(lines)) if args.check else 0
    sys.exit(1 if status or bad else 0)


if __name__ == "__main__":
    main()
