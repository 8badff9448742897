#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: the futex kselftests, then a short smoke run of
# each lock type of perf bench futex mutex (when given a perf binary).
#
#   guest-check.sh KSFT_DIR [PERF]
ksft=$1
perf=${2:-}
. "$(dirname "$0")/guest-common.sh"

guest_setup
# Some tests create files in their working directory: run from a copy on
# the guest's writable /tmp rather than the read-only host root.
work=$(mktemp -d)
cp -a "$ksft/." "$work/"
(cd "$work" && USE_COLOR=0 ./run.sh)
# run.sh leaves out some programs the kselftest runner runs (robust_list,
# futex_numa): run every other one too.
for t in "$work"/functional/*; do
	name=$(basename "$t")
	[ -f "$t" ] && [ -x "$t" ] && [ "$name" != run.sh ] || continue
	grep -q "^\./$name\b" "$work/functional/run.sh" && continue
	echo "# $name, not in run.sh"
	(cd "$work/functional" && "./$name")
done

[ -z "$perf" ] || "$(dirname "$0")/bench-smoke.sh" "$perf"
"$(dirname "$0")/apps-smoke.sh" "$(dirname "$0")/../build/futex-spin"
guest_finish
