// SPDX-License-Identifier: GPL-2.0
/*
 * futex-mutex: throughput of mutexes built on the futex syscall, and of the
 * optimistically spinning FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK in particular.
 *
 * Threads hammer one (or --futexes) lock(s). Each iteration takes the lock,
 * runs a critical section of --load units of work on data the lock
 * protects, releases the lock and runs --wait units of the same kind of
 * work outside of it. The unit (--load-kind):
 *
 *   rmw             a read-modify-write of one word on each of four cache
 *                   lines (the lock's data inside the lock, the thread's
 *                   own outside of it), each mixed by 16 rounds of a
 *                   multiply-add and a xor-shift: some tens of ns, of the
 *                   order of a pause on recent x86 CPUs
 *   pause           one pause instruction (yield on arm64)
 *
 * rmw is the default: a handoff moves real data between CPUs, and an
 * emulator runs it as a CPU does. Under QEMU's TCG a vCPU executing pause
 * slows pause on the other vCPUs to about half, which charges every lock
 * whose waiters spin for a slower critical section.
 *
 * Lock types (--mutex):
 *
 *   ww              three-state mutex on FUTEX_WAIT / FUTEX_WAKE
 *   ww-global       ww with the process's futexes in the global hash, as
 *                   before Linux 6.16 (-b 0)
 *   pi              FUTEX_LOCK_PI / FUTEX_UNLOCK_PI, owner TID in the word
 *   spin            FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK, owner TID in the word;
 *                   a contended lock first looks at the word --spin-tries
 *                   times in user space, as the design document advises
 *   glibc           pthread_mutex_t of type PTHREAD_MUTEX_NORMAL
 *   glibc-adaptive  pthread_mutex_t of type PTHREAD_MUTEX_ADAPTIVE_NP
 *   tas             user-space test-and-test-and-set spinlock with back-off
 *   slice           ww that first spins in user space, whose holder asks the
 *                   scheduler for an rseq time-slice extension (Linux 7.0):
 *                   upstream's own answer to a preempted lock holder
 *   spin-slice      spin whose holder asks for the extension as slice does
 *   none            no lock at all: a self-test that must fail the check, and
 *                   the same work's speed where the CPUs, not a lock, bound it
 *
 * slice and spin-slice register an rseq area of the kernel's feature size
 * for each thread, which glibc's own registration prevents: run them with
 * GLIBC_TUNABLES=glibc.pthread.rseq=0. A kernel without
 * CONFIG_RSEQ_SLICE_EXTENSION lacks them (exit status 2), rather than
 * running them as plain user-space spinning.
 *
 * The futex based types count their own lock and unlock syscalls. The
 * critical section updates a counter without atomic instructions; at exit
 * it must equal the number of acquisitions, otherwise mutual exclusion broke
 * and the benchmark fails. Exit status: 0 ok, 1 exclusion broken or error,
 * 2 lock type that cannot run here (the kernel lacks it, or glibc holds rseq).
 *
 * One operation in --time-every (16), chosen at random, is timed: it reads
 * CLOCK_MONOTONIC once it owns the lock and before it releases it, and
 * before the lock call if its first attempt failed (else it waited 0 ns).
 * That gives the acquisition latency (into a log-linear histogram per
 * thread) and the hold time; the release time, left beside
 * the lock, makes the next acquirer read the clock too, for the gap from a
 * release to the next acquisition. The reads inside the critical section
 * lengthen it, about three in --time-every operations: the cost of a pair
 * of reads is measured before the run and reported. Not every operation
 * is timed because a read may cost more than a short critical section:
 * under QEMU's TCG a pair took 110 to 250 ns, and up to 700 ns on a busy
 * host, where it also rose while the other vCPU executed pause.
 */

/* For the CLR_() macros */
#include <string.h>
#include <pthread.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <math.h>
#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <sys/time.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/auxv.h>
#include <sys/rseq.h>
#include <perf/cpumap.h>

#include "../util/mutex.h"
#include "../util/stat.h"
#include <subcmd/parse-options.h>
#include "bench.h"
#include "futex.h"

#include <err.h>

#ifndef FUTEX_SPIN_LOCK
#define FUTEX_SPIN_LOCK		14
#endif
#ifndef FUTEX_SPIN_UNLOCK
#define FUTEX_SPIN_UNLOCK	15
#endif

/* The rseq time-slice extension of Linux 7.0, for older headers. */
#ifndef PR_RSEQ_SLICE_EXTENSION
#define PR_RSEQ_SLICE_EXTENSION		79
#define PR_RSEQ_SLICE_EXTENSION_SET	2
#define PR_RSEQ_SLICE_EXT_ENABLE	0x01
#endif
#ifndef __NR_rseq_slice_yield
#define __NR_rseq_slice_yield		471
#endif
/* tools/ has a reduced copy of x86's syscall numbers. */
#ifndef __NR_rseq
#ifdef __x86_64__
#define __NR_rseq			334
#else
#define __NR_rseq			293	/* asm-generic */
#endif
#endif
#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE		27
#define AT_RSEQ_ALIGN			28
#endif

/*
 * slice's spinning: reads of a word held without sleepers before it
 * sleeps, the bound of Rust's std Mutex and glibc's default
 * glibc.pthread.mutex_spin_count.
 */
#define SLICE_SPIN_READS	100

/* Keep locks and per-thread counters on lines of their own. */
#define MUTEX_ALIGN		128
#define TAS_BACKOFF_MAX		1024
#define EXIT_UNSUPPORTED	2

/* The rmw unit: one word on each of RMW_LINES cache lines, RMW_ROUNDS mixes. */
#define CACHE_LINE		64
#define LINE_LONGS		(CACHE_LINE / sizeof(unsigned long))
#define RMW_LINES		4
#define RMW_ROUNDS		16

/*
 * Acquisition latency histogram, in ns: exact below HIST_SUB, then
 * HIST_SUB buckets per power of two (at most 1/HIST_SUB relative error).
 */
#define HIST_SUB_BITS		4
#define HIST_SUB		BIT(HIST_SUB_BITS)
#define HIST_BUCKETS		((64 - HIST_SUB_BITS + 1) * HIST_SUB)

/* How long the cost of the clock reads is measured before the run. */
#define CLOCK_PROBE_NS		10000000ULL
#define CLOCK_PROBE_MIN		1000

#define NSEC_PER_SEC		1000000000ULL

enum load_kind { LOAD_RMW, LOAD_PAUSE };

/*
 * struct rseq of include/uapi/linux/rseq.h up to slice_ctrl (Linux 7.0),
 * which the C library's headers may predate.
 */
