# SPDX-License-Identifier: GPL-2.0
#
# make matrix [MATRIX="debug rt kcsan up numa2 cpus4"]
#
# `make check` on the debug kernel, on each variant (VARIANT=rt, kcsan,
# up; see scripts/variant.mk), on two sockets (NUMA=2) and on four vCPUs
# (CPUS=4), one after the other, then one line per run: TAP points passed
# and failed, kernel log splats, wall time of the kernel build and of the
# check. Fails if any run fails. Results: build/runs/matrix/.

MATRIX ?= debug rt kcsan up numa2 cpus4

.PHONY: matrix

matrix: tree
	@scripts/matrix.sh $(MATRIX)

# The futex selftests that build for arm64, on the cross-built kernel in
# qemu-system-aarch64 (scripts/arm64-check.sh).
ARM64_TESTS ?= futex_spin futex_spin_robust futex_spin_sched \
	futex_spin_hash futex_wait_timeout futex_requeue futex_wait_wouldblock

.PHONY: check-arm64

# Its 2 vCPUs are too few for the hash to grow with threads (past 4).
check-arm64:
	@$(MAKE) --no-print-directory ARCH=arm64 kernel
	@TAP_EXPECTED_SKIPS=hash.resize_by_new_threads \
		scripts/arm64-check.sh $(ARM64_TESTS)
