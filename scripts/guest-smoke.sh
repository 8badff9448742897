#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest for make bisect-check: the kernel of one commit of
# the series booted, and wait-wake and spinning mutexes keep mutual
# exclusion on it under contention (perf bench futex mutex exits 1 if not).
#
#   guest-smoke.sh PERF yes|no
#
# The second argument says whether this commit has FUTEX_SPIN_LOCK; before
# it, the spin type must be refused as unsupported (exit status 2).
set -uo pipefail

perf=$1
has_spin=$2

"$perf" bench futex mutex -m ww -t 4 -l 1 -r 1 || exit 1
"$perf" bench futex mutex -m spin -t 4 -l 1 -r 1
rc=$?
if [ "$has_spin" = yes ]; then
	[ "$rc" -eq 0 ]
else
	[ "$rc" -eq 2 ]
fi