struct bench_rseq {
	u32 cpu_id_start;
	u32 cpu_id;
	u64 rseq_cs;
	u32 flags;
	u32 node_id;
	u32 mm_cid;
	struct {
		u8 request;
		u8 granted;
		u16 reserved;
	} slice_ctrl;
};

struct bench_lock {
	union {
		u32 futex;		/* ww, pi, spin, tas */
		pthread_mutex_t pmutex;	/* glibc, glibc-adaptive */
	};
	/*
	 * Protected by the lock and updated without atomics; on x86-64 all
	 * of it shares the lock word's cache line.
	 */
	unsigned long count;
	unsigned int owner;
	/* The last release: worker id + 1 (0: none yet), its time in ns. */
	unsigned int last_owner;
	u64 last_release;
	/* The rmw critical section's data. */
	unsigned long data[RMW_LINES][LINE_LONGS] __aligned(CACHE_LINE);
} __aligned(MUTEX_ALIGN);

struct worker {
	unsigned int id;
	pid_t tid;
	struct bench_lock *lock;
	pthread_t thread;
	unsigned long ops;
	unsigned long lock_syscalls;
	unsigned long unlock_syscalls;
	/* Contended acquisitions taken by reading the word (spin, slice). */
	unsigned long user_spun;
	/* slice, spin-slice: the thread's rseq area; extensions granted */
	struct bench_rseq *rseq;
	unsigned long slice_yields;
	unsigned long overlaps;
	long nvcsw, nivcsw;
	/* Acquisitions after a release, and those after one's own release. */
	unsigned long handovers, reacquired;
	/* The same, among timed operations only */
	unsigned long timed_handovers, timed_reacquired;
	/* Timed acquisitions, and acquisitions after a timed release. */
	unsigned long timed, gaps;
	/* In ns: hold times, gaps after the last release, latency max. */
	u64 hold_sum, gap_sum, lat_max;
	u32 rng;
	/* The rmw work outside of the lock, on the thread's own lines. */
	unsigned long data[RMW_LINES][LINE_LONGS] __aligned(CACHE_LINE);
	u64 lat_hist[HIST_BUCKETS];
} __aligned(MUTEX_ALIGN);

struct mutex_type {
	const char *name;
	/* One attempt; if it failed, the rest of the lock */
	bool (*trylock)(struct bench_lock *l, struct worker *w);
	void (*lock_slow)(struct bench_lock *l, struct worker *w);
	void (*unlock)(struct bench_lock *l, struct worker *w);
	int probe_op;		/* unlock op probed on a free word, or -1 */
	int pthread_type;	/* for the glibc types, or -1 */
	bool counts_syscalls;
	bool global_hash;	/* the process's futexes in the global hash */
	bool slice;		/* the holder asks for a time-slice extension */
};

static bool done;
static bool started;
static int futex_flag;
static bool pin, json;
static unsigned int load = 10, wait_units, time_every = 16;
static unsigned int spin_tries = 8;
static const char *mutex_name = "ww";
static const char *load_kind_name = "rmw";
static enum load_kind load_kind;
static const char *cpu_list;
static const struct mutex_type *mtype;

static struct mutex thread_lock;
static unsigned int threads_starting;
static struct cond thread_parent, thread_worker;
static struct bench_lock *locks;
static size_t locks_size;
static struct worker *worker;

static struct bench_futex_parameters params = {
	.nbuckets = -1,
	.nfutexes = 1,
	.runtime  = 10,
};

static const struct option options[] = {
	OPT_STRING('m', "mutex", &mutex_name, "type",
		   "Lock type (default ww; an unknown one lists them)"),
	OPT_UINTEGER('t', "threads", &params.nthreads, "Specify amount of threads"),
	OPT_UINTEGER('r', "runtime", &params.runtime, "Specify runtime (in seconds)"),
	OPT_UINTEGER('f', "futexes", &params.nfutexes, "Specify amount of locks (default 1)"),
	OPT_INTEGER('b', "buckets", &params.nbuckets,
		    "Private futex hash slots, 0 for the global hash (default: auto-sized)"),
	OPT_UINTEGER('l', "load", &load, "Units of work inside the lock (default 10)"),
	OPT_UINTEGER('w', "wait", &wait_units, "Units of work outside the lock (default 0)"),
	OPT_STRING(0, "load-kind", &load_kind_name, "kind",
		   "Unit of work: rmw (four cache lines read and written), pause (default rmw)"),
	OPT_UINTEGER(0, "spin-tries", &spin_tries,
		     "spin: looks at the word before FUTEX_SPIN_LOCK (default 8, 0: none)"),
	OPT_UINTEGER(0, "time-every", &time_every,
		     "Time one operation in N, at random (default 16; 1: all, 0: none)"),
	OPT_BOOLEAN('S', "shared", &params.fshared, "Use shared futexes instead of private ones"),
	OPT_BOOLEAN('p', "pin", &pin, "Pin thread i to online CPU i % nr_cpus"),
	OPT_STRING('C', "cpu", &cpu_list, "cpus", "Pin threads round-robin to these CPUs"),
	OPT_BOOLEAN('s', "silent", &params.silent, "Silent mode: do not display per-thread data"),
	OPT_BOOLEAN(0, "json", &json, "Print only one JSON object with the results"),
	OPT_BOOLEAN(0, "mlockall", &params.mlockall, "Lock all current and future memory"),
	OPT_END()
};

static const char * const bench_futex_mutex_usage[] = {
	"perf bench futex mutex <options>",
	NULL
};

static inline void cpu_pause(void)
{
#if defined(__x86_64__)
	asm volatile("pause" ::: "memory");
#elif defined(__aarch64__)
	asm volatile("yield" ::: "memory");
#else
	barrier();
#endif
}

static inline void pause_loop(unsigned int n)
{
	while (n--)
		cpu_pause();
}

/*
 * One rmw unit: a word on each of the lines is read, mixed by RMW_ROUNDS
 * rounds of a multiply-add and a xor-shift, and written back. The lines'
 * words are independent, so a CPU overlaps them; each unit depends on the
 * last. The rounds make a unit about as long as a pause instruction on
 * hardware, so that -l keeps the meaning it had.
 */
static inline void rmw_loop(unsigned long (*data)[LINE_LONGS], unsigned int n)
{
	unsigned long x;
	unsigned int i, r;

	while (n--) {
		for (i = 0; i < RMW_LINES; i++) {
			x = READ_ONCE(data[i][0]);
			for (r = 0; r < RMW_ROUNDS; r++) {
				x = x * 6364136223846793005UL + 1442695040888963407UL;
				x ^= x >> 29;
			}
			WRITE_ONCE(data[i][0], x);
		}
	}
}

