#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarize `make profile` runs: where the CPU time went, per lock type.

    profile-report.py KOUT OUTFILE DIR...

Each DIR is build/profile/TYPE as profile.mk left it. KOUT is the kernel
build directory: System.map and kernel/futex/*.o define the symbol sets.
Every percentage is a sum of self-overhead lines of `perf report
--no-children --sort sym` of the run's perf.data (DIR/symbols.txt); the
split of the spinlock time by lock comes from the call chains of the same
samples (DIR/perf.script). Writes OUTFILE and prints it.
"""

import json
import re
import subprocess
import sys
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

# Each set is these names and whatever System.map names at the same
# address: perf may show __lock_text_start for _raw_spin_lock_irqsave.
SPIN_RE = re.compile(r'_raw_spin_lock(_irq|_irqsave|_bh)?'
                     r'|_raw_spin_trylock(_bh)?'
                     r'|(native_|__pv_)?queued_spin_lock_slowpath(\..*)?'
                     r'|do_raw_spin_lock')
IDLE_RE = re.compile(r'(pv_)?native_safe_halt|default_idle(_call)?'
                     r'|cpu_idle_poll|arch_cpu_idle(_enter|_exit)?|do_idle'
                     r'|schedule_idle|(acpi|intel|mwait)_idle.*|poll_idle'
                     r'|cpuidle_enter.*')
# The spinlock's caller tells the lock: futex_spin's queue-head lock is
# taken in these, the hash-bucket lock in the rest of kernel/futex (for ww
# and spin; the PI code also takes its rt_mutex's wait_lock).
HEAD_LOCK_CALLERS = {'futex_spin_lock', 'futex_spin_unlock',
                     'futex_spin_owner_died'}
IRQ_RESTORE_RE = re.compile(r'_?_raw_spin_unlock_irq(restore)?')
LINE_RE = re.compile(r'^\s+([\d.]+)%\s+\[(.)\]\s+(.+?)\s*$')


def system_map(kout):
    """Text symbols: name -> number of definitions, address -> names."""
    count, at = Counter(), defaultdict(set)
    for line in (kout / 'System.map').read_text().splitlines():
        addr, kind, name = line.split()[:3]
        if kind in 'tTwW':
            count[name] += 1
            at[addr].add(name)
    return count, at


def futex_symbols(kout, count):
    """Names defined in kernel/futex/*.o and nowhere else in vmlinux."""
    objs = sorted(str(p) for p in (kout / 'kernel/futex').glob('*.o'))
    nm = subprocess.run(['nm', '--defined-only', *objs], check=True,
                        capture_output=True, text=True).stdout
    local = Counter(f[2] for f in (ln.split() for ln in nm.splitlines())
                    if len(f) == 3 and f[1] in 'tT')
    return {n for n, c in local.items() if count[n] == c}


def with_aliases(at, regex):
    names = set()
    for group in at.values():
        if any(regex.fullmatch(n) for n in group):
            names |= group
    return names


def read_symbols(path):
    """perf report lines as (percent, 'k' or '.', symbol)."""
    rows = []
    for line in path.read_text().splitlines():
        m = LINE_RE.match(line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3)))
    return rows


def samples(path):
    """Call chains of perf script: lists of symbols, sample IP first."""
    chain = None
    with open(path, errors='replace') as f:
        for line in f:
            if not line.strip():
                continue
            if not line[0].isspace():
                if chain is not None:
                    yield chain
                chain = []
            elif chain is not None:
                parts = line.split(None, 1)
                chain.append(parts[1].rsplit(' (', 1)[0]
                             if len(parts) > 1 else '[unknown]')
    if chain is not None:
        yield chain


def spin_callers(path, spin):
    """Spinlock samples by their first caller outside the spinlock code."""
    callers, total = Counter(), 0
    for chain in samples(path):
        total += 1
        if chain and chain[0] in spin:
            callers[next((s for s in chain if s not in spin), '[none]')] += 1
    return callers, total


def stat_counts(path):
    """perf stat -x, output: event -> count (0 if not counted)."""
    counts = {}
    for line in path.read_text().splitlines():
        f = line.split(',')
        if len(f) > 2 and not line.startswith('#'):
            counts[f[2]] = int(f[0]) if f[0].isdigit() else 0
    return counts


def bench(path):
    return json.loads(path.read_text())


def analyse(d, sets):
    rows = read_symbols(d / 'symbols.txt')
    r = {}

    def share(key, pred):
        hit = [(p, n) for p, k, n in rows if pred(k, n)]
        r[key] = sum(p for p, _ in hit)
        r[key + '_syms'] = {n for _, n in hit}

    for key in ('spin', 'futex', 'idle', 'irq'):
        share(key, lambda k, n: k == 'k' and n in sets[key])
    share('user', lambda k, n: k == '.')
    share('kernel', lambda k, n: k == 'k')
    r['rest'] = r['kernel'] - r['spin'] - r['futex'] - r['idle']

    futex = sets['futex']
    r['callers'], r['samples'] = spin_callers(d / 'perf.script', sets['spin'])
    pct = {c: 100.0 * n / r['samples'] for c, n in r['callers'].items()}
    r['head'] = sum(p for c, p in pct.items() if c in HEAD_LOCK_CALLERS)
    r['bucket'] = sum(p for c, p in pct.items()
                      if c in futex and c not in HEAD_LOCK_CALLERS)
    r['spin_script'] = sum(pct.values())
    r['other'] = r['spin_script'] - r['head'] - r['bucket']

    b = bench(d / 'bench-stat.json')
    st = stat_counts(d / 'stat.txt')
    kop = b['ops'] / 1000.0
    r['kops'] = '/'.join(
        f"{bench(d / f'bench-{run}.json')['ops_per_sec'] / 1000:.0f}"
        for run in ('record', 'stat', 'lock'))
    r['futex_calls'] = st.get('syscalls:sys_enter_futex', 0) / kop
    # None for the glibc types: the syscalls are made inside glibc.
    if b['lock_syscalls_per_kop'] is not None:
        r['bench_calls'] = (b['lock_syscalls_per_kop']
                            + b['unlock_syscalls_per_kop'])
    else:
        r['bench_calls'] = None
    r['cs'] = st.get('context-switches', 0) / kop
    r['tp'] = {k.split(':', 1)[1]: v / kop for k, v in st.items()
               if k.startswith('futex_spin:') and v}
    return r


def table(cols, rows):
    width = max(len(label) for label, _ in rows) + 2
    out = [' ' * width + ''.join(f'{c:>12}' for c in cols)]
    for label, vals in rows:
        out.append(f'{label:<{width}}' + ''.join(f'{v:>12}' for v in vals))
    return out


def wrap(text, indent='  ', more='    '):
    return textwrap.fill(text, 79, initial_indent=indent,
                         subsequent_indent=more)


def rules(names, res):
    def seen(key):
        return ', '.join(sorted(set().union(*(r[key] for r in res))))

    split = ', '.join(f"{n} {r['spin_script']:.2f}%"
                      for n, r in zip(names, res))
    heads = ', '.join(sorted(HEAD_LOCK_CALLERS))
    text = (
        'spinlocks: _raw_spin_lock{,_irq,_irqsave,_bh}, _raw_spin_trylock*, '
        '*queued_spin_lock_slowpath*, do_raw_spin_lock and their System.map '
        f"aliases; seen: {seen('spin_syms')}.",
        'their split by the first caller outside them, from perf script of '
        f'the same perf.data (spinlocks there: {split}): queue-head lock from '
        f'{heads}; hash-bucket lock from the rest of the futex code; other '
        'spinlocks from any other caller. A sample in the first instructions '
        "of a function, before its frame is set up, counts for its caller's "
        'caller.',
        'futex code: kernel symbols defined in kernel/futex/*.o and nowhere '
        f"else in vmlinux (nm, System.map); seen: {seen('futex_syms')}.",
        'idle: the idle loop (default_idle, *native_safe_halt, do_idle, ...) '
        f"and aliases; seen: {seen('idle_syms')}.",
        'irq-restore points: _raw_spin_unlock_irq{,restore} and aliases, '
        'where the cpu-clock samples taken while interrupts were off land; '
        f"seen: {seen('irq_syms')}.",
        'syscalls: perf stat -e syscalls:sys_enter_futex of the benchmark '
        "process over the benchmark's ops in that run; its own count of lock "
        'and unlock syscalls beside it.')
    return ['', 'Rules (symbols as perf report names them):'] + [
        wrap(t) for t in text]


def lock_contention(kout, guest, names, dirs):
    """perf lock contention's top entries, and why spinlocks may miss."""
    out = ['', 'perf lock contention (tracepoints lock:contention_begin/end, '
           'perf lock record -a):']
    seen = False
    for n, d in zip(names, dirs):
        text = (d / 'lock-contention.txt').read_text()
        lines = [ln for ln in text.splitlines() if ln.strip()]
        seen |= any(' spinlock ' in ln for ln in lines)
        out += [f'  {n}:'] + [f'  {ln}' for ln in lines[:8]]
    config = (kout / '.config').read_text()
    if (not seen and 'CONFIG_PARAVIRT=y' in config
            and guest.get('cpu_hypervisor_flag')):
        out.append(wrap(
            'No spinlock can show here: under a hypervisor without paravirt '
            'spinlocks (QEMU TCG), CONFIG_PARAVIRT=y makes virt_spin_lock() '
            'turn every contended qspinlock into a test-and-set loop, which '
            'has no tracepoint; and the native qspinlock traces only a waiter '
            'that queues behind another, a third CPU. Spinlocks show with a '
            'kernel without CONFIG_PARAVIRT and CPUS>=3.', more='  '))
    return out


def main():
    kout, outfile = Path(sys.argv[1]), Path(sys.argv[2])
    dirs = [Path(a) for a in sys.argv[3:]]
    count, at = system_map(kout)
    sets = {'spin': with_aliases(at, SPIN_RE),
            'idle': with_aliases(at, IDLE_RE),
            'irq': with_aliases(at, IRQ_RESTORE_RE),
            'futex': futex_symbols(kout, count)}
    guest = dict(ln.split('=', 1) for ln in
                 (dirs[0] / 'guest.txt').read_text().split() if '=' in ln)
    names = [d.name for d in dirs]
    res = [analyse(d, sets) for d in dirs]

    def col(key, fmt='{:.2f}'):
        return ['n/a' if r[key] is None else fmt.format(r[key]) for r in res]

    out = [f"perf bench futex mutex -t {guest['threads']} -l {guest['load']} "
           f"-r {guest['seconds']}: {' vs '.join(names)}",
           wrap(f"Linux {guest['kernel']}, {guest['cpus']} vCPUs; perf "
                f"record -a -g, cpu-clock every {guest['period_ns']} ns on "
                'each CPU. % = share of all samples (all CPUs, idle '
                'included): self overhead in perf report --no-children '
                '--sort sym.', indent='', more=''), '']
    rows = [
        ('kops/s (record/stat/lock run)', col('kops', '{}')),
        ('samples', col('samples', '{}')),
        ('% in spinlocks (self)', col('spin')),
        ('  futex hash-bucket lock', col('bucket')),
        ('  futex_spin queue-head lock', col('head')),
        ('  other spinlocks', col('other')),
        ('% in futex code (self)', col('futex')),
        ('% idle', col('idle')),
        ('% user space', col('user')),
        ('% rest of the kernel', col('rest')),
        ('  at irq-restore points', col('irq')),
        ('futex syscalls / 1000 ops', col('futex_calls', '{:.1f}')),
        ('  benchmark\'s count', col('bench_calls', '{:.1f}')),
        ('context switches / 1000 ops', col('cs', '{:.1f}')),
    ]
    for tp in sorted({k for r in res for k in r['tp']}):
        rows.append((f'{tp} / 1000 ops',
                     [f"{r['tp'].get(tp, 0):.1f}" for r in res]))
    out += table(names, rows)

    out += ['', 'Spinlock samples by first caller outside the spinlock '
            'code, % of all samples:']
    for n, r in zip(names, res):
        top = ', '.join(f"{c} {100.0 * k / r['samples']:.2f}"
                        for c, k in r['callers'].most_common(6))
        out.append(wrap(f"{n}: {top or 'none'}"))
    out += rules(names, res)
    out += lock_contention(kout, guest, names, dirs)
    text = '\n'.join(out) + '\n'
    outfile.write_text(text)
    print(text, end='')


if __name__ == '__main__':
    main()
