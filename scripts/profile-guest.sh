#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: profiles perf bench futex mutex for each lock type
# given, with three runs of the same benchmark per type, each under one
# tool so that none perturbs another's numbers:
#
#   perf record -a -g    cpu-clock samples of all CPUs with call chains:
#                        perf.data, then in the guest (where /proc/kallsyms
#                        is this kernel's) the perf report top list, the
#                        per-symbol list and perf script for the flamegraph
#   perf stat            futex_spin tracepoints, context switches, futex
#                        syscalls of the benchmark's threads: stat.txt
#   perf lock record     lock:contention_begin/end with call chains (the
#                        tracepoint mode, no BPF): lock-contention.txt
#
# Each type's files end up in $RUN_DIR/TYPE/, with the benchmark's JSON line
# of each run (bench-record.json, bench-stat.json, bench-lock.json).
#
#   profile-guest.sh PERF TYPE...
#
# Environment: THREADS (8), LOAD (50), RUNTIME (seconds, 5), PERIOD (the
# sampling period of cpu-clock in ns, 1001001: 999 Hz per CPU).
set -euo pipefail

perf=$1
shift
threads=${THREADS:-8}
load=${LOAD:-50}
secs=${RUNTIME:-5}
period=${PERIOD:-1001001}
status=0

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing
echo "# guest: $(uname -r), $(nproc) CPUs"
cp /proc/kallsyms "$RUN_DIR/kallsyms"
{
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "threads=$threads"
	echo "load=$load"
	echo "seconds=$secs"
	echo "period_ns=$period"
	if grep -q "^flags.* hypervisor" /proc/cpuinfo; then
		echo "cpu_hypervisor_flag=1"
	fi
} >"$RUN_DIR/guest.txt"

# The benchmark, its JSON line last on stdout.
bench() {
	timeout -k 5 $((secs + 300)) "$@" "$perf" bench -f simple futex mutex \
		-m "$type" -t "$threads" -l "$load" -r "$secs" --json
}

# perf writes its data to the guest's tmpfs, not through the 9p share,
# whose traffic would show in the profile; the results are copied at the end.
work=$(mktemp -d)
for type in "$@"; do
	out=$work/$type
	mkdir -p "$out"
	cd "$out"
	echo "# $type: perf record"
	# A fixed period (-c) rather than a frequency: every sample weighs the
	# same, so sample counts in perf script are perf report's percentages.
	bench "$perf" record -a -g -e cpu-clock -c "$period" -N -q -o perf.data -- |
		grep '^{' >bench-record.json || status=1
	"$perf" report -i perf.data --stdio --no-children --sort dso,sym -g none \
		--percent-limit 0.3 2>/dev/null |
		grep -v '^# (Cannot load tips' >top.txt || status=1
	"$perf" report -i perf.data --stdio --no-children --sort sym -g none \
		2>/dev/null | grep -v '^# (Cannot load tips' >symbols.txt || status=1
	"$perf" script -i perf.data -F comm,pid,tid,cpu,time,event,ip,sym,dso \
		>perf.script 2>/dev/null || status=1

	echo "# $type: perf stat"
	bench "$perf" stat -x, -o stat.txt -e context-switches \
		-e syscalls:sys_enter_futex -e 'futex_spin:*' -- |
		grep '^{' >bench-stat.json || status=1

	echo "# $type: perf lock"
	bench "$perf" lock record -a -N -q -o lock.data -- |
		grep '^{' >bench-lock.json || status=1
	"$perf" lock contention -i lock.data -E 20 >lock-contention.txt 2>&1 ||
		status=1
	rm -f lock.data
	cd /
	cp -r "$out" "$RUN_DIR/"
done
exit $status
