#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest: futex_spin_fuzz with the given arguments.
#
#   guest-stress.sh FUZZ_BINARY [FUZZ_ARGS...]
fuzz=$1
shift
. "$(dirname "$0")/guest-common.sh"

guest_setup
# The fuzzer execs itself (/proc/self/exe) and needs no files, but run it
# from the writable /tmp like the other guest scripts do.
cd "$(mktemp -d)" || exit 1
"$fuzz" "$@"
rc=$?
guest_finish
exit $rc
