# SPDX-License-Identifier: GPL-2.0
#
# Does the series slow what exists? Included by the Makefile.
#
#   make kernel-base   the release kernel without the series: the base
#                      commit of build/linux checked out in
#                      $(BUILD)/linux-base, configured from the same
#                      fragments, into $(BUILD)/out/kernel-base; its
#                      .config must equal the release kernel's but for
#                      the series' own options
#   make bench-regress perf bench futex hash (with the auto-sized private
#                      hash and -b 0, 16, 256), wake, wake-parallel,
#                      requeue and lock-pi, on both kernels, REGRESS_ROUNDS
#                      rounds of one boot each (scripts/regress.sh); then
#                      $(BUILD)/bench-regress/results.md (printed) and
#                      regress.png. The series must trail in no benchmark.
#                      The guests count instructions (REGRESS_ICOUNT=0: the
#                      wall clock; see scripts/regress.sh).
#
# 16 boots of about a minute each: some 17 minutes when the kernels are built.

REGRESS_ROUNDS ?= 8
REGRESS_ICOUNT ?= 1
BASE_LINUX := $(BUILD)/linux-base
BASE_KOUT := $(BUILD)/out/kernel-base
# The series' own options, the only lines in which the configs may differ.
SERIES_OPTIONS := CONFIG_FUTEX_SPIN

.PHONY: kernel-base bench-regress

kernel-base: tree
	@if [ -d $(BASE_LINUX) ]; then \
		git -C $(BASE_LINUX) checkout -q --detach base; \
	else \
		git -C $(LINUX) worktree prune; \
		git -C $(LINUX) worktree add -q --detach $(BASE_LINUX) base; \
	fi
	@$(MAKE) --no-print-directory LINUX=$(BASE_LINUX) KOUT=$(BASE_KOUT) \
		DEBUG=0 CHECK_CONFIG=0 kernel
	@diff <(grep -v '^\(# \)\?$(SERIES_OPTIONS)[_= ]' $(BUILD)/out/kernel/.config) \
		<(grep -v '^\(# \)\?$(SERIES_OPTIONS)[_= ]' $(BASE_KOUT)/.config) >/dev/null || \
		{ echo "kernel-base: its .config differs from $(BUILD)/out/kernel's" >&2; exit 1; }

bench-regress:
	@$(MAKE) --no-print-directory DEBUG=0 kernel
	@$(MAKE) --no-print-directory perf kernel-base
	@ROUNDS=$(REGRESS_ROUNDS) ICOUNT=$(REGRESS_ICOUNT) CPUS=$(CPUS) MEM=$(MEM) scripts/regress.sh \
		$(PERF_OUT)/perf $(BUILD)/out/kernel $(BASE_KOUT) $(BUILD)/bench-regress