static inline void work(unsigned long (*data)[LINE_LONGS], unsigned int n)
{
	if (load_kind == LOAD_PAUSE)
		pause_loop(n);
	else
		rmw_loop(data, n);
}

static inline u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The cost of the workers' clock reads: ns per pair, read back to back. */
static double clock_pair_ns(void)
{
	u64 start = now_ns(), end;
	unsigned long n = 0;

	do {
		end = now_ns();
		n++;
	} while (end - start < CLOCK_PROBE_NS || n < CLOCK_PROBE_MIN);
	return 2.0 * (end - start) / n;
}

static inline unsigned int hist_bucket(u64 ns)
{
	unsigned int shift;

	if (ns < HIST_SUB)
		return ns;
	shift = 63 - __builtin_clzll(ns) - HIST_SUB_BITS;
	return (shift + 1) * HIST_SUB + (unsigned int)(ns >> shift) - HIST_SUB;
}

/* The middle of a bucket's range of ns. */
static u64 hist_value(unsigned int bucket)
{
	unsigned int shift;

	if (bucket < HIST_SUB)
		return bucket;
	shift = bucket / HIST_SUB - 1;
	return ((u64)(HIST_SUB + bucket % HIST_SUB) << shift) + (1ULL << shift) / 2;
}

static inline bool cmpxchg_acquire(u32 *p, u32 old, u32 new)
{
	return __atomic_compare_exchange_n(p, &old, new, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline bool cmpxchg_release(u32 *p, u32 old, u32 new)
{
	return __atomic_compare_exchange_n(p, &old, new, false,
					   __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/*
 * ww: 0 free, 1 locked, 2 locked and maybe waiters. A locker that finds the
 * lock taken marks it 2 and sleeps until it swaps 2 for a 0; an unlocker
 * that swaps out a 2 wakes one sleeper.
 */
static bool ww_trylock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	return cmpxchg_acquire(&l->futex, 0, 1);
}

static void ww_lock_slow(struct bench_lock *l, struct worker *w)
{
	u32 c = __atomic_exchange_n(&l->futex, 2, __ATOMIC_ACQUIRE);

	while (c) {
		w->lock_syscalls++;
		if (futex_syscall(&l->futex, FUTEX_WAIT, 2, NULL, NULL, 0, futex_flag) &&
		    errno != EAGAIN && errno != EINTR)
			err(EXIT_FAILURE, "FUTEX_WAIT");
		c = __atomic_exchange_n(&l->futex, 2, __ATOMIC_ACQUIRE);
	}
}

static void ww_unlock(struct bench_lock *l, struct worker *w)
{
	if (__atomic_exchange_n(&l->futex, 0, __ATOMIC_RELEASE) != 2)
		return;

	w->unlock_syscalls++;
	if (futex_syscall(&l->futex, FUTEX_WAKE, 1, NULL, NULL, 0, futex_flag) < 0)
		err(EXIT_FAILURE, "FUTEX_WAKE");
}

/*
 * slice: a contended locker reads the word while it is held without
 * sleepers, and takes it when it reads it free; once it sees sleepers (2),
 * or after SLICE_SPIN_READS reads, it sleeps as ww does. The holder is
 * rarely preempted (slice_hold()), so the spinning rarely waits on a
 * holder that is not running.
 */
static void slice_lock_slow(struct bench_lock *l, struct worker *w)
{
	unsigned int i;
	u32 v;

	for (i = 0; i < SLICE_SPIN_READS; i++) {
		v = __atomic_load_n(&l->futex, __ATOMIC_RELAXED);
		if (v == 2)
			break;
		if (!v && cmpxchg_acquire(&l->futex, 0, 1)) {
			w->user_spun++;
			return;
		}
		cpu_pause();
	}
	ww_lock_slow(l, w);
}

/*
 * pi and spin: the word holds the owner's TID; 0 -> TID and TID -> 0 are
 * done in user space, anything else (contention, waiters) in the kernel.
 *
 * A critical section shorter than a trip into the kernel ends before
 * FUTEX_SPIN_LOCK could begin to spin, so spin first looks at the word up
 * to --spin-tries times. It stops at once at a flag in the word: with
 * WAITERS tasks sleep and the kernel decides who is next, and only the
 * kernel takes a word with flags.
 */
static bool tid_trylock_user(struct bench_lock *l, struct worker *w,
			     unsigned int tries)
{
	unsigned int i;
	u32 v;

	for (i = 0; i < tries; i++) {
		v = __atomic_load_n(&l->futex, __ATOMIC_RELAXED);
		if (v & ~FUTEX_TID_MASK)
			break;
		if (!v && cmpxchg_acquire(&l->futex, 0, w->tid)) {
			w->user_spun++;
			return true;
		}
		cpu_pause();
	}
	return false;
}

static void tid_lock_slow(struct bench_lock *l, struct worker *w, int op,
			  unsigned int tries, const char *what)
{
	if (tid_trylock_user(l, w, tries))
		return;

	w->lock_syscalls++;
	while (futex_syscall(&l->futex, op, 0, NULL, NULL, 0, futex_flag)) {
		if (errno != EINTR)
			err(EXIT_FAILURE, "%s", what);
	}
}

static void tid_unlock(struct bench_lock *l, struct worker *w, int op, const char *what)
{
	if (cmpxchg_release(&l->futex, w->tid, 0))
		return;

	w->unlock_syscalls++;
	if (futex_syscall(&l->futex, op, 0, NULL, NULL, 0, futex_flag) < 0)
		err(EXIT_FAILURE, "%s", what);
}

static bool tid_trylock(struct bench_lock *l, struct worker *w)
{
	return cmpxchg_acquire(&l->futex, 0, w->tid);
}

static void pi_lock_slow(struct bench_lock *l, struct worker *w)
{
	tid_lock_slow(l, w, FUTEX_LOCK_PI, 0, "FUTEX_LOCK_PI");
}

static void pi_unlock(struct bench_lock *l, struct worker *w)
{
	tid_unlock(l, w, FUTEX_UNLOCK_PI, "FUTEX_UNLOCK_PI");
}

static void spin_lock_slow(struct bench_lock *l, struct worker *w)
{
	tid_lock_slow(l, w, FUTEX_SPIN_LOCK, spin_tries, "FUTEX_SPIN_LOCK");
}

static void spin_unlock(struct bench_lock *l, struct worker *w)
{
	tid_unlock(l, w, FUTEX_SPIN_UNLOCK, "FUTEX_SPIN_UNLOCK");
}

/* pthread_mutex_lock() makes its own first attempt again. */
static void glibc_lock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	int ret = pthread_mutex_lock(&l->pmutex);

	if (ret)
		errx(EXIT_FAILURE, "pthread_mutex_lock: %s", strerror(ret));
}

static bool glibc_trylock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	int ret = pthread_mutex_trylock(&l->pmutex);

	if (ret && ret != EBUSY)
		errx(EXIT_FAILURE, "pthread_mutex_trylock: %s", strerror(ret));
	return !ret;
}

static void glibc_unlock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	int ret = pthread_mutex_unlock(&l->pmutex);

	if (ret)
		errx(EXIT_FAILURE, "pthread_mutex_unlock: %s", strerror(ret));
}

