# SPDX-License-Identifier: GPL-2.0
#
# Build, boot and test Linux 6.12 with the spinning futex patches.
#
#   make check     debug kernel + futex kselftests in a virtme-ng guest
#   make bench     release kernel + perf bench futex mutex sweep
#   make profile [LOCK=spin]   the benchmark under perf: flamegraph, summary
#   make profile-compare       the same for ww and spin side by side
#
# Pieces: deps, tree, kernel [DEBUG=1], selftests. Guest knobs: CPUS, MEM,
# NUMA (number of nodes), ACCEL=tcg|kvm, TIMEOUT (seconds).

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
MEM ?= 2G
NUMA ?= 1
TIMEOUT ?= 1800

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
	@scripts/check-config.sh $(KOUT)/.config $(FRAGMENTS)

kernel: tree $(KOUT)/.config
	@echo "  KERNEL  $(KOUT)"
	@$(KMAKE) $(KIMAGE)

selftests: tree
	@echo "  KSFT    $(SELFTESTS)"
	@$(MAKE) -s -C $(LINUX) O=$(HDR) headers >/dev/null
	@mkdir -p $(SELFTESTS)
	@$(MAKE) -s -C $(LINUX)/tools/testing/selftests/futex \
		OUTPUT=$(SELFTESTS) KHDR_INCLUDES="-isystem $(HDR)/usr/include"
	@cp $(LINUX)/tools/testing/selftests/futex/run.sh $(SELFTESTS)/

# The guest's status is not trusted alone: the TAP totals decide, and a
# guest that hung or logged a splat fails the run whatever they say.
check:
	@$(MAKE) --no-print-directory checkpatch am-check
	@$(MAKE) --no-print-directory DEBUG=1 kernel
	@$(MAKE) --no-print-directory selftests perf
	@vm=0; scripts/vm-run.sh --kernel $(DEBUG_KOUT) --name check \
		--cpus $(CPUS) --mem $(MEM) --numa $(NUMA) --timeout $(TIMEOUT) \
		-- $(TOP)/scripts/guest-check.sh $(SELFTESTS) $(BUILD)/perf/perf \
		|| vm=$$?; \
	touch $(BUILD)/runs/check/output.txt; \
	scripts/tap-summary.sh $(BUILD)/runs/check/output.txt && [ $$vm -eq 0 ]

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
