#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: each real program with glibc's mutexes (no
# preload), under the preload (spin), and under the preload forced to its
# wait-wake fallback (tid-ww: the same mutex and condvar code without
# FUTEX_SPIN_LOCK, to tell what spinning brings from what the rest of the
# library does). Each repeat is a round that runs every variant once, in
# an order that rotates from round to round. One line per run in
# $RUN_DIR/results.txt:
#
#   program variant repeat ops ops_per_sec p99_us futex_calls cswitches
#
# futex system calls and context switches are counted with perf stat over
# the program (for memcached, over the server). p99_us is "-" where the
# tool gives none. $RUN_DIR/counters.txt has, per run, the kernel's
# futex_spin counters (debugfs stats) that changed, per 1000 operations:
#
#   program variant repeat name=per_kop ...
#
#   apps-bench-guest.sh LIBDIR PERF
set -uo pipefail
. "$(dirname "$0")/guest-common.sh"

lib=$1
perf=$2
preload=$lib/libfutex-spin-preload.so
repeat=${REPEAT:-3}
out=$RUN_DIR/results.txt
tmp=$(mktemp -d)
port=11411
failed=0

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
ip link set lo up 2>/dev/null
: >"$out"
: >"$RUN_DIR/counters.txt"
{
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "repeat=$repeat"
	[ -e /proc/lockdep ] && echo "debug=1"
} >"$RUN_DIR/guest.txt"

# Run "$@" in variant $1 under perf stat: output in $tmp/out, counts in
# $tmp/stat
measure() {
	local v=$1
	shift
	local env=()

	case $v in
	spin) env=(LD_PRELOAD="$preload") ;;
	tid-ww) env=(LD_PRELOAD="$preload" FUTEX_SPIN_MODE=waitwake) ;;
	esac
	local rc=0

	snap "$tmp/c0"
	timeout -k 5 300 env "${env[@]}" "$perf" stat -x, -o "$tmp/stat" \
		-e syscalls:sys_enter_futex -e context-switches -- "$@" \
		>"$tmp/out" 2>&1 || rc=$?
	snap "$tmp/c1"
	return $rc
}

snap() {
	cat /sys/kernel/debug/futex_spin/stats >"$1" 2>/dev/null || : >"$1"
}

# The futex_spin counters of the run, per 1000 of its $4 operations
kernel_counts() {
	echo "$1 $2 $3$(futex_spin_stats_delta "$tmp/c0" "$tmp/c1" \
		"$(awk -v ops="$4" 'BEGIN { print ops / 1000 }')" %.1f)" \
		>>"$RUN_DIR/counters.txt"
}

counts() {
	awk -F, '$3 ~ /sys_enter_futex/ { f = $1 } $3 ~ /context-switches/ { c = $1 }
		 END { print f + 0, c + 0 }' "$tmp/stat"
}

record() {
	if [ -z "$4" ] || [ -z "$5" ] || [ -z "$6" ]; then
		fail "$1" "$2" "$3"
		return
	fi
	echo "$1 $2 $3 $4 $5 $6 $(counts)" >>"$out"
	kernel_counts "$@"
	echo "# $1 $2 #$3: ops $4, ops/s $5, p99 $6 us, futex/cs $(counts)"
}

fail() {
	echo "# FAILED: $1 $2 #$3"
	sed 's/^/#   /' "$tmp/out" | tail -n 20
	failed=1
}

sysbench_mutex() {
	local v=$1 r=$2 t ops=$((8 * 100000))

	measure "$v" sysbench mutex --threads=8 --mutex-num=4 \
		--mutex-locks=100000 --mutex-loops=20 run ||
		{ fail sysbench-mutex "$v" "$r"; return; }
	t=$(awk '/total time:/ { sub("s", "", $3); print $3 }' "$tmp/out")
	record sysbench-mutex "$v" "$r" "$ops" \
		"$(awk -v o="$ops" -v t="$t" 'BEGIN { printf("%.0f", o / t) }')" -
}

