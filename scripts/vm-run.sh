#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under virtme-ng, run one command in the guest and bring its
# output, exit status and kernel log back through a shared directory (vng's
# own exit status is not the guest command's).
#
#   vm-run.sh --kernel OUTDIR|IMAGE --name NAME [--cpus N] [--mem SIZE]
#             [--numa NODES] [--timeout SEC] [--icount] -- COMMAND...
#
# --kernel is a kernel build directory or a bzImage (make check-deb boots
# the one of its package). The guest command runs with $RUN_DIR set to
# build/runs/NAME, writable from the guest; it leaves its results there.
# Prints where the full log is and exits with the guest command's status;
# 124 when the guest did not finish, 125 when the kernel log has a splat.
#
# --icount runs the guest under TCG with QEMU's instruction counting: one
# vCPU at a time, and the guest's clocks advance 1 ns per instruction
# executed (and jump over idle time). A benchmark's time is then its
# instruction count, the same on any host and free of the host's load;
# what it cannot show is what TCG does not model either (caches, the
# cost of contention between CPUs).
#
# VM_PIN: auto (the default) pins each vCPU thread of a KVM guest to a
# host CPU of its own when the host has that many free: CPUs this script
# may run on that no other guest's vCPU thread is pinned to alone. 1
# pins under TCG too (its vCPU threads, with thread=multi), 0 never. The
# pinning goes to vm.txt (pin=vCPU:CPU ...).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export PATH=$top/build/venv/bin:$PATH
vng=vng
cpus=2 mem=2G numa=1 timeout=1800 kout='' name=run icount=0

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kout=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--numa) numa=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--icount) icount=1; shift ;;
	--) shift; break ;;
	*) echo "vm-run: unknown option $1" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "vm-run: no guest command" >&2; exit 2; }

# A run that fails before the guest boots leaves no older results behind.
run=$top/build/runs/$name
rm -rf "$run"
mkdir -p "$run"

image=$kout
[ -f "$image" ] || image=$kout/arch/x86/boot/bzImage
[ -f "$image" ] || { echo "vm-run: no kernel at $image" >&2; exit 2; }

# Pick the accelerator: KVM only if a guest really boots with it. Here
# /dev/kvm exists but a KVM guest hangs, so probe with a short timeout and
# remember the answer for this host boot.
accel_cache=$top/build/accel
boot_id=$(cat /proc/sys/kernel/random/boot_id)
accel=${ACCEL:-}
# Counting instructions is TCG's: nothing to probe.
[ "$icount" = 0 ] || accel=tcg-icount
if [ -z "$accel" ] && [ -f "$accel_cache" ] && [ "$(sed -n 1p "$accel_cache")" = "$boot_id" ]; then
	accel=$(sed -n 2p "$accel_cache")
fi
if [ -z "$accel" ]; then
	accel=tcg
	if [ -w /dev/kvm ]; then
		probe=$(mktemp -d)
		timeout -k 2 20 "$vng" --run "$image" --rwdir "$probe" \
			--exec "echo ok > $probe/ok" >/dev/null 2>&1 </dev/null || true
		[ -f "$probe/ok" ] && accel=kvm
		rm -rf "$probe"
	fi
	printf '%s\n%s\n' "$boot_id" "$accel" >"$accel_cache"
	echo "vm-run: accelerator $accel (probed)"
fi
# TCG's CPU is QEMU's "max", less LA57: under 5-level paging a 7.x KASAN
# kernel reports a false wild-memory-access in about one boot of twenty
# (docs/testing.md). A KVM guest has the host's CPU and is told no5lvl.
tcg_cpu="-cpu max,la57=off"
append="panic_on_warn=0 softlockup_panic=0"
case $accel in
kvm) vng_accel=(); append="$append no5lvl" ;;
tcg-icount) vng_accel=(--disable-kvm "--qemu-opts=-accel tcg,thread=single -icount shift=0,sleep=off $tcg_cpu") ;;
*) vng_accel=(--disable-kvm "--qemu-opts=-accel tcg,thread=multi $tcg_cpu") ;;
esac

# The CPUs of a list such as 0-3,8, one a line.
cpu_list() {
	local part parts

	IFS=, read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		seq "${part%-*}" "${part#*-}"
	done
}

