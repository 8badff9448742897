#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B of kernels on the cells that moved: boots each kernel in turn, three
# rounds, and runs guest.sh for spin (TYPES), 3 runs (REP) of 1 s per cell
# and boot. A kernel is a directory holding arch/x86/boot/bzImage (copy a
# build there before rebuilding). Results go to
# build/runs/abTAG-KERNEL-ROUND; compare them with ab.py. Never run two
# guests at once: they share 2 host CPUs.
#
# Even rounds boot the kernels in the reverse order (A B, B A, A B, ...):
# the kernel booted first in a round ran worse in A/Bs that kept one
# order, whatever it was.
#
#   ab.sh TAG KERNEL_DIR...
#
# Environment: CELLS (as for guest.sh), ROUNDS (3), TYPES (spin), REP (3).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tag=$1
shift
cells=${CELLS:-64,1,0 64,10,0 64,50,0 16,50,0 16,10,0 4,10,0 64,10,90 2,10,0}

cd "$top"
kernels=("$@")
for round in $(seq "${ROUNDS:-3}"); do
	order=("${kernels[@]}")
	if ((round % 2 == 0)); then
		order=()
		for ((i = ${#kernels[@]} - 1; i >= 0; i--)); do
			order+=("${kernels[i]}")
		done
	fi
	for k in "${order[@]}"; do
		scripts/vm-run.sh --kernel "$k" --name "ab$tag-$(basename "$k")-$round" -- \
			env REP="${REP:-3}" RT=1 TYPES="${TYPES:-spin}" CELLS="$cells" \
			docs/analysis/guest.sh build/perf/perf
	done
done
