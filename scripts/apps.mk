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
#   make bench-uncontended
#                         release kernel; in a guest, an uncontended
#                         pthread mutex under the preload (spin and
#                         waitwake modes) against glibc: the library's
#                         microbenchmark and will-it-scale's pthread_mutex2
#                         with 1 and 2 threads, UNCONTENDED_ROUNDS paired
#                         rounds (8); then $(BUILD)/bench-uncontended/
#                         results.md (printed). will-it-scale is taken from
#                         WILL_IT_SCALE (a clone of its upstream; default
#                         ../shared/peers/will-it-scale), needs libhwloc-dev,
#                         and is skipped when absent.
#
# make check runs the library's tests and a smoke run of each program
# under the preload in its guest (scripts/apps-smoke.sh).

FSLIB_OUT := $(BUILD)/futex-spin
APPS_REPEAT ?= 3
UNCONTENDED_ROUNDS ?= 8
WILL_IT_SCALE ?= $(abspath $(TOP)/../shared/peers/will-it-scale)
WIS_OUT := $(BUILD)/will-it-scale

.PHONY: futex-spin-lib bench-apps bench-uncontended

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

# will-it-scale's main.c with its pthread_mutex2 test, threads mode, built
# out of its tree; nothing when WILL_IT_SCALE is not there.
$(WIS_OUT)/pthread_mutex2_threads:
	@mkdir -p $(WIS_OUT)
	@if [ -f $(WILL_IT_SCALE)/tests/pthread_mutex2.c ]; then \
		echo "  CC      $@"; \
		$(CC) -DTHREADS -O2 -o $@ $(WILL_IT_SCALE)/main.c \
			$(WILL_IT_SCALE)/tests/pthread_mutex2.c -pthread -lhwloc; \
	else \
		echo "bench-uncontended: no will-it-scale in $(WILL_IT_SCALE)," \
			"pthread_mutex2 skipped"; \
	fi

bench-uncontended: futex-spin-lib $(WIS_OUT)/pthread_mutex2_threads
	@$(MAKE) --no-print-directory DEBUG=0 kernel
	@mutex2=$(WIS_OUT)/pthread_mutex2_threads; [ -x $$mutex2 ] || mutex2=; \
	vm=0; scripts/vm-run.sh --kernel $(BUILD)/out/kernel \
		--name bench-uncontended --cpus $(CPUS) --mem $(MEM) \
		--numa $(NUMA) --timeout $(TIMEOUT) \
		-- env ROUNDS=$(UNCONTENDED_ROUNDS) \
		$(TOP)/scripts/uncontended-guest.sh $(FSLIB_OUT) $$mutex2 || vm=$$?; \
	mkdir -p $(BUILD)/bench-uncontended; \
	$(BUILD)/venv/bin/python3 scripts/uncontended-report.py \
		$(BUILD)/runs/bench-uncontended \
		>$(BUILD)/bench-uncontended/results.md && \
	cat $(BUILD)/bench-uncontended/results.md && [ $$vm -eq 0 ]
