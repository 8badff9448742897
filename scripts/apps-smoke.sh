#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: the futex-spin library's tests, then a short run
# of each real program under the LD_PRELOAD build, in TAP. A program
# passes when it exits 0 within its time limit, reports the work it was
# given (so a lost wakeup or a broken lock shows as a hang or a wrong
# count) and the preload announced itself in spin mode.
#
#   apps-smoke.sh LIBDIR
#
# APPS_MODE=waitwake expects the fallback instead (a kernel without the
# opcodes, e.g. to try this on the host).
set -uo pipefail

lib=$1
preload=$lib/libfutex-spin-preload.so
port=11311
mode=${APPS_MODE:-spin}
points=5
. "$(dirname "$0")/tap.sh"

# Under the preload, with its banner on stderr: "preload active, mode spin"
under() {
	FUTEX_SPIN_VERBOSE=1 LD_PRELOAD=$preload timeout -k 5 "$@"
}

# $1: output of a run; $2: its exit status; $3: a line it must contain
check() {
	grep -v '^( ' <<<"$1" | tail -n 12 | sed 's/^/# /'
	[ "$2" -eq 0 ] && grep -q "preload active, mode $mode" <<<"$1" &&
		grep -Eq "$3" <<<"$1"
}

# The library's tests run from the source tree: they read its README,
# Makefile (make install) and tests/differences.txt.
FUTEX_SPIN_EXPECT=$mode "$(dirname "$0")/../tools/lib/futex-spin/tests/run.sh" \
	"$lib" || status=1

echo "TAP version 13"
echo "1..$points"

out=$(under 120 sysbench mutex --threads=4 --mutex-num=16 \
	--mutex-locks=2000 --mutex-loops=100 run 2>&1)
check "$out" $? "total number of events: +4$"
tap_point "futex-spin-apps: sysbench mutex, 4 threads" $?

out=$(under 120 sysbench threads --threads=4 --thread-yields=20 \
	--thread-locks=4 --events=500 --time=0 run 2>&1)
check "$out" $? "total number of events: +500$"
tap_point "futex-spin-apps: sysbench threads, 4 threads" $?

out=$(under 300 cache_bench -threads=4 -ops_per_thread=5000 \
	-cache_size=8388608 2>&1)
check "$out" $? "^Complete in"
tap_point "futex-spin-apps: rocksdb cache_bench, 4 threads" $?

# memcached: a load with verification, then a value stored and read back
# (memccat adds a newline)
tmp=$(mktemp -d)
# A virtme-ng guest may come up with loopback down.
ip link set lo up 2>/dev/null
# Not through a function: $! must be timeout, which passes a kill on.
FUTEX_SPIN_VERBOSE=1 LD_PRELOAD=$preload timeout -k 5 300 \
	memcached -u root -t 4 -l 127.0.0.1 -p $port -U 0 -m 64 \
	2>"$tmp/memcached.err" &
mc=$!
for _ in $(seq 50); do
	memcstat --servers=127.0.0.1:$port >/dev/null 2>&1 && break
	sleep 0.2
done
out=$(under 120 memcaslap -s 127.0.0.1:$port -F "$(dirname "$0")/memslap.cnf" \
	-T 2 -c 8 -t 2s --verify=0.1 2>&1)
rc=$?
out="$out
$(cat "$tmp/memcached.err")"
check "$out" $rc "verify_failed: 0$" && ! grep -q "verify_failed: [1-9]" <<<"$out"
tap_point "futex-spin-apps: memcached + memcaslap, verified gets" $?

head -c 100000 /dev/urandom >"$tmp/blob"
memccp --servers=127.0.0.1:$port "$tmp/blob" &&
	memccat --servers=127.0.0.1:$port blob >"$tmp/back" &&
	{ cat "$tmp/blob"; echo; } | cmp -s - "$tmp/back" && kill -0 "$mc" 2>/dev/null
tap_point "futex-spin-apps: memcached returns what was stored, still running" $?
kill "$mc" 2>/dev/null
wait "$mc" 2>/dev/null
rm -rf "$tmp"
exit $status
