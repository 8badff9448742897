#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: sysbench mutex (8 threads, 4 mutexes, 1000000
# lock/unlock pairs per thread, as make bench-apps but 10 times longer)
# without a preload and under each preload object given, interleaved,
# REPEAT (5) times. One line per run in $RUN_DIR/sysbench-ab.txt:
#
#   variant repeat seconds ops_per_sec
#
#   sysbench-ab.sh NAME=PRELOAD.so...
set -uo pipefail

out=$RUN_DIR/sysbench-ab.txt
ops=8000000
: >"$out"
for ((r = 1; r <= ${REPEAT:-5}; r++)); do
	for v in glibc "$@"; do
		env=()
		[ "$v" = glibc ] || env=(LD_PRELOAD="${v#*=}")
		t=$(env "${env[@]}" sysbench mutex --threads=8 --mutex-num=4 \
			--mutex-locks=1000000 --mutex-loops=20 run |
			awk '/total time:/ { sub("s", "", $3); print $3 }')
		echo "${v%%=*} $r $t $(awk -v o=$ops -v t="$t" 'BEGIN { printf("%.0f", o / t) }')" |
			tee -a "$out"
	done
done
