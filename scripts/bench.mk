# SPDX-License-Identifier: GPL-2.0
#
# The mutex benchmark (perf bench futex mutex), included by the Makefile.
#
#   make perf     tools/perf of $(LINUX), minimal features, into $(BUILD)/perf
#   make bench    release kernel + perf, the sweep in a guest (lock types x
#                 threads x load x work outside the lock, in rounds), then
#                 the debug kernel's count pass (hash-bucket lock
#                 acquisitions and queue heads created, for ww and spin),
#                 then $(BUILD)/bench/results.csv, counts.csv, results.md
#                 (printed, with spin's verdict against every type) and
#                 throughput.png
#   make pause-effect   the TCG pause effect that made rmw the default unit
#                 of work: one thread's critical section of 50 pauses alone,
#                 beside a pause loop and beside an rmw loop on the other vCPU
#   make spinners [CPUS=8]   what many spinners on one lock do, counted:
#                 perf bench futex mutex -m spin at 1, 2 and 4 threads per
#                 vCPU, with the kernel's counters and debugfs spin_max
#                 around each run (scripts/spinners-guest.sh); for guests
#                 wider than the host, whose timings mean nothing
#
# The grid: threads {2,4,16,64} x load {1,10,50,100} (units of LOAD_KIND
# work in the critical section) x outside work {0, 9 x load} (a critical
# section of about a tenth of each thread's loop), 10 lock types (TYPES
# of bench-guest.sh), REPEAT rounds of one run of BENCH_RUNTIME s per
# type. A verdict needs 8 rounds (docs/statistics.md). A run of 1 s takes
# 1.6 s in a 2-vCPU TCG guest (perf's start, clock calibration, 64
# threads' creation and join). The quick default keeps loads 1 and 50,
# the shortest and the longest critical section of the old grid: 16 cells
# x 10 types x 8 rounds = 1280 runs, 35 min. Then the count pass: 16
# cells x ww, spin, one run of 1 s each = 32 runs on the debug kernel,
# where a run takes about 10 s (starting a process takes a second there):
# 6 min. With two boots of a minute, some 43 min when the kernels are
# built. FULL=1 is the whole grid with 8 rounds of 5 s: 32 x 10 x 8 = 2560
# runs, 4 h, and 64 count runs of 1 s, 11 min.
#
# Knobs: REPEAT (rounds), FULL=1, LOAD_KIND (rmw, or pause
# for the old loop of pause instructions), COUNTS=0 (no debug kernel and no
# count pass), BENCH_ARGS (more options for every run, e.g. "-S"),
# BENCH_KERNEL (the build directory of the kernel the sweep boots, for a
# back-to-back run of another build; the release kernel is still built),
# BENCH_OUT (where the report goes), and the guest's CPUS, MEM, NUMA,
# TIMEOUT.

PERF_OUT = $(BUILD)/perf
BENCH_OUT ?= $(BUILD)/bench
BENCH_KERNEL ?= $(BUILD)/out/kernel
# libelf for user space symbols, libtraceevent for tracepoints (perf lock,
# perf stat -e futex_spin:*, make profile); the rest off to keep it fast.
PERF_FEATURES := NO_LIBBPF=1 NO_JEVENTS=1 \
	NO_LIBPYTHON=1 NO_LIBPERL=1 NO_SLANG=1 NO_GTK2=1 NO_LIBUNWIND=1 \
	NO_LIBDW_DWARF_UNWIND=1 NO_DWARF=1 NO_LIBNUMA=1 NO_LIBCAP=1 \
	NO_LIBCRYPTO=1 NO_LIBZSTD=1 NO_LZMA=1 NO_ZLIB=1 NO_LIBBABELTRACE=1 \
	NO_LIBPFM4=1 NO_CAPSTONE=1 NO_LIBLLVM=1 NO_DEMANGLE=1 NO_LIBAUDIT=1 \
	NO_AUXTRACE=1 NO_LIBDEBUGINFOD=1 NO_SDT=1 NO_JVMTI=1 NO_SHELLCHECK=1 \
	NO_RUST=1

