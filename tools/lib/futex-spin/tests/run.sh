#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# Run the futex-spin tests from the build directory DIR, in TAP: a look at
# the preload object's imports; the library in the mode the kernel offers
# and in the forced wait-wake fallback; the pthread tests on glibc alone
# (which checks the tests), under the preload, and under the preload in
# the fallback. Each run has a time limit: a hang fails its missing points.
#
#   run.sh DIR
set -uo pipefail

dir=${1:-.}
preload=$dir/libfutex-spin-preload.so
status=0

run() {
	echo "# $*"
	timeout -k 5 300 env "$@" || status=1
}

# The preload must reach its thread-local state without a call per access
# (FUTEX_SPIN_TLS in futex-spin.c): no __tls_get_addr among its imports.
tls_check() {
	local syms

	echo "1..1"
	if ! syms=$(readelf --dyn-syms -W "$preload"); then
		echo "not ok 1 preload: readelf failed"
		status=1
	elif grep -qw __tls_get_addr <<<"$syms"; then
		echo "not ok 1 preload: thread-local state through __tls_get_addr"
		status=1
	else
		echo "ok 1 preload: thread-local state without __tls_get_addr"
	fi
}

tls_check
run FUTEX_SPIN_MODE=auto "$dir/test-lib"
run FUTEX_SPIN_MODE=waitwake "$dir/test-lib"
run "$dir/test-pthread" "glibc:"
run FUTEX_SPIN_EXPECT_PRELOAD=1 LD_PRELOAD="$preload" \
	"$dir/test-pthread" "preload:"
run FUTEX_SPIN_EXPECT_PRELOAD=1 FUTEX_SPIN_MODE=waitwake \
	LD_PRELOAD="$preload" "$dir/test-pthread" "preload-waitwake:"
exit $status
