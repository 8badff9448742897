# SPDX-License-Identifier: GPL-2.0
#
# The series on real machines, included by the Makefile.
#
#   make deb         Debian packages of the kernel with the series
#                    (linux-image, linux-headers), built by the kernel's
#                    bindeb-pkg into $(BUILD)/deb/, release 7.3.y-futex-spin.
#                    Config: this machine's /boot/config-$(uname -r), else
#                    Debian's amd64 config, trimmed by localmodconfig to the
#                    modules loaded now (scripts/deb-config.sh). DEB_CONFIG=
#                    full keeps every module, DEB_BASE=FILE picks the base
#                    config, DEB_DEBUG_INFO=1 keeps debug info.

DEB_OUT := $(BUILD)/deb

.PHONY: deb deb-package

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
