# SPDX-License-Identifier: GPL-2.0
#
# make stress [DURATION=600] [HEADS_SECONDS=60] [HEADS_BESIDE=S] [STRESS_ARGS="-s SEED ..."]
#
# The futex_spin_fuzz stress test for DURATION seconds (guest time) on the
# debug kernel (KASAN, lockdep, kmemleak), in a guest like `make check`,
# then futex_spin_heads with HEADS_SECONDS for each of its 6 scenarios.
# Included by the top Makefile and uses its variables (BUILD, TOP,
# SELFTESTS, CPUS, MEM, NUMA). Passes when every TAP point of the fuzzer
# and of the heads test passes, the guest finished and neither the kernel
# log nor kmemleak has a report. Output, kernel log and kmemleak report:
# build/runs/stress/.
# HEADS_BESIDE=S runs the two robust heads scenarios for S seconds each
# beside the fuzzer too (scripts/guest-stress.sh); 2 S + 60 must stay
# below DURATION.
# STRESS_ARGS go to the fuzzer: -s SEED replays a run's choices, -p/-T set
# processes and threads, -d disables groups of operations (see -h).

DURATION ?= 600
HEADS_SECONDS ?= 60
HEADS_BESIDE ?=
STRESS_ARGS ?=

.PHONY: stress

# Boot, the fuzzer's teardown and two kmemleak scans come on top of
# DURATION; under TCG with KASAN they take minutes, not seconds.
stress:
	@$(MAKE) --no-print-directory DEBUG=1 kernel
	@$(MAKE) --no-print-directory selftests
	@for t in futex_spin_fuzz futex_spin_heads; do \
		test -x $(SELFTESTS)/functional/$$t || \
		{ echo "stress: no $(SELFTESTS)/functional/$$t" >&2; exit 1; }; \
	done
	@vm=0; scripts/vm-run.sh --kernel $(DEBUG_KOUT) --name stress \
		--cpus $(CPUS) --mem $(MEM) --numa $(NUMA) \
		--timeout $$(( $(DURATION) + 6 * $(HEADS_SECONDS) + 900 )) \
		-- env HEADS_SECONDS=$(HEADS_SECONDS) HEADS_BESIDE=$(HEADS_BESIDE) \
		$(TOP)/scripts/guest-stress.sh \
		$(SELFTESTS)/functional/futex_spin_fuzz -t $(DURATION) $(STRESS_ARGS) \
		|| vm=$$?; \
	touch $(BUILD)/runs/stress/output.txt; \
	grep -E '^# (futex_spin_fuzz: seed|operations:)' $(BUILD)/runs/stress/output.txt; \
	scripts/tap-summary.sh $(BUILD)/runs/stress/output.txt && [ $$vm -eq 0 ]
