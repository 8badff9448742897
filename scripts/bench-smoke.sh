#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: the mutex benchmark as a smoke test, in TAP. Each
# lock type runs for 1 s with 2 threads and must keep mutual exclusion;
# spin runs on a shared futex as well. A last point checks that the check
# itself works: with no lock at all it must report broken exclusion.
#
#   bench-smoke.sh PERF
#
# A type the kernel lacks is reported as "# SKIP" (a failure for
# tap-summary.sh). Exits non-zero unless every point passed.
set -uo pipefail

perf=$1
status=0
tests=("ww" "pi" "spin" "spin -S" "glibc" "glibc-adaptive" "tas")

mutex() {
	# shellcheck disable=SC2086 # $1 is a type and maybe options
	timeout -k 5 60 "$perf" bench -f simple futex mutex -t 2 -r 1 -s -m $1 2>&1
}

echo "TAP version 13"
echo "1..$((${#tests[@]} + 1))"
i=0
for t in "${tests[@]}"; do
	i=$((i + 1))
	output=$(mutex "$t")
	rc=$?
	sed '/^$/d; s/^/# /' <<<"$output"
	case $rc in
	0) echo "ok $i futex-mutex $t" ;;
	2) echo "ok $i futex-mutex $t # SKIP not supported by this kernel"; status=1 ;;
	*) echo "not ok $i futex-mutex $t (exit $rc)"; status=1 ;;
	esac
done

i=$((i + 1))
output=$(mutex "none -l 100")
rc=$?
sed '/^$/d; s/^/# /' <<<"$output"
if [ "$rc" -eq 1 ] && grep -q "exclusion=broken" <<<"$output"; then
	echo "ok $i futex-mutex check catches a missing lock"
else
	echo "not ok $i futex-mutex check catches a missing lock (exit $rc)"
	status=1
fi
exit $status