/* tas: wait for the word to look free, then swap; back off on a miss. */
static void tas_lock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	unsigned int delay = 1;

	for (;;) {
		while (__atomic_load_n(&l->futex, __ATOMIC_RELAXED))
			cpu_pause();
		if (!__atomic_exchange_n(&l->futex, 1, __ATOMIC_ACQUIRE))
			return;
		pause_loop(delay);
		if (delay < TAS_BACKOFF_MAX)
			delay <<= 1;
	}
}

static bool tas_trylock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	return !__atomic_load_n(&l->futex, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(&l->futex, 1, __ATOMIC_ACQUIRE);
}

static void tas_unlock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	__atomic_store_n(&l->futex, 0, __ATOMIC_RELEASE);
}

static void no_lock(struct bench_lock *l __maybe_unused, struct worker *w __maybe_unused)
{
}

static bool no_trylock(struct bench_lock *l __maybe_unused, struct worker *w __maybe_unused)
{
	return true;
}

/*
 * The time-slice extension (Documentation/userspace-api/rseq.rst): the
 * holder sets its rseq area's slice_ctrl.request from the acquisition to
 * the release, and the scheduler may then let it run on for a few us
 * when it would preempt it. At the release it clears the request, and if
 * the scheduler granted an extension it gives the CPU back at once with
 * rseq_slice_yield(). Only the few instructions from the acquiring atomic
 * to the request's store go unprotected.
 */
static void slice_hold(struct worker *w)
{
	WRITE_ONCE(w->rseq->slice_ctrl.request, 1);
	barrier();
}

static void slice_release(struct worker *w)
{
	barrier();
	WRITE_ONCE(w->rseq->slice_ctrl.request, 0);
	barrier();
	if (READ_ONCE(w->rseq->slice_ctrl.granted)) {
		w->slice_yields++;
		syscall(__NR_rseq_slice_yield);
	}
}

/*
 * Registers an rseq area of the kernel's feature size for this thread and
 * enables the extension on it; NULL, or why the kernel or the C library
 * does not allow it. The optimized (v2) rseq of Linux 7.0, which alone has
 * the extension, needs an area larger than the original 32 bytes. *area
 * is the registered area, to be freed once the thread has exited.
 */
static const char *slice_register(struct bench_rseq **area)
{
	unsigned long size = getauxval(AT_RSEQ_FEATURE_SIZE);
	unsigned long align = max(getauxval(AT_RSEQ_ALIGN), 32UL);
	struct bench_rseq *rs;

	if (__rseq_size)
		return "glibc holds the thread's rseq: set GLIBC_TUNABLES=glibc.pthread.rseq=0";
	if (size < sizeof(*rs))
		return "no rseq slice_ctrl (AT_RSEQ_FEATURE_SIZE below 32)";
	size = roundup(size, align);
	rs = aligned_alloc(align, size);
	if (!rs)
		return "out of memory";
	memset(rs, 0, size);
	if (syscall(__NR_rseq, rs, size, 0, RSEQ_SIG)) {
		free(rs);
		return "no rseq registration (CONFIG_RSEQ)";
	}
	*area = rs;
	if (prctl(PR_RSEQ_SLICE_EXTENSION, PR_RSEQ_SLICE_EXTENSION_SET,
		  PR_RSEQ_SLICE_EXT_ENABLE, 0, 0))
		return "no time-slice extension (CONFIG_RSEQ_SLICE_EXTENSION, rseq_slice_ext=)";
	return NULL;
}

static const struct mutex_type mutex_types[] = {
	{ .name = "ww", .trylock = ww_trylock, .lock_slow = ww_lock_slow,
	  .unlock = ww_unlock, .probe_op = -1, .pthread_type = -1,
	  .counts_syscalls = true },
	{ .name = "ww-global", .trylock = ww_trylock, .lock_slow = ww_lock_slow,
	  .unlock = ww_unlock, .probe_op = -1, .pthread_type = -1,
	  .counts_syscalls = true, .global_hash = true },
	{ .name = "pi", .trylock = tid_trylock, .lock_slow = pi_lock_slow,
	  .unlock = pi_unlock, .probe_op = FUTEX_UNLOCK_PI, .pthread_type = -1,
	  .counts_syscalls = true },
	{ .name = "spin", .trylock = tid_trylock, .lock_slow = spin_lock_slow,
	  .unlock = spin_unlock, .probe_op = FUTEX_SPIN_UNLOCK, .pthread_type = -1,
	  .counts_syscalls = true },
	{ .name = "spin-slice", .trylock = tid_trylock, .lock_slow = spin_lock_slow,
	  .unlock = spin_unlock, .probe_op = FUTEX_SPIN_UNLOCK, .pthread_type = -1,
	  .counts_syscalls = true, .slice = true },
	{ .name = "glibc", .trylock = glibc_trylock, .lock_slow = glibc_lock,
	  .unlock = glibc_unlock, .probe_op = -1,
	  .pthread_type = PTHREAD_MUTEX_NORMAL },
	{ .name = "glibc-adaptive", .trylock = glibc_trylock, .lock_slow = glibc_lock,
	  .unlock = glibc_unlock, .probe_op = -1,
	  .pthread_type = PTHREAD_MUTEX_ADAPTIVE_NP },
	{ .name = "tas", .trylock = tas_trylock, .lock_slow = tas_lock,
	  .unlock = tas_unlock, .probe_op = -1, .pthread_type = -1,
	  .counts_syscalls = true },
	{ .name = "slice", .trylock = ww_trylock, .lock_slow = slice_lock_slow,
	  .unlock = ww_unlock, .probe_op = -1, .pthread_type = -1,
	  .counts_syscalls = true, .slice = true },
	{ .name = "none", .trylock = no_trylock, .lock_slow = no_lock,
	  .unlock = no_lock, .probe_op = -1, .pthread_type = -1,
	  .counts_syscalls = true },
};

