#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-regress: upstream's futex benchmarks (scripts/regress-guest.sh)
# on the release kernel with the series and on the same kernel without it,
# one boot of each per round, the order of the two swapped every round, so
# that each round pairs two boots that met the same phase of the host.
# Then the report: OUT/runs.jsonl, OUT/results.md (printed), OUT/regress.png.
#
# The guests count instructions (vm-run.sh --icount): their clocks advance
# with the instructions executed, so a benchmark's speed is the length of
# the paths it runs, which the series must not grow. Under TCG's wall
# clock the same runs spread by 10% to 20% from boot to boot, and 8
# rounds could not tell a 2% regression; counted, futex hash repeats to
# within 0.3%. ICOUNT=0 runs them on the wall clock.
#
#   regress.sh PERF SERIES_KOUT BASE_KOUT OUT
#
# Environment: ROUNDS (8), ICOUNT (1), the guest's CPUS, MEM and TIMEOUT.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
perf=$1
declare -A kout=([series]=$2 [base]=$3)
out=$4
rounds=${ROUNDS:-8}
clock=()
[ "${ICOUNT:-1}" = 0 ] || clock=(--icount)
status=0

mkdir -p "$out"
: >"$out/runs.jsonl"
for ((r = 1; r <= rounds; r++)); do
	order=(base series)
	[ $((r % 2)) -eq 1 ] || order=(series base)
	for k in "${order[@]}"; do
		echo "bench-regress: round $r of $rounds, $k"
		"$top/scripts/vm-run.sh" --kernel "${kout[$k]}" --name "regress-$k" \
			--cpus "${CPUS:-2}" --mem "${MEM:-2G}" --timeout "${TIMEOUT:-900}" "${clock[@]}" \
			-- "$top/scripts/regress-guest.sh" "$perf" "$k" "$r" || status=1
		cat "$top/build/runs/regress-$k/output.txt" 2>/dev/null
		cat "$top/build/runs/regress-$k/results.jsonl" >>"$out/runs.jsonl" 2>/dev/null
	done
done
cp "$top/build/runs/regress-series/vm.txt" "$out/vm.txt" 2>/dev/null
"$top/build/venv/bin/python3" "$top/scripts/regress-report.py" "$out" || status=1
exit $status
