#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make matrix: `make check` in every kernel variant, on two sockets and
# on four vCPUs, one after the other, then one line per run. A run's kernel build and
# its check (checkpatch, selftests, guest) are timed apart; everything a
# run leaves is in build/runs/matrix/NAME/, its make output in NAME.log.
#
#   matrix.sh [NAME...]    NAME: debug rt kcsan up numa2 cpus4 (default: all)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/runs/matrix
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(debug rt kcsan up numa2 cpus4)

# The make arguments of each run.
args_of() {
	case $1 in
	debug) ;;
	numa2) echo "NUMA=2" ;;
	# More vCPUs than host cores: meaningless for timing, but the only
	# way here to queue more than one spinner behind the polling one.
	cpus4) echo "CPUS=4" ;;
	*) echo "VARIANT=$1" ;;
	esac
}

mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

mkdir -p "$out"
: >"$out/summary.txt"
bad=0
for name in "${runs[@]}"; do
	read -ra args <<<"$(args_of "$name")"
	log=$out/$name.log
	echo "matrix: $name (make check ${args[*]}), log $log"
	rm -rf "$top/build/runs/check"
	t0=$SECONDS
	make -C "$top" --no-print-directory DEBUG=1 "${args[@]}" kernel >"$log" 2>&1
	build_rc=$?
	t1=$SECONDS
	check_rc=1
	if [ $build_rc -eq 0 ]; then
		make -C "$top" --no-print-directory "${args[@]}" check >>"$log" 2>&1
		check_rc=$?
	fi
	t2=$SECONDS

	rm -rf "${out:?}/$name"
	[ ! -d "$top/build/runs/check" ] || mv "$top/build/runs/check" "$out/$name"
	counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	passed=$(echo "${counts:-0 passed}" | cut -d' ' -f1)
	failed=$(echo "${counts:-0 passed, 0 failed}" | cut -d' ' -f3)
	splats=0
	[ ! -f "$out/$name/splats.txt" ] || splats=$(wc -l <"$out/$name/splats.txt")
	if [ $build_rc -ne 0 ]; then
		verdict="FAIL (kernel build)"
	elif [ $check_rc -ne 0 ]; then
		verdict="FAIL (make check status $check_rc)"
	else
		verdict=ok
	fi
	[ "$verdict" = ok ] || bad=1
	printf '%-6s passed %4d  failed %3d  splats %3d  build %s  run %s  %s\n' \
		"$name" "$passed" "$failed" "$splats" "$(mmss $((t1 - t0)))" \
		"$(mmss $((t2 - t1)))" "$verdict" | tee -a "$out/summary.txt"
done
echo "matrix: summary in $out/summary.txt"
cat "$out/summary.txt"
exit $bad