/*
 * The critical section: a read-modify-write of the protected counter with
 * the load in between, so that two threads inside at once lose an update;
 * the owner field catches the overlap directly as well. It reads who
 * released the lock last and when (0: not timed) and leaves its own
 * release there; acquired is the time it took the lock, 0 if not timed.
 */
static inline void critical_section(struct bench_lock *l, struct worker *w, u64 acquired)
{
	unsigned long count = READ_ONCE(l->count);
	unsigned int last = READ_ONCE(l->last_owner);
	u64 released;

	if (READ_ONCE(l->owner))
		w->overlaps++;
	WRITE_ONCE(l->owner, w->id + 1);
	if (last) {
		w->handovers++;
		if (last == w->id + 1)
			w->reacquired++;
		/* Whether the timed operations are a fair sample of them */
		if (acquired) {
			w->timed_handovers++;
			if (last == w->id + 1)
				w->timed_reacquired++;
		}
		released = READ_ONCE(l->last_release);
		if (released) {
			u64 now = acquired ?: now_ns();

			w->gaps++;
			/* Clocks of two CPUs: never count a negative gap. */
			if (now > released)
				w->gap_sum += now - released;
		}
	}
	work(l->data, load);
	if (READ_ONCE(l->owner) != w->id + 1)
		w->overlaps++;
	WRITE_ONCE(l->owner, 0);
	WRITE_ONCE(l->count, count + 1);
	WRITE_ONCE(l->last_owner, w->id + 1);
	released = 0;
	if (acquired) {
		released = now_ns();
		w->hold_sum += released - acquired;
	}
	WRITE_ONCE(l->last_release, released);
}

/* Whether to time this operation: one in time_every, at random. */
static inline bool time_this(struct worker *w)
{
	if (time_every <= 1)
		return time_every;
	/* xorshift32 */
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 17;
	w->rng ^= w->rng << 5;
	return w->rng % time_every == 0;
}

/*
 * Every operation first tries once to take the lock, and only a timed one
 * that failed reads the clock before it waits; an acquisition at the
 * first attempt waited 0 ns. A read before the first attempt would sit
 * between this thread's release and its next attempt, a gap in which a
 * waiter that spins takes the lock the thread would have taken back:
 * timed operations were then handovers far more often than the others
 * (spin, 2 threads, load 50: 53% against 5%), and the latency figures
 * those of handovers. Returns when the lock was acquired if @timed.
 */
static u64 acquire(struct bench_lock *l, struct worker *w, bool timed)
{
	u64 start = 0, acquired, lat;

	if (!mtype->trylock(l, w)) {
		if (timed)
			start = now_ns();
		mtype->lock_slow(l, w);
	}
	if (mtype->slice)
		slice_hold(w);
	if (!timed)
		return 0;

	acquired = now_ns();
	lat = start ? acquired - start : 0;
	w->lat_hist[hist_bucket(lat)]++;
	if (lat > w->lat_max)
		w->lat_max = lat;
	w->timed++;
	return acquired;
}

static void toggle_done(int sig __maybe_unused,
			siginfo_t *info __maybe_unused,
			void *uc __maybe_unused)
{
	/* inform all threads that we're done for the day */
	WRITE_ONCE(done, true);
	gettimeofday(&bench__end, NULL);
	timersub(&bench__end, &bench__start, &bench__runtime);
}

static void *workerfn(void *arg)
{
	struct worker *w = (struct worker *)arg;
	struct bench_lock *l = w->lock;
	unsigned long ops = 0;
	struct rusage ru0, ru1;

	const char *why;

	w->tid = syscall(__NR_gettid);
	w->rng = (w->id + 1) * 2654435761U;
	if (mtype->slice) {
		why = slice_register(&w->rseq);
		if (why)
			errx(EXIT_FAILURE, "thread %u: rseq time-slice extension: %s", w->id, why);
	}

	mutex_lock(&thread_lock);
	threads_starting--;
	if (!threads_starting)
		cond_signal(&thread_parent);
	while (!started)
		cond_wait(&thread_worker, &thread_lock);
	mutex_unlock(&thread_lock);

	getrusage(RUSAGE_THREAD, &ru0);
	do {
		u64 acquired = acquire(l, w, time_this(w));

		critical_section(l, w, acquired);
		mtype->unlock(l, w);
		if (mtype->slice)
			slice_release(w);
		work(w->data, wait_units);
		ops++;
	} while (!READ_ONCE(done));
	getrusage(RUSAGE_THREAD, &ru1);

	w->ops = ops;
	w->nvcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
	w->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
	return NULL;
}

static void create_threads(struct perf_cpu_map *cpu)
{
	cpu_set_t *cpuset;
	unsigned int i;
	int nrcpus = cpu__max_cpu().cpu;
	size_t size;

	cpuset = CPU_ALLOC(nrcpus);
	if (!cpuset)
		err(EXIT_FAILURE, "CPU_ALLOC");
	size = CPU_ALLOC_SIZE(nrcpus);

	for (i = 0; i < params.nthreads; i++) {
		pthread_attr_t thread_attr;

		pthread_attr_init(&thread_attr);
		worker[i].id = i;
		worker[i].lock = &locks[i % params.nfutexes];

		if (pin) {
			CPU_ZERO_S(size, cpuset);
			CPU_SET_S(perf_cpu_map__cpu(cpu, i % perf_cpu_map__nr(cpu)).cpu,
				  size, cpuset);
			if (pthread_attr_setaffinity_np(&thread_attr, size, cpuset)) {
				CPU_FREE(cpuset);
				err(EXIT_FAILURE, "pthread_attr_setaffinity_np");
			}
		}

		if (pthread_create(&worker[i].thread, &thread_attr, workerfn, &worker[i])) {
			CPU_FREE(cpuset);
			err(EXIT_FAILURE, "pthread_create");
		}
		pthread_attr_destroy(&thread_attr);
	}
	CPU_FREE(cpuset);
}

