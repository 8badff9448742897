# SPDX-License-Identifier: GPL-2.0
#
# The kernel the series applies to: Debian's source package of it, from a
# suite that bookworm's apt does not list by itself, and Debian's kernel
# configs for it, the base of make deb where the machine has none. Sourced
# by deps.sh, which installs them, by mktree.sh, which unpacks the source,
# and by deb-config.sh.
# shellcheck shell=bash disable=SC2034 # used by the scripts that source this file
base_pkg=linux-source-7.3
base_suite=trixie-backports
base_tarball=/usr/src/$base_pkg.tar.xz
config_pkg=linux-config-7.3
config_file=/usr/src/$config_pkg/config.amd64_none_amd64.xz
