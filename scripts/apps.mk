# SPDX-License-Identifier: GPL-2.0
#
# Real programs on spinning futexes, included by the Makefile.
#
#   make futex-spin-lib   tools/lib/futex-spin (library, LD_PRELOAD object,
#                         tests) into $(BUILD)/futex-spin
#   make bench-apps       release kernel; in one guest, sysbench mutex and
#                         threads, RocksDB cache_bench and memcached +
#                         memcaslap, each with glibc, the preload and its
#                         wait-wake fallback, APPS_REPEAT paired rounds
#                         (8); then $(BUILD)/bench-apps/results.md
#                         (printed)
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
#   make bench-peers      release kernel; in a guest, will-it-scale's
#                         pthread_mutex1 to 5 (glibc, the preload in spin
#                         and in waitwake mode) and futex1 to 4 (glibc),
#                         threads mode, 1, 2 and 4 tasks, PEERS_ROUNDS
#                         paired rounds (8); then $(BUILD)/bench-peers/
#                         results.md (printed) and peers.png. Needs
#                         WILL_IT_SCALE. 8 rounds x (5 tests x 3 tasks x 3
#                         variants + 4 x 3) = 456 runs of 7 s (will-it-scale
#                         warms up for 5 s), about 9 s each with the start
#                         and exit: some 70 minutes.
#
# make check runs the library's tests and a smoke run of each program
# under the preload in its guest (scripts/apps-smoke.sh).

FSLIB_OUT := $(BUILD)/futex-spin
APPS_REPEAT ?= 8
UNCONTENDED_ROUNDS ?= 8
WILL_IT_SCALE ?= $(abspath $(TOP)/../shared/peers/will-it-scale)
WIS_OUT := $(BUILD)/will-it-scale
PEERS_ROUNDS ?= 8
PEERS_TIMEOUT ?= 7200
PEERS_TESTS := pthread_mutex1 pthread_mutex2 pthread_mutex3 pthread_mutex4 \
	pthread_mutex5 futex1 futex2 futex3 futex4

.PHONY: futex-spin-lib bench-apps bench-uncontended bench-peers

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
	$(BUILD)/venv/bin/python3 scripts/apps-report.py $(BUILD)/runs/bench-apps \
		>$(BUILD)/bench-apps/results.md && \
	cat $(BUILD)/bench-apps/results.md && [ $$vm -eq 0 ]

# will-it-scale's main.c with one of its tests, threads mode, built out
# of its tree; nothing when WILL_IT_SCALE is not there.
$(WIS_OUT)/%_threads:
	@mkdir -p $(WIS_OUT)
	@if [ -f $(WILL_IT_SCALE)/tests/$*.c ]; then \
		echo "  CC      $@"; \
		$(CC) -DTHREADS -O2 -o $@ $(WILL_IT_SCALE)/main.c \
			$(WILL_IT_SCALE)/tests/$*.c -pthread -lhwloc; \
	else \
		echo "will-it-scale: no $(WILL_IT_SCALE)/tests/$*.c, $* skipped"; \
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

bench-peers: futex-spin-lib $(PEERS_TESTS:%=$(WIS_OUT)/%_threads)
	@for t in $(PEERS_TESTS); do [ -x $(WIS_OUT)/$${t}_threads ] || \
		{ echo "bench-peers: needs will-it-scale (WILL_IT_SCALE=$(WILL_IT_SCALE))"; \
		exit 1; }; done
	@$(MAKE) --no-print-directory DEBUG=0 kernel
	@vm=0; scripts/vm-run.sh --kernel $(BUILD)/out/kernel --name bench-peers \
		--cpus $(CPUS) --mem $(MEM) --numa $(NUMA) --timeout $(PEERS_TIMEOUT) \
		-- env ROUNDS=$(PEERS_ROUNDS) $(TOP)/scripts/peers-guest.sh \
		$(FSLIB_OUT) $(WIS_OUT) || vm=$$?; \
	$(BUILD)/venv/bin/python3 scripts/peers-report.py $(BUILD)/runs/bench-peers \
		$(BUILD)/bench-peers && [ $$vm -eq 0 ]
