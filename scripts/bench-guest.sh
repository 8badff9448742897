#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: the mutex benchmark sweep. Every lock type at every
# thread count, load and outside work, in REPEAT rounds per cell: a round
# runs every type once, starting one type later than the round before, so
# that no type always follows the same one. One JSON line per run in
# $RUN_DIR/results.jsonl, with its round, and one progress line per cell.
#
# Every run has glibc's rseq registration off (GLIBC_TUNABLES), because the
# slice types register their own, at the kernel's feature size; the other
# types then run in the same conditions.
#
#   bench-guest.sh PERF
#
# Environment: RUNTIME (seconds per run, 1), REPEAT (8), BENCH_ARGS (more
# perf bench options for every run), LOAD_KIND (the unit of work, rmw or
# pause; rmw), and the grid: TYPES, THREADS, LOADS, WAIT_FACTORS (the work
# outside the lock as a multiple of the load: "0 9" runs every cell with
# -w 0 and with -w 9*load, a critical section of about a tenth of each
# thread's loop).
#
# COUNT=1 is the count pass on a kernel with CONFIG_LOCK_STAT: one run per
# cell of ww and spin (TYPES), each after zeroing /proc/lock_stat, and one
# JSON line per run in $RUN_DIR/counts.jsonl: the benchmark's own line plus
# the acquisitions of the futex hash-bucket lock class (HB_LOCK_CLASS, an
# extended regular expression on the lock_stat class name), the names of
# the classes counted, and the growth of SPIN_COUNTS in futex_spin/stats
# of debugfs (null where the kernel lacks either): the queue heads
# created, the wakeups, the handoffs and the wakeups passed over by a
# pass-over timer.
#
# Exits non-zero if a run broke mutual exclusion, failed or hung.
set -uo pipefail

perf=$1
count=${COUNT:-0}
runtime=${RUNTIME:-1}
kind=${LOAD_KIND:-rmw}
threads=${THREADS:-2 4 16 64}
loads=${LOADS:-1 10 50 100}
factors=${WAIT_FACTORS:-0 9}
if [ "$count" = 1 ]; then
	repeat=1
	types=${TYPES:-ww spin}
	out=$RUN_DIR/counts.jsonl
else
	repeat=${REPEAT:-8}
	types=${TYPES:-ww ww-global spin spin-slice pi glibc glibc-adaptive tas slice none}
	out=$RUN_DIR/results.jsonl
fi
# Every bucket lock, of the global and of the private hashes, is
# initialised by spin_lock_init(&fhb->lock) in futex_hash_bucket_init():
# one class of that name; #N and /N are lockdep's versions and subclasses
# of a name.
hb_default='(^|[^[:alnum:]_])&fhb->lock(#[0-9]+)?(/[0-9]+)?$'
hb_class=${HB_LOCK_CLASS:-$hb_default}
lock_stat=/proc/lock_stat
spin_stats=/sys/kernel/debug/futex_spin/stats
failed=0
missing=" "

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
{
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "runtime=$runtime"
	echo "repeat=$repeat"
	echo "types=$types"
	echo "load_kind=$kind"
	echo "wait_factors=$factors"
	echo "args=${BENCH_ARGS:-}"
	# A debug kernel (lockdep, kmemleak) measures nothing worth keeping.
	[ -e /proc/lockdep ] || [ -e /sys/kernel/debug/kmemleak ] && echo "debug=1"
} >"$RUN_DIR/guest.txt"
: >"$out"
ncells=$(( $(wc -w <<<"$threads") * $(wc -w <<<"$loads") * $(wc -w <<<"$factors") ))
echo "# guest: $(uname -r), $(nproc) CPUs; $ncells cells x {$types} x $repeat runs of ${runtime}s, $kind work"

