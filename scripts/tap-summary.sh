#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sum up the TAP test points in a kselftest output: every "ok"/"not ok" at
# the top level is one point; a plan ("1..N") whose program ended before
# reporting N points counts the missing ones as failed, so a test binary
# that crashes cannot pass silently. Prints "N passed, N failed[, N skipped]"
# last; exits non-zero if anything failed or was skipped.
set -euo pipefail

awk '
function close_plan() {
	if (planned > seen) {
		printf("missing %d of %d test points after plan at line %d\n",
		       planned - seen, planned, planline)
		failed += planned - seen
	}
	planned = 0; seen = 0
}
/^1\.\.[0-9]+/ { close_plan(); planned = substr($1, 4) + 0; planline = NR; next }
/^ok / {
	seen++
	if ($0 ~ /# *SKIP/) { skipped++; print "skipped: " $0 } else passed++
	next
}
/^not ok / {
	seen++
	if ($0 ~ /# *SKIP/) { skipped++; print "skipped: " $0 }
	else { failed++; print "FAILED: " $0 }
	next
}
/^Bail out!/ { failed++; print "FAILED: " $0 }
END {
	close_plan()
	line = sprintf("%d passed, %d failed", passed, failed)
	if (skipped) line = line sprintf(", %d skipped", skipped)
	print line
	exit (failed || skipped || !passed) ? 1 : 0
}' "$1"
