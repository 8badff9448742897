#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: will-it-scale's mutex and futex tests, threads
# mode, for make bench-peers. Every pthread_mutex test runs as glibc, as
# spin (the preload, which puts pthread mutexes on FUTEX_SPIN_LOCK) and as
# waitwake (the preload forced to its wait-wake fallback), one after the
# other in each round, in an order that rotates from round to round. The
# futex tests call the futex syscall themselves, which the preload does
# not reach: they run as glibc only, upstream's futex paths on this kernel.
#
# One line per run in $RUN_DIR/peers.txt:
#   round test threads variant ops_per_sec
#
#   peers-guest.sh LIBDIR WIS_DIR
#
# WIS_DIR holds TEST_threads binaries. Environment: ROUNDS (8), TESTS,
# THREADS (1 2 4: one task up to twice the vCPUs), SECONDS_PER_RUN (2,
# after will-it-scale's own 5 s of warm-up).
set -uo pipefail

lib=$1
wis=$2
preload=$lib/libfutex-spin-preload.so
rounds=${ROUNDS:-8}
tests=${TESTS:-pthread_mutex1 pthread_mutex2 pthread_mutex3 pthread_mutex4 pthread_mutex5 futex1 futex2 futex3 futex4}
threads=${THREADS:-1 2 4}
secs=${SECONDS_PER_RUN:-2}
out=$RUN_DIR/peers.txt
status=0

echo "kernel=$(uname -r) cpus=$(nproc) rounds=$rounds seconds=$secs" | tee "$RUN_DIR/guest.txt"

# will-it-scale's average ops/s of test $1 with $2 tasks as variant $3.
run() {
	local test=$1 n=$2 variant=$3 env=()

	case $variant in
	spin | waitwake) env=(LD_PRELOAD="$preload" FUTEX_SPIN_MODE="$variant") ;;
	esac
	env "${env[@]}" timeout -k 5 $((secs + 60)) "$wis/${test}_threads" -t "$n" -s "$secs" 2>&1 |
		sed -n 's/^average://p'
}

: >"$out"
for ((r = 1; r <= rounds; r++)); do
	for test in $tests; do
		variants=(glibc)
		[[ $test != pthread_mutex* ]] || variants=(glibc spin waitwake)
		k=${#variants[@]}
		for n in $threads; do
			for ((i = 0; i < k; i++)); do
				v=${variants[$(((r + i) % k))]}
				ops=$(run "$test" "$n" "$v")
				[ -n "$ops" ] || { ops=-; status=1; }
				echo "$r $test $n $v $ops" | tee -a "$out"
			done
		done
	done
done
exit $status
