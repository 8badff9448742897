#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: one perf bench futex mutex run per cell with the
# futex_spin tracepoints and the scheduler's switch and wakeup events on.
# Leaves bench-NAME.txt (perf's output, per-thread figures included),
# pid-NAME.txt (perf's PID; its workers follow it) and trace-NAME.txt in
# $RUN_DIR, NAME being TYPE-threads-load-wait-run. Read them with turns.py.
#
#   trace.sh PERF
#
# Environment: CELLS ("threads,load,wait ..."; "64,50,0"), TYPE (spin),
# REP (runs per cell, 1), RT (seconds, 1).
set -uo pipefail

perf=$1
type=${TYPE:-spin}
tr=/sys/kernel/tracing
mountpoint -q $tr || mount -t tracefs nodev $tr

for cell in ${CELLS:-64,50,0}; do
	IFS=, read -r t l w <<<"$cell"
	for i in $(seq "${REP:-1}"); do
		name=$type-$t-$l-$w-$i
		echo 0 >$tr/tracing_on
		echo 131072 >$tr/buffer_size_kb
		for e in futex_spin sched/sched_switch sched/sched_wakeup; do
			echo 1 >"$tr/events/$e/enable"
		done
		echo >$tr/trace
		echo 1 >$tr/tracing_on
		"$perf" bench futex mutex -m "$type" -t "$t" -l "$l" -w "$w" \
			-r "${RT:-1}" >"$RUN_DIR/bench-$name.txt" 2>&1 &
		pid=$!
		wait $pid
		echo 0 >$tr/tracing_on
		echo $pid >"$RUN_DIR/pid-$name.txt"
		cat $tr/trace >"$RUN_DIR/trace-$name.txt"
		echo "$name: $(grep -h Fairness "$RUN_DIR/bench-$name.txt")"
	done
done
