#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: variants of perf bench futex mutex on one cell, in
# rounds; a round runs every variant once, each round starting one variant
# later, as make bench does with its types. One JSON line per run in
# $RUN_DIR/variants.jsonl, with the variant and the round; read by
# variants.py.
#
#   variants.sh PERF
#
# Environment: CELL ("threads,load,wait"), VARIANTS (perf bench options
# from -m on, separated by "|": "spin|spin --spin-tries 0|tas"), ROUNDS
# (16), RT (seconds per run, 1). glibc's rseq registration is off, as in
# make bench, so that the slice types can run.
set -uo pipefail

perf=$1
IFS=, read -r threads load wait <<<"${CELL:?set CELL to threads,load,wait}"
IFS='|' read -r -a variants <<<"${VARIANTS:?set VARIANTS}"
rounds=${ROUNDS:-16}
n=${#variants[@]}
out=$RUN_DIR/variants.jsonl
: >"$out"

for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < n; k++)); do
		v=${variants[$(((k + r) % n))]}
		# shellcheck disable=SC2086 # $v is a type and its options
		line=$(GLIBC_TUNABLES=glibc.pthread.rseq=0 "$perf" bench futex mutex \
			-t "$threads" -l "$load" -w "$wait" -r "${RT:-1}" --json -m $v \
			2>/dev/null | grep '^{')
		[ -n "$line" ] || { echo "variants: '$v' printed no result" >&2; continue; }
		echo "{\"variant\": \"$v\", \"round\": $r, ${line#\{}" >>"$out"
	done
	echo "variants: round $((r + 1)) of $rounds"
done
