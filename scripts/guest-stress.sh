#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: futex_spin_fuzz with the given arguments, then
# futex_spin_heads (next to it) with HEADS_SECONDS per scenario.
#
#   [HEADS_SECONDS=60] [HEADS_BESIDE=S] guest-stress.sh FUZZ_BINARY [FUZZ_ARGS...]
#
# HEADS_BESIDE=S also runs the heads test's two robust scenarios, S
# seconds each, beside the fuzzer: their owners die under its load, where
# a death that was not handled once came out. The fuzzer must outlast
# them (its -t above 2 S + 60).
fuzz=$1
shift
heads=$(dirname "$fuzz")/futex_spin_heads
. "$(dirname "$0")/guest-common.sh"

guest_setup
# The fuzzer and the heads test exec themselves (/proc/self/exe) and need
# no files, but run them from the writable /tmp like the other guest
# scripts do.
cd "$(mktemp -d)" || exit 1
beside=
if [ -n "${HEADS_BESIDE:-}" ]; then
	FUTEX_SPIN_HEADS_SECONDS=$HEADS_BESIDE FUTEX_SPIN_HEADS_BESIDE=1 \
		"$heads" -t robust_exit -t robust_sigkill >beside.out 2>&1 &
	beside=$!
fi
"$fuzz" "$@"
rc=$?
if [ -n "$beside" ]; then
	wait "$beside" || rc=1
	echo "# the robust scenarios beside the fuzzer:"
	cat beside.out
fi
# Queue head lifetimes: lockers, timeouts, robust deaths, exits and execs
# racing, then no head may be left. Its TAP points count like the fuzzer's.
FUTEX_SPIN_HEADS_SECONDS=${HEADS_SECONDS:-60} "$heads" || rc=$?
guest_finish
exit $rc