sysbench_threads() {
	local v=$1 r=$2 ev t p99

	measure "$v" sysbench threads --threads=8 --thread-locks=2 \
		--thread-yields=10 --time=3 --percentile=99 run ||
		{ fail sysbench-threads "$v" "$r"; return; }
	ev=$(awk '/total number of events:/ { print $5 }' "$tmp/out")
	t=$(awk '/total time:/ { sub("s", "", $3); print $3 }' "$tmp/out")
	p99=$(awk '/99th percentile:/ { print $3 * 1000 }' "$tmp/out")
	record sysbench-threads "$v" "$r" "$ev" \
		"$(awk -v o="$ev" -v t="$t" 'BEGIN { printf("%.0f", o / t) }')" "$p99"
}

cache_bench_run() {
	local v=$1 r=$2 ops=$((8 * 50000)) tput p99

	measure "$v" cache_bench -threads=8 -ops_per_thread=50000 \
		-cache_size=8388608 -num_shard_bits=2 ||
		{ fail cache_bench "$v" "$r"; return; }
	tput=$(sed -n 's/.*Rough parallel ops\/sec = \([0-9]*\).*/\1/p' "$tmp/out")
	p99=$(sed -n 's/.*P99: \([0-9.]*\).*/\1/p' "$tmp/out" | head -n 1)
	[ -n "$tput" ] || { fail cache_bench "$v" "$r"; return; }
	record cache_bench "$v" "$r" "$ops" "$tput" \
		"$(awk -v n="$p99" 'BEGIN { printf("%.1f", n / 1000) }')"
}

# The server is measured; the client (memcaslap, glibc mutexes) is the same
# in every variant.
memcached_run() {
	local v=$1 r=$2 mc ops tput

	rm -f "$tmp/mc.pid"
	measure "$v" memcached -u root -t 4 -l 127.0.0.1 -p $port -U 0 \
		-m 64 -P "$tmp/mc.pid" &
	mc=$!
	for _ in $(seq 100); do
		memcstat --servers=127.0.0.1:$port >/dev/null 2>&1 && break
		sleep 0.1
	done
	timeout -k 5 60 memcaslap -s 127.0.0.1:$port -F "$(dirname "$0")/memslap.cnf" \
		-T 2 -c 32 -t 3s \
		>"$tmp/slap" 2>&1
	# perf stat passes the signal on and writes its counts when it ends.
	[ -s "$tmp/mc.pid" ] && kill -TERM "$(cat "$tmp/mc.pid")"
	wait "$mc"
	ops=$(sed -n 's/.*Ops: \([0-9]*\) TPS: \([0-9]*\).*/\1/p' "$tmp/slap" | tail -n 1)
	tput=$(sed -n 's/.*Ops: \([0-9]*\) TPS: \([0-9]*\).*/\2/p' "$tmp/slap" | tail -n 1)
	if [ -z "$ops" ] || grep -q "verify_failed: [1-9]" "$tmp/slap"; then
		cat "$tmp/slap" >>"$tmp/out"
		fail memcached "$v" "$r"
		return
	fi
	record memcached "$v" "$r" "$ops" "$tput" -
}

echo "# guest: $(uname -r), $(nproc) CPUs; $repeat repeats"
variants=(glibc spin tid-ww)
for ((r = 1; r <= repeat; r++)); do
	for ((i = 0; i < ${#variants[@]}; i++)); do
		v=${variants[$(((r + i) % ${#variants[@]}))]}
		sysbench_mutex "$v" "$r"
		sysbench_threads "$v" "$r"
		cache_bench_run "$v" "$r"
		memcached_run "$v" "$r"
	done
done
cp /sys/kernel/debug/futex_spin/stats "$RUN_DIR/futex_spin_stats.txt" 2>/dev/null
rm -rf "$tmp"
exit $failed
