# SPDX-License-Identifier: GPL-2.0
#
# Build, boot and test Linux 7.3 with the spinning futex patches.
#
#   make check     debug kernel + futex kselftests in a virtme-ng guest
#   make bench     release kernel + perf bench futex mutex sweep
#   make bench-regress   upstream's futex benchmarks with and without the series
#   make bench-peers     will-it-scale under the preload
#   make profile [LOCK=spin]   the benchmark under perf: flamegraph, summary
#   make profile-compare       the same for ww and spin side by side
#   make deb             Debian packages of the kernel for a real machine
#   make check-deb       those packages' path on the guest's config, booted
#   make bench-host      the benchmark on the running kernel, no guest
#
# make check also checks the Promela model of the word protocol with Spin
# (tools/testing/selftests/futex/model/) on the host.
#
# Pieces: deps, tree, kernel [DEBUG=1], selftests. Guest knobs: CPUS, MEM,
# NUMA (number of nodes), ACCEL=tcg|kvm, TIMEOUT (seconds), VM_PIN (vCPU
# pinning, scripts/vm-run.sh).

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build
LINUX := $(BUILD)/linux
DEBUG ?= 0
ifeq ($(DEBUG),1)
KOUT := $(BUILD)/out/kernel-debug
FRAGMENTS := configs/vm.config configs/debug.config
else
KOUT := $(BUILD)/out/kernel
FRAGMENTS := configs/vm.config
endif
include scripts/variant.mk
JOBS ?= $(shell nproc)
CPUS ?= 2
# The second guest of make check; empty for none (a UP kernel)
WIDE_CPUS ?= 17
# What the first guest skips for too few CPUs and the second one runs
WIDE_SKIPS := global.priv_hash hash.resize_by_new_threads \
	global.alternating_owners_end_the_segment
MEM ?= 2G
NUMA ?= 1
TIMEOUT ?= 1800
# 0: a tree without the series (make kernel-base) lacks its options.
CHECK_CONFIG ?= 1

export CCACHE_BASEDIR := $(TOP)
export CCACHE_NOHASHDIR := true
KMAKE := $(MAKE) -s -C $(LINUX) O=$(KOUT) ARCH=$(KARCH) -j$(JOBS) \
	CC="ccache $(KCC)" HOSTCC="ccache gcc" \
	KBUILD_BUILD_TIMESTAMP="2026-11-22" KBUILD_BUILD_USER=futex-spin \
	KBUILD_BUILD_HOST=rig
HDR := $(BUILD)/out/headers
SELFTESTS := $(BUILD)/selftests/futex

include scripts/bench.mk
include scripts/stress.mk
include scripts/profile.mk
include scripts/apps.mk
include scripts/matrix.mk
include scripts/regress.mk
include scripts/deb.mk

.PHONY: all deps tree kernel selftests check clean distclean \
	series checkpatch am-check bisect-check

all: kernel

deps:
	@scripts/deps.sh

tree: deps
	@scripts/mktree.sh

$(KOUT)/.config: $(FRAGMENTS) | tree
	@mkdir -p $(KOUT)
	$(KMAKE) tinyconfig >/dev/null
	$(LINUX)/scripts/kconfig/merge_config.sh -m -O $(KOUT) \
		$(KOUT)/.config $(addprefix $(TOP)/,$(FRAGMENTS)) >$(KOUT)/merge.log
	$(KMAKE) olddefconfig >/dev/null
	@[ "$(CHECK_CONFIG)" = 0 ] || scripts/check-config.sh $(KOUT)/.config $(FRAGMENTS)

kernel: tree $(KOUT)/.config
	@echo "  KERNEL  $(KOUT)"
	@$(KMAKE) $(KIMAGE)

# futex_numa_mpol needs libnuma 2.0.18 or later: the one scripts/deps.sh
# unpacks under build/numa, found through pkg-config and an rpath.
ifeq ($(KARCH),x86_64)
KSFT_ENV := PKG_CONFIG_PATH=$(BUILD)/numa/lib/pkgconfig \
	CFLAGS="-I$(BUILD)/numa/include" \
	LDFLAGS="-L$(BUILD)/numa/lib -Wl,-rpath,$(BUILD)/numa/lib"
