#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The upstream series, from build/linux's history (base..work):
#
#   series.sh export      build/series/0000-cover-letter.patch ... NNNN-*.patch
#   series.sh checkpatch  checkpatch.pl --strict over every patch
#   series.sh am-check    git am onto the pristine base; trees must match
#   series.sh bisect      build (and boot) every patch of the series; needs
#                         PERF, the perf built from build/linux
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
out=$top/build/series
export PATH=$top/build/venv/bin:$PATH

# checkpatch types we do not act on, each with its reason:
#   FILE_PATH_CHANGES: "does MAINTAINERS need updating?" is asked for every
#   new file; ours are all covered by existing F: patterns of the FUTEX
#   SUBSYSTEM entry (Documentation/locking/*futex*, kernel/futex/*,
#   tools/perf/bench/futex*, tools/testing/selftests/futex/), and the one
#   new file outside them (include/trace/events/futex_spin.h) is added to
#   that entry by the patch that creates it.
ignore=FILE_PATH_CHANGES

# The series' version, in every subject: bump it together with the cover
# letter's "Changes since" list.
version=4

# The benchmark table: this build's `make bench` if it ran one, else the
# run committed with the tree. Only its verdicts: the report's list of
# every comparison, and what follows it, stay in the report.
bench_table() {
	local md=$top/build/bench/results.md

	[ -f "$md" ] || md=$top/docs/bench-results.md
	echo "series: benchmark table from ${md#"$top"/}" >&2
	# Drop the title; keep the mail ASCII, as the patches are; wrap the
	# prose for mail, leave the tables as they are.
	sed -e '1{/^# /d}' -e '/^| threads | load | wait | type | spin \/ type /,$d' \
		-e 's/µ/u/g' -e 's/±/+-/g' "$md" | sed -e '/./,$!d' | awk '
		/^\|/ || /^$/ { print; next }
		{
			n = split($0, w, " "); line = ""
			for (i = 1; i <= n; i++) {
				if (line != "" && length(line) + length(w[i]) >= 72) {
					print line; line = w[i]
				} else {
					line = line == "" ? w[i] : line " " w[i]
				}
			}
			print line
		}'
}

cover() {
	sed -n '/^Subject:/q;p' "$1"
	echo "Subject: [PATCH v$version 0/$2] futex: Optimistic spinning futex locks"
	echo
	cat "$top/patches/cover-letter.txt"
	echo
	echo "Benchmark (perf bench futex mutex)"
	echo "=================================="
	echo
	bench_table
	echo
	sed -n '/^\*\*\* BLURB HERE \*\*\*$/,$p' "$1" | tail -n +2
}

case ${1:-} in
export)
	rm -rf "$out"
	n=$(git -C "$tree" rev-list --count base..work)
	# The cover letter takes the series' author and date, so that the
	# whole export regenerates byte for byte.
	who=$(git -C "$tree" log -1 --format=%an work)
	mail=$(git -C "$tree" log -1 --format=%ae work)
	GIT_COMMITTER_DATE=$(git -C "$tree" log -1 --format=%cI work) \
	git -C "$tree" -c user.name="$who" -c user.email="$mail" \
		format-patch -q --cover-letter --base=base \
		--subject-prefix="PATCH v$version" \
		--zero-commit -o "$out" base..work
	c=$(ls "$out"/0000-cover-letter.patch)
	cover "$c" "$n" >"$c.new"
	mv "$c.new" "$c"
	ls "$out"
	;;
