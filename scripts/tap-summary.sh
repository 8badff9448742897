#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sum up the TAP test points in kselftest outputs: every "ok"/"not ok" at
# the top level is one point; a plan ("1..N") whose program ended before
# reporting N points counts the missing ones as failed, so a test binary
# that crashes cannot pass silently. Prints "N passed, N failed[, N skipped]"
# last; exits non-zero if anything failed or was skipped, except the test
# points named in $TAP_EXPECTED_SKIPS (space-separated names as the TAP
# line gives them, e.g. spinning.contended_acquisitions_spin): a kernel
# variant sets those that cannot run there (a second CPU on a UP kernel).
# A failed point is printed with the diagnostic lines ("# ...") that came
# after the point before it (at most the last 20), so that a log that
# keeps only this summary, as CI's does, still says which check failed.
set -euo pipefail

awk -v expected="${TAP_EXPECTED_SKIPS:-}" '
BEGIN { n = split(expected, e, " "); for (i = 1; i <= n; i++) allowed[e[i]] = 1 }
# A skip is expected if the point name, between the number and " #", is listed.
function skip(line,	name) {
	skipped++
	name = line
	sub(/^(not )?ok [0-9]+ /, "", name)
	sub(/ *#.*$/, "", name)
	if (name in allowed) {
		expected_skips++
		print "skipped (expected here): " line
	} else {
		print "skipped: " line
	}
}
# The diagnostics since the last point, for a point that failed.
function diagnose(	i, from) {
	from = ndiag > 20 ? ndiag - 20 : 0
	for (i = from + 1; i <= ndiag; i++) print "    " diag[i]
}
function close_plan() {
	if (planned > seen) {
		printf("missing %d of %d test points after plan at line %d\n",
		       planned - seen, planned, planline)
		failed += planned - seen
	}
	planned = 0; seen = 0
}
FNR == 1 { close_plan(); ndiag = 0 }
/^#/ { diag[++ndiag] = $0 }
/^1\.\.[0-9]+/ { close_plan(); ndiag = 0; planned = substr($1, 4) + 0; planline = NR; next }
/^ok / {
	seen++
	if ($0 ~ /# *SKIP/) skip($0); else passed++
	ndiag = 0
	next
}
/^not ok / {
	seen++
	if ($0 ~ /# *SKIP/) skip($0)
	else { failed++; print "FAILED: " $0; diagnose() }
	ndiag = 0
	next
}
/^Bail out!/ { failed++; print "FAILED: " $0 }
END {
	close_plan()
	line = sprintf("%d passed, %d failed", passed, failed)
	if (skipped) line = line sprintf(", %d skipped", skipped)
	if (expected_skips) line = line sprintf(" (%d expected)", expected_skips)
	print line
	exit (failed || skipped > expected_skips || !passed) ? 1 : 0
}' "$@"
