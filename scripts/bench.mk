# SPDX-License-Identifier: GPL-2.0
#
# The mutex benchmark (perf bench futex mutex), included by the Makefile.
#
#   make perf     tools/perf of $(LINUX), minimal features, into $(BUILD)/perf
#   make bench    release kernel + perf, the sweep in a guest (lock types x
#                 threads {2,4,16,64} x load {1,10,50,100}), then
#                 $(BUILD)/bench/results.csv, results.md (printed) and
#                 throughput.png
#
# Knobs: REPEAT (runs per cell and type, 3), FULL=1 (5 s runs and 5 repeats
# instead of 1 s and 3), BENCH_ARGS (more options for every run, e.g.
# "-w 50 -S"), and the guest's CPUS, MEM, NUMA, TIMEOUT.

PERF_OUT = $(BUILD)/perf
BENCH_OUT = $(BUILD)/bench
# libelf for user space symbols, libtraceevent for tracepoints (perf lock,
# perf stat -e futex_spin:*, make profile); the rest off to keep it fast.
PERF_FEATURES := NO_LIBBPF=1 NO_JEVENTS=1 \
	NO_LIBPYTHON=1 NO_LIBPERL=1 NO_SLANG=1 NO_GTK2=1 NO_LIBUNWIND=1 \
	NO_LIBDW_DWARF_UNWIND=1 NO_DWARF=1 NO_LIBNUMA=1 NO_LIBCAP=1 \
	NO_LIBCRYPTO=1 NO_LIBZSTD=1 NO_LZMA=1 NO_ZLIB=1 NO_LIBBABELTRACE=1 \
	NO_LIBPFM4=1 NO_CAPSTONE=1 NO_LIBLLVM=1 NO_DEMANGLE=1 NO_LIBAUDIT=1 \
	NO_AUXTRACE=1 NO_LIBDEBUGINFOD=1 NO_SDT=1 NO_JVMTI=1 NO_SHELLCHECK=1

FULL ?= 0
ifeq ($(FULL),1)
BENCH_RUNTIME := 5
REPEAT ?= 5
BENCH_DEFAULT_TIMEOUT := 7200
else
BENCH_RUNTIME := 1
REPEAT ?= 3
BENCH_DEFAULT_TIMEOUT := 1800
endif
# TIMEOUT as given by the user, else enough for the sweep.
BENCH_TIMEOUT = $(if $(filter file undefined,$(origin TIMEOUT)),$(BENCH_DEFAULT_TIMEOUT),$(TIMEOUT))

.PHONY: perf bench

perf: tree
	@echo "  PERF    $(PERF_OUT)/perf"
	@mkdir -p $(PERF_OUT)
	@$(MAKE) -s -C $(LINUX)/tools/perf O=$(PERF_OUT) JOBS=$(JOBS) \
		$(PERF_FEATURES) >$(PERF_OUT)/build.log 2>&1 || \
		{ tail -n 30 $(PERF_OUT)/build.log; exit 1; }

# The guest writes its progress to runs/bench/output.txt: follow it here.
bench:
	@$(MAKE) --no-print-directory DEBUG=0 kernel
	@$(MAKE) --no-print-directory perf
	@run=$(BUILD)/runs/bench; vm=0; rm -f $$run/output.txt; \
	tail -n +1 -F $$run/output.txt 2>/dev/null & tailer=$$!; \
	scripts/vm-run.sh --kernel $(BUILD)/out/kernel --name bench \
		--cpus $(CPUS) --mem $(MEM) --numa $(NUMA) --timeout $(BENCH_TIMEOUT) \
		-- env RUNTIME=$(BENCH_RUNTIME) REPEAT=$(REPEAT) BENCH_ARGS="$(BENCH_ARGS)" \
		$(TOP)/scripts/bench-guest.sh $(PERF_OUT)/perf || vm=$$?; \
	sleep 2; kill $$tailer; \
	[ -s $$run/results.jsonl ] || { echo "bench: no results (guest status $$vm)"; exit 1; }; \
	$(BUILD)/venv/bin/python3 scripts/bench-report.py $$run $(BENCH_OUT) && [ $$vm -eq 0 ]