checkpatch)
	bad=0
	# grep -q reads from a here-string, not from echo through a pipe:
	# under pipefail, grep exiting at its first match can kill the echo
	# with SIGPIPE and fail a clean patch (seen on a loaded host).
	for p in "$out"/0*.patch; do
		[ "$(basename "$p")" = 0000-cover-letter.patch ] && continue
		res=$(cd "$tree" && perl scripts/checkpatch.pl --strict \
			--ignore "$ignore" "$p" 2>&1) || bad=1
		echo "$(basename "$p"): $(echo "$res" | grep '^total:')"
		grep -q '^total: 0 errors, 0 warnings, 0 checks' <<<"$res" ||
			{ echo "$res"; bad=1; }
	done
	# The documentation: kernel-doc on the new C files, docutils on the
	# new rst (a full Sphinx build is more than this needs).
	new=$(git -C "$tree" diff --name-only --diff-filter=A base work)
	mapfile -t c_files < <(echo "$new" | grep -E '^(kernel|include)/.*\.[ch]$' || true)
	if [ ${#c_files[@]} -gt 0 ] &&
	   (cd "$tree" && perl scripts/kernel-doc -none "${c_files[@]}" 2>&1 | grep .); then
		bad=1
	fi
	for rst in $(echo "$new" | grep '\.rst$'); do
		python3 -m docutils --halt=warning "$tree/$rst" /dev/null || bad=1
	done
	echo "kernel-doc: ${#c_files[@]} files, docutils: $(echo "$new" | grep -c '\.rst$') files"
	exit $bad
	;;
am-check)
	wt=$top/build/am-check
	git -C "$tree" worktree remove -f "$wt" 2>/dev/null || rm -rf "$wt"
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$wt" base
	patches=("$out"/0*.patch)
	git -C "$wt" -c user.name=am -c user.email=am@localhost am -q \
		"${patches[@]:1}"
	if [ "$(git -C "$wt" rev-parse 'HEAD^{tree}')" != "$(git -C "$tree" rev-parse 'work^{tree}')" ]; then
		echo "am-check: the series applied to base differs from build/linux" >&2
		git -C "$wt" diff --stat HEAD work >&2
		exit 1
	fi
	git -C "$tree" worktree remove -f "$wt"
	echo "am-check: $(git -C "$tree" rev-list --count base..work) patches apply to base; tree identical to build/linux"
	;;
bisect)
	# Every commit: the kernel builds. The first one and every one that
	# changes the kernel: it boots and runs guest-smoke.sh. Every one
	# that changes the futex selftests or perf: those build too.
	perf=${PERF:?set PERF to the perf built from build/linux}
	wt=$top/build/bisect
	kout=$top/build/out/bisect
	git -C "$tree" worktree remove -f "$wt" 2>/dev/null || rm -rf "$wt"
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$wt" base
	mkdir -p "$kout"
	first=yes
	for c in $(git -C "$tree" rev-list --reverse base..work); do
		git -C "$wt" checkout -q "$c"
		what="$(git -C "$wt" log -1 --format='%h %s')"
		start=$(date +%s)
		kmake=(make -s -C "$wt" O="$kout" ARCH=x86_64 -j"$(nproc)"
		       CC="ccache gcc" HOSTCC="ccache gcc")
		"${kmake[@]}" tinyconfig >/dev/null
		"$wt/scripts/kconfig/merge_config.sh" -m -O "$kout" "$kout/.config" \
			"$top/configs/vm.config" >/dev/null
		"${kmake[@]}" olddefconfig >/dev/null
		if ! "${kmake[@]}" bzImage >"$kout/build.log" 2>&1; then
			echo "bisect: $what: the kernel does not build:" >&2
			tail -n 30 "$kout/build.log" >&2
			exit 1
		fi
		done_what="kernel builds"

		changed=$(git -C "$wt" diff --name-only "$c^" "$c")
		if [ $first = yes ] || grep -qv '^\(tools\|Documentation\)/' <<<"$changed"; then
			has_spin=no
			[ -f "$wt/kernel/futex/spin.c" ] && has_spin=yes
			if ! "$top/scripts/vm-run.sh" --kernel "$kout" --name bisect \
				--timeout 600 -- "$top/scripts/guest-smoke.sh" "$perf" "$has_spin" \
				>"$kout/boot.log" 2>&1; then
				echo "bisect: $what: the smoke run failed:" >&2
				cat "$kout/boot.log" "$top/build/runs/bisect/output.txt" >&2
				exit 1
			fi
			done_what="$done_what, boots, smoke run passes"
		fi
		first=no

		# The Makefile's own recipes, pointed at this commit's tree.
		tmake=(make -s -C "$top" --no-print-directory LINUX="$wt"
		       HDR="$kout/headers" SELFTESTS="$kout/selftests"
		       PERF_OUT="$kout/perf")
		if grep -q '^tools/testing/selftests/futex/' <<<"$changed"; then
			if ! "${tmake[@]}" selftests >"$kout/selftests.log" 2>&1; then
				echo "bisect: $what: the futex selftests do not build:" >&2
				tail -n 30 "$kout/selftests.log" >&2
				exit 1
			fi
			done_what="$done_what, selftests build"
		fi
		if grep -q '^tools/perf/' <<<"$changed"; then
			if ! "${tmake[@]}" perf >"$kout/perf.log" 2>&1; then
				echo "bisect: $what: perf does not build:" >&2
				tail -n 30 "$kout/perf.log" >&2
				exit 1
			fi
			done_what="$done_what, perf builds"
		fi
		echo "bisect: $what: $done_what ($(( $(date +%s) - start )) s)"
	done
	git -C "$tree" worktree remove -f "$wt"
	;;
*)
	echo "usage: $0 export|checkpatch|am-check|bisect" >&2
	exit 2
	;;
esac