static void init_locks(void)
{
	int flags = MAP_ANONYMOUS | (params.fshared ? MAP_SHARED : MAP_PRIVATE);
	pthread_mutexattr_t attr;
	unsigned int i;
	int ret;

	/* Shared futexes live in MAP_SHARED memory: keyed by inode, not mm. */
	locks_size = params.nfutexes * sizeof(*locks);
	locks = mmap(NULL, locks_size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (locks == MAP_FAILED)
		err(EXIT_FAILURE, "mmap");

	if (mtype->pthread_type < 0)
		return;

	pthread_mutexattr_init(&attr);
	ret = pthread_mutexattr_settype(&attr, mtype->pthread_type);
	if (!ret && params.fshared)
		ret = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	for (i = 0; !ret && i < params.nfutexes; i++)
		ret = pthread_mutex_init(&locks[i].pmutex, &attr);
	if (ret)
		errx(EXIT_FAILURE, "pthread_mutex_init: %s", strerror(ret));
	pthread_mutexattr_destroy(&attr);
}

/*
 * NULL, or why the running kernel lacks the lock type. An unlock of a free
 * word fails with EPERM where the kernel has the op; the slice types need
 * the time-slice extension, probed from a thread of their own.
 */
struct slice_probe {
	struct bench_rseq *area;
	const char *why;
};

static void *slice_probe_fn(void *arg)
{
	struct slice_probe *probe = arg;

	probe->why = slice_register(&probe->area);
	return NULL;
}

static const char *mutex_unsupported(void)
{
	struct slice_probe probe = { 0 };
	pthread_t thread;
	u32 word = 0;

	if (mtype->probe_op >= 0 &&
	    (futex_syscall(&word, mtype->probe_op, 0, NULL, NULL, 0, futex_flag) >= 0 ||
	     errno != EPERM))
		return strerror(errno);
	if (!mtype->slice)
		return NULL;
	if (pthread_create(&thread, NULL, slice_probe_fn, &probe) ||
	    pthread_join(thread, NULL))
		err(EXIT_FAILURE, "pthread_create");
	free(probe.area);
	return probe.why;
}

struct results {
	double secs, ops_per_sec;
	unsigned long ops, lock_syscalls, unlock_syscalls, user_spun, overlaps;
	unsigned long slice_yields;
	long nvcsw, nivcsw;
	struct stats thread_stats;
	double thread_min, thread_max, thread_stddev;
	unsigned int broken_locks;
	/* Per-thread acquisitions: min and max over the mean, Jain's index. */
	double slowest_share, fastest_share, jain;
	unsigned long handovers, reacquired, timed, gaps;
	unsigned long timed_handovers, timed_reacquired;
	/* In ns; the latency percentiles are histogram bucket middles. */
	double hold, gap, clock_pair;
	double lat_p50, lat_p99, lat_max;
};

/* The latency of the q-quantile acquisition, merged over all threads. */
static u64 latency_quantile(const u64 *hist, u64 n, double q, u64 max)
{
	u64 rank = ceil(q * n), seen = 0;
	unsigned int b;

	for (b = 0; b < HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= rank && seen)
			break;
	}
	return b < HIST_BUCKETS ? min(hist_value(b), max) : max;
}

static double per_kop(double n, unsigned long ops)
{
	return ops ? 1000.0 * n / ops : 0.0;
}

static void collect(struct results *r, double clock_pair)
{
	static u64 hist[HIST_BUCKETS];
	double sum = 0, sum_sq = 0, mean;
	unsigned long min_ops = worker[0].ops, max_ops = 0;
	u64 hold = 0, gap = 0, lat_max = 0;
	unsigned int i, j;

	memset(r, 0, sizeof(*r));
	memset(hist, 0, sizeof(hist));
	init_stats(&r->thread_stats);
	r->secs = bench__runtime.tv_sec + bench__runtime.tv_usec / 1e6;

	r->thread_min = worker[0].ops / r->secs;
	for (i = 0; i < params.nthreads; i++) {
		struct worker *w = &worker[i];
		double rate = w->ops / r->secs;

		update_stats(&r->thread_stats, rate);
		r->thread_min = min(r->thread_min, rate);
		r->thread_max = max(r->thread_max, rate);
		r->ops += w->ops;
		r->lock_syscalls += w->lock_syscalls;
		r->unlock_syscalls += w->unlock_syscalls;
		r->user_spun += w->user_spun;
		r->slice_yields += w->slice_yields;
		r->overlaps += w->overlaps;
		r->nvcsw += w->nvcsw;
		r->nivcsw += w->nivcsw;
		r->handovers += w->handovers;
		r->reacquired += w->reacquired;
		r->timed_handovers += w->timed_handovers;
		r->timed_reacquired += w->timed_reacquired;
		r->timed += w->timed;
		r->gaps += w->gaps;
		hold += w->hold_sum;
		gap += w->gap_sum;
		lat_max = max(lat_max, w->lat_max);
		for (j = 0; j < HIST_BUCKETS; j++)
			hist[j] += w->lat_hist[j];
		min_ops = min(min_ops, w->ops);
		max_ops = max(max_ops, w->ops);
		sum += w->ops;
		sum_sq += (double)w->ops * w->ops;
	}
	r->ops_per_sec = r->ops / r->secs;
	if (r->thread_stats.n > 1)
		r->thread_stddev = sqrt(r->thread_stats.M2 / (r->thread_stats.n - 1));

	/* NAN where there is nothing to divide: printed as null. */
	mean = sum / params.nthreads;
	r->slowest_share = mean ? min_ops / mean : NAN;
	r->fastest_share = mean ? max_ops / mean : NAN;
	r->jain = sum_sq ? sum * sum / (params.nthreads * sum_sq) : NAN;
	r->hold = r->timed ? (double)hold / r->timed : NAN;
	r->gap = r->gaps ? (double)gap / r->gaps : NAN;
	r->clock_pair = clock_pair;
	if (r->timed) {
		r->lat_p50 = latency_quantile(hist, r->timed, 0.50, lat_max);
		r->lat_p99 = latency_quantile(hist, r->timed, 0.99, lat_max);
		r->lat_max = lat_max;
	} else {
		r->lat_p50 = NAN;
		r->lat_p99 = NAN;
		r->lat_max = NAN;
	}

	/* Every acquisition of a lock must show in its counter. */
	for (j = 0; j < params.nfutexes; j++) {
		unsigned long expected = 0;

		for (i = j; i < params.nthreads; i += params.nfutexes)
			expected += worker[i].ops;
		if (locks[j].count != expected) {
			r->broken_locks++;
			fprintf(stderr, "futex-mutex: lock %u: counter %lu, acquisitions %lu\n",
				j, locks[j].count, expected);
		}
	}
}

static void print_syscalls_json(const char *key, double n, unsigned long ops)
{
	if (mtype->counts_syscalls)
		printf("\"%s\": %.3f, ", key, per_kop(n, ops));
	else
		printf("\"%s\": null, ", key);
}

