#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-deb, once the packages of the guest's release config are
# built: boot the kernel of the linux-image package, as dpkg-deb -x
# extracts it (nothing is installed on this machine), and run make
# bench-host's script in the guest on a short grid, standing in for a
# real machine. Passes when the guest runs the packaged release, has the
# operations, and bench-host writes its reports, headed by the machine.
#
#   check-deb.sh DEB_DIR PERF LIBDIR WIS_DIR
#
# Environment: CPUS, MEM (the guest's; 2, 2G). Ends with one line,
# "check-deb: PASS" or "check-deb: FAIL: why", and its status.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
debs=$1 perf=$2 lib=$3 wis=$4

fail() { echo "check-deb: FAIL: $*"; exit 1; }

deb=
for f in "$debs"/linux-image-*.deb; do
	[[ $f == *-dbg_* ]] || deb=$f
done
[ -f "$deb" ] || fail "no linux-image package in $debs"
root=$debs/root
rm -rf "$root"
dpkg-deb -x "$deb" "$root"
release=$(dpkg-deb -f "$deb" Package)
release=${release#linux-image-}
image=$root/boot/vmlinuz-$release
[ -f "$image" ] || fail "$deb has no /boot/vmlinuz-$release"
echo "check-deb: $(basename "$deb"): booting its /boot/vmlinuz-$release"

# A short grid: 2 and 8 threads per CPU, one load, 2 rounds; will-it-scale's
# pthread_mutex1 alone, 2 rounds.
run=$top/build/runs/check-deb
vm=0
"$top/scripts/vm-run.sh" --kernel "$image" --name check-deb \
	--cpus "${CPUS:-2}" --mem "${MEM:-2G}" --timeout 1800 -- \
	env THREADS_X="1 4" LOADS=1 WAIT_FACTORS=0 REPEAT=2 RUNTIME=1 \
	PEERS_ROUNDS=2 PEERS_TESTS=pthread_mutex1 PEERS_SECONDS=1 \
	MPLCONFIGDIR=/tmp "$top/scripts/bench-host.sh" "$perf" "$lib" "$wis" \
	"$run/bench-host" || vm=$?
out=$run/output.txt
[ -f "$out" ] && cat "$out"

guest=$(sed -n 's/^kernel=//p' "$run/bench-host/runs/bench/guest.txt" 2>/dev/null) || true
[ "$guest" = "$release" ] || fail "the guest ran Linux ${guest:-?}, not $release"
grep -q "has FUTEX_SPIN_LOCK and FUTEX_SPIN_UNLOCK" "$out" ||
	fail "the probe did not find the operations in the guest"
grep -q "^Machine: " "$run/bench-host/results.md" 2>/dev/null ||
	fail "no report with the machine's header in $run/bench-host/results.md"
grep -q "^Machine: " "$run/bench-host/peers/results.md" 2>/dev/null ||
	fail "no will-it-scale report in $run/bench-host/peers/results.md"
[ "$vm" -eq 0 ] || fail "the guest's bench-host exited with $vm (see $out)"
echo "check-deb: PASS: $(basename "$deb") boots as Linux $release with the" \
	"operations; bench-host's reports in $run/bench-host/"