# The host CPUs this script may run on that no vCPU thread of another
# guest is pinned to alone. QEMU names those threads "CPU n/KVM" or "CPU
# n/TCG" (with debug-threads=on, which every guest here has).
free_cpus() {
	local f comm mask taken=" "

	for f in /proc/[0-9]*/task/[0-9]*/comm; do
		read -r comm 2>/dev/null <"$f" || continue
		[[ $comm == "CPU "*/* ]] || continue
		mask=$(sed -n 's/^Cpus_allowed_list:\s*//p' "${f%comm}status" 2>/dev/null) || continue
		[[ $mask =~ ^[0-9]+$ ]] && taken="$taken$mask "
	done
	cpu_list "$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/self/status)" |
		while read -r c; do [[ $taken == *" $c "* ]] || echo "$c"; done
}

# Pin vCPU n of the QEMU whose pid file is $1 to the n-th free host CPU,
# once it has made its $cpus vCPU threads; run beside vng, it gives up
# after 60 s.
pin_vcpus() {
	local pidfile=$1 pid='' t comm n try free tids=() pins=()

	mapfile -t free < <(free_cpus)
	if [ "${#free[@]}" -lt "$cpus" ]; then
		echo "vm-run: $cpus vCPUs and ${#free[@]} free host CPUs: not pinned"
		echo "pin=none" >>"$run/vm.txt"
		return
	fi
	for ((try = 0; try < 600 && ${#tids[@]} < cpus; try++)); do
		sleep 0.1
		[ -n "$pid" ] || read -r pid 2>/dev/null <"$pidfile" || continue
		tids=()
		for t in /proc/"$pid"/task/*; do
			read -r comm 2>/dev/null <"$t/comm" || continue
			[[ $comm =~ ^CPU\ ([0-9]+)/ ]] && tids[BASH_REMATCH[1]]=${t##*/}
		done
	done
	if [ "${#tids[@]}" -lt "$cpus" ]; then
		echo "vm-run: found ${#tids[@]} of $cpus vCPU threads: not pinned"
		echo "pin=none" >>"$run/vm.txt"
		return
	fi
	for n in "${!tids[@]}"; do
		taskset -p -c "${free[n]}" "${tids[n]}" >/dev/null
		pins+=("$n:${free[n]}")
	done
	echo "vm-run: vCPU:host CPU ${pins[*]}"
	echo "pin=${pins[*]}" >>"$run/vm.txt"
}

# NUMA=N is N sockets, one node each: sockets, cores (and so the last
# level cache QEMU reports per socket) and nodes line up. The default
# topology is one socket, whose shared cache split over two nodes makes
# the guest kernel warn in topology_sane().
smp=$cpus
numa_args=()
if [ "$numa" -gt 1 ]; then
	memmb=$(numfmt --from=iec "$mem"); memmb=$((memmb / 1048576))
	per=$((cpus / numa))
	{ [ "$per" -ge 1 ] && [ $((per * numa)) -eq "$cpus" ]; } ||
		{ echo "vm-run: CPUS=$cpus does not split over NUMA=$numa nodes" >&2; exit 2; }
	for ((n = 0; n < numa; n++)); do
		numa_args+=(--numa "$((memmb / numa))M,cpus=$((n * per))-$((n * per + per - 1))")
	done
	mem=$(( (memmb / numa) * numa ))M
	smp=$cpus,sockets=$numa,cores=$per,threads=1
fi

log=$run/console.log
quoted=$(printf '%q ' "$@")
# How the guest ran, for reports that quote its numbers.
{
	echo "accel=$accel"
	echo "vcpus=$cpus"
	echo "mem=$mem"
	echo "numa=$numa"
	echo "host=$(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
	echo "date=$(date -u +%Y-%m-%d)"
	echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$run/vm.txt"

echo "vm-run: booting $(basename "$kout") ($accel, $cpus vCPUs, $mem, $numa node(s)); log: $log"
pin=${VM_PIN:-auto}
[ "$pin" != auto ] || { [ "$accel" = kvm ] && pin=1 || pin=0; }
[ "$accel" != tcg-icount ] || pin=0
pinner=
if [ "$pin" = 1 ]; then
	pin_vcpus "$run/qemu.pid" &
	pinner=$!
fi
set +e
# The command's output reaches the shared directory through a pipe, so
# that a test thread's log line does not wait for QEMU on the host while
# the threads it races with run on: upstream's futex_requeue_pi counts a
# waiter as woken only after its log line, and gives up after 1000 quick
# retries.
timeout -k 10 "$timeout" "$vng" --run "$image" "${vng_accel[@]}" --verbose \
	"--qemu-opts=-name vm-run-$name,debug-threads=on -pidfile $run/qemu.pid" \
	--cpus "$smp" --memory "$mem" "${numa_args[@]}" --rwdir "$run" \
	--append "$append" \
	--exec "{ lscpu; grep . /sys/devices/system/node/node*/distance; } > $run/topology.txt 2>&1; { RUN_DIR=$run $quoted 2>&1; echo \$? > $run/rc; } | cat > $run/output.txt; dmesg > $run/dmesg.txt" \
	</dev/null >"$log" 2>&1
vng_rc=$?
[ -z "$pinner" ] || { kill "$pinner" 2>/dev/null; wait "$pinner"; }
set -e
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$run/vm.txt"

if [ ! -f "$run/rc" ]; then
	echo "vm-run: the guest did not finish (vng status $vng_rc, timeout ${timeout}s); see $log" >&2
	tail -n 40 "$log" >&2
	exit 124
fi
rc=$(cat "$run/rc")

# A splat anywhere in the kernel log fails the run even if every test passed.
splat='WARNING:|BUG:|BUG: KCSAN:|BUG |KASAN|possible .*locking|circular locking|unreferenced object|general protection|Oops|Kernel panic|INFO: task .* blocked|soft lockup|hard LOCKUP|UBSAN'
touch "$run/kmemleak.txt"
if grep -E -n "$splat" "$run/dmesg.txt" "$log" "$run/kmemleak.txt" >"$run/splats.txt"; then
	echo "vm-run: kernel log has a splat (full log: $run/dmesg.txt):" >&2
	grep -E -A 25 "$splat" "$run/dmesg.txt" | head -n 80 >&2 || head -n 40 "$run/splats.txt" >&2
	[ "$rc" -ne 0 ] || rc=125
fi
exit "$rc"
