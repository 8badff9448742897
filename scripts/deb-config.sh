#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The .config of make deb: a real machine's kernel config with the
# series' options (configs/deb.config).
#
#   deb-config.sh KOUT
#
# The base: DEB_BASE if set (a config file, plain, .gz or .xz), else the
# running kernel's /boot/config-$(uname -r), else Debian's amd64 config
# from linux-config-7.3 (make deps installs it). DEB_CONFIG=local, the
# default, trims it with localmodconfig to the modules loaded now;
# DEB_CONFIG=full keeps every module. Distribution configs name signing
# certificates that are not in this tree (Debian's UEFI certificates,
# Ubuntu's canonical-certs.pem): none, and the modules signed with a key
# the build makes, so that they load under lockdown too. No debug info,
# unless DEB_DEBUG_INFO=1.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
linux=$top/build/linux
mkdir -p "$1"
kout=$(cd "$1" && pwd)
config=$kout/.config
mode=${DEB_CONFIG:-local}

die() { echo "deb: $*" >&2; exit 1; }
kmake() { make -s -C "$linux" O="$kout" "$@"; }
kconfig() { "$linux/scripts/config" --file "$config" "$@"; }

case $mode in
local | full) ;;
*) die "DEB_CONFIG=$mode: local or full" ;;
esac
base=${DEB_BASE:-/boot/config-$(uname -r)}
[ -n "${DEB_BASE:-}" ] || [ -f "$base" ] || base=$config_file
[ -f "$base" ] || die "no config $base (make deps installs $config_pkg)"

case $base in
*.xz) xz -dc "$base" ;;
*.gz) gzip -dc "$base" ;;
*) cat "$base" ;;
esac >"$config"
echo "deb: base config $base"
# The base's own symbols against 7.3 first, so that localmodconfig asks
# nothing.
kmake olddefconfig

if [ "$mode" = local ]; then
	lsmod=$kout/lsmod.txt
	if [ -r /proc/modules ]; then
		lsmod >"$lsmod"
	else
		echo "deb: no /proc/modules: this kernel has no modules, so none is kept"
		: >"$lsmod"
	fi
	echo "deb: localmodconfig: the $(grep -c -v '^Module ' "$lsmod") modules loaded now"
	kmake LSMOD="$lsmod" localmodconfig </dev/null >"$kout/localmodconfig.log" 2>&1 ||
		{ tail -n 20 "$kout/localmodconfig.log" >&2; die "localmodconfig failed"; }
fi

kconfig --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
	--set-str MODULE_SIG_KEY certs/signing_key.pem --enable MODULE_SIG_ALL
if [ "${DEB_DEBUG_INFO:-0}" != 1 ]; then
	kconfig --enable DEBUG_INFO_NONE --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
		--disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5
fi
"$linux/scripts/kconfig/merge_config.sh" -m -O "$kout" "$config" \
	"$top/configs/deb.config" >"$kout/merge.log"
kmake olddefconfig
"$top/scripts/check-config.sh" "$config" "$top/configs/deb.config"
echo "deb: $config: $(grep -c '=y$' "$config") built in, $(grep -c '=m$' "$config") modules"
