#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: per cell and repeat, ww, glibc-adaptive and tas,
# then spin at each --spin-tries value, interleaved so that the host's
# slow phases hit every variant alike. Writes $RUN_DIR/all.jsonl.
#
#   scripts/vm-run.sh --kernel build/out/kernel --name tries -- \
#       docs/bench-spin-tries/guest-sweep.sh build/perf/perf
set -uo pipefail

perf=/dev/shm/perf
cp "$1" "$perf"
out=$RUN_DIR/all.jsonl
: >"$out"
for n in ${THREADS:-2 16 64}; do
	for l in ${LOADS:-1 10 50}; do
		for f in ${WAIT_FACTORS:-0 9}; do
			w=$((l * f))
			for r in 1 2; do
				for t in ww glibc-adaptive tas; do
					"$perf" bench -f simple futex mutex -m "$t" -t "$n" \
						-l "$l" -w "$w" -r 1 --json >>"$out"
				done
				for s in ${TRIES_LIST:-0 8 32 64 128}; do
					"$perf" bench -f simple futex mutex -m spin \
						--spin-tries "$s" -t "$n" -l "$l" -w "$w" \
						-r 1 --json >>"$out"
				done
			done
			echo "cell $n/$l/$w done"
		done
	done
done
