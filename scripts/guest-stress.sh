#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: futex_spin_fuzz with the given arguments, then
# futex_spin_heads (next to it) with HEADS_SECONDS per scenario.
#
#   [HEADS_SECONDS=60] guest-stress.sh FUZZ_BINARY [FUZZ_ARGS...]
fuzz=$1
shift
heads=$(dirname "$fuzz")/futex_spin_heads
. "$(dirname "$0")/guest-common.sh"

guest_setup
# The fuzzer and the heads test exec themselves (/proc/self/exe) and need
# no files, but run them from the writable /tmp like the other guest
# scripts do.
cd "$(mktemp -d)" || exit 1
"$fuzz" "$@"
rc=$?
# Queue head lifetimes: lockers, timeouts, robust deaths, exits and execs
# racing, then no head may be left. Its TAP points count like the fuzzer's.
FUTEX_SPIN_HEADS_SECONDS=${HEADS_SECONDS:-60} "$heads" || rc=$?
guest_finish
exit $rc
