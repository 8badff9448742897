#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: perf bench futex mutex on a few cells, one line
# per run with the figures that matter for fairness, and for spin the
# growth of /sys/kernel/debug/futex_spin/stats over the run.
#
#   guest.sh PERF
#
# Environment: CELLS ("threads,load,wait ..."; "2,50,0 16,50,0 64,50,0"),
# TYPES ("ww spin"), REP (runs per cell and type, 1), RT (seconds, 2),
# BENCH_ARGS (more perf bench options).
set -uo pipefail

perf=$1
stats=/sys/kernel/debug/futex_spin/stats
before=$(mktemp)
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

for cell in ${CELLS:-2,50,0 16,50,0 64,50,0}; do
	IFS=, read -r t l w <<<"$cell"
	for _ in $(seq "${REP:-1}"); do
		for m in ${TYPES:-ww spin}; do
			cp "$stats" "$before" 2>/dev/null
			# shellcheck disable=SC2086 # BENCH_ARGS are options
			out=$("$perf" bench futex mutex -m "$m" -t "$t" -l "$l" -w "$w" \
				-r "${RT:-2}" --json ${BENCH_ARGS:-} 2>/dev/null | grep '^{')
			printf '%-16s %-10s' "$m" "$cell"
			for f in ops_per_sec lock_syscalls_per_kop user_spun_per_kop \
				 slowest_share last_releaser_share timed_last_releaser_share \
				 lat_p99_ns lat_max_ns; do
				v=${out#*\"$f\": }
				printf ' %s=%s' "$f" "${v%%,*}"
			done
			echo
			[ "$m" = spin ] && [ -r "$stats" ] &&
				paste "$before" "$stats" |
				awk '$4 != $2 { printf "  %s=%d", $1, $4 - $2 } END { print "" }'
		done
	done
done
rm -f "$before"
