#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: the mutex benchmark sweep. Every lock type at every
# thread count, load and outside work, REPEAT runs each (the types
# interleaved), one JSON line per run in $RUN_DIR/results.jsonl and one
# progress line per cell.
#
#   bench-guest.sh PERF
#
# Environment: RUNTIME (seconds per run, 1), REPEAT (3), BENCH_ARGS (more
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
# the classes counted, and the growth of heads_created in futex_spin/stats
# of debugfs (null where the kernel lacks either).
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
	repeat=${REPEAT:-3}
	types=${TYPES:-ww spin pi glibc glibc-adaptive tas}
	out=$RUN_DIR/results.jsonl
fi
# The bucket locks are initialised by spin_lock_init(&futex_queues[i].lock)
# in futex_init(): one class of that name. &hb->lock in case they ever are
# initialised through a pointer; #N and /N are lockdep's versions and
# subclasses of a name.
hb_class=${HB_LOCK_CLASS:-(^|[^[:alnum:]_])(futex_queues\[[^]]*\]\.|hb->)lock(#[0-9]+)?(/[0-9]+)?$}
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
	echo "load_kind=$kind"
	echo "wait_factors=$factors"
	echo "args=${BENCH_ARGS:-}"
	# A debug kernel (lockdep, kmemleak) measures nothing worth keeping.
	[ -e /proc/lockdep ] || [ -e /sys/kernel/debug/kmemleak ] && echo "debug=1"
} >"$RUN_DIR/guest.txt"
: >"$out"
ncells=$(( $(wc -w <<<"$threads") * $(wc -w <<<"$loads") * $(wc -w <<<"$factors") ))
echo "# guest: $(uname -r), $(nproc) CPUs; $ncells cells x {$types} x $repeat runs of ${runtime}s, $kind work"

if [ "$count" = 1 ]; then
	if [ -w "$lock_stat" ]; then
		# On by default with CONFIG_LOCK_STAT; make sure.
		[ -w /proc/sys/kernel/lock_stat ] && echo 1 >/proc/sys/kernel/lock_stat
	else
		echo "# no $lock_stat (CONFIG_LOCK_STAT): no hash-bucket lock counts"
	fi
	[ -r "$spin_stats" ] && grep -q '^heads_created ' "$spin_stats" ||
		echo "# no heads_created in $spin_stats: no head creation counts"
fi

# The acquisitions of the hash-bucket lock class(es) since lock_stat was
# zeroed, and their names: "N name,name", or "null" without lock_stat. A
# class line is the name, a colon and 12 numbers, the 8th of them the
# acquisitions; a class written for reading and writing has -W and -R
# lines, both counted (the bucket lock is a spinlock: only one).
hb_acquisitions() {
	[ -r "$lock_stat" ] || { echo null; return; }
	HB_CLASS=$hb_class awk '
		NF >= 13 {
			for (i = NF - 11; i <= NF; i++)
				if ($i !~ /^[0-9.]+$/)
					next
			name = $0
			sub(/:[ 0-9.]+$/, "", name)
			sub(/^ +/, "", name)
			sub(/-[RW]$/, "", name)
			if (name !~ ENVIRON["HB_CLASS"])
				next
			acq += $(NF - 4)
			if (!(name in seen))
				names = names (names == "" ? "" : ",") name
			seen[name] = 1
		}
		END { print acq + 0, names }' "$lock_stat"
}

heads_created() {
	local n

	n=$(awk '$1 == "heads_created" { print $2 }' "$spin_stats" 2>/dev/null)
	echo "${n:-null}"
}

# The benchmark's JSON line, status in $rc.
bench() {
	local t=$1 n=$2 l=$3 w=$4

	# shellcheck disable=SC2086 # BENCH_ARGS is a list of options
	line=$(timeout -k 5 $((runtime + 120)) "$perf" bench -f simple futex mutex \
		-m "$t" -t "$n" -l "$l" -w "$w" --load-kind "$kind" -r "$runtime" \
		--json ${BENCH_ARGS:-} | grep '^{')
	rc=$?
}

