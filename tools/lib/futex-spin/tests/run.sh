#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# Run the futex-spin tests from the build directory DIR, in TAP, and end
# with one total over all of them, "N passed, N failed" (a crashed
# program's missing points count as failed):
#
# - a look at the preload object's imports;
# - the library in the mode the kernel offers and in the forced wait-wake
#   fallback; the pthread tests on glibc alone (which checks the tests),
#   under the preload, and under the preload in the fallback;
# - the differential test: test-diff's lines under glibc against those
#   under the preload in each mode, every difference listed in
#   differences.txt, whose entries the README's table must name;
# - errno under the preload with FUTEX_SPIN_MODE unset and auto, which
#   probe the kernel before main();
# - FUTEX_SPIN_MODE: unset, a preloaded program says nothing (unless
#   FUTEX_SPIN_VERBOSE=1); unknown values and spin without the opcodes
#   stop it with a message;
# - futex-spin.h compiled as strict C11 and C++17, and make with the
#   caller's CFLAGS and LDFLAGS;
# - make install into a temporary prefix, and a program built with
#   pkg-config against it, static and shared.
#
# Spin mode needs a kernel with the opcodes: without them (the host) its
# points are skipped, unless FUTEX_SPIN_EXPECT=spin says they must run.
# Each program has a time limit: a hang fails its missing points.
#
#   run.sh DIR
set -uo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(cd "${1:-$src/build}" && pwd)
preload=$dir/libfutex-spin-preload.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if "$dir/test-diff" --probe; then
	spin=1
else
	spin=0
fi

run() {
	echo "# $*"
	timeout -k 5 300 env "$@"
}

# A TAP stream of one point per call, numbered here; plan first
points=0
plan() {
	echo "TAP version 13"
	echo "1..$1"
	points=0
}

point() {
	points=$((points + 1))
	if [ "$1" = skip ]; then
		echo "ok $points $2 # SKIP $3"
	elif [ "$1" -eq 0 ]; then
		echo "ok $points $2"
	else
		echo "not ok $points $2"
	fi
}

# The preload must reach its thread-local state without a call per access
# (FUTEX_SPIN_TLS in futex-spin-internal.h): no __tls_get_addr among its
# imports; and it exports no library symbol a program could bind to.
tls_check() {
	local syms

	plan 2
	syms=$(readelf --dyn-syms -W "$preload")
	! grep -qw __tls_get_addr <<<"$syms"
	point $? "preload: thread-local state without __tls_get_addr"
	! grep -q ' futex_spin_mutex_' <<<"$syms"
	point $? "preload: the library inside is not exported"
}

# differences.txt as tab-separated ID, MODES, CASES, GLIBC, PRELOAD
awk -F'|' '!/^#/ && NF == 5 {
	for (i = 1; i <= 5; i++)
		gsub(/^ +| +$/, "", $i)
	print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5
}' "$src/tests/differences.txt" >"$tmp/allowed.tsv"

# The ID of the entry that allows @want -> @got for case @name in @mode
allowed() {
	local mode=$1 name=$2 want=$3 got=$4 id modes glob g p

	while IFS=$'\t' read -r id modes glob g p; do
		[[ $modes == all || $modes == "$mode" ]] || continue
		# shellcheck disable=SC2053 # a glob
		if [[ $name == $glob && $want == "$g" && $got == "$p" ]]; then
			echo "$id"
			return 0
		fi
	done <"$tmp/allowed.tsv"
	return 1
}

