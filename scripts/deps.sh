#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what the rig needs: the Debian base source, the kernel build
# tools, QEMU, ccache, and in a venv under build/ virtme-ng (pinned), what
# checkpatch's SPDX check imports, and docutils for the rst check.
# Quiet when nothing is missing.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
venv=$top/build/venv
vng_version=1.42

pkgs="linux-source-6.12 qemu-system-x86 build-essential flex bison bc
      libelf-dev libssl-dev libtraceevent-dev ccache cpio kmod rsync
      python3-venv python3-docutils"

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q $missing >/dev/null
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
