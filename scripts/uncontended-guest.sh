#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: what an uncontended pthread mutex costs under
# the preload, against glibc, in both of the preload's modes.
#
# 1. The library's microbenchmark (tests/bench-uncontended.c): glibc's
#    lock/unlock pair and the preload's in one process, paired rounds.
# 2. will-it-scale's pthread_mutex2 (each thread locks and unlocks its
#    own mutex) with 1 and 2 threads, as glibc, spin and waitwake (the
#    preload forced to its wait-wake fallback), the three one after the
#    other in each round, in an order that rotates from round to round.
#
# One line per pthread_mutex2 run in $RUN_DIR/mutex2.txt:
#   round variant threads ops_per_sec
#
#   uncontended-guest.sh LIBDIR [PTHREAD_MUTEX2]
set -uo pipefail

lib=$1
mutex2=${2:-}
preload=$lib/libfutex-spin-preload.so
rounds=${ROUNDS:-8}
variants=(glibc spin waitwake)
status=0

echo "kernel=$(uname -r) cpus=$(nproc) rounds=$rounds" | tee "$RUN_DIR/guest.txt"

for mode in spin waitwake; do
	echo "== bench-uncontended, preload mode $mode"
	FUTEX_SPIN_MODE=$mode LD_PRELOAD=$preload \
		"$lib/bench-uncontended" "$rounds" | tee "$RUN_DIR/micro-$mode.txt" ||
		status=1
done

[ -n "$mutex2" ] || exit $status

run_mutex2() {
	local variant=$1 threads=$2 env=()

	case $variant in
	spin) env=(LD_PRELOAD="$preload" FUTEX_SPIN_MODE=spin) ;;
	waitwake) env=(LD_PRELOAD="$preload" FUTEX_SPIN_MODE=waitwake) ;;
	esac
	env "${env[@]}" "$mutex2" -t "$threads" -s 3 2>&1 |
		sed -n 's/^average://p'
}

: >"$RUN_DIR/mutex2.txt"
for r in $(seq 1 "$rounds"); do
	for threads in 1 2; do
		for i in 0 1 2; do
			v=${variants[$(((r + i) % 3))]}
			ops=$(run_mutex2 "$v" "$threads")
			[ -n "$ops" ] || { ops=-; status=1; }
			echo "$r $v $threads $ops" | tee -a "$RUN_DIR/mutex2.txt"
		done
	done
done
exit $status
