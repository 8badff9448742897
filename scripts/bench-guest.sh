#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: the mutex benchmark sweep. Every lock type at every
# thread count and load, REPEAT runs each (the types interleaved), one JSON
# line per run in $RUN_DIR/results.jsonl and one progress line per cell.
#
#   bench-guest.sh PERF
#
# Environment: RUNTIME (seconds per run, 1), REPEAT (3), BENCH_ARGS (more
# perf bench options for every run), TYPES, THREADS, LOADS (the grid).
# Exits non-zero if a run broke mutual exclusion, failed or hung.
set -uo pipefail

perf=$1
runtime=${RUNTIME:-1}
repeat=${REPEAT:-3}
types=${TYPES:-ww spin pi glibc glibc-adaptive tas}
threads=${THREADS:-2 4 16 64}
loads=${LOADS:-1 10 50 100}
out=$RUN_DIR/results.jsonl
failed=0
missing=" "

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
{
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "runtime=$runtime"
	echo "repeat=$repeat"
	echo "args=${BENCH_ARGS:-}"
	# A debug kernel (lockdep, kmemleak) measures nothing worth keeping.
	[ -e /proc/lockdep ] || [ -e /sys/kernel/debug/kmemleak ] && echo "debug=1"
} >"$RUN_DIR/guest.txt"
: >"$out"
ncells=$(( $(wc -w <<<"$threads") * $(wc -w <<<"$loads") ))
echo "# guest: $(uname -r), $(nproc) CPUs; $ncells cells x {$types} x $repeat runs of ${runtime}s"

# One run: its JSON line goes to $out; a type the kernel lacks (exit 2) is
# recorded once and left out from then on.
run() {
	local t=$1 n=$2 l=$3 line rc

	# shellcheck disable=SC2086 # BENCH_ARGS is a list of options
	line=$(timeout -k 5 $((runtime + 120)) "$perf" bench -f simple futex mutex \
		-m "$t" -t "$n" -l "$l" -r "$runtime" --json ${BENCH_ARGS:-} | grep '^{')
	rc=$?
	if [ "$rc" -eq 2 ]; then
		missing="$missing$t "
		echo "# $t: not supported by this kernel: $line"
		echo "$line" >>"$out"
		return
	fi
	if [ "$rc" -ne 0 ]; then
		failed=1
		echo "# FAILED: $t threads=$n load=$l (exit $rc) $line"
		[ -n "$line" ] ||
			line="{\"mutex\": \"$t\", \"threads\": $n, \"load\": $l, \"error\": \"exit $rc\"}"
	fi
	echo "$line" >>"$out"
}

cell=0
for n in $threads; do
	for l in $loads; do
		cell=$((cell + 1))
		for ((r = 0; r < repeat; r++)); do
			for t in $types; do
				[[ $missing == *" $t "* ]] || run "$t" "$n" "$l"
			done
		done
		# Progress: mean kops/s of this cell's runs per type.
		summary=$(grep "\"threads\": $n, \"futexes\": [0-9]*, \"load\": $l," "$out" |
			sed -n 's/.*"mutex": "\([^"]*\)".*"ops_per_sec": \([0-9.]*\).*/\1 \2/p' |
			awk '{ s[$1] += $2; c[$1]++; if (!($1 in o)) o[$1] = ++k }
			     END { for (t in o) p[o[t]] = t
				   for (i = 1; i <= k; i++) printf(" %s %.0f", p[i], s[p[i]] / c[p[i]] / 1000) }')
		printf '[%2d/%d] threads %2d load %3d: kops/s%s\n' "$cell" "$ncells" "$n" "$l" "$summary"
	done
done

# The kernel side's own counters, when it has them.
cat /sys/kernel/debug/futex_spin/stats >"$RUN_DIR/futex_spin_stats.txt" 2>/dev/null ||
	rm -f "$RUN_DIR/futex_spin_stats.txt"
exit $failed
