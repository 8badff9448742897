#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a guest with more than 16 CPUs, after guest-check.sh's run:
# the futex tests that need that many. The private futex hash grows with
# the threads only past 16 CPUs at its default size, which
# futex_priv_hash checks and futex_spin_hash's resize_by_new_threads
# drives under lockers; on fewer CPUs both skip those parts.
#
#   guest-wide.sh KSFT_DIR
ksft=$1
. "$(dirname "$0")/guest-common.sh"

guest_setup
work=$(mktemp -d)
cp -a "$ksft/functional/." "$work/"
for t in futex_priv_hash futex_spin_hash; do
	(cd "$work" && "./$t")
done
guest_finish
