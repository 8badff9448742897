#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest (make pause-effect): why the benchmark's default
# unit of work is rmw and not pause. One thread on CPU 0 runs a critical
# section of 50 units, alone, beside a loop of pause instructions on CPU 1
# and beside a loop of rmw work on CPU 1 (each loop a second perf bench
# process with a lock of its own, never contended), for each kind of
# unit. Prints the mean hold time of the critical section: under QEMU's
# TCG, pause beside pause takes about twice as long, rmw does not care.
#
#   pause-effect.sh PERF
#
# Environment: RUNTIME (seconds per measurement, 3), LOAD (units, 50).
set -uo pipefail

perf=$1
runtime=${RUNTIME:-3}
load=${LOAD:-50}

[ "$(nproc)" -ge 2 ] || { echo "pause-effect: needs 2 CPUs"; exit 2; }

mutex() {
	timeout -k 5 $((runtime + 60)) "$perf" bench -f simple futex mutex -m ww -t 1 --json "$@"
}

# The field $1 of a JSON line on stdin.
field() {
	sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p"
}

echo "# $(uname -r), $(nproc) CPUs; one thread on CPU 0, critical section of $load units, ${runtime} s each"
printf '%-6s %-24s %14s %16s\n' unit "other CPU (CPU 1)" "hold (us)" "clock pair (ns)"
status=0
for kind in pause rmw; do
	for other in idle pause rmw; do
		bg=
		if [ "$other" != idle ]; then
			mutex -C 1 -l 1000 --load-kind "$other" --time-every 0 -r $((runtime + 2)) >/dev/null &
			bg=$!
			sleep 1
		fi
		line=$(mutex -C 0 -l "$load" --load-kind "$kind" -r "$runtime") || status=1
		[ -z "$bg" ] || wait "$bg" || status=1
		hold=$(field hold_ns <<<"$line")
		clock=$(field clock_pair_ns <<<"$line")
		case $other in
		idle) what="idle" ;;
		*) what="$other loop" ;;
		esac
		printf '%-6s %-24s %14.2f %16.1f\n' "$kind" "$what" \
			"$(awk -v h="${hold:-0}" 'BEGIN { print h / 1000 }')" "${clock:-0}"
	done
done
exit $status