# Compare the preload's lines in @mode with glibc's; say each difference
compare() {
	local mode=$1 name want got id bad=0 used=" "
	declare -A g

	while IFS= read -r line; do
		g[${line%%:*}]=${line#*: }
	done <"$tmp/glibc.txt"
	[ "${#g[@]}" -gt 100 ] || { echo "# only ${#g[@]} cases under glibc"; bad=1; }
	while IFS= read -r line; do
		name=${line%%:*}
		got=${line#*: }
		want=${g[$name]-MISSING}
		unset "g[$name]"
		[ "$want" = "$got" ] && continue
		if id=$(allowed "$mode" "$name" "$want" "$got"); then
			used="$used$id "
			echo "# $mode $name: listed difference $id"
		else
			echo "# $mode $name: glibc:$want"
			echo "# $mode $name: preload:$got"
			bad=1
		fi
	done <"$tmp/$mode.txt"
	for name in "${!g[@]}"; do
		echo "# $mode $name: missing under the preload"
		bad=1
	done
	# A listed difference that no longer shows is a stale table entry.
	for id in $(awk -F'\t' -v m="$mode" '$2 == "all" || $2 == m { print $1 }' \
		    "$tmp/allowed.tsv" | sort -u); do
		[[ $used == *" $id "* ]] && continue
		echo "# $mode: difference $id listed but not seen"
		bad=1
	done
	return $bad
}

# The README's table names every listed difference, and only those that
# test-diff shows are listed: ids in a "| D<n> |" row with a case.
table_check() {
	local listed named

	listed=$(cut -f1 "$tmp/allowed.tsv" | sort -u)
	named=$(grep -E '^\| D[0-9]+ \|' "$src/README.md" |
		awk -F'|' '$3 !~ /^ *- *$/ { gsub(/ /, "", $2); print $2 }' |
		sort -u)
	[ "$listed" = "$named" ] ||
		{ echo "# differences.txt: $(echo $listed); README: $(echo $named)"; return 1; }
}

differential() {
	local mode pids=()

	plan 3
	table_check
	point $? "differential: README table and differences.txt agree"
	# The three runs at once. A case has 3 s from each of its results
	# (test-diff.c); a run as a whole took up to 243 s of cases in a
	# loaded debug-kernel guest, so its own limit only stops a stuck run.
	timeout -k 5 900 "$dir/test-diff" >"$tmp/glibc.txt" 2>/dev/null &
	pids+=($!)
	for mode in waitwake spin; do
		[ $mode = spin ] && [ $spin = 0 ] && continue
		FUTEX_SPIN_MODE=$mode LD_PRELOAD=$preload timeout -k 5 900 \
			"$dir/test-diff" >"$tmp/$mode.txt" 2>/dev/null &
		pids+=($!)
	done
	wait "${pids[@]}"
	for mode in waitwake spin; do
		if [ $mode = spin ] && [ $spin = 0 ]; then
			if [ "${FUTEX_SPIN_EXPECT:-}" = spin ]; then
				point 1 "differential: glibc against preload, spin mode (kernel lacks FUTEX_SPIN_LOCK)"
			else
				point skip "differential: glibc against preload, spin mode" \
					"kernel lacks FUTEX_SPIN_LOCK"
			fi
			continue
		fi
		compare $mode
		point $? "differential: glibc against preload, $mode mode"
	done
}

# FUTEX_SPIN_MODE unset or auto: the preload probes the kernel when it is
# loaded, and main() must find errno as glibc leaves it. test-diff's errno
# cases (the differential runs force a mode) against glibc's lines.
auto_check() {
	local mode want got rc

	plan 2
	want=$(timeout -k 5 300 "$dir/test-diff" '*.errno' 2>/dev/null)
	for mode in unset auto; do
		if [ $mode = unset ]; then
			got=$(env -u FUTEX_SPIN_MODE LD_PRELOAD="$preload" \
				timeout -k 5 300 "$dir/test-diff" '*.errno' 2>/dev/null)
		else
			got=$(FUTEX_SPIN_MODE=$mode LD_PRELOAD="$preload" \
				timeout -k 5 300 "$dir/test-diff" '*.errno' 2>/dev/null)
		fi
		[ -n "$want" ] && [ "$got" = "$want" ]
		rc=$?
		[ $rc -eq 0 ] || diff <(echo "$want") <(echo "$got") | sed 's/^/# /'
		point $rc "errno under the preload, FUTEX_SPIN_MODE $mode: as glibc's"
	done
}

# A preloaded program with FUTEX_SPIN_MODE=@1 is stopped, saying @2
refused() {
	local out rc

	out=$(FUTEX_SPIN_MODE=$1 LD_PRELOAD=$preload "$dir/test-diff" --probe 2>&1)
	rc=$?
	echo "# FUTEX_SPIN_MODE=$1: status $rc: $out"
	[ $rc -ge 128 ] && grep -q "$2" <<<"$out"
}

mode_check() {
	local out rc

	plan 5
	# Said by no process of a pipeline, unless asked
	out=$(env -u FUTEX_SPIN_MODE -u FUTEX_SPIN_VERBOSE LD_PRELOAD="$preload" \
		sh -c 'echo hi | cat' 2>"$tmp/stderr")
	[ "$out" = hi ] && [ ! -s "$tmp/stderr" ]
	rc=$?
	sed 's/^/# stderr: /' "$tmp/stderr"
	point $rc "FUTEX_SPIN_MODE unset: sh -c 'echo hi | cat' preloaded says nothing else"
	out=$(env -u FUTEX_SPIN_MODE FUTEX_SPIN_VERBOSE=1 LD_PRELOAD="$preload" \
		sh -c true 2>&1)
	echo "# FUTEX_SPIN_VERBOSE=1: $out"
	grep -q "preload active, mode" <<<"$out"
	point $? "FUTEX_SPIN_VERBOSE=1: the preload says its mode"
	refused bogus "unknown mode"
	point $? "FUTEX_SPIN_MODE=bogus stops a preloaded program"
	refused wait-wake "unknown mode"
	point $? "FUTEX_SPIN_MODE=wait-wake (a typo) stops it too"
	if [ $spin = 1 ]; then
		FUTEX_SPIN_MODE=spin LD_PRELOAD=$preload "$dir/test-diff" --probe
		point $? "FUTEX_SPIN_MODE=spin runs on a kernel with the opcodes"
	else
		refused spin "has no FUTEX_SPIN_LOCK"
		point $? "FUTEX_SPIN_MODE=spin stops it on a kernel without the opcodes"
	fi
}

# The header compiles as strict C11 and C++17, warning about nothing; the
# library builds and links with CFLAGS and LDFLAGS of the caller's
build_check() {
	local warn="-pedantic -Wall -Wextra -Werror" out=$tmp/build rc

	plan 3
	cc -std=c11 $warn -I"$src" -c -o "$tmp/header.o" \
		"$src/tests/header-test.c"
	point $? "futex-spin.h: cc -std=c11 $warn"
	if command -v c++ >/dev/null; then
		c++ -x c++ -std=c++17 $warn -I"$src" -c -o "$tmp/header.o" \
			"$src/tests/header-test.c"
		point $? "futex-spin.h: c++ -std=c++17 $warn"
	else
		point skip "futex-spin.h: c++ -std=c++17 $warn" "no c++"
	fi
	make -s -C "$src" OUTPUT="$out" CFLAGS="-O2 -g" \
		LDFLAGS="-Wl,-Map=$tmp/link.map" >"$tmp/build.log" 2>&1 &&
		[ -f "$out/libfutex-spin-preload.so" ] && [ -f "$tmp/link.map" ]
	rc=$?
	[ $rc -eq 0 ] || tail -n 20 "$tmp/build.log" | sed 's/^/# /'
	point $rc "make CFLAGS=\"-O2 -g\" LDFLAGS=...: builds, links, uses LDFLAGS"
}

# make install, then build against the installed copy as a user would
install_check() {
	local prefix=$tmp/prefix flags

	plan 3
	make -s -C "$src" OUTPUT="$dir" PREFIX="$prefix" install >"$tmp/install.log" 2>&1 &&
		[ -f "$prefix/include/futex-spin.h" ] &&
		[ ! -e "$prefix/include/futex-spin-internal.h" ]
	point $? "make install PREFIX=..." || sed 's/^/# /' "$tmp/install.log"
	export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
	flags=$(pkg-config --cflags --libs futex-spin) &&
		cc -o "$tmp/shared" "$src/tests/install-test.c" $flags \
			-Wl,-rpath,"$(pkg-config --variable=libdir futex-spin)" &&
		grep -q "$prefix/lib/libfutex-spin.so" <<<"$(ldd "$tmp/shared")" &&
		FUTEX_SPIN_MODE=auto "$tmp/shared"
	point $? "pkg-config: linked to the installed shared library, runs"
	flags=$(pkg-config --static --cflags --libs futex-spin) &&
		cc -static -o "$tmp/static" "$src/tests/install-test.c" $flags &&
		FUTEX_SPIN_MODE=auto "$tmp/static"
	point $? "pkg-config --static: linked statically, runs"
}

tests() {
	tls_check
	run FUTEX_SPIN_MODE=auto "$dir/test-lib"
	run FUTEX_SPIN_MODE=waitwake "$dir/test-lib"
	run "$dir/test-pthread" "glibc:"
	run FUTEX_SPIN_EXPECT_PRELOAD=1 FUTEX_SPIN_MODE=auto \
		LD_PRELOAD="$preload" "$dir/test-pthread" "preload:"
	run FUTEX_SPIN_EXPECT_PRELOAD=1 FUTEX_SPIN_MODE=waitwake \
		LD_PRELOAD="$preload" "$dir/test-pthread" "preload-waitwake:"
	differential
	auto_check
	mode_check
	build_check
	install_check
}

# The total, counted as scripts/tap-summary.sh does
tests 2>&1 | awk '
function close_plan() {
	if (planned > seen) {
		printf("# missing %d of %d test points\n", planned - seen, planned)
		failed += planned - seen
	}
	planned = 0; seen = 0
}
{ print; fflush() }
/^1\.\.[0-9]+/ { close_plan(); planned = substr($1, 4) + 0 }
/^ok / { seen++; if ($0 ~ /# *SKIP/) skipped++; else passed++ }
/^not ok / { seen++; failed++ }
END {
	close_plan()
	printf("%d passed, %d failed%s\n", passed, failed,
	       skipped ? sprintf(", %d skipped", skipped) : "")
	exit failed > 0
}'
