#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-arm64: the futex selftests that build for arm64, statically
# linked, in an initramfs whose /init (scripts/arm64-init.c) runs them,
# on the cross-built kernel in qemu-system-aarch64 (TCG, virt machine).
# Output in build/runs/arm64/console.log; fails as tap-summary.sh does
# for x86 (a failed, skipped or missing test point), on a test that did
# not exit 0, or on a splat.
#
#   arm64-check.sh TEST...
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
image=$top/build/out/kernel-arm64/arch/arm64/boot/Image
work=$top/build/arm64
run=$top/build/runs/arm64
cc=aarch64-linux-gnu-gcc

rm -rf "$work/root" "$run"
mkdir -p "$work/root"/{proc,sys,tmp,dev,t} "$run"
make -s -C "$top/build/linux" O="$work/hdr" ARCH=arm64 headers >/dev/null
# -k: a test that does not build for arm64 is reported, not fatal.
make -k -s -C "$top/build/linux/tools/testing/selftests/futex" \
	OUTPUT="$work/ksft" CC=$cc ARCH=arm64 LDFLAGS=-static \
	KHDR_INCLUDES="-isystem $work/hdr/usr/include" >"$run/ksft-build.log" 2>&1 ||
	echo "arm64: some selftests do not build, see $run/ksft-build.log" >&2
$cc -static -O2 -Wall -o "$work/root/init" "$top/scripts/arm64-init.c"
for t in "$@"; do
	cp "$work/ksft/functional/$t" "$work/root/t/"
done
mknod "$work/root/dev/console" c 5 1
(cd "$work/root" && find . | cpio -o -H newc --quiet) >"$work/initramfs.cpio"

timeout -k 5 1800 qemu-system-aarch64 -M virt -cpu max -smp 2 -m 1G \
	-accel tcg,thread=multi -nographic -no-reboot -kernel "$image" \
	-initrd "$work/initramfs.cpio" \
	-append "console=ttyAMA0 panic=-1 -- $*" </dev/null >"$run/console.log" 2>&1 || true

splat='WARNING:|BUG:|BUG |Oops|Kernel panic|soft lockup|hard LOCKUP|INFO: task .* blocked'
# The same TAP verdict as x86: plans checked, a skip or a missing point fails.
summary=0
"$top/scripts/tap-summary.sh" "$run/console.log" | sed 's/^/arm64: /' || summary=1
grep -E '^# arm64: [0-9]+ test programs failed' "$run/console.log" ||
	{ echo "arm64: the guest did not finish" >&2; exit 1; }
grep -E "$splat" "$run/console.log" && { echo "arm64: kernel log has a splat" >&2; exit 1; }
grep -q '^# arm64: 0 test programs failed' "$run/console.log" && [ $summary -eq 0 ]
