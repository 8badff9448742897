#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest (make spinners): what many spinners on one lock
# do, counted rather than timed, for a guest with more vCPUs than the
# host has cores. perf bench futex mutex -m spin with 1, 2 and 4 threads
# per vCPU, loads 10 and 100 (as much work outside the lock), 5 s each;
# around each run the kernel's futex_spin counters (debugfs stats) and
# spin_max, reset before it. One line per run:
#
#   cpus N threads N load N spinners_max N queued_ns_max N segment_ns_max N
#   name=delta ...
#
#   spinners-guest.sh PERF
set -uo pipefail
. "$(dirname "$0")/guest-common.sh"

perf=$1
d=/sys/kernel/debug/futex_spin
tmp=$(mktemp -d)
n=$(nproc)

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
[ -w $d/spin_max ] || { echo "spinners: no $d/spin_max"; exit 2; }
for mult in 1 2 4; do
	for load in 10 100; do
		cat $d/stats >"$tmp/before"
		echo 0 >$d/spin_max
		timeout -k 5 120 "$perf" bench futex mutex -m spin -t $((n * mult)) \
			-r 5 -l $load -w $load -s >"$tmp/out" 2>&1 ||
			{ echo "spinners: perf bench failed"; cat "$tmp/out"; exit 1; }
		cat $d/stats >"$tmp/after"
		printf "cpus %d threads %d load %d spinners_max %d queued_ns_max %d segment_ns_max %d" \
			"$n" $((n * mult)) $load \
			"$(awk '/^spinners/ { print $2 }' $d/spin_max)" \
			"$(awk '/^queued_ns/ { print $2 }' $d/spin_max)" \
			"$(awk '/^segment_ns/ { print $2 }' $d/spin_max)"
		futex_spin_stats_delta "$tmp/before" "$tmp/after"
	done
done
rm -rf "$tmp"
