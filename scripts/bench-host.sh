#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-host: the mutex sweep of make bench and will-it-scale of make
# bench-peers on the running kernel, no guest, and their reports headed
# by the machine. Refuses at once on a kernel without the operations.
#
#   bench-host.sh PERF LIBDIR WIS_DIR OUT_DIR
#
# The sweep is bench-guest.sh's, with THREADS_X (1 2 4 16) times N
# threads, N the CPUs the threads may run on. HOST_PIN places them:
#
#   none    the scheduler does (the default), on every online CPU;
#   spread  thread i on the i-th CPU of a list that takes the sockets in
#           turn, every core before its SMT siblings (perf bench -C);
#   packed  the same on the first socket's CPUs only, and on a machine of
#           several NUMA nodes with its memory on their nodes (numactl).
#
# will-it-scale's tests run as in make bench-peers with 1, N and 2N tasks
# (it pins them itself), when WIS_DIR has them. OUT_DIR gets runs/bench
# and runs/peers (the runs, with machine.txt: the machine's summary),
# the report and plots of make bench (results.md, results.csv,
# throughput.png, ...) and peers/ with that of make bench-peers.
#
# Environment: bench-guest.sh's REPEAT, RUNTIME, LOADS, WAIT_FACTORS,
# LOAD_KIND, TYPES, BENCH_ARGS; THREADS_X, HOST_PIN; PEERS_ROUNDS,
# PEERS_TESTS, PEERS_SECONDS (peers-guest.sh's ROUNDS, TESTS,
# SECONDS_PER_RUN). Exits non-zero if a run failed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
perf=$1 lib=$2 wis=$3 out=$4
pin=${HOST_PIN:-none}
py=$top/build/venv/bin/python3

"$top/scripts/futex-spin-probe.py" bench-host
case $pin in
none | spread | packed) ;;
*) echo "bench-host: HOST_PIN=$pin: none, spread or packed" >&2; exit 2 ;;
esac

# Online CPUs as "socket thread core cpu node" lines, in HOST_PIN's order:
# thread is the CPU's rank among its core's SMT siblings, core the core's
# rank in its socket.
cpus=$(lscpu -p=CPU,CORE,SOCKET,NODE | grep -v '^#' | awk -F, '
	{ core = $3 "," $2
	  if (!(core in rank)) rank[core] = n[$3]++
	  print $3, t[core]++, rank[core], $1, ($4 == "" ? 0 : $4) }' |
	sort -n -k2,2 -k3,3 -k1,1)
first=$(awk 'NR == 1 || $1 < s { s = $1 } END { print s }' <<<"$cpus")
[ "$pin" != packed ] || cpus=$(awk -v s="$first" '$1 == s' <<<"$cpus")
list=$(awk '{ print $4 }' <<<"$cpus" | paste -sd,)
ncpus=$(wc -l <<<"$cpus")
nodes=$(lscpu -p=NODE | grep -v '^#' | sort -u | wc -l)

run=()
args=${BENCH_ARGS:-}
[ "$pin" = none ] || args="$args -C $list"
if [ "$pin" = packed ] && [ "$nodes" -gt 1 ]; then
	if command -v numactl >/dev/null; then
		run=(numactl --membind="$(awk '{ print $5 }' <<<"$cpus" | sort -u | paste -sd,)")
	else
		echo "bench-host: no numactl (make deps): memory not bound to the socket's nodes"
	fi
fi

field() { lscpu | sed -n "s/^$1:[[:space:]]*//p" | head -n 1; }
sockets=$(lscpu -p=SOCKET | grep -v '^#' | sort -u | wc -l)
cores=$(lscpu -p=SOCKET,CORE | grep -v '^#' | sort -u | wc -l)
online=$(lscpu -p=CPU | grep -vc '^#')
smt=$(cat /sys/devices/system/cpu/smt/control 2>/dev/null || echo unknown)
governor=$(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null ||
	echo "none (no cpufreq)")
hypervisor=$(field "Hypervisor vendor")
summary="Machine: $(field "Model name"); $sockets socket(s), $cores cores,"
summary="$summary $online online CPUs ($((online / cores)) per core, SMT $smt),"
summary="$summary $nodes NUMA node(s)${hypervisor:+, under a $hypervisor hypervisor};"
summary="$summary Linux $(uname -r); governor $governor; threads pinned: $pin"
shown=$list
[ "$ncpus" -le 16 ] || shown="$(cut -d, -f1-8 <<<"$list"),... ($ncpus)"
[ "$pin" = none ] || summary="$summary (CPUs $shown${run:+, ${run[*]}})"
summary="$summary; $(date -u +%F)."

mkdir -p "$out/runs/bench"
echo "summary=$summary" >"$out/runs/bench/machine.txt"
echo "$summary"
threads=
for x in ${THREADS_X:-1 2 4 16}; do
	threads="$threads $((x * ncpus))"
done

status=0
RUN_DIR=$out/runs/bench THREADS=$threads BENCH_ARGS=$args \
	"${run[@]}" "$top/scripts/bench-guest.sh" "$perf" || status=1
"$py" "$top/scripts/bench-report.py" "$out/runs/bench" "$out" || status=1

tests=${PEERS_TESTS:-pthread_mutex1 pthread_mutex2 pthread_mutex3 pthread_mutex4
	pthread_mutex5 futex1 futex2 futex3 futex4}
for t in $tests; do
	[ -x "$wis/${t}_threads" ] && continue
	echo "bench-host: no $wis/${t}_threads (WILL_IT_SCALE): will-it-scale skipped"
	exit $status
done
mkdir -p "$out/runs/peers"
cp "$out/runs/bench/machine.txt" "$out/runs/peers/"
RUN_DIR=$out/runs/peers ROUNDS=${PEERS_ROUNDS:-8} TESTS=$tests \
	THREADS="$(printf '%s\n' 1 "$ncpus" $((2 * ncpus)) | sort -nu | paste -sd' ')" \
	SECONDS_PER_RUN=${PEERS_SECONDS:-2} "$top/scripts/peers-guest.sh" "$lib" "$wis" ||
	status=1
# Its status also says whether spin leads glibc: a result here, not a failure.
"$py" "$top/scripts/peers-report.py" "$out/runs/peers" "$out/peers" || true
exit $status