# One run: its JSON line goes to $out; a type the kernel lacks (exit 2) is
# recorded once and left out from then on.
run() {
	local t=$1 n=$2 l=$3 w=$4 line rc hb h0 h1 heads acq names

	if [ "$count" = 1 ]; then
		[ -w "$lock_stat" ] && echo 0 >"$lock_stat"
		h0=$(heads_created)
		bench "$t" "$n" "$l" "$w"
		hb=$(hb_acquisitions)
		h1=$(heads_created)
	else
		bench "$t" "$n" "$l" "$w"
	fi
	if [ "$rc" -eq 2 ]; then
		missing="$missing$t "
		echo "# $t: not supported by this kernel: $line"
		echo "$line" >>"$out"
		return
	fi
	if [ "$rc" -ne 0 ]; then
		failed=1
		echo "# FAILED: $t threads=$n load=$l wait=$w (exit $rc) $line"
		[ -n "$line" ] ||
			line="{\"mutex\": \"$t\", \"threads\": $n, \"load\": $l, \"wait\": $w, \"error\": \"exit $rc\"}"
	fi
	if [ "$count" = 1 ]; then
		heads=null
		[ "$h0" = null ] || [ "$h1" = null ] || heads=$((h1 - h0))
		read -r acq names <<<"$hb"
		if [ "$acq" = null ]; then
			names=null
		else
			[ -n "${names:-}" ] || echo "# no lock_stat class matches /$hb_class/"
			names="\"${names:-}\""
		fi
		line="${line%\}}, \"hb_lock_acquisitions\": $acq, \"hb_lock_class\": $names, \"heads_created\": $heads}"
	fi
	echo "$line" >>"$out"
}

# Progress: per type, the mean kops/s of this cell's runs, and in the count
# pass the hash-bucket lock acquisitions and heads created per 1000 ops.
summary() {
	grep "\"threads\": $1, \"futexes\": [0-9]*, \"load\": $2, \"wait\": $3," "$out" |
		awk -v count="$count" '
		function val(key, r) {
			if (!match($0, "\"" key "\": [^,}]*"))
				return "null"
			r = substr($0, RSTART, RLENGTH)
			sub(/.*: /, "", r)
			return r
		}
		function per_kop(v, ops) {
			return v == "null" || !ops ? "n/a" : sprintf("%.1f", 1000 * v / ops)
		}
		{
			t = val("mutex")
			gsub(/"/, "", t)
			if (!(t in o))
				o[t] = ++k
			s[t] += val("ops_per_sec") / 1000
			n[t]++
			if (count == 1)
				c[t] = " hb " per_kop(val("hb_lock_acquisitions"), val("ops")) \
					" heads " per_kop(val("heads_created"), val("ops"))
		}
		END {
			for (t in o)
				p[o[t]] = t
			for (i = 1; i <= k; i++)
				printf(" %s %.0f%s", p[i], s[p[i]] / n[p[i]], c[p[i]])
		}'
}

cell=0
for n in $threads; do
	for l in $loads; do
		for f in $factors; do
			w=$((f * l))
			cell=$((cell + 1))
			for ((r = 0; r < repeat; r++)); do
				for t in $types; do
					[[ $missing == *" $t "* ]] || run "$t" "$n" "$l" "$w"
				done
			done
			printf '[%2d/%d] threads %2d load %3d wait %4d: kops/s%s\n' \
				"$cell" "$ncells" "$n" "$l" "$w" "$(summary "$n" "$l" "$w")"
		done
	done
done

# The kernel side's own counters, when it has them.
cat "$spin_stats" >"$RUN_DIR/futex_spin_stats.txt" 2>/dev/null ||
	rm -f "$RUN_DIR/futex_spin_stats.txt"
exit $failed
