# SPDX-License-Identifier: GPL-2.0
#
# The kernel the series applies to: Debian's source package of it, from a
# suite that bookworm's apt does not list by itself. Sourced by deps.sh,
# which installs it, and by mktree.sh, which unpacks it.
# shellcheck disable=SC2034 # used by the scripts that source this file
base_pkg=linux-source-7.3
base_suite=trixie-backports
base_tarball=/usr/src/$base_pkg.tar.xz
