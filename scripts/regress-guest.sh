#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: one round of upstream's futex benchmarks on the
# kernel booted, for make bench-regress, which boots the kernel with the
# series and without it in turn. One JSON line per benchmark in
# $RUN_DIR/results.jsonl: the kernel, the round, the benchmark, its
# options, its figure, and whether higher is better (operations/s) or
# lower (ms to wake or requeue the threads).
#
#   regress-guest.sh PERF KERNEL ROUND
#
# KERNEL names the kernel (series or base); ROUND is the round. RUNTIME
# (2) is the seconds of each hash and lock-pi run. wake, wake-parallel and
# requeue last about a millisecond, at the mercy of one interrupt or one
# migration: their figure is the median of WAKE_RUNS (5) runs, all of
# which the JSON line keeps. Exits non-zero if a benchmark failed or
# printed no figure.
set -uo pipefail

perf=$1
kernel=$2
round=$3
runtime=${RUNTIME:-2}
out=$RUN_DIR/results.jsonl
status=0

# The benchmarks: name, options. wake, wake-parallel and requeue take 64
# threads, so that a run is more than the cost of a few wakeups.
benches=(
	"hash|-r $runtime"
	"hash|-r $runtime -b 0"
	"hash|-r $runtime -b 16"
	"hash|-r $runtime -b 256"
	"wake|-t 64"
	"wake-parallel|-t 64"
	"requeue|-t 64"
	"lock-pi|-r $runtime"
)

# The figure of one run's output $2 of benchmark $1: "value higher_better".
figure() {
	local v

	case $1 in
	hash | lock-pi)
		v=$(sed -n 's/.*Averaged \([0-9]*\) operations\/sec.*/\1/p' <<<"$2")
		echo "$v true" ;;
	wake)
		v=$(sed -n 's/^Wokeup .* in \([0-9.]*\) ms.*/\1/p' <<<"$2")
		echo "$v false" ;;
	wake-parallel)
		v=$(sed -n 's/^Avg per-thread latency .* in \([0-9.]*\) ms.*/\1/p' <<<"$2")
		echo "$v false" ;;
	requeue)
		v=$(sed -n 's/^Requeued .* in \([0-9.]*\) ms.*/\1/p' <<<"$2")
		echo "$v false" ;;
	esac
}

echo "# regress: $kernel, $(uname -r), round $round"
: >"$out"
for b in "${benches[@]}"; do
	name=${b%%|*}
	opts=${b#*|}
	runs=1
	case $name in
	wake | wake-parallel | requeue) runs=${WAKE_RUNS:-5} ;;
	esac
	values=()
	for ((i = 0; i < runs; i++)); do
		# shellcheck disable=SC2086 # opts is a list of options
		output=$(timeout -k 5 300 "$perf" bench -f simple futex "$name" -s $opts 2>&1)
		rc=$?
		read -r value higher <<<"$(figure "$name" "$output")"
		if [ "$rc" -ne 0 ] || [ -z "$value" ]; then
			echo "# FAILED: futex $name $opts (exit $rc)"
			sed 's/^/#   /' <<<"$output"
			status=1
			continue 2
		fi
		values+=("$value")
	done
	value=$(printf '%s\n' "${values[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	echo "# futex $name $opts: $value (${values[*]})"
	printf '{"kernel": "%s", "release": "%s", "round": %d, "bench": "%s", ' \
		"$kernel" "$(uname -r)" "$round" "$name" >>"$out"
	printf '"options": "%s", "value": %s, "runs": [%s], "higher_better": %s}\n' \
		"$opts" "$value" "$(IFS=,; echo "${values[*]}")" "$higher" >>"$out"
done
exit $status
