# SPDX-License-Identifier: GPL-2.0
#
# Profiles of the mutex benchmark, included by the Makefile.
#
#   make profile [LOCK=spin]   one lock type under perf in a guest
#   make profile-compare       ww and spin at the same settings, side by side
#
# Knobs: LOCK (ww|spin|pi|glibc|glibc-adaptive|tas), THREADS (8), LOAD (50),
# SECONDS (5, per run), FREQ (cpu-clock samples per second and CPU, 999),
# and the guest's CPUS, MEM, NUMA, TIMEOUT. The release kernel (kallsyms,
# frame pointers) and the perf of the build tree run the benchmark three
# times per type: under perf record -a -g, perf stat and perf lock record.
# Results in build/profile/TYPE/: perf.data, top.txt (perf report),
# symbols.txt, perf.script, stacks.folded, flamegraph.svg (inferno),
# stat.txt, lock-contention.txt, summary.txt; the comparison's summary in
# build/profile/summary.txt.

PROFILE_OUT = $(BUILD)/profile
LOCK ?= spin
THREADS ?= 8
LOAD ?= 50
SECONDS ?= 5
FREQ ?= 999
INFERNO = $(or $(CARGO_HOME),$(HOME)/.cargo)/bin
PROFILE_TIMEOUT = $(if $(filter file undefined,$(origin TIMEOUT)),1200,\
	$(TIMEOUT))

.PHONY: profile profile-compare

# $(1): lock types, $(2): summary file. The guest leaves each type's files
# in runs/profile/TYPE; they move to $(PROFILE_OUT)/TYPE, where the
# flamegraph and the summary are made.
define profile-run
@$(MAKE) --no-print-directory DEBUG=0 kernel
@$(MAKE) --no-print-directory perf
@scripts/deps.sh profile
@run=$(BUILD)/runs/profile; vm=0; \
scripts/vm-run.sh --kernel $(BUILD)/out/kernel --name profile \
	--cpus $(CPUS) --mem $(MEM) --numa $(NUMA) --timeout $(PROFILE_TIMEOUT) \
	-- env THREADS=$(THREADS) LOAD=$(LOAD) RUNTIME=$(SECONDS) \
	PERIOD=$$((1000000000 / $(FREQ))) \
	$(TOP)/scripts/profile-guest.sh $(PERF_OUT)/perf $(1) || vm=$$?; \
cat $$run/output.txt; \
sub="Linux $$(sed -n 's/^kernel=//p' $$run/guest.txt),"; \
sub="$$sub QEMU $$(sed -n 's/^accel=//p' $$run/vm.txt), $(CPUS) vCPUs,"; \
sub="$$sub cpu-clock $(FREQ) Hz, $$(date +%F)"; \
for t in $(1); do \
	[ -s $$run/$$t/perf.script ] || \
		{ echo "profile: no results for $$t (guest status $$vm)" >&2; exit 1; }; \
	out=$(PROFILE_OUT)/$$t; rm -rf $$out; mkdir -p $(PROFILE_OUT); \
	mv $$run/$$t $$out; cp $$run/guest.txt $$run/kallsyms $$out/; \
	$(INFERNO)/inferno-collapse-perf -q --all $$out/perf.script \
		>$$out/stacks.folded; \
	$(INFERNO)/inferno-flamegraph --hash --minwidth 0.1 --subtitle "$$sub" \
		--title "$$t: perf bench futex mutex -t $(THREADS) -l $(LOAD) -r $(SECONDS)" \
		<$$out/stacks.folded >$$out/flamegraph.svg; \
	echo "  SVG     $$out/flamegraph.svg"; \
done; \
$(BUILD)/venv/bin/python3 scripts/profile-report.py $(BUILD)/out/kernel $(2) \
	$(addprefix $(PROFILE_OUT)/,$(1)) && [ $$vm -eq 0 ]
endef

profile:
	$(call profile-run,$(LOCK),$(PROFILE_OUT)/$(LOCK)/summary.txt)

profile-compare:
	$(call profile-run,ww spin,$(PROFILE_OUT)/summary.txt)
