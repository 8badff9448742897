#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check futex_spin.pml with Spin (Debian: spin) and print TAP: the model
# must pass mutual exclusion, the bypass bound, "no lost wakeup" and
# "WAITERS while a waiter not woken is queued" (safety) and "every waiter
# gets the lock" (liveness, weak fairness), in runs where an owner may
# die or not (a death is a choice, never forced); each known bug put back
# (-D) must fail one of them, or the model proves nothing; and each probe
# (an assertion that a step of the code never happens) must fail, or the
# model never takes that step. A search that did not complete (memory,
# depth) is an error, not a pass. A failing check leaves Spin's trail,
# replayed step by step (spin -t -p), in OUT/<name>.trail.txt.
#
#   run.sh [OUT]     OUT defaults to a temporary directory

set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
command -v spin >/dev/null || { echo "Bail out! spin is not installed"; exit 1; }

# name, -D flags, claim, safety|liveness, pass|fail
checks=(
	"safety            ''                nolost  safety   pass"
	"waitset           ''                waitset safety   pass"
	"liveness          ''                live1   liveness pass"
	"probe-handoff3    '-DPROBE_HANDOFF3 -DMAXDEATHS=0' nolost safety fail"
	"probe-ahead3      '-DPROBE_AHEAD3 -DMAXDEATHS=0'   nolost safety fail"
	"probe-timer3      '-DPROBE_TIMER3 -DMAXDEATHS=0'   nolost safety fail"
	"probe-passhand3   '-DPROBE_PASSHAND3 -DMAXDEATHS=0' nolost safety fail"
	"mutant-nopasstimer '-DNOPASSTIMER' live1  liveness fail"
	"mutant-unasked    '-DHAND_UNASKED'  live1   liveness fail"
	"mutant-robust     '-DROBUST_NOWAKE' nolost  safety   fail"
	"mutant-nomark     '-DASK_NOMARK'    nolost  safety   fail"
	"mutant-noahead    '-DNOAHEAD'       live1   liveness fail"
	"mutant-nowatch    '-DNOWATCH'       live1   liveness fail"
	"mutant-nopasshand '-DNOPASSHAND'    live1   liveness fail"
)

# Compile the verifier for @defs into $out/$name and run it; 0 on no error.
verify() {
	local name=$1 defs=$2 claim=$3 kind=$4 dir=$out/$1 cflags run

	mkdir -p "$dir"
	cp "$here/futex_spin.pml" "$dir/"
	[ "$kind" = liveness ] && defs="$defs -DLIVENESS"
	# shellcheck disable=SC2086 # defs are words
	(cd "$dir" && spin -a $defs futex_spin.pml >spin.log 2>&1) || return 2
	if [ "$kind" = safety ]; then
		cflags="-DSAFETY"
		run="-N $claim"
	else
		cflags="-DNFAIR=4"
		run="-a -f -N $claim"
	fi
	# shellcheck disable=SC2086
	(cd "$dir" && cc -O2 -w -DCOLLAPSE $cflags pan.c -o pan) || return 2
	# shellcheck disable=SC2086
	(cd "$dir" && ./pan $run -m10000000 >pan.log 2>&1)
	if grep -qE "errors: [1-9]" "$dir/pan.log"; then
		# shellcheck disable=SC2086
		(cd "$dir" && spin -t -p -g $defs futex_spin.pml >"$out/$name.trail.txt" 2>&1)
		return 1
	fi
	# "errors: 0" is printed by a search that ran out of memory or depth too
	grep -qE "Search not completed|max search depth too small|out of memory" \
		"$dir/pan.log" && return 2
	grep -q "errors: 0" "$dir/pan.log" && return 0
	return 2
}

echo "TAP version 13"
echo "1..${#checks[@]}"
n=0
fail=0
for c in "${checks[@]}"; do
	eval "set -- $c"
	name=$1 defs=$2 claim=$3 kind=$4 want=$5
	n=$((n + 1))
	start=$SECONDS
	verify "$name" "$defs" "$claim" "$kind"
	rc=$?
	got=pass
	[ $rc = 1 ] && got=fail
	[ $rc = 2 ] && got=error
	what="$claim ($kind) ${defs:-as written}: $got in $((SECONDS - start)) s"
	grep -hE "^pan:1:|errors:|states, stored" "$out/$name/pan.log" 2>/dev/null |
		sed 's/^/# /'
	if [ "$got" = "$want" ]; then
		echo "ok $n $name: $what"
	else
		echo "not ok $n $name: $what, expected $want"
		fail=$((fail + 1))
	fi
done
echo "# $((n - fail)) passed, $fail failed; output in $out"
[ $fail = 0 ]
