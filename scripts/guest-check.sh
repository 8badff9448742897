#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: the futex kselftests, a short smoke run of each
# lock type of perf bench futex mutex (when given a perf binary), then a
# kmemleak scan whose report the host reads from $RUN_DIR/kmemleak.txt.
ksft=$1
perf=${2:-}

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
echo "# guest: $(uname -r), $(nproc) CPUs"

# Some tests create files in their working directory: run from a copy on
# the guest's writable /tmp rather than the read-only host root.
work=$(mktemp -d)
cp -a "$ksft/." "$work/"
(cd "$work" && USE_COLOR=0 ./run.sh)

[ -z "$perf" ] || "$(dirname "$0")/bench-smoke.sh" "$perf"

if [ -w /sys/kernel/debug/kmemleak ]; then
	# Two scans: an object is reported only once it has been unreferenced
	# for a while and seen by more than one scan.
	echo scan >/sys/kernel/debug/kmemleak
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >"$RUN_DIR/kmemleak.txt"
fi
