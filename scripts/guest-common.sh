# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the guest scripts: debugfs before the run; after it, the
# futex_spin counters and a kmemleak scan whose report the host reads from
# $RUN_DIR/kmemleak.txt.

guest_setup() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	echo "# guest: $(uname -r), $(nproc) CPUs"
}

guest_finish() {
	cp /sys/kernel/debug/futex_spin/stats "$RUN_DIR/futex_spin_stats.txt" 2>/dev/null
	[ -w /sys/kernel/debug/kmemleak ] || return 0
	# Two scans: an object is reported only once it has been unreferenced
	# for a while and seen by more than one scan.
	echo scan >/sys/kernel/debug/kmemleak
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >"$RUN_DIR/kmemleak.txt"
}

# The futex_spin counters that changed between two copies of debugfs
# stats, each as " name=value" on one line: the change, divided by PER
# (default 1) and printed with FORMAT (default %d).
#   futex_spin_stats_delta BEFORE AFTER [PER [FORMAT]]
futex_spin_stats_delta() {
	paste "$1" "$2" | awk -v per="${3:-1}" -v fmt="${4:-%d}" '
		$4 != $2 { printf(" %s=" fmt, $1, ($4 - $2) / per) }
		END { print "" }'
}
