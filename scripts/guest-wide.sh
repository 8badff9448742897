#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a guest with more than 16 CPUs, after guest-check.sh's run:
# the futex tests that need that many. The private futex hash grows with
# the threads only past 16 CPUs at its default size, which
# futex_priv_hash checks and futex_spin_hash's resize_by_new_threads
# drives under lockers; on fewer CPUs both skip those parts. The two
# spinning tests of what many CPUs allow (spinners per lock, a spin whose
# owner alternates) need more than the first guest's two.
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
(cd "$work" && ./futex_spin_spinning -t spinners_stay_below_cpus \
	-t alternating_owners_end_the_segment)
guest_finish
