# SPDX-License-Identifier: GPL-2.0
#
# Real programs on spinning futexes, included by the Makefile.
#
#   make futex-spin-lib   tools/lib/futex-spin (library, LD_PRELOAD object,
#                         tests) into $(BUILD)/futex-spin
#   make bench-apps       release kernel; in one guest, sysbench mutex and
#                         threads, RocksDB cache_bench and memcached +
#                         memcaslap, each with and without the preload,
#                         APPS_REPEAT times (3); then $(BUILD)/bench-apps/
#                         results.md (printed)
#
# make check runs the library's tests and a smoke run of each program
# under the preload in its guest (scripts/apps-smoke.sh).

FSLIB_OUT := $(BUILD)/futex-spin
APPS_REPEAT ?= 3

.PHONY: futex-spin-lib bench-apps

futex-spin-lib:
	@echo "  FSLIB   $(FSLIB_OUT)"
	@mkdir -p $(FSLIB_OUT)
	@$(MAKE) -s -C $(TOP)/tools/lib/futex-spin OUTPUT=$(FSLIB_OUT)

check: futex-spin-lib

bench-apps: futex-spin-lib
	@$(MAKE) --no-print-directory DEBUG=0 kernel
	@$(MAKE) --no-print-directory perf
	@vm=0; scripts/vm-run.sh --kernel $(BUILD)/out/kernel --name bench-apps \
		--cpus $(CPUS) --mem $(MEM) --numa $(NUMA) --timeout $(TIMEOUT) \
		-- env REPEAT=$(APPS_REPEAT) $(TOP)/scripts/apps-bench-guest.sh \
		$(FSLIB_OUT) $(PERF_OUT)/perf || vm=$$?; \
	[ -s $(BUILD)/runs/bench-apps/results.txt ] || \
		{ echo "bench-apps: no results (guest status $$vm)"; exit 1; }; \
	mkdir -p $(BUILD)/bench-apps; \
	python3 scripts/apps-report.py $(BUILD)/runs/bench-apps \
		>$(BUILD)/bench-apps/results.md && \
	cat $(BUILD)/bench-apps/results.md && [ $$vm -eq 0 ]