/* A figure, or null when there is none (NAN). */
static void print_figure_json(const char *key, const char *fmt, double v)
{
	printf("\"%s\": ", key);
	if (isnan(v))
		printf("null");
	else
		printf(fmt, v);
	printf(", ");
}

static double share(unsigned long n, unsigned long of)
{
	return of ? (double)n / of : NAN;
}

/*
 * Slots of the private futex hash the run ended with: 0 is the global
 * hash, -1 a kernel without PR_FUTEX_HASH.
 */
static int mutex_hash_slots(void)
{
	return prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS);
}

static void print_json(struct results *r)
{
	printf("{\"mutex\": \"%s\", \"threads\": %u, \"futexes\": %u, \"load\": %u, \"wait\": %u, ",
	       mtype->name, params.nthreads, params.nfutexes, load, wait_units);
	printf("\"load_kind\": \"%s\", \"spin_tries\": %u, ", load_kind_name, spin_tries);
	printf("\"shared\": %s, \"pinned\": %s, \"runtime\": %.6f, \"ops\": %lu, ",
	       params.fshared ? "true" : "false", pin ? "true" : "false", r->secs, r->ops);
	printf("\"ops_per_sec\": %.1f, \"thread_mean\": %.1f, \"thread_min\": %.0f, ",
	       r->ops_per_sec, avg_stats(&r->thread_stats), r->thread_min);
	printf("\"thread_max\": %.0f, \"thread_stddev\": %.1f, ",
	       r->thread_max, r->thread_stddev);
	print_syscalls_json("lock_syscalls_per_kop", r->lock_syscalls, r->ops);
	print_syscalls_json("unlock_syscalls_per_kop", r->unlock_syscalls, r->ops);
	print_syscalls_json("user_spun_per_kop", r->user_spun, r->ops);
	print_figure_json("slice_yields_per_kop", "%.3f",
			  mtype->slice ? per_kop(r->slice_yields, r->ops) : NAN);
	print_figure_json("slowest_share", "%.3f", r->slowest_share);
	print_figure_json("fastest_share", "%.3f", r->fastest_share);
	print_figure_json("jain", "%.4f", r->jain);
	print_figure_json("last_releaser_share", "%.4f", share(r->reacquired, r->handovers));
	print_figure_json("timed_last_releaser_share", "%.4f",
			  share(r->timed_reacquired, r->timed_handovers));
	print_figure_json("hold_ns", "%.1f", r->hold);
	print_figure_json("gap_ns", "%.1f", r->gap);
	print_figure_json("lat_p50_ns", "%.0f", r->lat_p50);
	print_figure_json("lat_p99_ns", "%.0f", r->lat_p99);
	print_figure_json("lat_max_ns", "%.0f", r->lat_max);
	print_figure_json("clock_pair_ns", "%.1f", r->clock_pair);
	printf("\"time_every\": %u, \"timed_ops\": %lu, ", time_every, r->timed);
	printf("\"hash_slots\": %d, ", mutex_hash_slots());
	printf("\"vcsw_per_kop\": %.3f, \"ivcsw_per_kop\": %.3f, \"exclusion\": \"%s\"}\n",
	       per_kop(r->nvcsw, r->ops), per_kop(r->nivcsw, r->ops),
	       r->broken_locks || r->overlaps ? "broken" : "ok");
}

static void print_summary(struct results *r)
{
	double mean = avg_stats(&r->thread_stats);
	unsigned int i;

	if (!params.silent) {
		for (i = 0; i < params.nthreads; i++)
			printf("[thread %3d] lock: %p [ %.0f ops/sec ]\n",
			       worker[i].id, worker[i].lock, worker[i].ops / r->secs);
		printf("\n");
	}

	printf("Mutex '%s': %.0f ops/sec total, %lu ops in %.3f secs\n",
	       mtype->name, r->ops_per_sec, r->ops, r->secs);
	printf("Per thread: mean %.0f, min %.0f, max %.0f ops/sec (stddev +- %.2f%%)\n",
	       mean, r->thread_min, r->thread_max, rel_stddev_stats(r->thread_stddev, mean));
	if (mtype->counts_syscalls)
		printf("Syscalls per 1000 ops: lock %.2f, unlock %.2f\n",
		       per_kop(r->lock_syscalls, r->ops), per_kop(r->unlock_syscalls, r->ops));
	else
		printf("Syscalls per 1000 ops: n/a (inside glibc)\n");
	printf("Context switches per 1000 ops: voluntary %.2f, involuntary %.2f\n",
	       per_kop(r->nvcsw, r->ops), per_kop(r->nivcsw, r->ops));
	if (mtype->slice)
		printf("Time-slice extensions granted and yielded per 1000 ops: %.3f\n",
		       per_kop(r->slice_yields, r->ops));
	printf("Fairness: slowest thread %.3f, fastest %.3f of the mean, Jain's index %.4f\n",
	       r->slowest_share, r->fastest_share, r->jain);
	printf("Acquisitions by the thread that released last: %.2f%%\n",
	       100.0 * share(r->reacquired, r->handovers));
	if (r->timed) {
		printf("Hold %.0f ns, gap from a release to the next acquisition %.0f ns (means)\n",
		       r->hold, r->gap);
		printf("Acquisition latency: p50 %.0f, p99 %.0f, max %.0f ns\n",
		       r->lat_p50, r->lat_p99, r->lat_max);
		printf("Timed: %lu ops (1 in %u), %.1f%% by the last releaser; ",
		       r->timed, time_every,
		       100.0 * share(r->timed_reacquired, r->timed_handovers));
		printf("2 clock reads each, 3 after a failed first attempt; ");
		printf("%.1f ns per pair of reads\n", r->clock_pair);
	}
	if (r->broken_locks || r->overlaps)
		printf("Mutual exclusion: BROKEN (%u lock(s) lost updates, %lu overlaps seen)\n",
		       r->broken_locks, r->overlaps);
	else
		printf("Mutual exclusion: ok (%lu critical sections checked)\n", r->ops);
	futex_print_nbuckets(&params);

	printf("result: mutex=%s threads=%u futexes=%u load=%u wait=%u load_kind=%s ",
	       mtype->name, params.nthreads, params.nfutexes, load, wait_units, load_kind_name);
	printf("shared=%d ops_per_sec=%.1f ", params.fshared, r->ops_per_sec);
	printf("thread_mean=%.1f thread_min=%.0f thread_max=%.0f thread_stddev=%.1f ",
	       mean, r->thread_min, r->thread_max, r->thread_stddev);
	if (mtype->counts_syscalls)
		printf("lock_syscalls_per_kop=%.3f unlock_syscalls_per_kop=%.3f ",
		       per_kop(r->lock_syscalls, r->ops), per_kop(r->unlock_syscalls, r->ops));
	printf("slowest_share=%.3f fastest_share=%.3f jain=%.4f last_releaser_share=%.4f ",
	       r->slowest_share, r->fastest_share, r->jain, share(r->reacquired, r->handovers));
	if (r->timed) {
		printf("hold_ns=%.1f gap_ns=%.1f clock_pair_ns=%.1f ",
		       r->hold, r->gap, r->clock_pair);
		printf("timed_last_releaser_share=%.4f ",
		       share(r->timed_reacquired, r->timed_handovers));
		printf("lat_p50_ns=%.0f lat_p99_ns=%.0f lat_max_ns=%.0f ",
		       r->lat_p50, r->lat_p99, r->lat_max);
	}
	if (mtype->slice)
		printf("slice_yields_per_kop=%.3f ", per_kop(r->slice_yields, r->ops));
	printf("hash_slots=%d ", mutex_hash_slots());
	printf("vcsw_per_kop=%.3f ivcsw_per_kop=%.3f exclusion=%s\n",
	       per_kop(r->nvcsw, r->ops), per_kop(r->nivcsw, r->ops),
	       r->broken_locks || r->overlaps ? "broken" : "ok");
}