FULL ?= 0
LOAD_KIND ?= rmw
COUNTS ?= 1
BENCH_THREADS := 2 4 16 64
BENCH_WAIT_FACTORS := 0 9
REPEAT ?= 8
ifeq ($(FULL),1)
BENCH_RUNTIME := 5
BENCH_LOADS := 1 10 50 100
BENCH_DEFAULT_TIMEOUT := 18000
else
BENCH_RUNTIME := 1
BENCH_LOADS := 1 50
BENCH_DEFAULT_TIMEOUT := 3600
endif
# TIMEOUT as given by the user, else enough for the sweep.
BENCH_TIMEOUT = $(if $(filter file undefined,$(origin TIMEOUT)),$(BENCH_DEFAULT_TIMEOUT),$(TIMEOUT))
BENCH_GRID = THREADS="$(BENCH_THREADS)" LOADS="$(BENCH_LOADS)" \
	WAIT_FACTORS="$(BENCH_WAIT_FACTORS)" LOAD_KIND=$(LOAD_KIND) \
	BENCH_ARGS="$(BENCH_ARGS)"

.PHONY: perf bench pause-effect spinners

perf: tree
	@echo "  PERF    $(PERF_OUT)/perf"
	@mkdir -p $(PERF_OUT)
	@$(MAKE) -s -C $(LINUX)/tools/perf O=$(PERF_OUT) JOBS=$(JOBS) \
		$(PERF_FEATURES) >$(PERF_OUT)/build.log 2>&1 || \
		{ tail -n 30 $(PERF_OUT)/build.log; exit 1; }

# Boot $(1) as run $(2) with the guest command $(3); the guest writes its
# progress to runs/$(2)/output.txt: follow it here. Sets $$vm to the
# guest's status.
define bench_vm
run=$(BUILD)/runs/$(2); rm -f $$run/output.txt; \
	tail -n +1 -F $$run/output.txt 2>/dev/null & tailer=$$!; \
	scripts/vm-run.sh --kernel $(1) --name $(2) \
		--cpus $(CPUS) --mem $(MEM) --numa $(NUMA) --timeout $(BENCH_TIMEOUT) \
		-- $(3) || vm=$$?; \
	sleep 2; kill $$tailer
endef

# The release kernel's sweep, then the debug kernel's count pass; the
# report takes what there is and the status is the first failure.
bench:
	@$(MAKE) --no-print-directory DEBUG=0 kernel
	@$(MAKE) --no-print-directory perf
	@vm=0; $(call bench_vm,$(BENCH_KERNEL),bench,env REPEAT=$(REPEAT) \
		RUNTIME=$(BENCH_RUNTIME) $(BENCH_GRID) $(TOP)/scripts/bench-guest.sh $(PERF_OUT)/perf); \
	[ -s $(BUILD)/runs/bench/results.jsonl ] || \
		{ echo "bench: no results (guest status $$vm)"; exit 1; }; \
	echo $$vm >$(BUILD)/runs/bench/status
	@counts=; vm=0; rm -rf $(BUILD)/runs/bench-count; \
	if [ "$(COUNTS)" = 1 ]; then \
		$(MAKE) --no-print-directory DEBUG=1 VARIANT= kernel || vm=$$?; \
		[ $$vm -ne 0 ] || { $(call bench_vm,$(BUILD)/out/kernel-debug,bench-count, \
			env COUNT=1 RUNTIME=1 $(BENCH_GRID) $(TOP)/scripts/bench-guest.sh $(PERF_OUT)/perf); }; \
		[ $$vm -eq 0 ] || echo "bench: count pass failed (status $$vm)"; \
		counts=$(BUILD)/runs/bench-count; \
	fi; \
	$(BUILD)/venv/bin/python3 scripts/bench-report.py $(BUILD)/runs/bench $(BENCH_OUT) \
		$$counts && [ "$$(cat $(BUILD)/runs/bench/status)" -eq 0 ] && [ $$vm -eq 0 ]

spinners:
	@$(MAKE) --no-print-directory DEBUG=0 kernel
	@$(MAKE) --no-print-directory perf
	@vm=0; $(call bench_vm,$(BUILD)/out/kernel,spinners-$(CPUS), \
		$(TOP)/scripts/spinners-guest.sh $(PERF_OUT)/perf); exit $$vm

pause-effect:
	@$(MAKE) --no-print-directory DEBUG=0 kernel
	@$(MAKE) --no-print-directory perf
	@vm=0; $(call bench_vm,$(BUILD)/out/kernel,pause-effect, \
		$(TOP)/scripts/pause-effect.sh $(PERF_OUT)/perf); exit $$vm
