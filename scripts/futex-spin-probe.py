#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Does the running kernel have FUTEX_SPIN_LOCK and FUTEX_SPIN_UNLOCK?

    futex-spin-probe.py [NAME]

FUTEX_SPIN_UNLOCK on a private word that holds 0, as futex_spin_probe()
of tools/lib/futex-spin does: a kernel with the operations refuses it
with EPERM (the caller does not own the word), one without them with
ENOSYS. Exits 0 on EPERM; otherwise says, under NAME, which package to
install (the linux-image of make deb, in build/deb/) and exits 1. It
builds nothing, so that a target can refuse before it does.
"""
import ctypes
import errno
import os
import platform
import sys
from pathlib import Path

SYS_FUTEX = {"x86_64": 202, "aarch64": 98}
FUTEX_SPIN_UNLOCK = 15
FUTEX_PRIVATE_FLAG = 128


def probe():
    """The errno of FUTEX_SPIN_UNLOCK on a free word, 0 if it succeeded."""
    libc = ctypes.CDLL(None, use_errno=True)
    word = ctypes.c_uint32(0)
    ret = libc.syscall(SYS_FUTEX[platform.machine()], ctypes.byref(word),
                       FUTEX_SPIN_UNLOCK | FUTEX_PRIVATE_FLAG, 0, None, None, 0)
    return 0 if ret == 0 else ctypes.get_errno()


def main(name="futex-spin-probe"):
    release = os.uname().release
    err = probe()
    if err == errno.EPERM:
        print(f"{name}: Linux {release} has FUTEX_SPIN_LOCK and FUTEX_SPIN_UNLOCK")
        return 0
    got = "success" if err == 0 else errno.errorcode.get(err, str(err))
    top = Path(__file__).resolve().parent.parent
    debs = sorted(top.glob("build/deb/linux-image-*.deb"))
    how = (f"sudo apt install ./{debs[-1].relative_to(top)}" if debs else
           "make deb && sudo apt install ./build/deb/linux-image-*.deb")
    print(f"{name}: Linux {release} lacks FUTEX_SPIN_LOCK and FUTEX_SPIN_UNLOCK "
          f"(FUTEX_SPIN_UNLOCK on a free word: {got}, not EPERM).\n"
          f"{name}: install the linux-image package of make deb and boot it: "
          f"{how} (docs/bare-metal.md)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
