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
# The tests of spinning itself say with a SKIP that they cannot run where
# waiters do not spin: on one CPU, and on PREEMPT_RT (no_spinning() in
# futex_spin_spinning.c). Any other skip still fails.
NO_SPIN_SKIPS := spinning.spinners_stay_below_cpus \
	spinning.preempted_spinner_leaves_its_place \
	spinning.spinner_queues_after_spinning_t \
	spinning.spinner_queues_after_a_failed_cmpxchg \
	spinning.spin_on_a_failing_cmpxchg_stops \
	global.spinning_stops_after_t_on_one_owner \
	global.alternating_owners_end_the_segment \
	spin_sched.rt_waiter_asks_at_once
ifeq ($(VARIANT),up)
CPUS := 1
WIDE_CPUS :=
# These need a second CPU too, and say so with a SKIP.
export TAP_EXPECTED_SKIPS := $(NO_SPIN_SKIPS) \
	spin_starve.other_cpu.waiter_gets_the_lock \
	global.woken_waiter_that_cannot_run_holds_back_nobody \
	global.woken_waiter_that_cannot_run_holds_back_nobody_behind \
	spinning.contended_acquisitions_spin \
	spinning.fifo_spinner_does_not_livelock \
	futex-mutex.short_wait_in_user_space \
	woken_pile.unlock_cost_with_thousands_woken
endif
ifeq ($(VARIANT),rt)
export TAP_EXPECTED_SKIPS := $(NO_SPIN_SKIPS)
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
