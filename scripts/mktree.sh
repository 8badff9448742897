#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Assemble build/linux: the pristine Debian kernel source (scripts/base.sh)
# as one base commit, then one commit per entry of patches/series, each
# bringing overlay files (kept at their kernel path in this repo) and
# patches/*.patch for upstream files. The commits are built in a scratch index and checked out
# at the end, so files whose content did not change keep their mtime and
# kbuild rebuilds only what an edit touched.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/linux
series=$top/patches/series
. "$top/scripts/base.sh"
author=${SERIES_AUTHOR:-"Futex Spin Developers <futex-spin@example.org>"}
stamp="2026-11-22T00:00:00+00:00"

die() { echo "mktree: $*" >&2; exit 1; }

git_t() {
	GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=${author#*<} \
	GIT_COMMITTER_NAME=${author% <*} GIT_COMMITTER_EMAIL=${author#*<} \
	GIT_AUTHOR_DATE=$stamp GIT_COMMITTER_DATE=$stamp \
		git -C "$tree" "$@"
}

debver=$(dpkg-query -W -f='${Version}' "$base_pkg" 2>/dev/null) ||
	die "$base_pkg is not installed (run: make deps)"
author_email=${author#*<}; author_email=${author_email%>}

if [ -d "$tree/.git" ] &&
   ! grep -qF "$base_pkg $debver" <<<"$(git -C "$tree" log -1 --format=%B base 2>/dev/null)"; then
	echo "mktree: base is not $base_pkg $debver; unpacking afresh"
	rm -rf "$tree"
	# What was built from the old base is stale, and make cannot tell:
	# files generated there are newer than the new sources.
	rm -rf "$top/build/out" "$top/build/selftests" "$top/build/perf"
fi

if [ ! -d "$tree/.git" ]; then
	echo "mktree: unpacking $base_pkg $debver"
	rm -rf "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -C "$tree.tmp" -xf "$base_tarball"
	mv "$tree.tmp/$base_pkg" "$tree"
	rmdir "$tree.tmp"
	kver=$(make -s -C "$tree" kernelversion)
	git -C "$tree" init -q -b work
	git -C "$tree" add -f -A
	git_t commit -q -m "Linux $kver (Debian $base_pkg $debver)" \
		-m "Pristine base: the unpacked $(basename "$base_tarball") of Debian package $base_pkg version $debver."
	git -C "$tree" tag base
fi

# Build the series in a scratch index, never touching the work tree.
scratch=$top/build/series.index
export GIT_INDEX_FILE=$scratch
trap 'rm -f "$scratch"' EXIT
git -C "$tree" read-tree base
parent=$(git -C "$tree" rev-parse base)

# Entries: a message file, then overlay files and patches; a line starting
# with white space continues the previous entry; '#' starts a comment.
entries=$(sed -e 's/#.*//' "$series" | awk '
	/^[ \t]*$/ { next }
	/^[ \t]/ { line = line " " $0; next }
	{ if (line != "") print line; line = $0 }
	END { if (line != "") print line }')

mapfile -t entry <<<"$entries"

# The paths a patch changes.
patch_paths() {
	sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "$top/$1"
}

# An overlay file is the version the series ends with: take back out of
# it, newest first, what the patches of entries after $1 change in it.
unpatch_later() {
	local i=$1 path=$2 j k p items

	for ((j = ${#entry[@]} - 1; j > i; j--)); do
		read -ra items <<<"${entry[j]}"
		for ((k = ${#items[@]} - 1; k > 0; k--)); do
			p=${items[k]}
			case $p in patches/*.patch) ;; *) continue ;; esac
			grep -qxF "$path" <<<"$(patch_paths "$p")" || continue
			git -C "$tree" apply --cached -R --include="$path" "$top/$p" ||
				die "$p does not take back out of $path: refresh it"
		done
	done
}

listed=" "
overlays=
for ((i = 0; i < ${#entry[@]}; i++)); do
	read -r msg items <<<"${entry[i]}"
	[ -n "$msg" ] || continue
	[ -f "$top/patches/$msg" ] || die "patches/series: no message file patches/$msg"
	for item in $items; do
		f=$top/$item
		[ -f "$f" ] || die "patches/series: $item does not exist"
		listed="$listed$item "
		case $item in
		patches/*.patch)
			git -C "$tree" apply --cached --whitespace=error-all "$f" ||
				die "$item does not apply (on top of the entries before it)"
			;;
		*)
			mode=100644
			[ -x "$f" ] && mode=100755
			blob=$(git -C "$tree" hash-object -w "$f")
			git -C "$tree" update-index --add --cacheinfo "$mode,$blob,$item"
			overlays="$overlays $item"
			unpatch_later "$i" "$item"
			;;
		esac
	done
	t=$(git -C "$tree" write-tree)
	parent=$( { cat "$top/patches/$msg"; printf '\nSigned-off-by: %s\n' "$author"; } |
		git_t commit-tree "$t" -p "$parent")
done

# Taking a patch out and putting it back in must give the overlay again.
for f in $overlays; do
	[ "$(git -C "$tree" rev-parse "$parent:$f")" = "$(git -C "$tree" hash-object "$top/$f")" ] ||
		die "the series does not end with the overlay's $f"
done

# Every kernel-path file we keep must be part of the series, except the
# user space mutex library, which is not for upstream (its README says why),
# and the trace tool that make check's smoke run uses (its header says so).
# Patches in a folder of patches/ are for other maintainers, each folder a
# series of its own (patches/kselftest/, checked by scripts/harness-check.sh).
for f in $(cd "$top" && env -u GIT_INDEX_FILE git ls-files --cached --others --exclude-standard \
		kernel include tools Documentation ':(glob)patches/*.patch' 2>/dev/null); do
	case $listed in
	*" $f "*) ;;
	*) [[ $f == tools/lib/futex-spin/* || $f == tools/tracing/futex_spin/* ]] ||
		die "$f is not listed in patches/series" ;;
	esac
done

# Always check out: this also reverts hand edits to tracked files, so the
# build tree is exactly base + series. Git rewrites only files that differ.
unset GIT_INDEX_FILE
old=$(git -C "$tree" rev-parse HEAD)
git -C "$tree" checkout -q -f -B work "$parent"
[ "$old" = "$parent" ] ||
	echo "mktree: build/linux at $(git -C "$tree" log -1 --format='%h %s')"
