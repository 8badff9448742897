# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the guest scripts that print TAP themselves (the selftests
# print their own). tap_point NAME STATUS [WHY] prints the next point, ok
# when STATUS is 0; a failed point sets status=1, the script's exit
# status.

tap_n=0
status=0

tap_point() {
	tap_n=$((tap_n + 1))
	if [ "$2" -eq 0 ]; then
		echo "ok $tap_n $1"
	else
		echo "not ok $tap_n $1${3:+ $3}"
		status=1
	fi
}

# A point that could not run here, with the reason; it passes as a skip.
tap_skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n $1 # SKIP $2"
}
