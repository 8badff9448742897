#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: will-it-scale's pthread_mutex tests as make
# bench-peers runs them (glibc, the preload in spin and in waitwake mode),
# each once under perf stat, for what the kernel sees of them: futex
# system calls and context switches per 1000 operations. One line per run,
# to standard output:
#
#   test tasks variant ops futex_per_kop cs_per_kop
#
# ops is the sum of will-it-scale's per-second totals, warm-up included,
# which is the run perf stat counts (less the last second's fraction).
#
#   peers-counts.sh LIBDIR WIS_DIR PERF
#
# Environment: TESTS (pthread_mutex1 to 5), THREADS ("1 2 4").
set -uo pipefail

lib=$1
wis=$2
perf=$3
tests=${TESTS:-pthread_mutex1 pthread_mutex2 pthread_mutex3 pthread_mutex4 pthread_mutex5}
stat=$(mktemp)
log=$(mktemp)

echo "test tasks variant ops futex_per_kop cs_per_kop"
for test in $tests; do
	for n in ${THREADS:-1 2 4}; do
		for v in glibc spin waitwake; do
			env=()
			[ "$v" = glibc ] ||
				env=(LD_PRELOAD="$lib/libfutex-spin-preload.so" FUTEX_SPIN_MODE="$v")
			"$perf" stat -x, -o "$stat" -e syscalls:sys_enter_futex,context-switches -- \
				env "${env[@]}" "$wis/${test}_threads" -t "$n" -s 2 >"$log" 2>&1
			ops=$(sed -n 's/.*total:\([0-9]*\)$/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
			awk -F, -v t="$test" -v n="$n" -v v="$v" -v ops="$ops" '
				$3 ~ /sys_enter_futex/ { futex = $1 }
				$3 ~ /context-switches/ { cs = $1 }
				END { printf "%s %d %s %d %.3f %.3f\n", t, n, v, ops,
				      ops ? 1000 * futex / ops : -1, ops ? 1000 * cs / ops : -1 }' "$stat"
		done
	done
done
rm -f "$stat" "$log"