endif

selftests: tree
	@echo "  KSFT    $(SELFTESTS)"
	@$(MAKE) -s -C $(LINUX) O=$(HDR) headers >/dev/null
	@mkdir -p $(SELFTESTS)
	@$(KSFT_ENV) $(MAKE) -s -C $(LINUX)/tools/testing/selftests/futex \
		OUTPUT=$(SELFTESTS) KHDR_INCLUDES="-isystem $(HDR)/usr/include"
	@cp $(LINUX)/tools/testing/selftests/futex/run.sh $(SELFTESTS)/

# The guest's status is not trusted alone: the TAP totals decide, and a
# guest that hung or logged a splat fails the run whatever they say.
# A second guest with WIDE_CPUS runs the tests that need more than 16
# CPUs (scripts/guest-wide.sh); the first skips those parts, and every
# point that ran in the second must pass there. It has one NUMA node
# whatever NUMA is: what it tests is the hash's size, and 17 CPUs do not
# split over nodes.
check:
	@$(MAKE) --no-print-directory checkpatch am-check
	@$(MAKE) --no-print-directory DEBUG=1 kernel
	@$(MAKE) --no-print-directory selftests perf
	@mkdir -p $(BUILD)/runs/model
	@bash $(LINUX)/tools/testing/selftests/futex/model/run.sh $(BUILD)/runs/model/spin \
		>$(BUILD)/runs/model/output.txt 2>&1 || true
	@grep -E '^(ok|not ok) ' $(BUILD)/runs/model/output.txt | sed 's/^/model: /'
	@mkdir -p $(BUILD)/runs/harness
	@bash scripts/harness-check.sh $(BUILD)/runs/harness/out \
		>$(BUILD)/runs/harness/output.txt 2>&1 || true
	@grep -E '^(ok|not ok) ' $(BUILD)/runs/harness/output.txt | sed 's/^/harness: /'
	@vm=0; scripts/vm-run.sh --kernel $(DEBUG_KOUT) --name check \
		--cpus $(CPUS) --mem $(MEM) --numa $(NUMA) --timeout $(TIMEOUT) \
		-- $(TOP)/scripts/guest-check.sh $(SELFTESTS) $(BUILD)/perf/perf \
		|| vm=$$?; \
	runs="$(BUILD)/runs/check/output.txt $(BUILD)/runs/model/output.txt \
		$(BUILD)/runs/harness/output.txt"; \
	touch $(BUILD)/runs/check/output.txt; \
	if [ -n "$(WIDE_CPUS)" ]; then \
		scripts/vm-run.sh --kernel $(DEBUG_KOUT) --name check-wide \
		--cpus $(WIDE_CPUS) --mem $(MEM) --numa 1 \
		--timeout $(TIMEOUT) -- $(TOP)/scripts/guest-wide.sh $(SELFTESTS) \
		|| vm=$$?; \
		wide=$(BUILD)/runs/check-wide/output.txt; touch $$wide; \
		sum=$$(TAP_EXPECTED_SKIPS= scripts/tap-summary.sh $$wide) || vm=1; \
		echo "$$sum" | sed 's/^/check-wide: /'; \
		runs="$$runs $$wide"; \
	fi; \
	TAP_EXPECTED_SKIPS="$$TAP_EXPECTED_SKIPS $(WIDE_SKIPS)" \
	scripts/tap-summary.sh $$runs && [ $$vm -eq 0 ]

# The upstream series: exported from build/linux, checkpatch-clean, and
# applying with git am to the pristine base to the identical tree.
series: tree
	@scripts/series.sh export

checkpatch: series
	@scripts/series.sh checkpatch

am-check: series
	@scripts/series.sh am-check

bisect-check: tree
	@$(MAKE) --no-print-directory perf
	@PERF=$(BUILD)/perf/perf scripts/series.sh bisect

clean:
	rm -rf $(BUILD)/out $(BUILD)/selftests $(BUILD)/runs

distclean:
	rm -rf $(BUILD)
