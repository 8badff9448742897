#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what the rig needs: the Debian base source and Debian's configs
# of it (scripts/base.sh), the kernel build tools (with ARCH=arm64 in the
# environment, the arm64 cross compiler), what the kernel's bindeb-pkg
# checks for (debhelper, libdw-dev) and zstd for the kernel image of
# Debian's config (make deb), numactl for make bench-host, libnuma for
# one selftest (built under build/numa), QEMU, ccache, the programs that
# make check and make bench-apps run under the futex-spin preload, and in
# a venv under build/ virtme-ng (pinned), what checkpatch's SPDX check
# imports, and docutils for the rst check.
# With "profile" (make profile), also inferno (pinned) for the flamegraphs,
# with cargo from Debian if there is none. Quiet when nothing is missing.
#
#   deps.sh [profile]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/base.sh"
venv=$top/build/venv
vng_version=1.42

pkgs="curl qemu-system-x86 build-essential flex bison bc
      libelf-dev libssl-dev libtraceevent-dev ccache cpio kmod rsync
      python3-venv python3-docutils pkg-config spin zstd numactl
      debhelper libdw-dev
      sysbench rocksdb-tools memcached libmemcached-tools libhwloc-dev"
# make kernel ARCH=arm64 (make passes ARCH on): the cross compiler and
# the QEMU of make check-arm64.
[ "${ARCH:-}" != arm64 ] || pkgs="$pkgs gcc-aarch64-linux-gnu qemu-system-arm"

# The base comes from $base_suite: list that suite with every package in it
# pinned away but $base_pkg and $config_pkg, so that nothing else on the
# machine moves. apt reads a file of preferences.d only if its name has no
# dot or ends in .pref: it ignored the pin file this script wrote before,
# named after the package.
base_source() {
	local list=/etc/apt/sources.list.d/futex-spin-$base_suite.sources
	local pin=/etc/apt/preferences.d/futex-spin-$base_suite.pref

	[ -f "$list" ] && [ -f "$pin" ] && return
	rm -f "/etc/apt/preferences.d/futex-spin-$base_pkg"
	echo "deps: adding $base_suite for $base_pkg and $config_pkg alone"
	cat >"$list" <<-EOT
	Types: deb
	URIs: http://deb.debian.org/debian
	Suites: $base_suite
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOT
	cat >"$pin" <<-EOT
	Package: *
	Pin: release n=$base_suite
	Pin-Priority: -1

	Package: $base_pkg $config_pkg
	Pin: release n=$base_suite
	Pin-Priority: 500
	EOT
}

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"
}

export DEBIAN_FRONTEND=noninteractive
base_source
if ! installed "$base_pkg" || ! installed "$config_pkg"; then
	apt-get update -q >/dev/null
	apt-get install -y -q "$base_pkg" "$config_pkg" >/dev/null || {
		echo "deps: cannot install $base_pkg and $config_pkg from Debian $base_suite" >&2
		exit 1
	}
fi

missing=
for p in $pkgs; do
	installed "$p" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	apt-get update -q >/dev/null
	# shellcheck disable=SC2086 # a list of packages
	apt-get install -y -q $missing >/dev/null
fi

# futex_numa_mpol needs libnuma 2.0.18 or later. Bookworm has 2.0.16 and
# trixie's library needs a newer glibc, so build trixie's source of the
# library alone under build/numa, for the selftests.
numa_version=2.0.19
numa_sha256=8b84ffdebfa0d730fb2fc71bb7ec96bb2d38bf76fb67246fde416a68e04125e4
numa=$top/build/numa
if [ ! -f "$numa/lib/libnuma.so.1" ]; then
	echo "deps: building libnuma $numa_version into build/numa"
	rm -rf "$numa"
	mkdir -p "$numa/src" "$numa/include" "$numa/lib/pkgconfig"
	tarball=$numa/src/numactl_$numa_version.orig.tar.gz
	curl -fsS -o "$tarball" \
		"http://deb.debian.org/debian/pool/main/n/numactl/${tarball##*/}" &&
		echo "$numa_sha256  $tarball" | sha256sum -c --quiet || {
		echo "deps: cannot fetch Debian's numactl $numa_version source" >&2
		exit 1
	}
	tar -C "$numa/src" -xzf "$tarball"
	src=$numa/src/numactl-$numa_version
	# What its configure script would put in config.h comes as -D.
	: >"$numa/src/config.h"
	gcc -O2 -fPIC -shared -I"$numa/src" -I"$src" -DTLS=__thread \
		-DHAVE_ATTRIBUTE_SYMVER=1 -o "$numa/lib/libnuma.so.1" \
		"$src"/{libnuma,syscall,distance,affinity,sysfs,rtnetlink}.c \
		-Wl,--version-script,"$src/versions.ldscript" \
		-Wl,-init,numa_init -Wl,-fini,numa_fini -Wl,-soname,libnuma.so.1
	ln -s libnuma.so.1 "$numa/lib/libnuma.so"
	cp "$src/numa.h" "$src/numaif.h" "$numa/include/"
	cat >"$numa/lib/pkgconfig/numa.pc" <<-EOT
	Name: numa
	Description: NUMA policy library
	Version: $numa_version
	Libs: -L$numa/lib -lnuma
	Cflags: -I$numa/include
	EOT
fi

if ! "$venv/bin/vng" --version 2>/dev/null | grep -q "$vng_version" ||
   ! "$venv/bin/python" -c 'import ply, git, docutils' 2>/dev/null; then
	echo "deps: installing virtme-ng $vng_version, ply, GitPython, docutils"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q "virtme-ng==$vng_version" ply==3.11 \
		GitPython==3.1.43 docutils==0.21.2
fi

# The benchmark report's plot.
mpl_version=3.10.8
if ! "$venv/bin/python3" -c "import matplotlib, sys; sys.exit(matplotlib.__version__ != '$mpl_version')" 2>/dev/null; then
	echo "deps: installing matplotlib $mpl_version"
	"$venv/bin/pip" install -q "matplotlib==$mpl_version"
fi

[ "${1:-}" = profile ] || exit 0

# inferno's flamegraphs, into ~/.cargo/bin where cargo puts what it
# installs: shared by every clone, not removed by make distclean.
inferno_version=0.12.8
cargo_home=${CARGO_HOME:-$HOME/.cargo}
grep -qs "^\"inferno $inferno_version " "$cargo_home/.crates.toml" && exit 0
cargo=$(command -v cargo || true)
if [ -z "$cargo" ] && [ -x "$cargo_home/bin/cargo" ]; then
	cargo=$cargo_home/bin/cargo
fi
if [ -z "$cargo" ]; then
	# Bookworm's cargo package is Rust 1.63, older than inferno's 1.71;
	# cargo-web is the newer Rust that Debian keeps for its browsers.
	echo "deps: installing cargo-web (Debian's Rust) for inferno"
	apt-get update -q >/dev/null
	apt-get install -y -q cargo-web >/dev/null
	cargo=/usr/bin/cargo
fi
echo "deps: installing inferno $inferno_version with $("$cargo" --version)"
"$cargo" install -q --locked --root "$cargo_home" inferno \
	--version "$inferno_version"
