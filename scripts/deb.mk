# SPDX-License-Identifier: GPL-2.0
#
# The series on real machines, included by the Makefile
# (docs/bare-metal.md).
#
#   make deb         Debian packages of the kernel with the series
#                    (linux-image, linux-headers), built by the kernel's
#                    bindeb-pkg into $(BUILD)/deb/, release 7.3.y-futex-spin.
#                    Config: this machine's /boot/config-$(uname -r), else
#                    Debian's amd64 config, trimmed by localmodconfig to the
#                    modules loaded now (scripts/deb-config.sh). DEB_CONFIG=
#                    full keeps every module, DEB_BASE=FILE picks the base
#                    config, DEB_DEBUG_INFO=1 keeps debug info.
#   make check-deb   the same packaging of the guest's release config
#                    (configs/vm.config + configs/deb.config) into
#                    $(BUILD)/deb/vm/; the linux-image extracted with
#                    dpkg-deb -x, its kernel booted in a guest that checks
#                    for the operations and runs make bench-host's script
#                    on a short grid (scripts/check-deb.sh). Not part of
#                    make check.
#   make bench-host  perf bench futex mutex (the grid of make bench, thread
#                    counts HOST_THREADS_X, 1 2 4 16, times the CPUs) and
#                    will-it-scale (as make bench-peers) on the running
#                    kernel, no guest; refuses at once on a kernel without
#                    the operations. HOST_PIN=none|spread|packed
#                    (scripts/bench-host.sh); REPEAT, FULL, LOAD_KIND,
#                    BENCH_ARGS and PEERS_ROUNDS as for make bench and make
#                    bench-peers. Results in $(BUILD)/bench-host/.

DEB_OUT := $(BUILD)/deb
DEB_VM := $(DEB_OUT)/vm
HOST_OUT ?= $(BUILD)/bench-host
HOST_PIN ?= none
HOST_THREADS_X ?= 1 2 4 16

.PHONY: deb deb-package check-deb bench-host

deb: tree
	@scripts/deb-config.sh $(DEB_OUT)/kernel
	@$(MAKE) --no-print-directory KOUT=$(DEB_OUT)/kernel deb-package

# The packages of the kernel configured in KOUT, into KOUT's parent: those
# of this build alone, and no linux-libc-dev, which would replace the
# machine's user space headers and is not needed. LOCALVERSION given, even
# empty, keeps setlocalversion from adding "+" for the untagged tree.
deb-package:
	@rm -f $(KOUT)/../*.deb $(KOUT)/../*.buildinfo $(KOUT)/../*.changes
	@echo "  DEB     $(abspath $(KOUT)/..) (log: $(KOUT)/bindeb-pkg.log)"
	@$(KMAKE) LOCALVERSION= bindeb-pkg >$(KOUT)/bindeb-pkg.log 2>&1 || \
		{ tail -n 30 $(KOUT)/bindeb-pkg.log; exit 1; }
	@rm -f $(KOUT)/../linux-libc-dev_*.deb
	@ls -1 $(abspath $(KOUT)/..)/*.deb

check-deb:
	@$(MAKE) --no-print-directory KOUT=$(DEB_VM)/kernel \
		FRAGMENTS="configs/vm.config configs/deb.config" $(DEB_VM)/kernel/.config
	@$(MAKE) --no-print-directory KOUT=$(DEB_VM)/kernel deb-package
	@$(MAKE) --no-print-directory perf futex-spin-lib $(WIS_OUT)/pthread_mutex1_threads
	@CPUS=$(CPUS) MEM=$(MEM) scripts/check-deb.sh $(DEB_VM) $(PERF_OUT)/perf \
		$(FSLIB_OUT) $(WIS_OUT)

# The probe first: on a kernel without the operations nothing is built.
bench-host:
	@scripts/futex-spin-probe.py bench-host
	@$(MAKE) --no-print-directory perf futex-spin-lib $(PEERS_TESTS:%=$(WIS_OUT)/%_threads)
	@env REPEAT=$(REPEAT) RUNTIME=$(BENCH_RUNTIME) LOADS="$(BENCH_LOADS)" \
		WAIT_FACTORS="$(BENCH_WAIT_FACTORS)" LOAD_KIND=$(LOAD_KIND) \
		BENCH_ARGS="$(BENCH_ARGS)" THREADS_X="$(HOST_THREADS_X)" \
		HOST_PIN=$(HOST_PIN) PEERS_ROUNDS=$(PEERS_ROUNDS) \
		scripts/bench-host.sh $(PERF_OUT)/perf $(FSLIB_OUT) $(WIS_OUT) $(HOST_OUT)
