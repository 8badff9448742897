#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: the mutex benchmark as a smoke test, in TAP. Each
# lock type runs for 1 s with 2 threads and must keep mutual exclusion;
# spin runs on a shared futex as well, and with --spin-tries 0, so that
# every contended lock enters the kernel. Then spin must take contended
# locks by reading the word: at load 1, wait 9, at least 1 per 1000
# operations (with --spin-tries 0 there are none). How many varies with
# the kernel and with the host's load: per 1000 operations on 2 vCPUs,
# about 500 on the release kernel, 7 to 424 on the debug kernel, 35 to 386
# with PREEMPT_RT and 7 to 10 with KCSAN, where lock syscalls were 0.1, 15
# to 33, 15 to 29 and 18 (2026-11-24 and 25). That run
# reads no clock: on the debug kernel a pair of clock reads takes some
# 19 us, longer than the reads of the word wait. It needs a second CPU:
# on one, a waiter only meets an owner that was preempted, which reading
# cannot wait out.
# The timed operations must be a fair sample: at load 50, for spin and tas,
# the share of their acquisitions made by the last releaser must be within
# 0.05 of the share over all operations. When a timed operation read the
# clock before its first attempt, a spinning waiter took the lock in that
# gap: on the release kernel spin gave 0.54 against 0.97 and tas 0.13
# against 0.81, on the debug kernel 0.90 against 0.99 and 0.11 against 0.84.
# ww-global must run on the global hash (0 slots) where ww runs on the
# process's private one. The slice types must refuse to run, not run as
# plain spinning, while glibc holds the thread's rseq registration; every
# other run has glibc's registration off, as in make bench.
# The trace of a spin run must see every event the kernel counts
# (tools/tracing/futex_spin/futex_spin_served.py --check).
# A last point checks that the check itself works: with no lock at all it
# must report broken exclusion.
#
#   bench-smoke.sh PERF
#
# A type the kernel lacks is reported as "# SKIP" (a failure for
# tap-summary.sh). Exits non-zero unless every point passed.
set -uo pipefail

perf=$1
. "$(dirname "$0")/tap.sh"
tests=("ww" "ww-global" "pi" "spin" "spin -S" "spin --spin-tries 0" "spin-slice" "glibc"
       "glibc-adaptive" "tas" "slice")

# The value of a figure in the benchmark's JSON output $1
figure() {
	local v=${1#*\"$2\": }

	echo "${v%%,*}"
}

mutex() {
	# shellcheck disable=SC2086 # $1 is a type and maybe options
	GLIBC_TUNABLES=${GLIBC_TUNABLES-glibc.pthread.rseq=0} \
		timeout -k 5 60 "$perf" bench -f simple futex mutex -t 2 -r 1 -s -m $1 2>&1
}

echo "TAP version 13"
echo "1..$((${#tests[@]} + 6))"
for t in "${tests[@]}"; do
	output=$(mutex "$t")
	rc=$?
	sed '/^$/d; s/^/# /' <<<"$output"
	if [ "$rc" -eq 2 ]; then
		# Every type must run on the kernel under test: a skip fails.
		tap_skip "futex-mutex $t" "not supported by this kernel"
		status=1
	else
		tap_point "futex-mutex $t" "$rc" "(exit $rc)"
	fi
done

name="futex-mutex.short_wait_in_user_space"
if [ "$(nproc)" -lt 2 ]; then
	tap_skip "$name" "needs a second CPU for the owner"
else
	output=$(mutex "spin -l 1 -w 9 --time-every 0 --json")
	rc=$?
	sed '/^$/d; s/^/# /' <<<"$output"
	spun=$(figure "$output" user_spun_per_kop)
	[ "$rc" -eq 0 ] && awk -v s="$spun" 'BEGIN { exit !(s + 0 >= 1) }'
	tap_point "$name" $? "(exit $rc)"
fi

fair=1
for t in spin tas; do
	output=$(mutex "$t -l 50 --json")
	rc=$?
	sed '/^$/d; s/^/# /' <<<"$output"
	all=$(figure "$output" last_releaser_share)
	timed=$(figure "$output" timed_last_releaser_share)
	[ "$rc" -eq 0 ] && awk -v a="$all" -v t="$timed" \
		'BEGIN { d = a - t; exit !(a != "null" && t != "null" && d < 0.05 && d > -0.05) }' ||
		fair=0
done
[ "$fair" = 1 ]
tap_point futex-mutex.timed_ops_are_a_fair_sample $?

output=$(mutex "ww --json")
private=$(figure "$output" hash_slots)
output=$(mutex "ww-global --json")
rc=$?
sed '/^$/d; s/^/# /' <<<"$output"
global=$(figure "$output" hash_slots)
[ "$rc" -eq 0 ] && [ "$global" = 0 ] && [ "${private:-0}" -gt 0 ] 2>/dev/null
tap_point futex-mutex.ww_global_uses_the_global_hash $? \
	"(exit $rc, slots $global, ww's $private)"

output=$(GLIBC_TUNABLES='' mutex "slice")
rc=$?
sed '/^$/d; s/^/# /' <<<"$output"
[ "$rc" -eq 2 ] && grep -q "glibc.pthread.rseq=0" <<<"$output"
tap_point futex-mutex.slice_refuses_glibc_rseq $? "(exit $rc)"

# The counters the kernel keeps are the tracepoints' counts: whatever a
# counter dropped for a tracepoint gave, the trace gives too.
served=$(dirname "$0")/../tools/tracing/futex_spin/futex_spin_served.py
output=$(timeout -k 5 120 "$served" --check -- "$perf" bench -f simple \
	futex mutex -t 4 -r 1 -s -m spin -l 50 2>&1)
rc=$?
sed '/^$/d; s/^/# /' <<<"$output"
[ "$rc" -eq 0 ] && grep -Eq '^ok: sleeps counted [1-9]' <<<"$output"
tap_point futex-mutex.the_trace_sees_every_counted_event $? "(exit $rc)"

output=$(mutex "none -l 100")
rc=$?
sed '/^$/d; s/^/# /' <<<"$output"
[ "$rc" -eq 1 ] && grep -q "exclusion=broken" <<<"$output"
tap_point "futex-mutex check catches a missing lock" $? "(exit $rc)"
exit $status
