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