int bench_futex_mutex(int argc, const char **argv)
{
	struct sigaction act;
	struct perf_cpu_map *cpu;
	struct results res;
	double clock_pair = NAN;
	const char *why;
	unsigned int i;
	int ret;

	argc = parse_options(argc, argv, options, bench_futex_mutex_usage, 0);
	if (argc)
		goto err;

	for (i = 0; i < ARRAY_SIZE(mutex_types); i++)
		if (!strcmp(mutex_name, mutex_types[i].name))
			mtype = &mutex_types[i];
	if (!mtype) {
		fprintf(stderr, "futex-mutex: unknown lock type '%s'; the types:", mutex_name);
		for (i = 0; i < ARRAY_SIZE(mutex_types); i++)
			fprintf(stderr, " %s", mutex_types[i].name);
		fprintf(stderr, "\n");
		goto err;
	}
	if (!params.nfutexes || !params.runtime) {
		fprintf(stderr, "futex-mutex: bad number of locks or runtime\n");
		goto err;
	}
	if (!strcmp(load_kind_name, "pause")) {
		load_kind = LOAD_PAUSE;
	} else if (strcmp(load_kind_name, "rmw")) {
		fprintf(stderr, "futex-mutex: bad load kind '%s'\n", load_kind_name);
		goto err;
	}

	if (mtype->global_hash) {
		if (params.nbuckets > 0) {
			fprintf(stderr, "futex-mutex: %s is ww with -b 0\n", mtype->name);
			goto err;
		}
		params.nbuckets = 0;
	}
	if (!params.fshared)
		futex_flag = FUTEX_PRIVATE_FLAG;

	why = mutex_unsupported();
	if (why) {
		if (json)
			printf("{\"mutex\": \"%s\", \"error\": \"%s\"}\n", mtype->name, why);
		fprintf(stderr, "futex-mutex: lock type '%s' cannot run here: %s\n",
			mtype->name, why);
		return EXIT_UNSUPPORTED;
	}

	if (cpu_list)
		pin = true;
	cpu = perf_cpu_map__new(cpu_list);
	if (!cpu)
		errx(EXIT_FAILURE, "bad CPU list");

	memset(&act, 0, sizeof(act));
	sigfillset(&act.sa_mask);
	act.sa_sigaction = toggle_done;
	sigaction(SIGINT, &act, NULL);

	if (params.mlockall) {
		if (mlockall(MCL_CURRENT | MCL_FUTURE))
			err(EXIT_FAILURE, "mlockall");
	}
	futex_set_nbuckets_param(&params);

	if (!params.nthreads)
		params.nthreads = perf_cpu_map__nr(cpu);

	if (posix_memalign((void **)&worker, MUTEX_ALIGN, params.nthreads * sizeof(*worker)))
		err(EXIT_FAILURE, "posix_memalign");
	memset(worker, 0, params.nthreads * sizeof(*worker));
	init_locks();

	if (!json) {
		printf("Run summary [PID %d]: %u threads on %u %s '%s' lock(s), ",
		       getpid(), params.nthreads, params.nfutexes,
		       params.fshared ? "shared" : "private", mtype->name);
		printf("load %u, wait %u units of %s, for %u secs.\n\n",
		       load, wait_units, load_kind_name, params.runtime);
	}

	if (time_every)
		clock_pair = clock_pair_ns();

	mutex_init(&thread_lock);
	cond_init(&thread_parent);
	cond_init(&thread_worker);

	threads_starting = params.nthreads;
	create_threads(cpu);

	mutex_lock(&thread_lock);
	while (threads_starting)
		cond_wait(&thread_parent, &thread_lock);
	started = true;
	gettimeofday(&bench__start, NULL);
	cond_broadcast(&thread_worker);
	mutex_unlock(&thread_lock);

	sleep(params.runtime);
	toggle_done(0, NULL, NULL);

	for (i = 0; i < params.nthreads; i++) {
		ret = pthread_join(worker[i].thread, NULL);
		if (ret)
			errx(EXIT_FAILURE, "pthread_join: %s", strerror(ret));
	}

	/* cleanup & report results */
	cond_destroy(&thread_parent);
	cond_destroy(&thread_worker);
	mutex_destroy(&thread_lock);

	collect(&res, clock_pair);
	if (json)
		print_json(&res);
	else
		print_summary(&res);

	ret = 0;
	if (res.broken_locks || res.overlaps) {
		fprintf(stderr, "futex-mutex: '%s' broke mutual exclusion\n", mtype->name);
		ret = EXIT_FAILURE;
	}

	if (mtype->pthread_type >= 0)
		for (i = 0; i < params.nfutexes; i++)
			pthread_mutex_destroy(&locks[i].pmutex);
	/* Their threads have exited: the kernel writes to the areas no more. */
	for (i = 0; i < params.nthreads; i++)
		free(worker[i].rseq);
	munmap(locks, locks_size);
	free(worker);
	perf_cpu_map__put(cpu);
	return ret;
err:
	usage_with_options(bench_futex_mutex_usage, options);
	exit(EXIT_FAILURE);
}