# Process creation takes a second or more on the debug kernel under TCG,
# and loading perf from the shared directory seconds more: the count pass
# runs perf from tmpfs and parses with shell builtins, not awk or grep.
tmp=$(mktemp -d /dev/shm/bench-guest.XXXXXX 2>/dev/null) && cp "$perf" "$tmp/perf" &&
	perf=$tmp/perf && trap 'rm -rf "$tmp"' EXIT || tmp=$RUN_DIR

# The acquisitions of the hash-bucket lock class(es) since lock_stat was
# zeroed and their names, into $acq and $names; acq=null without
# lock_stat. A class line is the name, a colon and 12 numbers, the 8th of
# them the acquisitions; a class taken for reading and writing has -W and
# -R lines, both counted (the bucket lock is a spinlock: only one).
hb_acquisitions() {
	local line name f

	acq=null names=
	[ -r "$lock_stat" ] || return
	acq=0
	while IFS= read -r line; do
		[[ $line =~ ^\ *(.*[^\ ]):((\ +[0-9.]+){12})$ ]] || continue
		name=${BASH_REMATCH[1]}
		name=${name%-[RW]}
		read -ra f <<<"${BASH_REMATCH[2]}"
		[[ $name =~ $hb_class ]] || continue
		acq=$((acq + f[7]))
		[[ ",$names," == *",$name,"* ]] || names=${names:+$names,}$name
	done <"$lock_stat"
}

SPIN_COUNTS="heads_created wakes handoffs unanswered_wakes"

# The SPIN_COUNTS of futex_spin/stats into the array $1, null if none.
spin_counts() {
	local -n to=$1
	local key val

	for key in $SPIN_COUNTS; do
		to[$key]=null
	done
	[ -r "$spin_stats" ] || return
	while read -r key val; do
		[[ " $SPIN_COUNTS " == *" $key "* ]] && to[$key]=$val
	done <"$spin_stats"
}

# 1000 * $2 / $3 with one decimal into the variable $1, n/a if none.
per_kop() {
	local v

	if [ "$2" = null ] || [ "${3:-0}" -eq 0 ]; then
		printf -v "$1" n/a
	else
		v=$(((10000 * $2 + $3 / 2) / $3))
		printf -v "$1" '%d.%d' $((v / 10)) $((v % 10))
	fi
}

# The benchmark's JSON line into $line, its status into $rc.
bench() {
	local t=$1 n=$2 l=$3 w=$4 out_line

	# shellcheck disable=SC2086 # BENCH_ARGS is a list of options
	GLIBC_TUNABLES=glibc.pthread.rseq=0 \
		timeout -k 5 $((runtime + 120)) "$perf" bench -f simple futex mutex \
		-m "$t" -t "$n" -l "$l" -w "$w" --load-kind "$kind" -r "$runtime" \
		--json ${BENCH_ARGS:-} >"$tmp/run.out"
	rc=$?
	line=
	while IFS= read -r out_line; do
		[[ $out_line == "{"* ]] && line=$out_line
	done <"$tmp/run.out"
	[ -n "$line" ] || [ "$rc" -ne 0 ] || rc=1
}

