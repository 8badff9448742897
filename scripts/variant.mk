# SPDX-License-Identifier: GPL-2.0
#
# Kernel variants, chosen by VARIANT= and ARCH=. Included by the top
# Makefile right after it sets KOUT and FRAGMENTS for DEBUG=0|1, and
# overrides them:
#
#   VARIANT=rt|kcsan|up   the debug kernel (vm.config + debug.config) plus
#                         configs/VARIANT.config, in build/out/kernel-VARIANT;
#                         `make check` and `make stress` boot it.
#   ARCH=arm64            cross-build with aarch64-linux-gnu-gcc from
#                         configs/arm64.config [+ debug.config], in
#                         build/out/kernel-arm64[-debug]; `make kernel` only.
#
# DEBUG_KOUT is the kernel `make check` and `make stress` boot.

VARIANT ?=
ARCH ?= x86_64
KARCH := $(ARCH)
KCC := gcc
KIMAGE := bzImage
DEBUG_KOUT := $(BUILD)/out/kernel-debug

ifneq ($(VARIANT),)
ifeq ($(wildcard $(TOP)/configs/$(VARIANT).config),)
$(error VARIANT=$(VARIANT): no configs/$(VARIANT).config)
endif
KOUT := $(BUILD)/out/kernel-$(VARIANT)
FRAGMENTS := configs/vm.config configs/debug.config configs/$(VARIANT).config
DEBUG_KOUT := $(KOUT)
ifeq ($(VARIANT),up)
CPUS := 1
WIDE_CPUS :=
# They need a second CPU and say so with a SKIP; any other skip still fails.
export TAP_EXPECTED_SKIPS := spin_starve.other_cpu.waiter_gets_the_lock \
	spinning.contended_acquisitions_spin \
	spinning.fifo_spinner_does_not_livelock \
	spinning.preempted_spinner_leaves_its_place \
	spinning.spinner_queues_behind_many_sleepers \
	spinning.spinner_that_queues_wakes_a_sleeper \
	spinning.spinner_that_queues_beside_a_task_wakes_a_sleeper \
	spinning.spinner_that_queues_after_a_failed_cmpxchg_wakes_a_sleeper \
	futex-mutex.short_wait_in_user_space \
	global.spinning_is_capped_per_call \
	woken_pile.unlock_cost_with_thousands_woken
endif
ifeq ($(VARIANT),rt)
# PREEMPT_RT waiters do not spin: the tests of spinning itself say so.
export TAP_EXPECTED_SKIPS := spinning.preempted_spinner_leaves_its_place \
	spinning.spinner_queues_behind_many_sleepers \
	spinning.spinner_that_queues_wakes_a_sleeper \
	spinning.spinner_that_queues_beside_a_task_wakes_a_sleeper \
	spinning.spinner_that_queues_after_a_failed_cmpxchg_wakes_a_sleeper \
	global.spinning_is_capped_per_call
endif
endif

ifeq ($(ARCH),arm64)
ifneq ($(VARIANT),)
$(error VARIANT= is x86_64 only)
endif
KCC := aarch64-linux-gnu-gcc
export CROSS_COMPILE := aarch64-linux-gnu-
KIMAGE := Image
KOUT := $(BUILD)/out/kernel-arm64$(if $(filter 1,$(DEBUG)),-debug)
FRAGMENTS := configs/arm64.config $(if $(filter 1,$(DEBUG)),configs/debug.config)
else ifneq ($(ARCH),x86_64)
$(error ARCH=$(ARCH): x86_64 or arm64)
endif