# One run of round $5: its JSON line goes to $out; a type the kernel lacks
# (exit 2) is recorded once and left out from then on. `none` must report
# broken exclusion, which fails only the other types. The count pass adds
# its counts to the line and to $progress.
run() {
	local t=$1 n=$2 l=$3 w=$4 round=$5 line rc acq names key ops=0 rate=0
	local hb_kop heads_kop counted
	local -A c0 c1

	if [ "$count" = 1 ]; then
		[ -w "$lock_stat" ] && echo 0 >"$lock_stat"
		spin_counts c0
		bench "$t" "$n" "$l" "$w"
		hb_acquisitions
		spin_counts c1
		counted=
		for key in $SPIN_COUNTS; do
			[ "${c0[$key]}" = null ] || [ "${c1[$key]}" = null ] ||
				c1[$key]=$((c1[$key] - c0[$key]))
			counted="$counted, \"$key\": ${c1[$key]}"
		done
	else
		bench "$t" "$n" "$l" "$w"
	fi
	if [ "$rc" -eq 2 ]; then
		missing="$missing$t "
		echo "# $t: not supported by this kernel: $line"
		echo "$line" >>"$out"
		return
	fi
	[ "$t" != none ] || [ "$rc" -ne 1 ] || [[ $line != *'"exclusion": "broken"'* ]] || rc=0
	if [ "$rc" -ne 0 ]; then
		failed=1
		echo "# FAILED: $t threads=$n load=$l wait=$w (exit $rc) $line"
		[ -n "$line" ] ||
			line="{\"mutex\": \"$t\", \"threads\": $n, \"load\": $l, \"wait\": $w, \"error\": \"exit $rc\"}"
	fi
	if [ "$count" = 1 ]; then
		[[ $line =~ \"ops\":\ ([0-9]+) ]] && ops=${BASH_REMATCH[1]}
		[[ $line =~ \"ops_per_sec\":\ ([0-9]+) ]] && rate=${BASH_REMATCH[1]}
		per_kop hb_kop "$acq" "$ops"
		per_kop heads_kop "${c1[heads_created]}" "$ops"
		progress="$progress $t $((rate / 1000)) hb $hb_kop heads $heads_kop"
		if [ "$acq" = null ]; then
			names=null
		else
			[ -n "$names" ] || echo "# no lock_stat class matches /$hb_class/"
			names="\"$names\""
		fi
		line="${line%\}}, \"hb_lock_acquisitions\": $acq, \"hb_lock_class\": $names$counted}"
	fi
	echo "${line%\}}, \"round\": $round}" >>"$out"
}

# Progress of the sweep: per type, the mean kops/s of this cell's runs.
summary() {
	grep "\"threads\": $1, \"futexes\": [0-9]*, \"load\": $2, \"wait\": $3," "$out" |
		sed -n 's/.*"mutex": "\([^"]*\)".*"ops_per_sec": \([0-9.]*\).*/\1 \2/p' |
		awk '{ s[$1] += $2; c[$1]++; if (!($1 in o)) o[$1] = ++k }
		     END { for (t in o) p[o[t]] = t
			   for (i = 1; i <= k; i++) printf(" %s %.0f", p[i], s[p[i]] / c[p[i]] / 1000) }'
}

if [ "$count" = 1 ]; then
	if [ -w "$lock_stat" ]; then
		# On by default with CONFIG_LOCK_STAT; make sure.
		[ -w /proc/sys/kernel/lock_stat ] && echo 1 >/proc/sys/kernel/lock_stat
	else
		echo "# no $lock_stat (CONFIG_LOCK_STAT): no hash-bucket lock counts"
	fi
	declare -A c
	spin_counts c
	[ "${c[heads_created]}" != null ] ||
		echo "# no heads_created in $spin_stats: no futex_spin counts"
fi

cell=0
for n in $threads; do
	for l in $loads; do
		for f in $factors; do
			w=$((f * l))
			cell=$((cell + 1))
			progress=
			for ((r = 0; r < repeat; r++)); do
				read -ra order <<<"$types"
				k=${#order[@]}
				for ((i = 0; i < k; i++)); do
					t=${order[(i + r) % k]}
					[[ $missing == *" $t "* ]] || run "$t" "$n" "$l" "$w" "$r"
				done
			done
			[ "$count" = 1 ] || progress=$(summary "$n" "$l" "$w")
			printf '[%2d/%d] threads %2d load %3d wait %4d: kops/s%s\n' \
				"$cell" "$ncells" "$n" "$l" "$w" "$progress"
		done
	done
done

# The kernel side's own counters, when it has them.
cat "$spin_stats" >"$RUN_DIR/futex_spin_stats.txt" 2>/dev/null ||
	rm -f "$RUN_DIR/futex_spin_stats.txt"
exit $failed
