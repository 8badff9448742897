// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz - seeded stress and fuzz test for FUTEX_SPIN_LOCK and
 * FUTEX_SPIN_UNLOCK.
 *
 * Several worker processes, each with several threads, run random
 * sequences of operations on futex words until a time limit (-t) or an
 * operation budget (-n) is reached:
 *
 *  - "honest" locks are touched only by well-behaved code: the user space
 *    fast paths, FUTEX_SPIN_LOCK with valid timeouts on both clocks, and
 *    FUTEX_SPIN_UNLOCK by the owner, with the owner registered in its
 *    robust list. Every critical section checks that it is alone (a holder
 *    field exchanged on entry and exit, a canary) and that the word names
 *    its owner. Probes whose result the ABI fixes (relock: EDEADLK, foreign
 *    unlock: EPERM, bad arguments: EINVAL) may touch them too, because a
 *    correct kernel leaves the lock alone. Some unlocks have the kernel
 *    clear the robust list's pending op (FUTEX_ROBUST_UNLOCK).
 *  - the process's private futex hash is replaced under all of this
 *    (PR_FUTEX_HASH_SET_SLOTS), which moves every queue head of its
 *    private locks, now and then to the global hash for good.
 *  - "abused" words get everything else: forged and garbage values, other
 *    tasks' TIDs, unlocks by non-owners, FUTEX_WAIT/WAKE/LOCK_PI/UNLOCK_PI/
 *    requeue/waitv/futex2 calls, bad addresses and arguments, pages that
 *    are unmapped, made read-only or MADV_DONTNEED'ed concurrently, and
 *    garbage robust lists.
 *  - tasks come and go: threads exit while holding locks, the harness
 *    SIGKILLs and SIGSTOPs whole processes, threads fork while holding
 *    locks and kill their children inside FUTEX_SPIN_LOCK, and a thread
 *    execs the program again while other processes wait for locks its
 *    siblings hold (de_thread() kills the siblings, their robust lists
 *    hand the locks on).
 *  - the owner of a non-robust "kill lock" SIGKILLs a forked waiter right
 *    before or after the unlock that may hand the lock to it: a waiter
 *    killed before the unlock must not die owning the lock.
 *
 * Every wait in the kernel has a deadline (a NULL timeout on an honest lock
 * an implicit one, FOREVER_BOUND), or its task is killed, so a lost wakeup
 * shows as a watchdog report, not as a hung test. Kernel bugs (a broken
 * honest lock, a task stuck past its deadline, a waiter left asleep on a
 * free honest lock (sampled by the harness), a lock granted together
 * with an error, a sleeper starved past the handoff bound, an undocumented
 * result, live queue heads after the run, a splat in the kernel log) are
 * TAP failures, each reported with the last operations of the thread that
 * saw it; the errors the abuse provokes are only counted. The end of the
 * output has the number of operations, the count and results of each
 * operation, an errno histogram and the kernel's futex_spin counters.
 *
 * The seed fixes every thread's sequence of choices; the interleaving of
 * the threads is not reproducible. Run with -s SEED (and the same -p, -T,
 * -H, -k, -d options, printed as a "replay:" line) to replay the choices.
 * -e runs the same program on FUTEX_LOCK_PI2/FUTEX_UNLOCK_PI instead, to
 * test the harness itself on a kernel without the new operations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ucontext.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "kselftest.h"

/* The ABI of the new operations; defined here too for older headers. */
#ifndef FUTEX_SPIN_LOCK
#define FUTEX_SPIN_LOCK		14
#define FUTEX_SPIN_UNLOCK	15
#endif
#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2		13
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32		0x02
#define FUTEX2_PRIVATE		FUTEX_PRIVATE_FLAG
#endif
#ifndef FUTEX_32
#define FUTEX_32		FUTEX2_SIZE_U32
#endif
#ifndef __NR_futex_waitv
#define __NR_futex_waitv	449
#endif
#ifndef __NR_futex_wake
#define __NR_futex_wake		454
#define __NR_futex_wait		455
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define NSEC		1000000000ULL
#define MSEC		1000000ULL
#define USEC		1000ULL
#define PAGE		4096UL

#define MAX_PROCS	8
#define MAX_THREADS	16
#define NR_WSLOTS	(MAX_PROCS * MAX_THREADS)
/* Worker slots, then one slot per worker for its fork child, then the harness. */
#define NR_SLOTS	(2 * NR_WSLOTS + 1)
#define HARNESS_SLOT	(2 * NR_WSLOTS)
#define TS_SIZE		16384
#define RING		32
#define MAX_HS		16
#define NR_HP		4
#define NR_AS		48
#define NR_AP		16
#define NR_VS		3
#define NR_VP		3
#define NR_VPAGES	(NR_VS + NR_VP)
#define WPV		6
#define MAX_HELD	3
#define MAX_OWNED	4
#define DEAD_RING	256
#define NR_KL		2
#define NR_KC		3
#define MAX_FAILS	48
#define FAILS_PER_CHECK	8
#define FAIL_TEXT	8192

/* A wait with no deadline of its own is expected to end within this. */
#define FOREVER_BOUND	(20 * NSEC)
/* Honest ETIMEDOUT after at least this long is checked against the bound. */
#define STARVE_MIN_WAIT	NSEC

/* ------------------------------------------------------------------ */
/* Operations and result buckets                                      */

enum op {
	OP_H_TRYLOCK,
	OP_H_LOCK,
	OP_H_LOCK_PAST,
	OP_H_LOCK_FOREVER,
	OP_H_UNLOCK_FAST,
	OP_H_UNLOCK,
	OP_H_RELOCK,
	OP_H_FOREIGN_UNLOCK,
	OP_H_BADARGS,
	OP_A_LOCK,
	OP_A_UNLOCK,
	OP_A_FAST_LOCK,
	OP_A_FAST_UNLOCK,
	OP_A_GARBAGE,
	OP_A_BADADDR,
	OP_A_BADARGS,
	OP_WAIT,
	OP_WAIT_BITSET,
	OP_WAKE,
	OP_WAKE_OP,
	OP_REQUEUE,
	OP_CMP_REQUEUE,
	OP_LOCK_PI,
	OP_LOCK_PI2,
	OP_TRYLOCK_PI,
	OP_UNLOCK_PI,
	OP_WAIT_REQUEUE_PI,
	OP_CMP_REQUEUE_PI,
	OP_WAITV,
	OP_F2_WAIT,
	OP_F2_WAKE,
	OP_MUNMAP,
	OP_MMAP,
	OP_MPROTECT_RO,
	OP_MPROTECT_RW,
	OP_DONTNEED,
	OP_SIGNAL,
	OP_ROBUST_SET,
	OP_HASH_RESIZE,
	OP_FORK,
	OP_EXEC,
	OP_THREAD_EXIT,
	OP_H_KILL_WAITER,
	OP_CHILD_KILL,
	OP_PROC_KILL,
	OP_PROC_STOP,
	NR_OPS
};

static const char * const op_names[NR_OPS] = {
	[OP_H_TRYLOCK]		= "h_trylock",
	[OP_H_LOCK]		= "h_lock",
	[OP_H_LOCK_PAST]	= "h_lock_past",
	[OP_H_LOCK_FOREVER]	= "h_lock_forever",
	[OP_H_UNLOCK_FAST]	= "h_unlock_fast",
	[OP_H_UNLOCK]		= "h_unlock",
	[OP_H_RELOCK]		= "h_relock",
	[OP_H_FOREIGN_UNLOCK]	= "h_foreign_unlock",
	[OP_H_BADARGS]		= "h_badargs",
	[OP_A_LOCK]		= "a_lock",
	[OP_A_UNLOCK]		= "a_unlock",
	[OP_A_FAST_LOCK]	= "a_fast_lock",
	[OP_A_FAST_UNLOCK]	= "a_fast_unlock",
	[OP_A_GARBAGE]		= "a_garbage",
	[OP_A_BADADDR]		= "a_badaddr",
	[OP_A_BADARGS]		= "a_badargs",
	[OP_WAIT]		= "wait",
	[OP_WAIT_BITSET]	= "wait_bitset",
	[OP_WAKE]		= "wake",
	[OP_WAKE_OP]		= "wake_op",
	[OP_REQUEUE]		= "requeue",
	[OP_CMP_REQUEUE]	= "cmp_requeue",
	[OP_LOCK_PI]		= "lock_pi",
	[OP_LOCK_PI2]		= "lock_pi2",
	[OP_TRYLOCK_PI]		= "trylock_pi",
	[OP_UNLOCK_PI]		= "unlock_pi",
	[OP_WAIT_REQUEUE_PI]	= "wait_requeue_pi",
	[OP_CMP_REQUEUE_PI]	= "cmp_requeue_pi",
	[OP_WAITV]		= "waitv",
	[OP_F2_WAIT]		= "futex2_wait",
	[OP_F2_WAKE]		= "futex2_wake",
	[OP_MUNMAP]		= "munmap",
	[OP_MMAP]		= "mmap",
	[OP_MPROTECT_RO]	= "mprotect_ro",
	[OP_MPROTECT_RW]	= "mprotect_rw",
	[OP_DONTNEED]		= "madv_dontneed",
	[OP_SIGNAL]		= "signal",
	[OP_ROBUST_SET]		= "robust_garbage",
	[OP_HASH_RESIZE]	= "hash_resize",
	[OP_FORK]		= "fork",
	[OP_EXEC]		= "exec",
	[OP_THREAD_EXIT]	= "thread_exit",
	[OP_H_KILL_WAITER]	= "h_kill_waiter",
	[OP_CHILD_KILL]		= "child_kill",
	[OP_PROC_KILL]		= "proc_sigkill",
	[OP_PROC_STOP]		= "proc_sigstop",
};

/*
 * Result buckets. BUSY is a user space cmpxchg that lost, SEGV a user space
 * access to a page that was unmapped or read-only (caught and survived).
 */
enum bucket {
	EB_OK, EB_BUSY, EB_SEGV, EB_EPERM, EB_ESRCH, EB_EINTR, EB_EAGAIN,
	EB_ENOMEM, EB_EFAULT, EB_EINVAL, EB_NOSYS, EB_EDEADLK, EB_ETIMEDOUT,
	EB_EEXIST, EB_EOWNERDEAD, EB_OTHER, NR_EB
};

/*
 * The errno of a syscall number the kernel does not know, read once at
 * start: the futex syscall returns the same one for an unknown command,
 * which is how a kernel without the feature answers.
 */
static int nosys_errno;

static int bucket_of(int err)
{
	switch (err) {
	case 0:			return EB_OK;
	case EPERM:		return EB_EPERM;
	case ESRCH:		return EB_ESRCH;
	case EINTR:		return EB_EINTR;
	case EAGAIN:		return EB_EAGAIN;
	case ENOMEM:		return EB_ENOMEM;
	case EFAULT:		return EB_EFAULT;
	case EINVAL:		return EB_EINVAL;
	case EDEADLK:		return EB_EDEADLK;
	case ETIMEDOUT:		return EB_ETIMEDOUT;
	case EEXIST:		return EB_EEXIST;
	case EOWNERDEAD:	return EB_EOWNERDEAD;
	}
	return err == nosys_errno ? EB_NOSYS : EB_OTHER;
}

static const char *bucket_name(int b)
{
	static const int errs[NR_EB] = {
		[EB_EPERM] = EPERM, [EB_ESRCH] = ESRCH, [EB_EINTR] = EINTR,
		[EB_EAGAIN] = EAGAIN, [EB_ENOMEM] = ENOMEM,
		[EB_EFAULT] = EFAULT, [EB_EINVAL] = EINVAL,
		[EB_EDEADLK] = EDEADLK, [EB_ETIMEDOUT] = ETIMEDOUT,
		[EB_EEXIST] = EEXIST, [EB_EOWNERDEAD] = EOWNERDEAD,
	};

	switch (b) {
	case EB_OK:	return "ok";
	case EB_BUSY:	return "busy";
	case EB_SEGV:	return "SIGSEGV";
	case EB_OTHER:	return "other";
	case EB_NOSYS:	return strerrorname_np(nosys_errno);
	}
	return strerrorname_np(errs[b]);
}

static const char *errname(int err)
{
	const char *s = err ? strerrorname_np(err) : "0";

	return s ? s : "?";
}

/* ------------------------------------------------------------------ */
/* Checks: one TAP point each                                         */

enum check {
	CK_RUN,		/* the workers ran and did not crash */
	CK_HANG,	/* no task stuck in the kernel past deadline + slack */
	CK_EXCL,	/* honest locks exclusive, word names the owner */
	CK_STARVE,	/* honest sleepers get the lock within the handoff bound */
	CK_ABI,		/* FUTEX_SPIN_* return values and errnos as documented */
	CK_LIVE,	/* nobody sleeps in FUTEX_SPIN_LOCK on a free honest lock */
	CK_KILLED,	/* a waiter killed while it gets the lock does not keep it */
	CK_HEADS,	/* no live queue head after the run */
	CK_KLOG,	/* no splat in the kernel log during the run */
	NR_CHECKS
};

static const char * const check_names[NR_CHECKS] = {
	[CK_RUN]	= "workers ran without crashing or harness errors",
	[CK_HANG]	=
		"no task stuck in the kernel past its deadline + slack, killed tasks exit",
	[CK_EXCL]	= "honest locks stay exclusive and name their owner",
	[CK_STARVE]	= "honest sleepers are not starved past the handoff bound (lost wakeups)",
	[CK_ABI]	= "FUTEX_SPIN_LOCK/UNLOCK results and errnos as documented",
	[CK_LIVE]	=
		"no task stays asleep in FUTEX_SPIN_LOCK on a free honest lock (lost wakeups)",
	[CK_KILLED]	=
		"a waiter SIGKILLed before the unlock that hands it the lock does not die owning it",
	[CK_HEADS]	= "no live futex_spin queue heads after the run",
	[CK_KLOG]	= "kernel log has no splat from the run",
};

/* ------------------------------------------------------------------ */
/* Shared state: one memfd, mapped by every process (also after exec)  */

struct hlock {
	unsigned int word;
	unsigned int holder;		/* gid inside the critical section */
	struct robust_list node;	/* word at node - 8, as in struct aword */
	unsigned long long releases;	/* honest unlocks so far */
	unsigned long long canary;
	unsigned long long pad[4];
};

struct aword {
	unsigned int word;
	unsigned int pad;
	struct robust_list node;
};

#define HL_OFFSET	((long)offsetof(struct hlock, word) - (long)offsetof(struct hlock, node))

/*
 * The kill locks: honest, process-shared and not robust, for the waiters
 * that h_kill_waiter SIGKILLs while it unlocks. Not robust, because a
 * robust lock of a killed task gets OWNER_DIED and a wakeup anyway: only
 * without that does a dead owner block the lock for good.
 */
struct klock {
	unsigned int word;
	unsigned int holder;		/* TID inside the critical section */
	unsigned long long pad[7];
};

/* What an h_kill_waiter child says about its FUTEX_SPIN_LOCK call. */
enum { KC_NONE, KC_INSIDE, KC_OWNED, KC_DONE, KC_FAILED };

struct ring_ent {
	unsigned long long t;
	unsigned short op;
	short wid;
	unsigned int fop;
	unsigned int before;
	unsigned int after;
	int ret;
	int err;
};

struct slot {
	/* watchdog record, a seqcount: odd while inside a syscall */
	unsigned int seq;
	unsigned int op;
	unsigned int fop;		/* futex op and flags, if a futex call */
	unsigned long long start;
	unsigned long long deadline;
	unsigned long long stopped0;
	unsigned long long uaddr;
	/*
	 * Honest lock index + 1 while in FUTEX_SPIN_LOCK or FUTEX_SPIN_UNLOCK
	 * on it (op says which), 0 otherwise: the liveness check watches it.
	 */
	unsigned int hlock;
	unsigned int reported;		/* seq already reported as hung */
	unsigned int live_reported;	/* seq already reported as asleep */
	unsigned int doom;		/* fork child generation being killed */
	unsigned int tid;
	unsigned int gid;
	unsigned int incarn;
	unsigned long long ops;
	unsigned int ring_pos;
	int last_other;
	/* the children of an h_kill_waiter in progress */
	unsigned int kc_state[NR_KC];
	int kc_err[NR_KC];
	struct ring_ent ring[RING];
	unsigned long long cnt[NR_OPS][NR_EB];
};

struct proc_rec {
	int pid;
	unsigned int gen;
	unsigned int doomed;		/* being killed or exec'ing */
	unsigned int execs;
	unsigned long long doomed_at;
	unsigned long long last_exec;
	unsigned long long stop_since;	/* SIGSTOP'ed at, 0 if running */
	unsigned long long stop_until;
	unsigned long long stopped_total;
	unsigned int tids[MAX_THREADS];
	unsigned long long crash_addr;
	long long crash_ip;		/* relative to segv_handler() */
	int crash_sig;
};

enum { TS_FREE, TS_ALIVE, TS_EXITING, TS_DEAD };

struct tstate {
	unsigned int gid;
	unsigned int tid;
	unsigned int proc;
	unsigned int pgen;
	unsigned int state;
	unsigned int child;		/* fork child generation, 0 for threads */
	unsigned int cslot;		/* its slot, for fork children */
};

struct fail_rec {
	unsigned int check;
	unsigned int len;		/* set last: the record is complete */
	char text[FAIL_TEXT];
};

struct config {
	unsigned long long seed;
	unsigned long long ops_budget;	/* per worker slot, 0: none */
	unsigned long long slack;
	unsigned int nprocs;
	unsigned int nthreads;
	unsigned int nhs;
	unsigned int disabled;
	unsigned int emulate;
	unsigned int rt;
	unsigned int kill_ms;
	unsigned int live_ms;
	unsigned int live_selftest;
	int memfd;
};

struct shm_hdr {
	struct config cfg;
	unsigned long long t0;
	unsigned int stop;
	unsigned int next_gid;
	unsigned int dead_pos;
	unsigned int dead_tids[DEAD_RING];
	unsigned int fail_cnt[NR_CHECKS];
	unsigned int fail_stored[NR_CHECKS];
	unsigned int fail_next;
	unsigned long long owner_died_seen;
	unsigned long long starve_checked;
	unsigned long long lock_waits_1s;
	unsigned long long kill_ops[2];		/* kill before, after the unlock */
	unsigned long long kill_late;		/* returned owning, then died */
	unsigned long long kill_undecided;
	unsigned long long kill_repairs;
	struct klock klocks[NR_KL];
	struct proc_rec procs[MAX_PROCS];
	struct tstate ts[TS_SIZE];
	struct fail_rec fails[MAX_FAILS];
	struct slot slots[NR_SLOTS];
};

#define ROUND_PAGE(x)	(((x) + PAGE - 1) & ~(PAGE - 1))
#define OFF_HS		ROUND_PAGE(sizeof(struct shm_hdr))
#define OFF_AS		(OFF_HS + ROUND_PAGE(MAX_HS * sizeof(struct hlock)))
#define OFF_VS		(OFF_AS + ROUND_PAGE(NR_AS * sizeof(struct aword)))
#define SHM_SIZE	(OFF_VS + NR_VS * PAGE)
/* The part of the memfd that gets extra views: honest and abused shared. */
#define VIEW_OFF	OFF_HS
#define VIEW_LEN	(OFF_VS - OFF_HS)

/* Groups of operations that -d can disable. */
enum group {
	G_HONEST, G_ABUSE, G_OTHER, G_PAGES, G_ROBUST, G_SIGNAL, G_FORK,
	G_EXEC, G_EXIT, G_KILL, G_STOP, G_HASH, NR_GROUPS
};

static const char * const group_names[NR_GROUPS] = {
	"honest", "abuse", "other", "pages", "robust", "signals", "fork",
	"exec", "exit", "kill", "stop", "hash",
};

/* ------------------------------------------------------------------ */
/* Per process state (private memory)                                 */

enum vstate { VS_RW, VS_RO, VS_UNMAPPED, VS_LOST };

struct vpage {
	char *addr;
	bool shared;
	unsigned long off;		/* in the memfd, if shared */
	int state;
	pthread_mutex_t mu;
};

struct pctx {
	int slot;
	unsigned int gen;
	char *shm;			/* whole memfd, read-write */
	char *alias;			/* second read-write view of VIEW_* */
	char *cow;			/* MAP_PRIVATE view of VIEW_* */
	char *ro;			/* read-only shared view of VIEW_* */
	char *priv;			/* private honest locks and abused words */
	char *ro_page;			/* private read-only page */
	char *none_page;		/* PROT_NONE page */
	struct vpage vp[NR_VPAGES];
	pthread_t threads[MAX_THREADS];
	unsigned int exited[MAX_THREADS];
	unsigned int started[MAX_THREADS];
};

static struct shm_hdr *H;
static struct pctx P;
static const char *self_exe = "/proc/self/exe";

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define RLOAD(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define RSTORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define XCHG(p, v)	__atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define ADD(p, v)	__atomic_add_fetch((p), (v), __ATOMIC_RELAXED)

static bool cas32(unsigned int *p, unsigned int old, unsigned int new,
		  unsigned int *seen)
{
	bool ok = __atomic_compare_exchange_n(p, &old, new, false,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE);
	if (seen)
		*seen = old;
	return ok;
}

static unsigned long long clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static unsigned long long mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void ns_to_ts(unsigned long long ns, struct timespec *ts)
{
	ts->tv_sec = ns / NSEC;
	ts->tv_nsec = ns % NSEC;
}

static void sleep_ns(unsigned long long ns)
{
	struct timespec ts;

	ns_to_ts(ns, &ts);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY), n = 0;

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = 0;
}

static unsigned int gettid_raw(void)
{
	return syscall(SYS_gettid);
}

static long sys_futex(void *uaddr, int op, unsigned int val, const void *tmo,
		      void *uaddr2, unsigned int val3)
{
	return syscall(SYS_futex, uaddr, op, val, tmo, uaddr2, val3);
}

/* splitmix64: seeds every thread from the run seed and its identity. */
static unsigned long long mix64(unsigned long long x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static unsigned long long rng_next(unsigned long long *s)
{
	/* xorshift64*: cheap, and good enough to pick operations */
	unsigned long long x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static unsigned int rnd(unsigned long long *s, unsigned int n)
{
	return n ? (rng_next(s) >> 33) % n : 0;
}

static bool chance(unsigned long long *s, unsigned int percent)
{
	return rnd(s, 100) < percent;
}

static bool group_on(int g)
{
	return !(H->cfg.disabled & (1U << g));
}

/* ------------------------------------------------------------------ */
/* User space accesses that may hit an unmapped or read-only page      */

static __thread sigjmp_buf fault_jmp;
static __thread int fault_armed;
static __thread unsigned int tls_sigs;

static void fatal_write(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	if (__atomic_load_n(&fault_armed, __ATOMIC_RELAXED)) {
		__atomic_store_n(&fault_armed, 0, __ATOMIC_RELAXED);
		siglongjmp(fault_jmp, 1);
	}
	/*
	 * A real crash: leave a trace for the harness, then die of it. The
	 * process counts as doomed, so that the locks it dies with are not
	 * reported a second time as OWNER_DIED on a live holder.
	 */
	if (H && P.slot >= 0 && P.slot < MAX_PROCS) {
		__atomic_store_n(&H->procs[P.slot].doomed, 1, __ATOMIC_SEQ_CST);
		H->procs[P.slot].crash_sig = sig;
		H->procs[P.slot].crash_addr = (unsigned long)si->si_addr;
		H->procs[P.slot].crash_ip = ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] -
					    (unsigned long)segv_handler;
	}
	fatal_write("futex_spin_fuzz: worker crashed\n");
	signal(sig, SIG_DFL);
}

static void usr_handler(int sig)
{
	/* Counted so that a starvation report can tell signalled waiters. */
	__atomic_add_fetch(&tls_sigs, 1, __ATOMIC_RELAXED);
}

/*
 * The guarded helpers return false when the access faulted. sigsetjmp()
 * without the signal mask is cheap; SA_NODEFER keeps SIGSEGV unblocked
 * after the jump. The flag is shared with the signal handler only: the
 * signal fences keep the compiler from moving or dropping its stores
 * around the access (it did drop them, with plain stores).
 */
static void arm(int on)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&fault_armed, on, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static bool g_cas(unsigned int *p, unsigned int old, unsigned int new,
		  unsigned int *seen)
{
	if (sigsetjmp(fault_jmp, 0))
		return false;
	arm(1);
	cas32(p, old, new, seen);
	arm(0);
	return true;
}

static bool g_load(unsigned int *p, unsigned int *v)
{
	if (sigsetjmp(fault_jmp, 0))
		return false;
	arm(1);
	*v = LOAD(p);
	arm(0);
	return true;
}

static bool g_store(unsigned int *p, unsigned int v)
{
	if (sigsetjmp(fault_jmp, 0))
		return false;
	arm(1);
	STORE(p, v);
	arm(0);
	return true;
}

static bool g_store_ptr(struct robust_list **p, struct robust_list *v)
{
	if (sigsetjmp(fault_jmp, 0))
		return false;
	arm(1);
	RSTORE(p, v);
	arm(0);
	return true;
}

static unsigned int peek(unsigned int *p)
{
	unsigned int v = 0xdeadbeef;

	g_load(p, &v);
	return v;
}

/* ------------------------------------------------------------------ */
/* Per thread context                                                  */

struct held {
	struct hlock *l;		/* in the view it was taken through */
	int li;
	int left;			/* operations to run before unlocking */
	int fop;			/* FUTEX_PRIVATE_FLAG or 0 */
};

struct worker {
	struct slot *sl;
	struct proc_rec *pr;
	int sidx;
	int tslot;
	unsigned int tid;
	unsigned int gid;
	unsigned long long rng;
	bool child;
	bool abuser;
	int nheld;
	struct held held[MAX_HELD];
	int nowned;
	unsigned int *owned[MAX_OWNED];
	unsigned int weights[NR_OPS];
	unsigned int wsum;
	/*
	 * The robust list head. The word in front of it makes the head
	 * itself a harmless entry when a garbage list of another thread
	 * runs into it: the kernel then looks at dummy, not at our state.
	 */
	struct {
		unsigned int dummy;
		unsigned int pad;
		struct robust_list_head head;
	} rl;
};

static unsigned long long slot_budget;

/* ------------------------------------------------------------------ */
/* Failure records, written by any process, printed by the harness     */

static const char * const wkind_names[] = {
	"hs", "hp", "as", "as@alias", "as@cow", "as@ro", "ap", "av", "bad",
	"kl",
};

static int fmt_wid(char *b, size_t n, int wid)
{
	if (wid < 0)
		return snprintf(b, n, "-");
	return snprintf(b, n, "%s%d", wkind_names[wid / 1000 % ARRAY_SIZE(wkind_names)],
			wid % 1000);
}

static size_t ring_format(struct slot *sl, char *buf, size_t len)
{
	unsigned int pos = RLOAD(&sl->ring_pos), i;
	size_t n = 0;

	n += snprintf(buf + n, len - n, "last operations of tid %u (oldest first):\n",
		      sl->tid);
	for (i = 0; i < RING && n < len - 1; i++) {
		struct ring_ent *e = &sl->ring[(pos + i) % RING];
		char w[24];

		if (!e->t)
			continue;
		fmt_wid(w, sizeof(w), e->wid);
		n += snprintf(buf + n, len - n,
			      "  %9.6f %-16s %-10s op=%#x word %#x -> %#x ret=%d %s\n",
			      (double)(e->t - H->t0) / NSEC,
			      e->op < NR_OPS ? op_names[e->op] : "?", w, e->fop,
			      e->before, e->after, e->ret,
			      e->ret < 0 ? errname(e->err) : "");
	}
	return n < len ? n : len - 1;
}

static __printf(3, 4) void failf(struct worker *w, int ck, const char *fmt, ...)
{
	struct fail_rec *rec;
	unsigned int idx;
	va_list ap;
	size_t n;

	ADD(&H->fail_cnt[ck], 1);
	if (ADD(&H->fail_stored[ck], 1) > FAILS_PER_CHECK)
		return;
	idx = ADD(&H->fail_next, 1) - 1;
	if (idx >= MAX_FAILS)
		return;
	rec = &H->fails[idx];
	rec->check = ck;
	va_start(ap, fmt);
	n = vsnprintf(rec->text, FAIL_TEXT, fmt, ap);
	va_end(ap);
	if (n >= FAIL_TEXT)
		n = FAIL_TEXT - 1;
	if (w) {
		n += snprintf(rec->text + n, FAIL_TEXT - n,
			      "\nat %.6f s, proc %d gen %u, slot %d%s, tid %u gid %u\n",
			      (double)(mono_ns() - H->t0) / NSEC, P.slot, P.gen,
			      w->sidx, w->child ? " (fork child)" : "", w->tid,
			      w->gid);
		if (n < FAIL_TEXT - 1)
			n += ring_format(w->sl, rec->text + n, FAIL_TEXT - n);
	}
	if (n >= FAIL_TEXT)
		n = FAIL_TEXT - 1;
	STORE(&rec->len, n ? n : 1);
}

/* ------------------------------------------------------------------ */
/* Accounting, watchdog records                                        */

static void account(struct worker *w, int op, int b, int wid, unsigned int fop,
		    unsigned int before, unsigned int after, int ret, int err)
{
	struct slot *sl = w->sl;
	struct ring_ent *e = &sl->ring[sl->ring_pos % RING];

	sl->cnt[op][b]++;
	if (b == EB_OTHER)
		sl->last_other = err;
	e->t = mono_ns();
	e->op = op;
	e->wid = wid;
	e->fop = fop;
	e->before = before;
	e->after = after;
	e->ret = ret;
	e->err = err;
	RSTORE(&sl->ring_pos, sl->ring_pos + 1);
	RSTORE(&sl->ops, sl->ops + 1);
}

/* Account a syscall result: ret < 0 means failed with err. */
static void account_sys(struct worker *w, int op, int wid, unsigned int fop,
			unsigned int before, unsigned int after, long ret,
			int err)
{
	account(w, op, ret < 0 ? bucket_of(err) : EB_OK, wid, fop, before,
		after, (int)ret, ret < 0 ? err : 0);
}

static void wd_begin(struct worker *w, int op, void *uaddr,
		     unsigned long long deadline)
{
	struct slot *sl = w->sl;

	if (op >= OP_MUNMAP)
		sl->fop = 0;	/* not a futex call */
	sl->op = op;
	sl->start = mono_ns();
	sl->deadline = deadline ? deadline : sl->start;
	sl->uaddr = (unsigned long)uaddr;
	sl->stopped0 = RLOAD(&w->pr->stopped_total);
	STORE(&sl->seq, sl->seq + 1);
}

static void wd_end(struct worker *w)
{
	RSTORE(&w->sl->hlock, 0);
	STORE(&w->sl->seq, w->sl->seq + 1);
}

/* ------------------------------------------------------------------ */
/* Thread identities: who is alive, for the OWNER_DIED check           */

static unsigned int ts_register(unsigned int tid, unsigned int child,
				unsigned int cslot)
{
	unsigned int gid = ADD(&H->next_gid, 1);
	struct tstate *t = &H->ts[gid % TS_SIZE];

	STORE(&t->gid, 0);
	t->tid = tid;
	t->proc = P.slot;
	t->pgen = P.gen;
	t->child = child;
	t->cslot = cslot;
	STORE(&t->state, TS_ALIVE);
	STORE(&t->gid, gid);
	return gid;
}

static void ts_set(unsigned int gid, unsigned int state)
{
	struct tstate *t = &H->ts[gid % TS_SIZE];

	if (gid && LOAD(&t->gid) == gid)
		STORE(&t->state, state);
}

/*
 * True when the thread @gid is dead or about to die: it said so itself,
 * or the harness or an exec doomed its process, or its forker doomed it.
 * A stale table entry counts as dead: that only weakens the check.
 */
static bool gid_dead(unsigned int gid)
{
	struct tstate *t = &H->ts[gid % TS_SIZE];
	struct proc_rec *pr;

	if (LOAD(&t->gid) != gid || LOAD(&t->state) != TS_ALIVE)
		return true;
	pr = &H->procs[t->proc];
	if (t->pgen != LOAD(&pr->gen) || LOAD(&pr->doomed))
		return true;
	/* doomed fork children are flagged in their slot */
	return t->child && LOAD(&H->slots[t->cslot].doom) == t->child;
}

static void dead_push(unsigned int tid)
{
	if (tid)
		RSTORE(&H->dead_tids[ADD(&H->dead_pos, 1) % DEAD_RING], tid);
}

static unsigned int some_live_tid(unsigned long long *r)
{
	struct proc_rec *pr = &H->procs[rnd(r, H->cfg.nprocs)];

	return RLOAD(&pr->tids[rnd(r, H->cfg.nthreads)]);
}

static unsigned int some_dead_tid(unsigned long long *r)
{
	return RLOAD(&H->dead_tids[rnd(r, DEAD_RING)]);
}

/* ------------------------------------------------------------------ */
/* Process setup                                                       */

static void die(const char *what)
{
	char buf[200], load[64], max[32];
	int err = errno;

	/* resource failures: how many tasks there are says whether we leak */
	read_file("/proc/loadavg", load, sizeof(load));
	read_file("/proc/sys/kernel/threads-max", max, sizeof(max));
	load[strcspn(load, "\n")] = 0;
	max[strcspn(max, "\n")] = 0;
	snprintf(buf, sizeof(buf),
		 "proc %d: %s: %s (loadavg %s, threads-max %s)", P.slot, what,
		 strerror(err), load, max);
	fatal_write(buf);
	fatal_write("\n");
	if (H)
		failf(NULL, CK_RUN, "%s", buf);
	_exit(3);
}

static void *xmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	void *p = mmap(addr, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void set_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	/* One restarting and one interrupting signal for the waiters. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
}

static void setup_process(int slot)
{
	int fd = H->cfg.memfd;
	char *vres;
	int i;

	P.slot = slot;
	P.shm = (char *)H;
	P.gen = LOAD(&H->procs[slot].gen);

	/*
	 * Extra views of the shared locks and words: the same key reached
	 * through another address, a private copy-on-write view (its key
	 * changes when the page is copied) and a read-only view.
	 */
	P.alias = xmap(NULL, VIEW_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       VIEW_OFF);
	P.cow = xmap(NULL, VIEW_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		     VIEW_OFF);
	P.ro = xmap(NULL, VIEW_LEN, PROT_READ, MAP_SHARED, fd, VIEW_OFF);
	P.priv = xmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	P.ro_page = xmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	P.none_page = xmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);

	/* Read-only words: free, owned by init, owned by us-to-be, waiters. */
	((unsigned int *)P.ro_page)[0] = 0;
	((unsigned int *)P.ro_page)[4] = 1 | FUTEX_WAITERS;
	((unsigned int *)P.ro_page)[8] = FUTEX_OWNER_DIED;
	((unsigned int *)P.ro_page)[12] = 0x3fffffff;
	if (mprotect(P.ro_page, PAGE, PROT_READ))
		die("mprotect");

	/*
	 * Private volatile pages sit between PROT_NONE guard pages, so the
	 * hole an munmap leaves is a single page that our own later mappings
	 * (thread stacks, malloc arenas) are too big to fill.
	 */
	vres = xmap(NULL, (2 * NR_VP + 1) * PAGE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < NR_VPAGES; i++) {
		struct vpage *vp = &P.vp[i];

		pthread_mutex_init(&vp->mu, NULL);
		vp->state = VS_RW;
		if (i < NR_VS) {
			vp->shared = true;
			vp->off = OFF_VS + i * PAGE;
			vp->addr = P.shm + vp->off;
		} else {
			vp->addr = vres + (2 * (i - NR_VS) + 1) * PAGE;
			xmap(vp->addr, PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		}
	}
	set_handlers();
}

/* ------------------------------------------------------------------ */
/* Words                                                               */

enum wkind { WK_HS, WK_HP, WK_AS, WK_ALIAS, WK_COW, WK_RO, WK_AP, WK_AV,
	     WK_BAD, WK_KL };

static char *view_base(int kind)
{
	switch (kind) {
	case WK_ALIAS:	return P.alias;
	case WK_COW:	return P.cow;
	case WK_RO:	return P.ro;
	}
	return P.shm + VIEW_OFF;
}

static struct hlock *hl_addr(int li, bool alias)
{
	unsigned int nhs = H->cfg.nhs;

	if (li < (int)nhs)
		return (struct hlock *)(view_base(alias ? WK_ALIAS : WK_HS) +
					(OFF_HS - VIEW_OFF)) + li;
	return (struct hlock *)P.priv + (li - nhs);
}

/* Private honest locks with an even index use private keys, odd shared. */
static int hl_fop(int li)
{
	if (li < (int)H->cfg.nhs)
		return 0;
	return (li & 1) ? 0 : FUTEX_PRIVATE_FLAG;
}

static struct aword *aw_addr(int kind, int i)
{
	switch (kind) {
	case WK_AP:
		return (struct aword *)(P.priv + PAGE) + i;
	case WK_AV:
		return (struct aword *)P.vp[i / WPV].addr + i % WPV;
	}
	return (struct aword *)(view_base(kind) + (OFF_AS - VIEW_OFF)) + i;
}

/* An abused word: mostly shared ones, so that processes collide. */
static struct aword *pick_aword(struct worker *w, int *kind, int *wid)
{
	unsigned int r = rnd(&w->rng, 100);
	int k, i;

	if (r < 38)
		k = WK_AS;
	else if (r < 48)
		k = WK_ALIAS;
	else if (r < 53)
		k = WK_COW;
	else if (r < 57)
		k = WK_RO;
	else if (r < 80)
		k = WK_AP;
	else
		k = WK_AV;
	if (k == WK_AP)
		i = rnd(&w->rng, NR_AP);
	else if (k == WK_AV)
		i = rnd(&w->rng, NR_VPAGES * WPV);
	else
		i = rnd(&w->rng, NR_AS);
	*kind = k;
	*wid = k * 1000 + i;
	return aw_addr(k, i);
}

/* A value for an abused word: TIDs of all kinds, flags, garbage. */
static unsigned int forge(struct worker *w)
{
	unsigned int v;

	switch (rnd(&w->rng, 10)) {
	case 0:
		return 0;
	case 1:
		return (unsigned int)rng_next(&w->rng);
	case 2:
		v = w->tid;
		break;
	case 3:
	case 4:
		v = some_live_tid(&w->rng);
		break;
	case 5:
		v = some_dead_tid(&w->rng);
		break;
	case 6:
		return FUTEX_OWNER_DIED | (chance(&w->rng, 50) ? FUTEX_WAITERS : 0);
	case 7:
		return FUTEX_WAITERS;
	case 8:
		v = FUTEX_TID_MASK;
		break;
	default:
		v = 1;
		break;
	}
	if (chance(&w->rng, 30))
		v |= FUTEX_WAITERS;
	if (chance(&w->rng, 10))
		v |= FUTEX_OWNER_DIED;
	return v;
}

static struct robust_list *node_entry(struct robust_list *n)
{
	/* In PI emulation the robust list must say so, bit 0 of the entry. */
	return (struct robust_list *)((unsigned long)n | !!H->cfg.emulate);
}

static struct robust_list *entry_node(struct robust_list *e)
{
	return (struct robust_list *)((unsigned long)e & ~1UL);
}

static void robust_register(struct worker *w)
{
	w->rl.head.list.next = &w->rl.head.list;
	w->rl.head.futex_offset = HL_OFFSET;
	w->rl.head.list_op_pending = NULL;
	syscall(SYS_set_robust_list, &w->rl.head, sizeof(w->rl.head));
}

static void robust_pending(struct worker *w, struct robust_list *n)
{
	RSTORE(&w->rl.head.list_op_pending, n ? node_entry(n) : NULL);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void robust_link(struct worker *w, struct robust_list *n)
{
	n->next = w->rl.head.list.next;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	RSTORE(&w->rl.head.list.next, node_entry(n));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Honest lists hold only our own nodes: the walk is short and safe. */
static void robust_unlink(struct worker *w, struct robust_list *n)
{
	struct robust_list *p = &w->rl.head.list;
	int i;

	for (i = 0; i <= MAX_HELD + 1; i++) {
		struct robust_list *next = entry_node(p->next);

		if (next == n) {
			RSTORE(&p->next, n->next);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			return;
		}
		if (next == &w->rl.head.list)
			break;
		p = next;
	}
	failf(w, CK_RUN, "harness bug: robust node %p not on our list", n);
}

/* ------------------------------------------------------------------ */
/* Timeouts                                                            */

enum tcls { T_PAST, T_ZERO, T_NEAR, T_SHORT, T_MED, T_LONG, T_FAR, T_HUGE };

struct tmo {
	struct timespec ts;
	bool rt;			/* CLOCK_REALTIME */
	unsigned long long target;	/* ns on its own clock */
	unsigned long long deadline;	/* ns on CLOCK_MONOTONIC, for the watchdog */
	int cls;
};

/* An absolute timeout of class @cls on CLOCK_REALTIME or CLOCK_MONOTONIC. */
static void mk_abs(struct worker *w, int cls, bool rt, struct tmo *t)
{
	unsigned long long now = clock_ns(rt ? CLOCK_REALTIME : CLOCK_MONOTONIC);
	unsigned long long mnow = rt ? mono_ns() : now, d = 0;

	t->rt = rt;
	t->cls = cls;
	switch (cls) {
	case T_PAST:
		t->target = now - rnd(&w->rng, 10 * MSEC) - 1;
		break;
	case T_ZERO:
		t->target = 0;
		break;
	case T_NEAR:
		d = rnd(&w->rng, 500 * USEC);
		break;
	case T_SHORT:
		d = 500 * USEC + rnd(&w->rng, 4500 * USEC);
		break;
	case T_MED:
		d = 5 * MSEC + rnd(&w->rng, 45 * MSEC);
		break;
	case T_LONG:
		d = 100 * MSEC + rnd(&w->rng, 200 * MSEC);
		break;
	case T_FAR:
		d = 2 * NSEC + rnd(&w->rng, 2 * NSEC);
		break;
	}
	if (cls >= T_NEAR && cls <= T_FAR)
		t->target = now + d;
	ns_to_ts(t->target, &t->ts);
	t->deadline = mnow + d;
	if (cls == T_HUGE) {
		/* beyond any run: a day ahead, or so far that it saturates */
		switch (rnd(&w->rng, 3)) {
		case 0:
			t->ts.tv_sec = now / NSEC + 86400;
			break;
		case 1:
			t->ts.tv_sec = LONG_MAX;
			break;
		default:
			t->ts.tv_sec = LONG_MAX / 2 + rnd(&w->rng, 1000);
			break;
		}
		t->ts.tv_nsec = rnd(&w->rng, NSEC);
		t->target = ULLONG_MAX;
		t->deadline = mnow + FOREVER_BOUND;
	}
}

/* A relative timeout for FUTEX_WAIT, up to a few ms. */
static unsigned long long mk_rel(struct worker *w, struct timespec *ts)
{
	unsigned long long d = rnd(&w->rng, 3) ? rnd(&w->rng, 2 * MSEC) : 0;

	ns_to_ts(d, ts);
	return mono_ns() + d;
}

static int honest_cls(struct worker *w)
{
	unsigned int r = rnd(&w->rng, 100);
	int cls;

	if (r < 30)
		cls = T_NEAR;
	else if (r < 65)
		cls = T_SHORT;
	else if (r < 85)
		cls = T_MED;
	else if (r < 93)
		cls = T_LONG;
	else
		cls = T_FAR;
	/* A holder waits only briefly: others may be waiting for it. */
	if (w->nheld && cls > T_SHORT)
		cls = T_SHORT;
	return cls;
}

static int abuse_cls(struct worker *w)
{
	unsigned int r = rnd(&w->rng, 100);

	if (r < 15)
		return T_PAST;
	if (r < 20)
		return T_ZERO;
	if (r < 65)
		return T_NEAR;
	if (r < 90 || w->nheld)
		return T_SHORT;
	if (r < 99)
		return T_MED;
	return T_LONG;
}

/* ETIMEDOUT before the deadline is an ABI violation. */
static void check_early(struct worker *w, struct tmo *t, int op, int wid)
{
	unsigned long long now = clock_ns(t->rt ? CLOCK_REALTIME : CLOCK_MONOTONIC);
	char ws[24];

	if (now >= t->target || H->cfg.emulate)
		return;
	fmt_wid(ws, sizeof(ws), wid);
	failf(w, CK_ABI, "%s on %s: ETIMEDOUT %llu ns before the %s deadline (class %d)",
	      op_names[op], ws, t->target - now, t->rt ? "realtime" : "monotonic",
	      t->cls);
}

/* ------------------------------------------------------------------ */
/* Spinning futex calls                                                */

static int spin_lock_op(int flags)
{
	return (H->cfg.emulate ? FUTEX_LOCK_PI2 : FUTEX_SPIN_LOCK) | flags;
}

static int spin_unlock_op(int flags)
{
	return (H->cfg.emulate ? FUTEX_UNLOCK_PI : FUTEX_SPIN_UNLOCK) | flags;
}

static long spin_call(struct worker *w, int op, void *uaddr, int fop,
		      unsigned int val, const void *tmo, void *uaddr2,
		      unsigned int val3, unsigned long long deadline, int *err)
{
	long ret;

	w->sl->fop = fop;
	wd_begin(w, op, uaddr, deadline);
	ret = sys_futex(uaddr, fop, val, tmo, uaddr2, val3);
	*err = ret < 0 ? errno : 0;
	wd_end(w);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Honest locks                                                        */

static int nr_honest(struct worker *w)
{
	/* Fork children share only the shared locks with anybody. */
	return H->cfg.nhs + (w->child ? 0 : NR_HP);
}

/* A lock above every one we hold: ordered locking cannot deadlock. */
static int pick_honest(struct worker *w)
{
	int lo = w->nheld ? w->held[w->nheld - 1].li + 1 : 0;
	int n = nr_honest(w);

	if (lo >= n || w->nheld >= MAX_HELD)
		return -1;
	return lo + rnd(&w->rng, n - lo);
}

static int hl_wid(int li)
{
	int nhs = H->cfg.nhs;

	return li < nhs ? WK_HS * 1000 + li : WK_HP * 1000 + li - nhs;
}

static void crit_enter(struct worker *w, struct hlock *l, int li, int op)
{
	unsigned int word = LOAD(&l->word), old, seen;
	bool od = word & FUTEX_OWNER_DIED;

	if ((word & FUTEX_TID_MASK) != w->tid)
		failf(w, CK_EXCL, "hs/hp lock %d taken by %s but the word is %#x, not our TID %u",
		      li, op_names[op], word, w->tid);
	old = XCHG(&l->holder, w->gid);
	if (old) {
		struct tstate *t = &H->ts[old % TS_SIZE];

		if (!od || !gid_dead(old))
			failf(w, CK_EXCL,
			      "lock %d taken by %s (word %#x) while gid %u (tid %u, proc %u gen %u, state %u, %s) is inside it: %s",
			      li, op_names[op], word, old, t->tid, t->proc,
			      t->pgen, t->state, gid_dead(old) ? "dead" : "alive",
			      od ? "OWNER_DIED set though the holder lives"
				 : "not exclusive, or the holder died without OWNER_DIED");
		else
			ADD(&H->owner_died_seen, 1);
	} else if (od) {
		ADD(&H->owner_died_seen, 1);
	}
	/* We own it now: make it consistent again, as a robust mutex would. */
	while (word & FUTEX_OWNER_DIED) {
		if (cas32(&l->word, word, word & ~FUTEX_OWNER_DIED, &seen))
			break;
		word = seen;
		if ((word & FUTEX_TID_MASK) != w->tid) {
			failf(w, CK_EXCL, "lock %d: word became %#x while we own it",
			      li, word);
			break;
		}
	}
	RSTORE(&l->canary, RLOAD(&l->canary) + 1);
}

static void honest_lock(struct worker *w, int op)
{
	int li = pick_honest(w), fop, err = 0, wid;
	unsigned long long rel0 = 0, t0 = 0;
	unsigned int before, after, sigs0;
	bool got = false, alias;
	struct hlock *l;
	struct tmo t;
	const void *tp;
	long ret;

	if (li < 0)
		return;
	alias = li < (int)H->cfg.nhs && chance(&w->rng, 50);
	l = hl_addr(li, alias);
	fop = hl_fop(li);
	wid = hl_wid(li);
	robust_pending(w, &l->node);

	if (op == OP_H_TRYLOCK || (op == OP_H_LOCK && chance(&w->rng, 50))) {
		got = cas32(&l->word, 0, w->tid, &before);
		account(w, OP_H_TRYLOCK, got ? EB_OK : EB_BUSY, wid, 0, before,
			got ? w->tid : before, got ? 0 : -1, 0);
		if (got || op == OP_H_TRYLOCK)
			goto out;
	}

	if (op == OP_H_LOCK_FOREVER && w->nheld)
		op = OP_H_LOCK;
	switch (op) {
	case OP_H_LOCK_PAST:
		mk_abs(w, chance(&w->rng, 80) ? T_PAST : T_ZERO,
		       chance(&w->rng, 50), &t);
		tp = &t.ts;
		break;
	case OP_H_LOCK_FOREVER:
		mk_abs(w, T_HUGE, chance(&w->rng, 50), &t);
		tp = chance(&w->rng, 50) ? &t.ts : NULL;
		break;
	default:
		mk_abs(w, honest_cls(w), chance(&w->rng, 50), &t);
		tp = &t.ts;
		break;
	}
	if (t.rt)
		fop |= FUTEX_CLOCK_REALTIME;
	rel0 = RLOAD(&l->releases);
	sigs0 = RLOAD(&tls_sigs);
	before = RLOAD(&l->word);
	t0 = mono_ns();
	RSTORE(&w->sl->hlock, li + 1);
	ret = spin_call(w, op, &l->word, spin_lock_op(fop), 0, tp, NULL, 0,
			t.deadline, &err);
	after = RLOAD(&l->word);
	account_sys(w, op, wid, fop, before, after, ret, err);

	if (ret == 0) {
		got = true;
	} else if (ret > 0) {
		failf(w, CK_ABI, "FUTEX_SPIN_LOCK on lock %d returned %ld", li, ret);
	} else if (err == ETIMEDOUT && tp) {
		unsigned long long waited = mono_ns() - t0;

		check_early(w, &t, op, wid);
		if (waited >= STARVE_MIN_WAIT && !H->cfg.rt) {
			/*
			 * Sleepers are woken in arrival order, and one past its
			 * due time (1 ms per waiter ahead) that runs asks and is
			 * handed the lock: we are first after the others that can
			 * reach this lock got it once, plus a few fast path cycles
			 * before we ask. A signal restarts the call at the end of
			 * the queue.
			 */
			unsigned int nt = li < (int)H->cfg.nhs ?
				H->cfg.nprocs * H->cfg.nthreads + 4 : H->cfg.nthreads + 2;
			unsigned long long rel = RLOAD(&l->releases) - rel0;
			unsigned int sigs = RLOAD(&tls_sigs) - sigs0;
			unsigned long long bound = 3ULL * nt + 16 + sigs * nt;

			ADD(&H->starve_checked, 1);
			if (rel > bound)
				failf(w, CK_STARVE,
				      "lock %d: waited %.3f s and timed out while it was released %llu times by others (bound %llu, %u signals); word now %#x",
				      li, (double)waited / NSEC, rel, bound,
				      sigs, after);
		}
	} else if (!H->cfg.emulate) {
		/* PI emulation may also say EDEADLK for a PI chain deadlock */
		failf(w, CK_ABI, "FUTEX_SPIN_LOCK on honest lock %d: %s (op %#x)",
		      li, errname(err), fop);
	}
	if (mono_ns() - t0 >= NSEC)
		ADD(&H->lock_waits_1s, 1);

	/* An error must not leave the lock to us: nobody else names us. */
	if (!got && (LOAD(&l->word) & FUTEX_TID_MASK) == w->tid) {
		failf(w, CK_EXCL,
		      "FUTEX_SPIN_LOCK on lock %d failed with %s but the word names us (%#x)",
		      li, errname(err), LOAD(&l->word));
		got = true;	/* take it, so that it gets released */
	}
out:
	if (got) {
		struct held *h = &w->held[w->nheld++];
		unsigned int r = rnd(&w->rng, 100);

		robust_link(w, &l->node);
		robust_pending(w, NULL);
		h->l = l;
		h->li = li;
		h->fop = hl_fop(li);
		h->left = r < 60 ? 0 : r < 90 ? 1 + rnd(&w->rng, 3) : 4 + rnd(&w->rng, 7);
		crit_enter(w, l, li, op);
	} else {
		robust_pending(w, NULL);
	}
}

/* Stay in the critical section a little: spinners see a running owner. */
static void crit_work(struct worker *w)
{
	unsigned int r = rnd(&w->rng, 1000), i, n;

	if (r < 20) {
		sched_yield();
	} else if (r < 30) {
		sleep_ns(20 * USEC + rnd(&w->rng, 200 * USEC));
	} else {
		n = rnd(&w->rng, 2000);
		for (i = 0; i < n; i++)
			__asm__ __volatile__("pause" ::: "memory");
	}
}

static void honest_unlock(struct worker *w)
{
	struct held *h = &w->held[w->nheld - 1];
	struct hlock *l = h->l;
	unsigned long long canary = RLOAD(&l->canary);
	unsigned int word, old, before;
	int wid = hl_wid(h->li), err = 0;
	long ret;

	crit_work(w);
	if (RLOAD(&l->canary) != canary)
		failf(w, CK_EXCL, "lock %d: canary changed under us", h->li);
	word = LOAD(&l->word);
	if ((word & FUTEX_TID_MASK) != w->tid || (word & FUTEX_OWNER_DIED))
		failf(w, CK_EXCL, "lock %d: word changed to %#x while we (TID %u) held it",
		      h->li, word, w->tid);
	ADD(&l->releases, 1);
	old = XCHG(&l->holder, 0);
	if (old != w->gid)
		failf(w, CK_EXCL, "lock %d: holder changed to gid %u while we (gid %u) held it",
		      h->li, old, w->gid);

	robust_pending(w, &l->node);
	robust_unlink(w, &l->node);
	if (chance(&w->rng, 50) && cas32(&l->word, w->tid, 0, &before)) {
		account(w, OP_H_UNLOCK_FAST, EB_OK, wid, 0, before, 0, 0, 0);
	} else {
		/*
		 * Now and then the kernel clears the robust list's pending op
		 * for us, as FUTEX_ROBUST_UNLOCK asks.
		 */
		bool robust = chance(&w->rng, 25);
		int fop = spin_unlock_op(h->fop) | (robust ? FUTEX_ROBUST_UNLOCK : 0);

		before = LOAD(&l->word);
		RSTORE(&w->sl->hlock, h->li + 1);
		ret = spin_call(w, OP_H_UNLOCK, &l->word, fop, 0, NULL,
				robust ? (void *)&w->rl.head.list_op_pending : NULL,
				0, 0, &err);
		account_sys(w, OP_H_UNLOCK, wid, h->fop, before,
			    RLOAD(&l->word), ret, err);
		if (!ret && robust && RLOAD(&w->rl.head.list_op_pending))
			failf(w, CK_ABI,
			      "FUTEX_SPIN_UNLOCK | FUTEX_ROBUST_UNLOCK of lock %d left the pending op",
			      h->li);
		if (ret) {
			failf(w, CK_ABI,
			      "FUTEX_SPIN_UNLOCK of our lock %d (word %#x): ret %ld %s, expected 0",
			      h->li, before, ret, ret < 0 ? errname(err) : "");
			/* leave it free anyway, or everybody else starves */
			word = LOAD(&l->word);
			if ((word & FUTEX_TID_MASK) == w->tid)
				cas32(&l->word, word, 0, NULL);
		}
	}
	robust_pending(w, NULL);
	w->nheld--;
}

static void release_all(struct worker *w)
{
	while (w->nheld)
		honest_unlock(w);
}

/* FUTEX_SPIN_LOCK on a lock we hold: EDEADLK, and we keep it. */
static void honest_relock(struct worker *w)
{
	struct held *h;
	unsigned int before, after;
	struct tmo t;
	int err, fop;
	long ret;

	if (!w->nheld) {
		honest_lock(w, OP_H_LOCK);
		return;
	}
	h = &w->held[rnd(&w->rng, w->nheld)];
	mk_abs(w, T_NEAR, chance(&w->rng, 50), &t);
	fop = h->fop | (t.rt ? FUTEX_CLOCK_REALTIME : 0);
	before = LOAD(&h->l->word);
	ret = spin_call(w, OP_H_RELOCK, &h->l->word, spin_lock_op(fop), 0,
			&t.ts, NULL, 0, t.deadline, &err);
	after = LOAD(&h->l->word);
	account_sys(w, OP_H_RELOCK, hl_wid(h->li), fop, before, after, ret, err);
	if (ret != -1 || err != EDEADLK)
		failf(w, CK_ABI,
		      "FUTEX_SPIN_LOCK on lock %d we own (word %#x): ret %ld %s, expected EDEADLK",
		      h->li, before, ret, errname(err));
	if ((after & FUTEX_TID_MASK) != w->tid)
		failf(w, CK_EXCL, "lock %d: word %#x after our relock, not our TID %u",
		      h->li, after, w->tid);
}

static bool holding(struct worker *w, int li)
{
	int i;

	for (i = 0; i < w->nheld; i++)
		if (w->held[i].li == li)
			return true;
	return false;
}

/* FUTEX_SPIN_UNLOCK on a lock we do not hold: EPERM, and no harm done. */
static void honest_foreign_unlock(struct worker *w)
{
	int li = rnd(&w->rng, nr_honest(w)), err;
	struct hlock *l = hl_addr(li, chance(&w->rng, 50));
	unsigned int before;
	long ret;

	if (holding(w, li))
		return;
	before = RLOAD(&l->word);
	ret = spin_call(w, OP_H_FOREIGN_UNLOCK, &l->word,
			spin_unlock_op(hl_fop(li)), 0, NULL, NULL, 0, 0, &err);
	account_sys(w, OP_H_FOREIGN_UNLOCK, hl_wid(li), hl_fop(li), before,
		    RLOAD(&l->word), ret, err);
	if (ret != -1 || err != EPERM)
		failf(w, CK_ABI,
		      "FUTEX_SPIN_UNLOCK on lock %d owned by another (word %#x): ret %ld %s, expected EPERM",
		      li, before, ret, errname(err));
}

/*
 * Invalid arguments on honest locks: EINVAL (EFAULT for an unreadable
 * timeout of the lock; ENOSYS for a clock on the unlock, which takes no
 * timeout and reads no pointer there), and
 * neither a lock nor an unlock may happen.
 */
static void honest_badargs(struct worker *w)
{
	unsigned int before, after, dummy = 0;
	int v = rnd(&w->rng, 6), err, li, fop, expect = EINVAL;
	unsigned int val = 0, val3 = 0;
	void *uaddr2 = NULL;
	const void *tp;
	struct hlock *l;
	struct tmo t;
	long ret;

	if (H->cfg.emulate)
		return;
	switch (v) {
	case 0:
		val = 1 + rnd(&w->rng, 1000);
		break;
	case 1:
		uaddr2 = &dummy;
		break;
	case 2:
		val3 = 1 + rnd(&w->rng, 1000);
		break;
	}
	if (w->nheld && chance(&w->rng, 50)) {
		struct held *h = &w->held[rnd(&w->rng, w->nheld)];
		struct timespec uts = { .tv_sec = 1 };
		const void *utp = NULL;

		fop = h->fop;
		switch (v) {
		case 3:
			/* no timeout, so no clock: ENOSYS, as for every such op */
			fop |= FUTEX_CLOCK_REALTIME;
			expect = nosys_errno;
			break;
		case 4:
			/* no timeout at all, valid or not */
			utp = &uts;
			if (chance(&w->rng, 50))
				uts.tv_nsec = -1;
			break;
		case 5:
			/* refused unread, like any other pointer there */
			utp = chance(&w->rng, 50) ? (void *)16 : (void *)P.none_page;
			break;
		}
		before = LOAD(&h->l->word);
		ret = spin_call(w, OP_H_BADARGS, &h->l->word,
				spin_unlock_op(fop), val, utp, uaddr2, val3,
				0, &err);
		after = LOAD(&h->l->word);
		account_sys(w, OP_H_BADARGS, hl_wid(h->li), fop, before,
			    after, ret, err);
		if (ret != -1 || err != expect)
			failf(w, CK_ABI,
			      "FUTEX_SPIN_UNLOCK(val %u, timeout %p, uaddr2 %p, val3 %u, op %#x) on our lock %d: ret %ld %s, expected %s",
			      val, utp, uaddr2, val3, fop, h->li, ret,
			      errname(err), errname(expect));
		if ((after & FUTEX_TID_MASK) != w->tid)
			failf(w, CK_EXCL,
			      "lock %d: an invalid FUTEX_SPIN_UNLOCK released it (word %#x)",
			      h->li, after);
		return;
	}

	li = rnd(&w->rng, nr_honest(w));
	if (holding(w, li))
		return;
	l = hl_addr(li, false);
	fop = hl_fop(li);
	mk_abs(w, T_NEAR, chance(&w->rng, 50), &t);
	tp = &t.ts;
	switch (v) {
	case 3:
		t.ts.tv_nsec = chance(&w->rng, 50) ? (long)NSEC + rnd(&w->rng, 1000) : -1;
		break;
	case 4:
		t.ts.tv_sec = -1 - (long)rnd(&w->rng, 1000);
		break;
	case 5:
		tp = chance(&w->rng, 50) ? (void *)16 : (void *)P.none_page;
		expect = EFAULT;
		break;
	}
	if (t.rt)
		fop |= FUTEX_CLOCK_REALTIME;
	before = LOAD(&l->word);
	ret = spin_call(w, OP_H_BADARGS, &l->word, spin_lock_op(fop), val, tp,
			uaddr2, val3, t.deadline, &err);
	after = LOAD(&l->word);
	account_sys(w, OP_H_BADARGS, hl_wid(li), fop, before, after, ret, err);
	if (ret != -1 || err != expect)
		failf(w, CK_ABI,
		      "FUTEX_SPIN_LOCK variant %d (val %u, uaddr2 %p, val3 %u) on lock %d: ret %ld %s, expected %s",
		      v, val, uaddr2, val3, li, ret, errname(err),
		      errname(expect));
	if ((after & FUTEX_TID_MASK) == w->tid) {
		failf(w, CK_EXCL,
		      "lock %d: an invalid FUTEX_SPIN_LOCK (variant %d, %s) made us the owner (word %#x)",
		      li, v, errname(err), after);
		cas32(&l->word, after, 0, NULL);
	}
}

/* ------------------------------------------------------------------ */
/* Spinning futex calls on abused words                                */

/*
 * What the ABI allows for a call with valid arguments on an abused word:
 * any outcome of the race, but only documented errnos. Read-only views
 * and pages that come and go may also fault.
 */
static bool abuse_ok(bool lock, int kind, long ret, int err, bool timed)
{
	bool may_fault = kind == WK_RO || kind == WK_AV;

	if (ret >= 0)
		return ret == 0;
	if (err == EFAULT)
		return may_fault;
	if (lock)
		return err == EDEADLK || (err == ETIMEDOUT && timed);
	return err == EPERM;
}

static void owned_add(struct worker *w, unsigned int *word)
{
	if (w->nowned < MAX_OWNED)
		w->owned[w->nowned++] = word;
	else
		w->owned[rnd(&w->rng, MAX_OWNED)] = word;
}

static void abuse_lock(struct worker *w)
{
	int kind, wid, fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0, err;
	struct aword *aw = pick_aword(w, &kind, &wid);
	unsigned int before, after;
	struct tmo t;
	long ret;

	mk_abs(w, abuse_cls(w), chance(&w->rng, 50), &t);
	if (t.rt)
		fop |= FUTEX_CLOCK_REALTIME;
	before = peek(&aw->word);
	ret = spin_call(w, OP_A_LOCK, &aw->word, spin_lock_op(fop), 0, &t.ts,
			NULL, 0, t.deadline, &err);
	after = peek(&aw->word);
	account_sys(w, OP_A_LOCK, wid, fop, before, after, ret, err);
	if (ret == 0)
		owned_add(w, &aw->word);
	if (H->cfg.emulate)
		return;
	if (!abuse_ok(true, kind, ret, err, true))
		failf(w, CK_ABI,
		      "FUTEX_SPIN_LOCK (op %#x) on abused word %s%d (word %#x -> %#x): ret %ld %s",
		      fop, wkind_names[kind], wid % 1000, before, after, ret,
		      errname(err));
	if (ret < 0 && err == ETIMEDOUT)
		check_early(w, &t, OP_A_LOCK, wid);
}

static void abuse_unlock(struct worker *w)
{
	int kind, wid, fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0, err;
	struct aword *aw = pick_aword(w, &kind, &wid);
	unsigned int *word = &aw->word, before;
	long ret;

	/* Mostly words we got, which may be ours still, or forged by now. */
	if (w->nowned && chance(&w->rng, 60)) {
		int i = rnd(&w->rng, w->nowned);

		word = w->owned[i];
		w->owned[i] = w->owned[--w->nowned];
		kind = WK_AV;	/* we do not remember which: allow faults */
		wid = -1;
	}
	before = peek(word);
	ret = spin_call(w, OP_A_UNLOCK, word, spin_unlock_op(fop), 0, NULL,
			NULL, 0, 0, &err);
	account_sys(w, OP_A_UNLOCK, wid, fop, before, peek(word), ret, err);
	if (!H->cfg.emulate && !abuse_ok(false, kind, ret, err, false))
		failf(w, CK_ABI,
		      "FUTEX_SPIN_UNLOCK (op %#x) on abused word (kind %s, word %#x): ret %ld %s",
		      fop, wkind_names[kind], before, ret, errname(err));
}

static void abuse_fast(struct worker *w, int op)
{
	int kind, wid;
	struct aword *aw = pick_aword(w, &kind, &wid);
	unsigned int old = 0, new = w->tid, seen = 0;
	bool ok;

	if (op == OP_A_FAST_UNLOCK) {
		old = w->tid;
		new = 0;
	} else if (op == OP_A_GARBAGE) {
		new = forge(w);
		seen = peek(&aw->word);
		ok = g_store(&aw->word, new);
		account(w, op, ok ? EB_OK : EB_SEGV, wid, 0, seen, new, 0, 0);
		return;
	}
	ok = g_cas(&aw->word, old, new, &seen);
	account(w, op, !ok ? EB_SEGV : seen == old ? EB_OK : EB_BUSY, wid, 0,
		seen, new, 0, 0);
	if (ok && seen == old && op == OP_A_FAST_LOCK)
		owned_add(w, &aw->word);
}

/* Addresses no futex may use: exact errnos. */
static void abuse_badaddr(struct worker *w)
{
	int v = rnd(&w->rng, 7), kind, wid, err, fop;
	bool lock = chance(&w->rng, 60), ro = false;
	unsigned int *uaddr, expect = EFAULT;
	struct aword *aw;
	struct tmo t;
	long ret;

	switch (v) {
	case 0:
		uaddr = NULL;
		break;
	case 1:
		aw = pick_aword(w, &kind, &wid);
		uaddr = (unsigned int *)((char *)&aw->word + 1 + rnd(&w->rng, 3));
		expect = EINVAL;
		break;
	case 2:
		uaddr = (unsigned int *)(1UL << 47);
		break;
	case 3:
		uaddr = (unsigned int *)0xffffffffff600000UL;
		break;
	case 4:
		uaddr = (unsigned int *)P.none_page + 4 * rnd(&w->rng, 4);
		break;
	case 5:
		uaddr = (unsigned int *)P.ro_page + 4 * rnd(&w->rng, 4);
		ro = true;
		break;
	default:
		uaddr = &aw_addr(WK_RO, rnd(&w->rng, NR_AS))->word;
		ro = true;
		break;
	}
	fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0;
	mk_abs(w, chance(&w->rng, 50) ? T_PAST : T_NEAR, chance(&w->rng, 50), &t);
	if (lock && t.rt)
		fop |= FUTEX_CLOCK_REALTIME;
	ret = spin_call(w, OP_A_BADADDR, uaddr,
			lock ? spin_lock_op(fop) : spin_unlock_op(fop), 0,
			lock ? &t.ts : NULL, NULL, 0, t.deadline, &err);
	account_sys(w, OP_A_BADADDR, WK_BAD * 1000 + v, fop, 0, 0, ret, err);
	if (H->cfg.emulate)
		return;
	if (ro) {
		/* read-only: it may be read, never written */
		if (ret == -1 && (err == EFAULT ||
				  (lock && (err == ETIMEDOUT || err == EDEADLK)) ||
				  (!lock && err == EPERM)))
			return;
	} else if (ret == -1 && (unsigned int)err == expect) {
		return;
	}
	failf(w, CK_ABI,
	      "FUTEX_SPIN_%s (op %#x) at bad address %p (variant %d): ret %ld %s, expected %s",
	      lock ? "LOCK" : "UNLOCK", fop, uaddr, v, ret, errname(err),
	      ro ? "EFAULT/EPERM/ETIMEDOUT/EDEADLK" : errname(expect));
}

/* Invalid arguments on good words: exact errnos, whatever the word. */
static void abuse_badargs(struct worker *w)
{
	int v = rnd(&w->rng, 12), err, fop, wid;
	int kind = chance(&w->rng, 50) ? WK_AS : WK_AP;
	unsigned int i = rnd(&w->rng, kind == WK_AP ? NR_AP : NR_AS);
	unsigned int *uaddr = &aw_addr(kind, i)->word, val = 0, val3 = 0;
	bool lock = v < 5 || v == 8 || v == 10, any = false;
	unsigned int expect = EINVAL;
	void *uaddr2 = NULL;
	const void *tp = NULL;
	struct tmo t;
	long ret;

	if (H->cfg.emulate)
		return;
	wid = kind * 1000 + i;
	fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0;
	mk_abs(w, T_NEAR, chance(&w->rng, 50), &t);
	if (lock) {
		tp = &t.ts;
		if (t.rt)
			fop |= FUTEX_CLOCK_REALTIME;
	}
	switch (v) {
	case 0:
	case 5:
		val = 1 + (unsigned int)rng_next(&w->rng) % UINT_MAX;
		break;
	case 1:
	case 6:
		uaddr2 = uaddr;
		break;
	case 2:
		val3 = 1 + (unsigned int)rng_next(&w->rng) % UINT_MAX;
		break;
	case 3:
		t.ts.tv_nsec = chance(&w->rng, 50) ? (long)NSEC : -1 - (long)rnd(&w->rng, 5);
		if (chance(&w->rng, 30))
			t.ts.tv_sec = -1;
		break;
	case 4:
		tp = (void *)(1UL << 47);
		expect = EFAULT;
		break;
	case 7:
		/* unlock has no timeout, so no clock: as for FUTEX_WAKE */
		fop |= FUTEX_CLOCK_REALTIME;
		expect = nosys_errno;
		break;
	case 8:
		/* a flag nobody defined, past FUTEX_ROBUST_LIST32 */
		fop |= 1 << (11 + rnd(&w->rng, 20));
		any = true;
		break;
	case 9:
		/* unlock has no timeout: valid, invalid or unreadable, unread */
		tp = &t.ts;
		if (chance(&w->rng, 30))
			t.ts.tv_nsec = -1;
		else if (chance(&w->rng, 40))
			tp = (void *)(1UL << 47);
		break;
	case 10:
		/* FUTEX_ROBUST_UNLOCK on an operation that unlocks nothing */
		fop |= FUTEX_ROBUST_UNLOCK;
		expect = nosys_errno;
		break;
	case 11:
		/* the pointer size of a pending op, without one to clear */
		fop |= FUTEX_ROBUST_LIST32;
		break;
	}
	ret = spin_call(w, OP_A_BADARGS, uaddr,
			lock ? spin_lock_op(fop) : spin_unlock_op(fop), val, tp,
			uaddr2, val3, t.deadline, &err);
	account_sys(w, OP_A_BADARGS, wid, fop, 0, 0, ret, err);
	if (ret == -1 && ((unsigned int)err == expect ||
			  (any && err == nosys_errno)))
		return;
	failf(w, CK_ABI,
	      "FUTEX_SPIN_%s variant %d (op %#x val %u uaddr2 %p val3 %u) on %s%u: ret %ld %s, expected %s",
	      lock ? "LOCK" : "UNLOCK", v, fop, val, uaddr2, val3,
	      wkind_names[kind], i, ret, errname(err), errname(expect));
}

/* ------------------------------------------------------------------ */
/* Other futex operations on abused words                              */

static unsigned int wait_val(struct worker *w, unsigned int *word)
{
	/* mostly the current value, so that the waits really sleep */
	return chance(&w->rng, 80) ? peek(word) : (unsigned int)rng_next(&w->rng);
}

/* Mostly valid FUTEX_WAKE_OP encodings, sometimes anything. */
static unsigned int wake_op_arg(struct worker *w)
{
	unsigned int r = (unsigned int)rng_next(&w->rng);

	if (chance(&w->rng, 10))
		return r;
	return (rnd(&w->rng, 5) << 28) | (rnd(&w->rng, 6) << 24) |
	       (r & 0x00ffffff) | (chance(&w->rng, 20) ? 1U << 31 : 0);
}

static void other_op(struct worker *w, int op)
{
	int k1, k2, wid, err = 0, prv = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0;
	struct aword *a1 = pick_aword(w, &k1, &wid);
	struct aword *a2 = pick_aword(w, &k2, &k2);
	unsigned int *u1 = &a1->word, *u2 = &a2->word, before = peek(u1);
	unsigned long long dl = 0;
	struct futex_waitv wv[4];
	struct timespec rel;
	struct tmo t;
	long ret;
	int i, n;

	mk_abs(w, abuse_cls(w), chance(&w->rng, 50), &t);
	w->sl->fop = prv;
	switch (op) {
	case OP_WAIT:
		dl = mk_rel(w, &rel);
		wd_begin(w, op, u1, dl);
		ret = sys_futex(u1, FUTEX_WAIT | prv, wait_val(w, u1), &rel, NULL, 0);
		break;
	case OP_WAIT_BITSET:
		wd_begin(w, op, u1, t.deadline);
		ret = sys_futex(u1, FUTEX_WAIT_BITSET | prv |
				(t.rt ? FUTEX_CLOCK_REALTIME : 0),
				wait_val(w, u1), &t.ts, NULL,
				chance(&w->rng, 5) ? 0 : (unsigned int)rng_next(&w->rng) | 1);
		break;
	case OP_WAKE:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_WAKE | prv,
				chance(&w->rng, 10) ? INT_MAX : rnd(&w->rng, 3),
				NULL, NULL, 0);
		break;
	case OP_WAKE_OP:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_WAKE_OP | prv, rnd(&w->rng, 3),
				(void *)(unsigned long)rnd(&w->rng, 3), u2,
				wake_op_arg(w));
		break;
	case OP_REQUEUE:
	case OP_CMP_REQUEUE:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, (op == OP_REQUEUE ? FUTEX_REQUEUE : FUTEX_CMP_REQUEUE) | prv,
				rnd(&w->rng, 3),
				(void *)(unsigned long)rnd(&w->rng, 4), u2,
				wait_val(w, u1));
		break;
	case OP_LOCK_PI:
		/* FUTEX_LOCK_PI always measures against CLOCK_REALTIME */
		mk_abs(w, abuse_cls(w), true, &t);
		wd_begin(w, op, u1, t.deadline);
		ret = sys_futex(u1, FUTEX_LOCK_PI | prv, 0, &t.ts, NULL, 0);
		break;
	case OP_LOCK_PI2:
		wd_begin(w, op, u1, t.deadline);
		ret = sys_futex(u1, FUTEX_LOCK_PI2 | prv |
				(t.rt ? FUTEX_CLOCK_REALTIME : 0), 0, &t.ts,
				NULL, 0);
		break;
	case OP_TRYLOCK_PI:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_TRYLOCK_PI | prv, 0, NULL, NULL, 0);
		break;
	case OP_UNLOCK_PI:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_UNLOCK_PI | prv, 0, NULL, NULL, 0);
		break;
	case OP_WAIT_REQUEUE_PI:
		wd_begin(w, op, u1, t.deadline);
		ret = sys_futex(u1, FUTEX_WAIT_REQUEUE_PI | prv |
				(t.rt ? FUTEX_CLOCK_REALTIME : 0),
				wait_val(w, u1), &t.ts, u2, 0);
		break;
	case OP_CMP_REQUEUE_PI:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_CMP_REQUEUE_PI | prv, 1,
				(void *)(unsigned long)rnd(&w->rng, 3), u2,
				wait_val(w, u1));
		break;
	case OP_WAITV:
		n = 1 + rnd(&w->rng, 4);
		memset(wv, 0, sizeof(wv));
		for (i = 0; i < n; i++) {
			struct aword *a = i ? pick_aword(w, &k2, &k2) : a1;

			wv[i].uaddr = (unsigned long)&a->word;
			wv[i].val = wait_val(w, &a->word);
			wv[i].flags = FUTEX_32 | (chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0);
		}
		wd_begin(w, op, u1, t.deadline);
		ret = syscall(__NR_futex_waitv, wv, n, 0, &t.ts,
			      t.rt ? CLOCK_REALTIME : CLOCK_MONOTONIC);
		break;
	case OP_F2_WAIT:
		wd_begin(w, op, u1, t.deadline);
		/* a U32 futex takes a 32 bit mask */
		ret = syscall(__NR_futex_wait, u1, (unsigned long)wait_val(w, u1),
			      (unsigned long)FUTEX_BITSET_MATCH_ANY,
			      FUTEX2_SIZE_U32 | prv, &t.ts,
			      t.rt ? CLOCK_REALTIME : CLOCK_MONOTONIC);
		break;
	default:
		wd_begin(w, op, u1, 0);
		ret = syscall(__NR_futex_wake, u1,
			      (unsigned long)FUTEX_BITSET_MATCH_ANY,
			      rnd(&w->rng, 3), FUTEX2_SIZE_U32 | prv);
		break;
	}
	err = ret < 0 ? errno : 0;
	wd_end(w);
	account_sys(w, op, wid, prv, before, peek(u1), ret, err);
}

/* ------------------------------------------------------------------ */
/* Pages that come and go under the words                              */

static void page_op(struct worker *w)
{
	struct vpage *vp = &P.vp[rnd(&w->rng, NR_VPAGES)];
	int op, err = 0, r = rnd(&w->rng, 3);
	long ret = 0;
	void *p;

	if (pthread_mutex_trylock(&vp->mu))
		return;
	switch (vp->state) {
	case VS_RW:
		op = r == 0 ? OP_MUNMAP : r == 1 ? OP_MPROTECT_RO : OP_DONTNEED;
		break;
	case VS_RO:
		op = r == 0 ? OP_MPROTECT_RW : r == 1 ? OP_MUNMAP : OP_DONTNEED;
		break;
	case VS_UNMAPPED:
		op = OP_MMAP;
		break;
	default:
		pthread_mutex_unlock(&vp->mu);
		return;
	}
	wd_begin(w, op, vp->addr, 0);
	switch (op) {
	case OP_MUNMAP:
		ret = munmap(vp->addr, PAGE);
		if (!ret)
			vp->state = VS_UNMAPPED;
		break;
	case OP_MPROTECT_RO:
	case OP_MPROTECT_RW:
		ret = mprotect(vp->addr, PAGE, op == OP_MPROTECT_RO ?
			       PROT_READ : PROT_READ | PROT_WRITE);
		if (!ret)
			vp->state = op == OP_MPROTECT_RO ? VS_RO : VS_RW;
		break;
	case OP_DONTNEED:
		ret = madvise(vp->addr, PAGE, MADV_DONTNEED);
		break;
	case OP_MMAP:
		if (vp->shared)
			p = mmap(vp->addr, PAGE, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED_NOREPLACE,
				 H->cfg.memfd, vp->off);
		else
			p = mmap(vp->addr, PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_FIXED_NOREPLACE, -1, 0);
		if (p == vp->addr) {
			vp->state = VS_RW;
		} else {
			/* somebody else got the hole: never touch it again */
			ret = -1;
			if (p != MAP_FAILED) {
				munmap(p, PAGE);
				errno = EEXIST;
			}
			vp->state = VS_LOST;
		}
		break;
	}
	err = ret < 0 ? errno : 0;
	wd_end(w);
	pthread_mutex_unlock(&vp->mu);
	account_sys(w, op, -1, 0, 0, 0, ret, err);
}

/* ------------------------------------------------------------------ */
/* Signals and robust list garbage                                     */

static void signal_op(struct worker *w)
{
	int sig = chance(&w->rng, 50) ? SIGUSR1 : SIGUSR2, p, t, i, err;
	unsigned int tid = 0;
	pid_t pid = 0;
	long ret;

	/*
	 * Prefer a thread that is inside a syscall right now: a waiter.
	 * Only tgkill(): a stale pid and tid pair cannot hit a stranger.
	 */
	for (i = 0; i < 4; i++) {
		struct slot *sl;

		p = rnd(&w->rng, H->cfg.nprocs);
		t = rnd(&w->rng, H->cfg.nthreads);
		sl = &H->slots[p * MAX_THREADS + t];
		pid = RLOAD(&H->procs[p].pid);
		tid = RLOAD(&H->procs[p].tids[t]);
		if (tid && (RLOAD(&sl->seq) & 1))
			break;
	}
	if (!tid || pid <= 0)
		return;
	if (chance(&w->rng, 10))
		tid = pid;	/* the manager thread */
	wd_begin(w, OP_SIGNAL, NULL, 0);
	ret = syscall(SYS_tgkill, pid, tid, sig);
	err = ret < 0 ? errno : 0;
	wd_end(w);
	account_sys(w, OP_SIGNAL, -1, sig, 0, tid, ret, err);
}

static struct robust_list *garbage_ptr(struct worker *w)
{
	switch (rnd(&w->rng, 5)) {
	case 0:
		return NULL;
	case 1:
		return (struct robust_list *)(1UL << 47);
	case 2:
		return (struct robust_list *)P.none_page;
	case 3:
		return (struct robust_list *)((char *)&w->rl.head.list + 1);
	}
	return (struct robust_list *)P.ro_page;
}

/*
 * Turn our robust list into garbage made of abused words: loops, foreign
 * and unmapped pointers, PI and non-PI entries, odd offsets. Only threads
 * without honest locks do this: the kernel walks it when they die.
 */
static void robust_garbage(struct worker *w, int n)
{
	int kind, wid, i, err;
	long ret = 0;

	for (i = 0; i < n; i++) {
		struct aword *aw = pick_aword(w, &kind, &wid);
		struct robust_list *e = &aw->node;

		switch (rnd(&w->rng, 8)) {
		case 0:
			RSTORE(&w->rl.head.list.next, &w->rl.head.list);
			break;
		case 1:
			RSTORE(&w->rl.head.list_op_pending,
			       chance(&w->rng, 50) ? e : garbage_ptr(w));
			break;
		case 2:
			w->rl.head.futex_offset = chance(&w->rng, 70) ? HL_OFFSET :
				(long)rnd(&w->rng, 64) - 32;
			break;
		case 3:
			g_store_ptr(&e->next, e);
			RSTORE(&w->rl.head.list.next, e);
			break;
		case 4:
			g_store_ptr(&e->next, garbage_ptr(w));
			RSTORE(&w->rl.head.list.next, e);
			break;
		case 5:
			/* a bad length must be refused, then register again */
			ret = syscall(SYS_set_robust_list, &w->rl.head,
				      sizeof(w->rl.head) + 1 + rnd(&w->rng, 8));
			err = ret < 0 ? errno : 0;
			account_sys(w, OP_ROBUST_SET, wid, 0, 0, 0, ret, err);
			syscall(SYS_set_robust_list, &w->rl.head,
				sizeof(w->rl.head));
			break;
		default:
			/* prepend, possibly with the PI bit */
			if (g_store_ptr(&e->next, w->rl.head.list.next))
				RSTORE(&w->rl.head.list.next,
				       (struct robust_list *)((unsigned long)e |
							      rnd(&w->rng, 2)));
			/* and make it look like ours, sometimes with waiters */
			if (chance(&w->rng, 50))
				g_store(&aw->word, w->tid |
					(chance(&w->rng, 50) ? FUTEX_WAITERS : 0));
			break;
		}
	}
	account(w, OP_ROBUST_SET, EB_OK, -1, 0, 0, 0, 0, 0);
}

/*
 * Replace the process's private futex hash under everybody's feet, which
 * moves every queue head of its private locks: 2 to 256 slots, and once in
 * a while 0, the global hash for good, after which every other size is
 * refused with EBUSY. Without the private hash (or PR_FUTEX_HASH) EINVAL.
 */
static void hash_resize(struct worker *w)
{
	unsigned int slots = chance(&w->rng, 2) ? 0 : 2U << rnd(&w->rng, 8);
	long ret;
	int err;

	ret = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, slots, 0, 0);
	err = ret < 0 ? errno : 0;
	account_sys(w, OP_HASH_RESIZE, -1, slots, 0, 0, ret, err);
	if (ret < 0 && err != EBUSY && err != EINVAL && err != ENOMEM)
		failf(w, CK_RUN, "PR_FUTEX_HASH_SET_SLOTS %u: %s", slots, errname(err));
}

/* ------------------------------------------------------------------ */
/* Choosing operations                                                 */

static const unsigned short base_weights[NR_OPS] = {
	[OP_H_TRYLOCK]		= 500,
	[OP_H_LOCK]		= 1600,
	[OP_H_LOCK_PAST]	= 250,
	[OP_H_LOCK_FOREVER]	= 40,
	[OP_H_RELOCK]		= 100,
	[OP_H_FOREIGN_UNLOCK]	= 200,
	[OP_H_BADARGS]		= 150,
	[OP_A_LOCK]		= 1000,
	[OP_A_UNLOCK]		= 600,
	[OP_A_FAST_LOCK]	= 250,
	[OP_A_FAST_UNLOCK]	= 250,
	[OP_A_GARBAGE]		= 600,
	[OP_A_BADADDR]		= 200,
	[OP_A_BADARGS]		= 200,
	[OP_WAIT]		= 250,
	[OP_WAIT_BITSET]	= 120,
	[OP_WAKE]		= 300,
	[OP_WAKE_OP]		= 80,
	[OP_REQUEUE]		= 50,
	[OP_CMP_REQUEUE]	= 120,
	[OP_LOCK_PI]		= 120,
	[OP_LOCK_PI2]		= 80,
	[OP_TRYLOCK_PI]		= 120,
	[OP_UNLOCK_PI]		= 160,
	[OP_WAIT_REQUEUE_PI]	= 60,
	[OP_CMP_REQUEUE_PI]	= 60,
	[OP_WAITV]		= 120,
	[OP_F2_WAIT]		= 60,
	[OP_F2_WAKE]		= 60,
	[OP_MUNMAP]		= 150,	/* all page operations */
	[OP_SIGNAL]		= 120,
	[OP_ROBUST_SET]		= 60,
	[OP_HASH_RESIZE]	= 20,
	[OP_FORK]		= 6,
	[OP_EXEC]		= 2,
	[OP_THREAD_EXIT]	= 5,
	[OP_H_KILL_WAITER]	= 5,
};

static int op_group(int op)
{
	if (op <= OP_H_BADARGS)
		return G_HONEST;
	if (op <= OP_A_BADARGS)
		return G_ABUSE;
	if (op <= OP_F2_WAKE)
		return G_OTHER;
	if (op <= OP_DONTNEED)
		return G_PAGES;
	switch (op) {
	case OP_SIGNAL:		return G_SIGNAL;
	case OP_ROBUST_SET:	return G_ROBUST;
	case OP_HASH_RESIZE:	return G_HASH;
	case OP_FORK:		return G_FORK;
	case OP_EXEC:		return G_EXEC;
	case OP_THREAD_EXIT:	return G_EXIT;
	case OP_H_KILL_WAITER:	return G_FORK;
	}
	return G_KILL;
}

/*
 * Each thread incarnation gets a personality: more or fewer honest and
 * abusive operations, so that the mix differs between threads and runs.
 * An "abuser" keeps a garbage robust list and never takes honest locks.
 */
static void set_weights(struct worker *w)
{
	unsigned int mh = 1U << rnd(&w->rng, 3), ma = 1U << rnd(&w->rng, 3);
	int op;

	w->wsum = 0;
	for (op = 0; op < NR_OPS; op++) {
		unsigned int wt = base_weights[op];
		int g = op_group(op);

		if (!group_on(g))
			wt = 0;
		if (g == G_HONEST)
			wt = w->abuser ? 0 : wt * mh / 2;
		else if (g == G_ABUSE || g == G_OTHER)
			wt = wt * ma / 2;
		if (op == OP_ROBUST_SET && !w->abuser)
			wt = 0;
		if (w->child && (op == OP_FORK || op == OP_EXEC ||
				 op == OP_THREAD_EXIT || op == OP_H_KILL_WAITER))
			wt = 0;
		w->weights[op] = wt;
		w->wsum += wt;
	}
}

static void fork_op(struct worker *w);
static void exec_op(struct worker *w);
static void thread_exit_op(struct worker *w);
static void kill_waiter_op(struct worker *w);

/*
 * -l, a test of the liveness check itself: sleep as a lost wakeup would,
 * published as FUTEX_SPIN_LOCK on an honest lock past the private ones,
 * whose word (on our stack) nobody ever takes. Must fail CK_LIVE.
 */
static void live_fake_wait(struct worker *w)
{
	unsigned long long end = mono_ns() + 3 * NSEC, now;
	unsigned int word = 0;
	struct timespec ts;

	RSTORE(&w->sl->hlock, nr_honest(w) + 1);
	w->sl->fop = FUTEX_WAIT_PRIVATE;
	wd_begin(w, OP_H_LOCK, &word, end);
	/* a signal restarts FUTEX_SPIN_LOCK within the same call: so here */
	while ((now = mono_ns()) < end) {
		ns_to_ts(end - now, &ts);
		sys_futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	}
	wd_end(w);
}

static void step(struct worker *w)
{
	unsigned int r;
	int op;

	if (H->cfg.live_selftest && !w->child && !w->nheld &&
	    !rnd(&w->rng, 20000)) {
		live_fake_wait(w);
		return;
	}

	if (w->nheld && w->held[w->nheld - 1].left-- <= 0) {
		honest_unlock(w);
		return;
	}
	if (!w->wsum)
		return;
	r = rnd(&w->rng, w->wsum);
	for (op = 0; op < NR_OPS - 1; op++) {
		if (r < w->weights[op])
			break;
		r -= w->weights[op];
	}
	switch (op) {
	case OP_H_TRYLOCK:
	case OP_H_LOCK:
	case OP_H_LOCK_PAST:
	case OP_H_LOCK_FOREVER:
		honest_lock(w, op);
		break;
	case OP_H_RELOCK:
		honest_relock(w);
		break;
	case OP_H_FOREIGN_UNLOCK:
		honest_foreign_unlock(w);
		break;
	case OP_H_BADARGS:
		honest_badargs(w);
		break;
	case OP_A_LOCK:
		abuse_lock(w);
		break;
	case OP_A_UNLOCK:
		abuse_unlock(w);
		break;
	case OP_A_FAST_LOCK:
	case OP_A_FAST_UNLOCK:
	case OP_A_GARBAGE:
		abuse_fast(w, op);
		break;
	case OP_A_BADADDR:
		abuse_badaddr(w);
		break;
	case OP_A_BADARGS:
		abuse_badargs(w);
		break;
	case OP_MUNMAP:
		page_op(w);
		break;
	case OP_SIGNAL:
		signal_op(w);
		break;
	case OP_ROBUST_SET:
		robust_garbage(w, 1);
		break;
	case OP_HASH_RESIZE:
		hash_resize(w);
		break;
	case OP_FORK:
		fork_op(w);
		break;
	case OP_EXEC:
		exec_op(w);
		break;
	case OP_THREAD_EXIT:
		thread_exit_op(w);
		break;
	case OP_H_KILL_WAITER:
		kill_waiter_op(w);
		break;
	default:
		other_op(w, op);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Fork, exec, thread exit                                             */

static __noreturn void child_exit(struct worker *w)
{
	ts_set(w->gid, TS_EXITING);
	_exit(0);
}

/* A fork child that blocks forever in FUTEX_SPIN_LOCK until it is killed. */
static __noreturn void child_doomed(struct worker *w, unsigned int forker)
{
	int kind, wid, err, fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0;
	struct aword *aw;
	unsigned int v;
	long ret;

	if (group_on(G_HONEST) && !w->abuser && chance(&w->rng, 30)) {
		/* maybe killed while waiting, maybe while holding */
		honest_lock(w, OP_H_LOCK_FOREVER);
	} else {
		aw = pick_aword(w, &kind, &wid);
		switch (rnd(&w->rng, 3)) {
		case 0:
			v = forker;
			break;
		case 1:
			v = some_dead_tid(&w->rng);
			break;
		default:
			v = 1;
			break;
		}
		g_store(&aw->word, v | (chance(&w->rng, 50) ? FUTEX_WAITERS : 0));
		ret = spin_call(w, OP_A_LOCK, &aw->word, spin_lock_op(fop), 0,
				NULL, NULL, 0, mono_ns() + 2 * NSEC, &err);
		account_sys(w, OP_A_LOCK, wid, fop, v, peek(&aw->word), ret, err);
	}
	for (;;)
		sleep_ns(10 * MSEC);
}

static __noreturn void child_main(struct worker *w, unsigned int cgen,
				  bool doomed, pid_t parent)
{
	unsigned int forker = w->tid;
	int n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	w->child = true;
	w->sidx += NR_WSLOTS;
	w->sl = &H->slots[w->sidx];
	w->tid = gettid_raw();
	w->nheld = 0;
	w->nowned = 0;
	w->rng = mix64(w->rng ^ cgen);
	w->gid = ts_register(w->tid, cgen, w->sidx);
	w->sl->tid = w->tid;
	STORE(&w->sl->gid, w->gid);
	robust_register(w);
	set_weights(w);
	if (doomed)
		child_doomed(w, forker);
	for (n = 5 + rnd(&w->rng, 45); n > 0 && !LOAD(&H->stop); n--)
		step(w);
	/* exit holding honest locks half of the time: robust cleanup */
	if (chance(&w->rng, 50))
		release_all(w);
	child_exit(w);
}

static void fork_op(struct worker *w)
{
	struct slot *cs = &H->slots[NR_WSLOTS + w->sidx];
	bool doomed = chance(&w->rng, 35);
	unsigned long long dl;
	unsigned int cgen;
	pid_t pid, parent = getpid();
	int st, err;

	cgen = cs->incarn + 1;
	cs->incarn = cgen;
	STORE(&cs->gid, 0);
	STORE(&cs->doom, 0);
	wd_begin(w, OP_FORK, NULL, mono_ns() + 5 * NSEC);
	pid = fork();
	if (pid == 0)
		child_main(w, cgen, doomed, parent);
	if (pid < 0) {
		err = errno;
		wd_end(w);
		account_sys(w, OP_FORK, -1, 0, 0, 0, -1, err);
		return;
	}
	dl = mono_ns() + (doomed ? rnd(&w->rng, 20 * MSEC) : 2 * NSEC);
	while (mono_ns() < dl) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			goto reaped;
		sleep_ns(doomed ? 200 * USEC : MSEC);
	}
	/* Tell the OWNER_DIED check first: it may be holding honest locks. */
	STORE(&cs->doom, cgen);
	kill(pid, SIGKILL);
	account(w, OP_CHILD_KILL, EB_OK, -1, 0, 0, pid, 0, 0);
	dl = mono_ns() + H->cfg.slack;
	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (mono_ns() > dl) {
			char stack[1024] = "", path[64];
			int fd, n;

			snprintf(path, sizeof(path), "/proc/%d/stack", pid);
			fd = open(path, O_RDONLY);
			if (fd >= 0) {
				n = read(fd, stack, sizeof(stack) - 1);
				stack[n > 0 ? n : 0] = 0;
				close(fd);
			}
			failf(w, CK_HANG,
			      "fork child %d did not exit within %llu s of SIGKILL (last op %s); kernel stack:\n%s",
			      pid, H->cfg.slack / NSEC,
			      op_names[cs->op % NR_OPS], stack);
			waitpid(pid, &st, 0);
			break;
		}
		sleep_ns(MSEC);
	}
reaped:
	wd_end(w);
	ts_set(LOAD(&cs->gid), TS_DEAD);
	dead_push(pid);
	/* a child killed inside a syscall leaves its record odd */
	if (LOAD(&cs->seq) & 1)
		STORE(&cs->seq, cs->seq + 1);
	account(w, OP_FORK, EB_OK, -1, doomed, 0, pid, 0, 0);
}

static void exec_op(struct worker *w)
{
	struct proc_rec *pr = w->pr;
	unsigned long long now = mono_ns();
	char fdb[16], slotb[16];
	char *argv[5];
	int err;

	if (w->child || now - RLOAD(&pr->last_exec) < 8 * NSEC)
		return;
	/*
	 * Not across execve(): de_thread() gives this thread the leader's
	 * PID before the robust list is walked, so a lock held here would
	 * keep naming a TID that no longer exists (upstream behaviour, for
	 * every robust futex). The siblings that de_thread() kills keep
	 * their TIDs: locks they hold get OWNER_DIED as on any exit.
	 */
	release_all(w);
	/* one exec at a time, and not while the harness kills us */
	if (!cas32(&pr->doomed, 0, 1, NULL))
		return;
	pr->doomed_at = now;
	pr->last_exec = now;
	snprintf(fdb, sizeof(fdb), "%d", H->cfg.memfd);
	snprintf(slotb, sizeof(slotb), "%d", P.slot);
	argv[0] = (char *)self_exe;
	argv[1] = "--exec-worker";
	argv[2] = fdb;
	argv[3] = slotb;
	argv[4] = NULL;
	/*
	 * Handlers do not survive execve(), ignored signals do: ignore the
	 * waiter signals until the new image has its handlers again.
	 */
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	wd_begin(w, OP_EXEC, NULL, now + 30 * NSEC);
	execve(self_exe, argv, environ);
	err = errno;
	wd_end(w);
	set_handlers();
	STORE(&pr->doomed, 0);
	account_sys(w, OP_EXEC, -1, 0, 0, 0, -1, err);
	failf(w, CK_RUN, "execve(%s): %s", self_exe, strerror(err));
}

static void thread_exit_op(struct worker *w)
{
	if (w->child)
		return;
	/* Without honest locks, die with a garbage robust list instead. */
	if (!w->nheld && group_on(G_ROBUST) &&
	    (w->abuser || chance(&w->rng, 50)))
		robust_garbage(w, 1 + rnd(&w->rng, 6));
	account(w, OP_THREAD_EXIT, EB_OK, -1, w->nheld, 0, 0, 0, 0);
	ts_set(w->gid, TS_EXITING);
	/*
	 * Watched until the manager has joined us: the exit path runs the
	 * robust list and the futex state cleanup in the kernel.
	 */
	wd_begin(w, OP_THREAD_EXIT, NULL, 0);
	STORE(&P.exited[w->tslot], 1);
	syscall(SYS_exit, 0);
}

/*
 * SIGKILL for a waiter that is being handed the lock. A kill lock's owner
 * forks waiters that block in FUTEX_SPIN_LOCK on it, one after the other,
 * then SIGKILLs one of them right before or right after its
 * FUTEX_SPIN_UNLOCK, after a pause that takes the first sleeper past the
 * handoff bound or not. The kill lands while the kernel wakes the victim,
 * hands it the lock, or lets it take the free word on its way out. A task
 * with a fatal signal pending must never return from FUTEX_SPIN_LOCK
 * owning the word: the lock is not robust, so a victim that dies owning it
 * blocks every other waiter until its deadline.
 *
 * Killed before the unlock, the victim cannot have got the lock before
 * the kill: we held it. If its TID is in the word once it is reaped, it
 * was given the lock with SIGKILL pending: a failure. Killed after the
 * unlock, it may have returned owning the lock and died in user space,
 * an ordinary owner death; and it may die between the kernel's last look
 * at its signals and the return to user space, which no kernel can
 * prevent and no flag set in user space can tell from a bug. Those are
 * only counted (returned owning: KC_OWNED set; undecided: not set).
 */
static __noreturn void kill_child(struct worker *w, struct klock *k, int ki,
				  int i, pid_t parent)
{
	unsigned int *state = &w->sl->kc_state[i], tid, word, old;
	struct timespec ts;
	long ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	tid = gettid_raw();
	ns_to_ts(mono_ns() + 3 * NSEC, &ts);
	STORE(state, KC_INSIDE);
	ret = sys_futex(&k->word, spin_lock_op(0), 0, &ts, NULL, 0);
	if (ret) {
		STORE(&w->sl->kc_err[i], ret < 0 ? errno : (int)ret);
		STORE(state, KC_FAILED);
		_exit(0);
	}
	/* first thing: the check must know that we returned owning it */
	STORE(state, KC_OWNED);
	word = LOAD(&k->word);
	if ((word & FUTEX_TID_MASK) != tid)
		failf(NULL, CK_EXCL,
		      "kill lock %d: FUTEX_SPIN_LOCK returned 0 to tid %u but the word is %#x",
		      ki, tid, word);
	old = XCHG(&k->holder, tid);
	if (old)
		failf(NULL, CK_EXCL,
		      "kill lock %d: tid %u got it (word %#x) while tid %u is inside",
		      ki, tid, word, old);
	sched_yield();
	XCHG(&k->holder, 0);
	ret = sys_futex(&k->word, spin_unlock_op(0), 0, NULL, NULL, 0);
	if (ret)
		failf(NULL, CK_ABI,
		      "FUTEX_SPIN_UNLOCK of kill lock %d by its owner tid %u: ret %ld %s, expected 0",
		      ki, tid, ret, ret < 0 ? errname(errno) : "");
	STORE(state, KC_DONE);
	_exit(0);
}

/*
 * Nobody unlocks a non-robust lock whose owner died holding it (a waiter
 * killed after it got the lock, a worker the harness killed while it held
 * one): user space takes it over, as an application would, keeping
 * WAITERS so that our unlock wakes its sleepers.
 */
static bool kl_take_over(struct worker *w, struct klock *k, unsigned int word)
{
	unsigned int owner = word & FUTEX_TID_MASK;

	if (!owner || owner == w->tid || !kill(owner, 0) || errno != ESRCH)
		return false;
	if (!cas32(&k->word, word, w->tid | (word & FUTEX_WAITERS), NULL))
		return false;
	ADD(&H->kill_repairs, 1);
	STORE(&k->holder, 0);
	return true;
}

static bool kl_lock(struct worker *w, struct klock *k, int ki)
{
	unsigned int before, after;
	struct tmo t;
	int err, fop;
	long ret;

	mk_abs(w, T_LONG, chance(&w->rng, 50), &t);
	fop = t.rt ? FUTEX_CLOCK_REALTIME : 0;
	before = LOAD(&k->word);
	ret = spin_call(w, OP_H_KILL_WAITER, &k->word, spin_lock_op(fop), 0,
			&t.ts, NULL, 0, t.deadline, &err);
	after = LOAD(&k->word);
	account_sys(w, OP_H_KILL_WAITER, WK_KL * 1000 + ki, fop, before, after,
		    ret, err);
	if (!ret)
		return true;
	if (ret > 0 || err != ETIMEDOUT)
		failf(w, CK_ABI, "FUTEX_SPIN_LOCK on kill lock %d: ret %ld %s",
		      ki, ret, errname(err));
	else
		check_early(w, &t, OP_H_KILL_WAITER, WK_KL * 1000 + ki);
	return kl_take_over(w, k, after);
}

static void kl_unlock(struct worker *w, struct klock *k, int ki)
{
	unsigned int before = LOAD(&k->word), word;
	int err;
	long ret;

	ret = sys_futex(&k->word, spin_unlock_op(0), 0, NULL, NULL, 0);
	err = ret < 0 ? errno : 0;
	account_sys(w, OP_H_KILL_WAITER, WK_KL * 1000 + ki, 0, before,
		    LOAD(&k->word), ret, err);
	if (ret) {
		failf(w, CK_ABI,
		      "FUTEX_SPIN_UNLOCK of our kill lock %d (word %#x): ret %ld %s, expected 0",
		      ki, before, ret, errname(err));
		word = LOAD(&k->word);
		if ((word & FUTEX_TID_MASK) == w->tid)
			cas32(&k->word, word, 0, NULL);
	}
}

/* Reap a child, or report it and kill it when it does not exit in time. */
static void kc_reap(struct worker *w, pid_t pid, unsigned long long dl)
{
	char stack[1024], path[64];
	int st;

	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (mono_ns() > dl) {
			snprintf(path, sizeof(path), "/proc/%d/stack", pid);
			read_file(path, stack, sizeof(stack));
			failf(w, CK_HANG,
			      "h_kill_waiter child %d still there %.1f s after its deadline; kernel stack:\n%s",
			      pid, (double)H->cfg.slack / NSEC, stack);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		sleep_ns(200 * USEC);
	}
	dead_push(pid);
}

static void kill_waiter_op(struct worker *w)
{
	int ki = rnd(&w->rng, NR_KL), n, i, victim = -1;
	struct klock *k = &H->klocks[ki];
	unsigned int *kc = w->sl->kc_state, word, old;
	pid_t pids[NR_KC], parent = getpid();
	bool kill_first = chance(&w->rng, 50);
	unsigned long long dl;

	/* PI emulation: a dying FUTEX_LOCK_PI waiter may get the lock */
	if (H->cfg.emulate || w->child || w->nheld || !kl_lock(w, k, ki))
		return;
	old = XCHG(&k->holder, w->tid);
	if (old)
		failf(w, CK_EXCL, "kill lock %d: we got it (word %#x) while tid %u is inside",
		      ki, LOAD(&k->word), old);

	wd_begin(w, OP_H_KILL_WAITER, &k->word, mono_ns() + 6 * NSEC);
	n = 1 + rnd(&w->rng, NR_KC);
	for (i = 0; i < n; i++) {
		STORE(&kc[i], KC_NONE);
		pids[i] = fork();
		if (!pids[i])
			kill_child(w, k, ki, i, parent);
		if (pids[i] < 0)
			break;
		/* one at a time: the first child is the first sleeper */
		dl = mono_ns() + NSEC;
		while (LOAD(&kc[i]) == KC_NONE && mono_ns() < dl)
			sleep_ns(100 * USEC);
		sleep_ns(rnd(&w->rng, 2 * MSEC));
	}
	n = i;
	if (n) {
		victim = chance(&w->rng, 60) ? 0 : rnd(&w->rng, n);
		/* published as inside FUTEX_SPIN_LOCK on the lock we hold */
		if (LOAD(&kc[victim]) != KC_INSIDE)
			victim = -1;
	}
	/* past its due time an asking waiter is handed the lock by the unlock */
	sleep_ns(rnd(&w->rng, 15 * MSEC));

	if (victim >= 0 && kill_first)
		kill(pids[victim], SIGKILL);
	old = XCHG(&k->holder, 0);
	if (old != w->tid)
		failf(w, CK_EXCL,
		      "kill lock %d: holder changed to tid %u while we (tid %u) held it",
		      ki, old, w->tid);
	kl_unlock(w, k, ki);
	if (victim >= 0 && !kill_first)
		kill(pids[victim], SIGKILL);
	if (victim >= 0) {
		ADD(&H->kill_ops[!kill_first], 1);
		account(w, OP_CHILD_KILL, EB_OK, WK_KL * 1000 + ki, kill_first,
			0, pids[victim], 0, 0);
	}

	if (victim >= 0) {
		kc_reap(w, pids[victim], mono_ns() + H->cfg.slack);
		word = LOAD(&k->word);
		if ((word & FUTEX_TID_MASK) == (unsigned int)pids[victim]) {
			unsigned int st = LOAD(&kc[victim]);

			if (kill_first)
				failf(w, CK_KILLED,
				      "kill lock %d: waiter pid %d (state %u: %s) got SIGKILL before our FUTEX_SPIN_UNLOCK and died owning the lock: word %#x after it was reaped",
				      ki, pids[victim], st,
				      st == KC_OWNED ? "returned owning it" :
				      "inside FUTEX_SPIN_LOCK", word);
			else if (st == KC_OWNED)
				ADD(&H->kill_late, 1);
			else
				ADD(&H->kill_undecided, 1);
			/* unblock the other children, as a robust mutex would */
			if (kl_take_over(w, k, word))
				kl_unlock(w, k, ki);
		}
	}

	/* the others get the lock in turn, or time out after 3 s */
	for (i = 0; i < n; i++) {
		unsigned int st;

		if (i == victim)
			continue;
		kc_reap(w, pids[i], mono_ns() + 3 * NSEC + H->cfg.slack);
		st = LOAD(&kc[i]);
		if (st == KC_FAILED && LOAD(&w->sl->kc_err[i]) != ETIMEDOUT)
			failf(w, CK_ABI, "FUTEX_SPIN_LOCK on kill lock %d in child %d: %s",
			      ki, pids[i], errname(LOAD(&w->sl->kc_err[i])));
		word = LOAD(&k->word);
		if ((word & FUTEX_TID_MASK) == (unsigned int)pids[i]) {
			failf(w, CK_EXCL,
			      "kill lock %d: child %d (state %u) exited and the word still names it: %#x",
			      ki, pids[i], st, word);
			if (kl_take_over(w, k, word))
				kl_unlock(w, k, ki);
		}
	}
	wd_end(w);
}

/* ------------------------------------------------------------------ */
/* Worker processes                                                    */

static void worker_setup(struct worker *w, int tslot)
{
	memset(w, 0, sizeof(*w));
	w->tslot = tslot;
	w->sidx = P.slot * MAX_THREADS + tslot;
	w->sl = &H->slots[w->sidx];
	w->pr = &H->procs[P.slot];
	w->tid = gettid_raw();
	w->gid = ts_register(w->tid, 0, 0);
	w->rng = mix64(H->cfg.seed ^ mix64(((unsigned long long)w->sidx << 40) ^
					   ((unsigned long long)P.gen << 20) ^
					   w->sl->incarn));
	w->abuser = group_on(G_ROBUST) && H->cfg.nthreads > 2 &&
		    rnd(&w->rng, 6) == 0;
	w->sl->tid = w->tid;
	w->sl->gid = w->gid;
	RSTORE(&w->pr->tids[tslot], w->tid);
	set_weights(w);
	robust_register(w);
	if (H->cfg.rt && tslot == 0) {
		struct sched_param sp = { .sched_priority = 1 + rnd(&w->rng, 5) };

		sched_setscheduler(0, SCHED_FIFO, &sp);
	}
}

static void *thread_main(void *arg)
{
	int tslot = (long)arg;
	struct worker w;

	worker_setup(&w, tslot);
	while (!LOAD(&H->stop) &&
	       !(slot_budget && RLOAD(&w.sl->ops) >= slot_budget))
		step(&w);
	release_all(&w);
	ts_set(w.gid, TS_EXITING);
	STORE(&P.exited[tslot], 1);
	return NULL;
}

/* What the process and the system have left, when a thread cannot start. */
static void resource_report(int err)
{
	char maps[64], mem[64], status[2048], *vm, *th;
	FILE *f = fopen("/proc/self/maps", "r");
	int c, lines = 0;

	if (f) {
		while ((c = fgetc(f)) != EOF)
			lines += c == '\n';
		fclose(f);
	}
	read_file("/proc/self/status", status, sizeof(status));
	vm = strstr(status, "VmSize:");
	th = strstr(status, "Threads:");
	read_file("/proc/meminfo", mem, sizeof(mem));
	snprintf(maps, sizeof(maps), "%d", lines);
	failf(NULL, CK_RUN,
	      "proc %d: pthread_create: %s; %s mappings, %.24s, %.16s, %.60s",
	      P.slot, strerror(err), maps, vm ? vm : "?", th ? th : "?", mem);
}

static bool spawn_thread(int t)
{
	static unsigned long long failing_since;
	static bool reported;
	pthread_attr_t a;
	int err;

	H->slots[P.slot * MAX_THREADS + t].incarn++;
	STORE(&P.exited[t], 0);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 << 10);
	err = pthread_create(&P.threads[t], &a, thread_main, (void *)(long)t);
	pthread_attr_destroy(&a);
	if (err) {
		/*
		 * clone() fails with EAGAIN while another thread of ours is in
		 * execve() (fs->in_exec): try again later, and report only a
		 * failure that lasts.
		 */
		if (!failing_since)
			failing_since = mono_ns();
		if (!reported && mono_ns() - failing_since > 5 * NSEC) {
			resource_report(err);
			reported = true;
		}
		STORE(&P.exited[t], 3);
		return false;
	}
	failing_since = 0;
	P.started[t] = 1;
	return true;
}

static __noreturn void worker_proc(int slot, bool via_exec)
{
	struct proc_rec *pr = &H->procs[slot];
	unsigned int t, n = H->cfg.nthreads;

	setup_process(slot);
	slot_budget = H->cfg.ops_budget;
	for (t = 0; t < MAX_THREADS; t++) {
		struct slot *sl = &H->slots[slot * MAX_THREADS + t];
		struct slot *cs = &H->slots[NR_WSLOTS + slot * MAX_THREADS + t];

		/* records of threads that died with the old image */
		if (sl->seq & 1)
			STORE(&sl->seq, sl->seq + 1);
		if (cs->seq & 1)
			STORE(&cs->seq, cs->seq + 1);
		if (via_exec)
			dead_push(pr->tids[t]);
		RSTORE(&pr->tids[t], 0);
	}
	pr->pid = getpid();
	if (via_exec)
		H->slots[slot * MAX_THREADS].cnt[OP_EXEC][EB_OK]++;
	STORE(&pr->doomed, 0);
	for (t = 0; t < n; t++)
		spawn_thread(t);
	while (!LOAD(&H->stop)) {
		sleep_ns(5 * MSEC);
		for (t = 0; t < n; t++) {
			struct slot *sl = &H->slots[slot * MAX_THREADS + t];

			if (LOAD(&P.exited[t]) == 3) {
				spawn_thread(t);
				continue;
			}
			if (LOAD(&P.exited[t]) != 1)
				continue;
			pthread_join(P.threads[t], NULL);
			if (LOAD(&sl->seq) & 1)
				STORE(&sl->seq, sl->seq + 1);
			P.started[t] = 0;
			STORE(&P.exited[t], 2);
			ts_set(sl->gid, TS_DEAD);
			dead_push(sl->tid);
			if (!LOAD(&H->stop) &&
			    !(slot_budget && RLOAD(&sl->ops) >= slot_budget))
				spawn_thread(t);
		}
	}
	for (t = 0; t < n; t++)
		if (P.started[t])
			pthread_join(P.threads[t], NULL);
	_exit(0);
}

/* ------------------------------------------------------------------ */
/* The harness                                                         */

/* A run of liveness samples that saw one call's honest lock word free. */
struct live_run {
	unsigned int seq;		/* the call: its slot's seq */
	unsigned int samples;
	unsigned int word;		/* the last one seen */
	unsigned int windowed;		/* seq already counted as a full window */
	unsigned int reported;		/* seq already reported */
	unsigned long long since;	/* first sample of the run, 0: none */
	unsigned long long last;	/* last sample of the run */
};

struct harness {
	struct worker hw;		/* for accounting kills and stops */
	unsigned long long start, end, stop_at, kill_at;
	unsigned long long next_kill, next_stop, next_progress;
	unsigned int killed[MAX_PROCS];	/* SIGKILL sent by us, not yet reaped */
	unsigned long long kill_sent[MAX_PROCS];
	unsigned int kill_reported[MAX_PROCS];
	unsigned int doom_reported[MAX_PROCS];
	unsigned int fails_printed;
	bool stopping, stragglers_killed;
	int kmsg;
	char stats0[2048];
	bool live_heads_ok;
	char heads_msg[256];
	int klog_result;
	char klog_msg[256];
	struct live_run live[2 * NR_WSLOTS];
	unsigned long long live_samples, live_windows, live_deferred;
};

static struct harness X;

static void print_fails(bool final)
{
	while (X.fails_printed < MAX_FAILS &&
	       X.fails_printed < LOAD(&H->fail_next)) {
		struct fail_rec *r = &H->fails[X.fails_printed];
		char *line, *save = NULL;

		if (!LOAD(&r->len) && !final)
			break;
		ksft_print_msg("FAILURE [%s]:\n", check_names[r->check % NR_CHECKS]);
		for (line = strtok_r(r->text, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			ksft_print_msg("  %s\n", line);
		X.fails_printed++;
	}
}

static void spawn_proc(int p)
{
	struct proc_rec *pr = &H->procs[p];
	pid_t pid;

	ADD(&pr->gen, 1);
	pr->crash_sig = 0;
	pr->stop_since = 0;
	STORE(&pr->doomed, 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0)
		worker_proc(p, false);
	pr->pid = pid;
}

static int proc_of_pid(pid_t pid)
{
	unsigned int p;

	for (p = 0; p < H->cfg.nprocs; p++)
		if (H->procs[p].pid == pid)
			return p;
	return -1;
}

static void reap(void)
{
	pid_t pid;
	int st, p;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		struct proc_rec *pr;
		unsigned int t;

		p = proc_of_pid(pid);
		if (p < 0)
			continue;	/* an orphaned fork child */
		pr = &H->procs[p];
		if (!X.killed[p] && !(X.stopping && WIFEXITED(st) &&
				      !WEXITSTATUS(st)))
			failf(NULL, CK_RUN,
			      "worker process %d (pid %d, gen %u) died unexpectedly: %s %d%s (crash signal %d at %#llx, ip segv_handler%+lld)",
			      p, pid, pr->gen,
			      WIFSIGNALED(st) ? "signal" : "exit status",
			      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
			      WCOREDUMP(st) ? ", core dumped" : "",
			      pr->crash_sig, pr->crash_addr, pr->crash_ip);
		for (t = 0; t < MAX_THREADS; t++)
			dead_push(pr->tids[t]);
		pr->pid = 0;
		X.killed[p] = 0;
		X.kill_reported[p] = 0;
		X.doom_reported[p] = 0;
		if (!X.stopping)
			spawn_proc(p);
	}
}

static bool procs_alive(void)
{
	unsigned int p;

	for (p = 0; p < H->cfg.nprocs; p++)
		if (H->procs[p].pid)
			return true;
	return false;
}

/* Who a TID in a futex word is, or was, as far as our records go. */
static int tid_info(unsigned int tid, char *buf, size_t len)
{
	unsigned int i, best = 0;
	struct tstate *t;

	tid &= FUTEX_TID_MASK;
	if (!tid)
		return snprintf(buf, len, "no owner");
	for (i = 0; i < TS_SIZE; i++)
		if (H->ts[i].gid && H->ts[i].tid == tid && H->ts[i].gid > best)
			best = H->ts[i].gid;
	if (!best)
		return snprintf(buf, len, "owner TID %u: not one of our threads", tid);
	t = &H->ts[best % TS_SIZE];
	return snprintf(buf, len,
			"owner TID %u: gid %u, proc %u gen %u (now gen %u%s), %s%s",
			tid, best, t->proc, t->pgen, H->procs[t->proc].gen,
			H->procs[t->proc].doomed ? ", doomed" : "",
			t->child ? "fork child, " : "",
			t->state == TS_ALIVE ? (gid_dead(best) ? "dying" : "alive") :
			t->state == TS_EXITING ? "exiting" : "dead");
}

/* Everything we know about a task that overstayed in the kernel. */
static void hang_report(int s, struct slot *sl, pid_t pid, unsigned int tid,
			unsigned long long now, unsigned long long over)
{
	char stack[1536], wchan[64], path[96], who[160] = "", *text;
	bool have_word = false;
	unsigned int word = 0;
	size_t n, len = FAIL_TEXT;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/stack", pid, tid);
	read_file(path, stack, sizeof(stack));
	snprintf(path, sizeof(path), "/proc/%d/task/%u/wchan", pid, tid);
	read_file(path, wchan, sizeof(wchan));
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		have_word = pread(fd, &word, sizeof(word), sl->uaddr) == sizeof(word);
		close(fd);
	}
	if (have_word)
		tid_info(word, who, sizeof(who));

	text = malloc(len);
	if (!text)
		return;
	n = snprintf(text, len,
		     "tid %u (pid %d, slot %d%s) still in %s (futex op %#x) %.3f s after its deadline (%.3f s after it started, slack %llu s); word at %#llx: %s%#x (%s); wchan %s; kernel stack:\n%s",
		     tid, pid, s, s >= NR_WSLOTS ? ", fork child" : "",
		     op_names[sl->op % NR_OPS], sl->fop, (double)over / NSEC,
		     (double)(now - sl->start) / NSEC, H->cfg.slack / NSEC,
		     sl->uaddr, have_word ? "" : "unreadable ", word, who,
		     wchan, stack);
	if (n < len - 1)
		ring_format(sl, text + n, len - n);
	failf(NULL, CK_HANG, "%s", text);
	free(text);
}

/* The state letter of a task in /proc/.../stat, '?' when it is gone. */
static char task_state(pid_t pid, unsigned int tid)
{
	char path[64], stat[256], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", pid, tid);
	read_file(path, stat, sizeof(stat));
	p = strrchr(stat, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* A record is only worth a report while its task exists and is no zombie. */
static bool task_alive(pid_t pid, unsigned int tid)
{
	char st = task_state(pid, tid);

	return st != '?' && st != 'Z' && st != 'X';
}

/*
 * A task inside a syscall past its deadline + slack is hung. Time its
 * process spent SIGSTOP'ed by us does not count; doomed processes (being
 * killed or exec'ing) are watched by their own checks.
 */
static void watchdog(unsigned long long now)
{
	unsigned int s, p;

	for (s = 0; s < 2 * NR_WSLOTS; s++) {
		struct slot *sl = &H->slots[s];
		unsigned long long start, deadline, stopped0, stopped;
		unsigned int seq = LOAD(&sl->seq), tid;
		struct proc_rec *pr;
		pid_t pid;

		if (!(seq & 1) || sl->reported == seq)
			continue;
		p = (s % NR_WSLOTS) / MAX_THREADS;
		pr = &H->procs[p];
		start = sl->start;
		deadline = sl->deadline;
		stopped0 = sl->stopped0;
		tid = sl->tid;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LOAD(&sl->seq) != seq || !pr->pid || LOAD(&pr->doomed))
			continue;
		if (s >= NR_WSLOTS && LOAD(&sl->doom) == sl->incarn)
			continue;
		stopped = pr->stopped_total - stopped0;
		if (pr->stop_since)
			stopped += now - pr->stop_since;
		if (now <= deadline + H->cfg.slack + stopped || start > now)
			continue;
		sl->reported = seq;
		pid = s >= NR_WSLOTS ? (pid_t)tid : pr->pid;
		if (task_alive(pid, tid))
			hang_report(s, sl, pid, tid, now, now - deadline - stopped);
	}

	for (p = 0; p < H->cfg.nprocs; p++) {
		struct proc_rec *pr = &H->procs[p];

		if (X.killed[p] && !X.kill_reported[p] &&
		    now - X.kill_sent[p] > H->cfg.slack) {
			char stack[1536], path[64];

			X.kill_reported[p] = 1;
			snprintf(path, sizeof(path), "/proc/%d/stack", pr->pid);
			read_file(path, stack, sizeof(stack));
			failf(NULL, CK_HANG,
			      "worker process %d (pid %d) still there %llu s after SIGKILL; kernel stack of its main thread:\n%s",
			      p, pr->pid, H->cfg.slack / NSEC, stack);
		}
		/* signed: the worker stamps doomed_at with its own clock read */
		if (pr->pid && !X.killed[p] && LOAD(&pr->doomed) &&
		    !X.doom_reported[p] &&
		    (long long)(now - pr->doomed_at) > (long long)(30 * NSEC + 2 * H->cfg.slack)) {
			X.doom_reported[p] = 1;
			failf(NULL, CK_HANG,
			      "worker process %d (pid %d) started an exec %.1f s ago and did not come back",
			      p, pr->pid, (double)(now - pr->doomed_at) / NSEC);
		}
	}
}

/*
 * Liveness: a task must not stay asleep in FUTEX_SPIN_LOCK while the word
 * has no owner. The kernel's invariant says a sleeper is only ever left
 * behind a free word while somebody is about to look at it again: the
 * sleeper an unlock or a robust list walk woke (runnable until it has
 * looked), an unlocker between its cmpxchg and its wakeup (inside
 * FUTEX_SPIN_UNLOCK), a dying owner between marking OWNER_DIED and the
 * wakeup (an exiting thread or a process being killed). A lost wakeup
 * leaves the waiter asleep until its deadline instead, which may be
 * seconds or never for a NULL timeout, and the deadline watchdog cannot
 * tell that from a waiter behind a busy lock.
 *
 * The harness samples the words of the honest locks that tasks wait for
 * (a shared one in our own mapping, a private one with process_vm_readv()
 * from the waiter's process). A waiter is reported when every sample over
 * the window (-L) saw the word without a TID, its call is still the same,
 * its process was neither stopped nor dying meanwhile, it is asleep (S),
 * and nothing of the above that could still wake it exists right now. A
 * gap in the sampling (the harness did not run) starts the run again:
 * what was not looked at cannot count as free.
 */
/* The operations that publish the honest lock they wait for. */
static bool op_waits_honest(unsigned int op)
{
	return op == OP_H_LOCK || op == OP_H_LOCK_PAST || op == OP_H_LOCK_FOREVER;
}

static bool live_word(int li, pid_t pid, unsigned long long uaddr,
		      unsigned int *word)
{
	struct iovec local = { word, sizeof(*word) };
	struct iovec remote = { (void *)(unsigned long)uaddr, sizeof(*word) };

	if (li < (int)H->cfg.nhs) {
		*word = LOAD(&((struct hlock *)(P.shm + OFF_HS) + li)->word);
		return true;
	}
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof(*word);
}

/* Could anybody still wake a sleeper of honest lock @li (process @p's)? */
static bool live_wake_pending(int li, unsigned int p, unsigned int self)
{
	unsigned int s, q;

	for (q = 0; q < H->cfg.nprocs; q++)
		if (H->procs[q].pid && LOAD(&H->procs[q].doomed))
			return true;
	for (s = 0; s < 2 * NR_WSLOTS; s++) {
		struct slot *sl = &H->slots[s];
		unsigned int seq = LOAD(&sl->seq), op = RLOAD(&sl->op);
		unsigned int sp = (s % NR_WSLOTS) / MAX_THREADS;
		char st;

		if (!(seq & 1) || s == self)
			continue;
		/* dying owners: their robust list walk wakes a sleeper */
		if (op == OP_THREAD_EXIT)
			return true;
		if (op == OP_FORK && gid_dead(LOAD(&H->slots[NR_WSLOTS + s].gid)))
			return true;
		if (RLOAD(&sl->hlock) != (unsigned int)li + 1 ||
		    (li >= (int)H->cfg.nhs && sp != p))
			continue;
		if (op == OP_H_UNLOCK)
			return true;
		if (!op_waits_honest(op))
			continue;
		st = task_state(s >= NR_WSLOTS ? (pid_t)sl->tid : H->procs[sp].pid,
				sl->tid);
		/* runnable: maybe the woken sleeper that has not looked yet */
		if (st != 'S' && st != 'T' && st != '?')
			return true;
	}
	return false;
}

static void live_report(unsigned int s, struct slot *sl, pid_t pid, int li,
			struct live_run *lr, unsigned long long now)
{
	char stack[1536], wchan[64], path[96], ws[24], *text;
	size_t n, len = FAIL_TEXT;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/stack", pid, sl->tid);
	read_file(path, stack, sizeof(stack));
	snprintf(path, sizeof(path), "/proc/%d/task/%u/wchan", pid, sl->tid);
	read_file(path, wchan, sizeof(wchan));
	fmt_wid(ws, sizeof(ws), hl_wid(li));
	text = malloc(len);
	if (!text)
		return;
	n = snprintf(text, len,
		     "honest lock %s: tid %u (pid %d, slot %d%s) asleep in %s (futex op %#x) %.3f s after it started, while the word had no owner (last seen %#x) in all %u samples over the last %.3f s, with no unlocker, runnable waiter or dying owner left to wake it; wchan %s; kernel stack:\n%s",
		     ws, sl->tid, pid, s, s >= NR_WSLOTS ? ", fork child" : "",
		     op_names[sl->op % NR_OPS], sl->fop,
		     (double)(now - sl->start) / NSEC, lr->word, lr->samples,
		     (double)(now - lr->since) / NSEC, wchan, stack);
	if (n < len - 1)
		ring_format(sl, text + n, len - n);
	failf(NULL, CK_LIVE, "%s", text);
	free(text);
}

static void live_check(unsigned long long now)
{
	unsigned long long win = H->cfg.live_ms * MSEC;
	unsigned int s;

	if (!win)
		return;
	for (s = 0; s < 2 * NR_WSLOTS; s++) {
		struct slot *sl = &H->slots[s];
		struct live_run *lr = &X.live[s];
		unsigned int seq = LOAD(&sl->seq), p, word, tid, hl, op;
		unsigned long long uaddr;
		struct proc_rec *pr;
		pid_t pid;

		hl = RLOAD(&sl->hlock);
		op = RLOAD(&sl->op);
		tid = sl->tid;
		uaddr = sl->uaddr;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		p = (s % NR_WSLOTS) / MAX_THREADS;
		pr = &H->procs[p];
		pid = s >= NR_WSLOTS ? (pid_t)tid : pr->pid;
		if (!(seq & 1) || !hl || !op_waits_honest(op) ||
		    LOAD(&sl->seq) != seq || !pr->pid || LOAD(&pr->doomed) ||
		    pr->stop_since ||
		    (s >= NR_WSLOTS && LOAD(&sl->doom) == sl->incarn) ||
		    !live_word(hl - 1, pid, uaddr, &word) ||
		    LOAD(&sl->seq) != seq || (word & FUTEX_TID_MASK)) {
			lr->since = 0;
			continue;
		}
		X.live_samples++;
		if (lr->seq != seq || (lr->since && now - lr->last > win / 4))
			lr->since = 0;
		if (!lr->since) {
			lr->seq = seq;
			lr->since = now;
			lr->samples = 0;
		}
		lr->last = now;
		lr->samples++;
		lr->word = word;
		if (now - lr->since < win || lr->samples < win / (20 * MSEC) ||
		    lr->reported == seq)
			continue;
		if (lr->windowed != seq)
			X.live_windows++;
		lr->windowed = seq;
		if (task_state(pid, tid) != 'S' ||
		    live_wake_pending(hl - 1, p, s)) {
			X.live_deferred++;
			continue;
		}
		lr->reported = seq;
		live_report(s, sl, pid, hl - 1, lr, now);
	}
}

/* Every task of a process that does not go away: state, wchan, stack. */
static void dump_proc(int p, const char *why)
{
	struct proc_rec *pr = &H->procs[p];
	unsigned long long now = mono_ns();
	size_t n = 0, len = 4 * FAIL_TEXT;
	char path[96], buf[1536], *text;
	unsigned int t;

	text = malloc(len);
	if (!text)
		return;
	n += snprintf(text + n, len - n, "worker process %d (pid %d) %s\n", p,
		      pr->pid, why);
	for (t = 0; t < H->cfg.nthreads && n < len; t++) {
		struct slot *sl = &H->slots[p * MAX_THREADS + t];
		unsigned int tid = RLOAD(&pr->tids[t]), word = 0;
		char *state, who[160] = "";
		int fd;

		if (!tid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/mem", pr->pid);
		fd = open(path, O_RDONLY);
		if (fd >= 0 && sl->uaddr &&
		    pread(fd, &word, sizeof(word), sl->uaddr) == sizeof(word))
			tid_info(word, who, sizeof(who));
		if (fd >= 0)
			close(fd);
		snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", pr->pid, tid);
		read_file(path, buf, sizeof(buf));
		state = strrchr(buf, ')');
		n += snprintf(text + n, len - n,
			      "thread %u tid %u: state %.1s, %s %s for %.3f s (futex op %#x, word at %#llx = %#x, %s)\n",
			      t, tid, state ? state + 2 : "?",
			      LOAD(&sl->seq) & 1 ? "in" : "last",
			      op_names[sl->op % NR_OPS],
			      (double)(now - sl->start) / NSEC, sl->fop, sl->uaddr,
			      word, who);
		snprintf(path, sizeof(path), "/proc/%d/task/%u/stack", pr->pid, tid);
		read_file(path, buf, sizeof(buf));
		if (n < len)
			n += snprintf(text + n, len - n, "%s", buf);
	}
	snprintf(path, sizeof(path), "/proc/%d/stack", pr->pid);
	read_file(path, buf, sizeof(buf));
	if (n < len)
		n += snprintf(text + n, len - n, "main thread %d:\n%s", pr->pid, buf);
	failf(NULL, CK_HANG, "%s", text);
	free(text);
}

static void harness_kill(int p, unsigned long long now)
{
	struct proc_rec *pr = &H->procs[p];

	if (!pr->pid || X.killed[p] || !cas32(&pr->doomed, 0, 1, NULL))
		return;
	pr->doomed_at = now;
	X.killed[p] = 1;
	X.kill_sent[p] = now;
	kill(pr->pid, SIGKILL);
	account(&X.hw, OP_PROC_KILL, EB_OK, -1, 0, 0, pr->pid, 0, 0);
}

static void cont_proc(struct proc_rec *pr, unsigned long long now)
{
	if (!pr->stop_since)
		return;
	if (pr->pid)
		kill(pr->pid, SIGCONT);
	pr->stopped_total += now - pr->stop_since;
	pr->stop_since = 0;
}

static void chaos(unsigned long long now)
{
	unsigned long long *r = &X.hw.rng;
	unsigned int p, km = H->cfg.kill_ms;

	for (p = 0; p < H->cfg.nprocs; p++) {
		struct proc_rec *pr = &H->procs[p];

		if (pr->stop_since && now >= pr->stop_until)
			cont_proc(pr, now);
	}
	if (km && group_on(G_KILL) && now >= X.next_kill) {
		harness_kill(rnd(r, H->cfg.nprocs), now);
		X.next_kill = now + (km / 2 + rnd(r, km)) * MSEC;
	}
	if (group_on(G_STOP) && now >= X.next_stop) {
		struct proc_rec *pr = &H->procs[rnd(r, H->cfg.nprocs)];

		if (pr->pid && !pr->stop_since && !LOAD(&pr->doomed)) {
			pr->stop_until = now + (1 + rnd(r, 30)) * MSEC;
			pr->stop_since = now;
			kill(pr->pid, SIGSTOP);
			account(&X.hw, OP_PROC_STOP, EB_OK, -1, 0, 0, pr->pid, 0, 0);
		}
		X.next_stop = now + (500 + rnd(r, 3000)) * MSEC;
	}
}

static unsigned long long total_ops(void)
{
	unsigned long long n = 0;
	unsigned int s, op, b;

	for (s = 0; s < NR_SLOTS; s++)
		for (op = 0; op < NR_OPS; op++)
			for (b = 0; b < NR_EB; b++)
				n += RLOAD(&H->slots[s].cnt[op][b]);
	return n;
}

static bool budget_done(void)
{
	unsigned int p, t;

	if (!H->cfg.ops_budget)
		return false;
	for (p = 0; p < H->cfg.nprocs; p++)
		for (t = 0; t < H->cfg.nthreads; t++)
			if (RLOAD(&H->slots[p * MAX_THREADS + t].ops) < H->cfg.ops_budget)
				return false;
	return true;
}

static void run_harness(unsigned long long duration)
{
	unsigned long long now = mono_ns(), wait_max;
	char why[80];
	unsigned int p;

	X.start = now;
	X.end = duration ? now + duration : ULLONG_MAX;
	X.next_kill = now + H->cfg.kill_ms * MSEC;
	X.next_stop = now + 700 * MSEC;
	X.next_progress = now + 10 * NSEC;
	for (p = 0; p < H->cfg.nprocs; p++)
		spawn_proc(p);

	/* the longest wait a worker may be in when told to stop */
	wait_max = FOREVER_BOUND + H->cfg.slack + 5 * NSEC;
	for (;;) {
		now = mono_ns();
		reap();
		watchdog(now);
		live_check(now);
		print_fails(false);
		if (!X.stopping) {
			chaos(now);
			if (now >= X.end || budget_done()) {
				X.stopping = true;
				X.stop_at = now;
				STORE(&H->stop, 1);
				for (p = 0; p < H->cfg.nprocs; p++)
					cont_proc(&H->procs[p], now);
			}
		} else if (!procs_alive()) {
			break;
		} else if (!X.stragglers_killed && now - X.stop_at > wait_max) {
			for (p = 0; p < H->cfg.nprocs; p++) {
				struct proc_rec *pr = &H->procs[p];

				if (!pr->pid || X.killed[p])
					continue;
				snprintf(why, sizeof(why),
					 "did not stop within %llu s of the end of the run",
					 wait_max / NSEC);
				dump_proc(p, why);
				STORE(&pr->doomed, 1);
				X.killed[p] = 1;
				X.kill_sent[p] = now;
				kill(pr->pid, SIGKILL);
			}
			X.stragglers_killed = true;
		} else if (X.stragglers_killed &&
			   now - X.stop_at > wait_max + 2 * H->cfg.slack) {
			failf(NULL, CK_HANG,
			      "worker processes still there after SIGKILL; giving up on them");
			break;
		}
		if (now >= X.next_progress) {
			unsigned long long ops = total_ops();

			ksft_print_msg("progress: %.0f s, %llu ops (%.0f/s), %u failure(s)\n",
				       (double)(now - X.start) / NSEC, ops,
				       ops / ((double)(now - X.start) / NSEC),
				       LOAD(&H->fail_next));
			X.next_progress = now + 10 * NSEC;
		}
		/* often enough for the liveness samples */
		sleep_ns(5 * MSEC);
	}

	/* Orphaned fork children come to us (child subreaper): reap them. */
	now = mono_ns();
	while (mono_ns() - now < H->cfg.slack) {
		pid_t pid = waitpid(-1, NULL, WNOHANG);

		if (pid < 0)
			break;
		if (!pid)
			sleep_ns(10 * MSEC);
	}
	if (waitpid(-1, NULL, WNOHANG) == 0)
		failf(NULL, CK_HANG, "fork children still alive %llu s after their parents died",
		      H->cfg.slack / NSEC);
}

/* ------------------------------------------------------------------ */
/* End of run checks and report                                        */

#define FS_DIR	"/sys/kernel/debug/futex_spin"

static bool debugfs_ready(void)
{
	struct stat st;

	if (!stat(FS_DIR, &st))
		return true;
	mount("none", "/sys/kernel/debug", "debugfs", 0, NULL);
	return !stat(FS_DIR, &st);
}

/*
 * Each task keeps the queue head it used last, and the kernel unlinks a
 * head when the last task keeping it exits: once every worker is gone
 * (this process uses no lock), none may be left. Allow a moment for tasks
 * that were still on their way out.
 */
static int check_live_heads(char *msg, size_t len)
{
	char buf[64] = "";
	unsigned long long t0 = mono_ns();

	if (H->cfg.emulate) {
		snprintf(msg, len, "PI emulation, no queue heads");
		return KSFT_SKIP;
	}
	if (!debugfs_ready()) {
		snprintf(msg, len, "%s/live_heads not available", FS_DIR);
		return KSFT_SKIP;
	}
	do {
		read_file(FS_DIR "/live_heads", buf, sizeof(buf));
		if (atoi(buf) == 0 && buf[0] == '0')
			break;
		sleep_ns(100 * MSEC);
	} while (mono_ns() - t0 < 5 * NSEC);
	buf[strcspn(buf, "\n")] = 0;
	snprintf(msg, len, "live_heads = %s", buf);
	return buf[0] == '0' && atoi(buf) == 0 ? KSFT_PASS : KSFT_FAIL;
}

static const char * const splats[] = {
	"WARNING:", "BUG:", "BUG ", "KASAN", "UBSAN", "general protection",
	"Oops", "Kernel panic", "possible recursive locking",
	"possible circular locking", "inconsistent lock state",
	"lockdep", "DEBUG_LOCKS_WARN_ON", "unreferenced object",
	"soft lockup", "hard LOCKUP", "INFO: task", "list_add corruption",
	"list_del corruption", "ODEBUG", "rcu_sched detected stall",
	"rcu: INFO",
};

/* The kernel log from our start on, through /dev/kmsg. */
static int check_klog(char *msg, size_t len)
{
	char rec[2048];
	int hits = 0;
	unsigned int i;

	if (X.kmsg < 0) {
		snprintf(msg, len, "/dev/kmsg not readable");
		return KSFT_SKIP;
	}
	for (;;) {
		ssize_t n = read(X.kmsg, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: read on */
		if (n <= 0)
			break;
		rec[n] = 0;
		for (i = 0; i < ARRAY_SIZE(splats); i++) {
			if (!strstr(rec, splats[i]))
				continue;
			if (hits++ < 20) {
				rec[strcspn(rec, "\n")] = 0;
				ksft_print_msg("kernel log: %s\n",
					       strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
			}
			break;
		}
	}
	snprintf(msg, len, "%d splat line(s) in the kernel log", hits);
	return hits ? KSFT_FAIL : KSFT_PASS;
}

static void print_kstats(void)
{
	char now[2048], *line, *save = NULL;

	if (H->cfg.emulate || !debugfs_ready())
		return;
	read_file(FS_DIR "/stats", now, sizeof(now));
	ksft_print_msg("kernel futex_spin stats during the run:\n");
	for (line = strtok_r(now, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64], *p;
		unsigned long long v, v0 = 0;

		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		p = strstr(X.stats0, name);
		if (p)
			sscanf(p + strlen(name), "%llu", &v0);
		ksft_print_msg("  %-22s %llu\n", name, v - v0);
	}
}

static void print_counts(double secs)
{
	unsigned long long per_op[NR_OPS][NR_EB] = {}, per_b[NR_EB] = {}, total = 0;
	unsigned int s, op, b;
	int other = 0;

	for (s = 0; s < NR_SLOTS; s++) {
		for (op = 0; op < NR_OPS; op++)
			for (b = 0; b < NR_EB; b++)
				per_op[op][b] += H->slots[s].cnt[op][b];
		if (H->slots[s].last_other)
			other = H->slots[s].last_other;
	}
	for (op = 0; op < NR_OPS; op++)
		for (b = 0; b < NR_EB; b++) {
			per_b[b] += per_op[op][b];
			total += per_op[op][b];
		}

	ksft_print_msg("operations: %llu in %.1f s (%.0f/s), seed %llu\n",
		       total, secs, total / secs, H->cfg.seed);
	ksft_print_msg("per operation: count, then results:\n");
	for (op = 0; op < NR_OPS; op++) {
		unsigned long long n = 0;
		char line[512];
		int len = 0;

		for (b = 0; b < NR_EB; b++)
			n += per_op[op][b];
		if (!n)
			continue;
		for (b = 0; b < NR_EB; b++)
			if (per_op[op][b])
				len += snprintf(line + len, sizeof(line) - len,
						" %s=%llu", bucket_name(b),
						per_op[op][b]);
		ksft_print_msg("  %-18s %10llu %s\n", op_names[op], n, line);
	}
	ksft_print_msg("errno histogram (all operations):\n");
	for (b = 0; b < NR_EB; b++)
		if (per_b[b])
			ksft_print_msg("  %-12s %llu%s\n", bucket_name(b), per_b[b],
				       b == EB_OTHER ? " (last: see below)" : "");
	if (per_b[EB_OTHER])
		ksft_print_msg("  last other errno: %s\n", errname(other));
	ksft_print_msg("owner-died takeovers %llu, honest waits >= 1 s %llu\n",
		       H->owner_died_seen, H->lock_waits_1s);
	ksft_print_msg("honest timeouts after >= 1 s checked against the handoff bound: %llu\n",
		       H->starve_checked);
	ksft_print_msg("waiters SIGKILLed at an unlock: %llu before it, %llu after it\n",
		       H->kill_ops[0], H->kill_ops[1]);
	ksft_print_msg("  died owning it: %llu after returning, %llu undecided; taken over %llu\n",
		       H->kill_late, H->kill_undecided, H->kill_repairs);
	ksft_print_msg("liveness (-L %u ms): %llu samples of a free word under a waiter\n",
		       H->cfg.live_ms, X.live_samples);
	ksft_print_msg("  %llu waits saw it free for a whole window, %llu samples deferred\n",
		       X.live_windows, X.live_deferred);
}

static void usage(const char *prog)
{
	unsigned int g;

	printf("Usage: %s [-s SEED] [-t SECONDS | -n OPS] [-p PROCS] [-T THREADS]\n"
	       "          [-H LOCKS] [-S SLACK] [-k KILL_MS] [-L LIVE_MS] [-d GROUP,...]\n"
	       "          [-e] [-r] [-l]\n"
	       "  -s  seed (printed at start; replays the same choices)\n"
	       "  -t  run time in seconds (default 60)\n"
	       "  -n  stop after about this many operations\n"
	       "  -p  worker processes (1-%d, default 3)\n"
	       "  -T  threads per process (1-%d, default 6)\n"
	       "  -H  shared honest locks (1-%d, default 4)\n"
	       "  -S  watchdog slack in seconds (default 10)\n"
	       "  -k  mean interval between harness SIGKILLs in ms (0: none, default 3000)\n"
	       "  -L  liveness window in ms: a waiter asleep on a free honest lock\n"
	       "      that long fails (0: off, default 1000)\n"
	       "  -l  test the liveness check: fake lost wakeups, which must fail it\n"
	       "  -d  disable groups of operations:",
	       prog, MAX_PROCS, MAX_THREADS, MAX_HS);
	for (g = 0; g < NR_GROUPS; g++)
		printf(" %s", group_names[g]);
	printf("\n  -e  emulate with FUTEX_LOCK_PI2/UNLOCK_PI (harness self-test)\n"
	       "  -r  one SCHED_FIFO thread per process\n");
}

static unsigned int parse_groups(char *arg)
{
	unsigned int mask = 0, g;
	char *tok, *save = NULL;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (g = 0; g < NR_GROUPS; g++)
			if (!strcmp(tok, group_names[g]))
				break;
		if (g == NR_GROUPS) {
			fprintf(stderr, "unknown group %s\n", tok);
			exit(KSFT_FAIL);
		}
		mask |= 1U << g;
	}
	return mask;
}

static __noreturn void exec_worker(int fd, int slot)
{
	void *shm = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);

	if (shm == MAP_FAILED || slot < 0 || slot >= MAX_PROCS)
		_exit(3);
	H = shm;
	P.slot = slot;
	ADD(&H->procs[slot].gen, 1);
	worker_proc(slot, true);
}

int main(int argc, char **argv)
{
	unsigned long long seed = 0, duration = 0, ops = 0;
	unsigned int nprocs = 3, nthreads = 6, nhs = 4, kill_ms = 3000;
	unsigned int live_ms = 1000, live_selftest = 0;
	unsigned int disabled = 0, emulate = 0, rt = 0;
	unsigned long long slack = 10;
	bool have_seed = false;
	unsigned int z = 0, g;
	int c, memfd, res[NR_CHECKS];
	char msg[NR_CHECKS][256];
	double secs;
	long ret;

	syscall(-1);
	nosys_errno = errno;
	P.slot = -1;

	if (argc == 4 && !strcmp(argv[1], "--exec-worker"))
		exec_worker(atoi(argv[2]), atoi(argv[3]));

	while ((c = getopt(argc, argv, "s:t:n:p:T:H:S:k:L:d:erlch")) != -1) {
		switch (c) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			have_seed = true;
			break;
		case 't':
			duration = strtoull(optarg, NULL, 0) * NSEC;
			break;
		case 'n':
			ops = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			nprocs = atoi(optarg);
			break;
		case 'T':
			nthreads = atoi(optarg);
			break;
		case 'H':
			nhs = atoi(optarg);
			break;
		case 'S':
			slack = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			kill_ms = atoi(optarg);
			break;
		case 'L':
			live_ms = atoi(optarg);
			break;
		case 'd':
			disabled |= parse_groups(optarg);
			break;
		case 'e':
			emulate = 1;
			break;
		case 'r':
			rt = 1;
			break;
		case 'l':
			live_selftest = 1;
			break;
		case 'c':
			break;	/* colour, as run.sh passes it: no colours here */
		default:
			usage(argv[0]);
			exit(c == 'h' ? KSFT_PASS : KSFT_FAIL);
		}
	}
	if (!nprocs || nprocs > MAX_PROCS || !nthreads ||
	    nthreads > MAX_THREADS || !nhs || nhs > MAX_HS || !slack) {
		usage(argv[0]);
		exit(KSFT_FAIL);
	}
	if (!duration && !ops)
		duration = 60 * NSEC;
	if (!have_seed)
		seed = mix64(clock_ns(CLOCK_REALTIME) ^ getpid());

	ksft_print_header();
	ksft_set_plan(NR_CHECKS);
	ksft_print_msg("futex_spin_fuzz: seed %llu\n", seed);
	ksft_print_msg("replay: %s -s %llu -p %u -T %u -H %u -k %u -L %u%s%s%s%s",
		       argv[0], seed, nprocs, nthreads, nhs, kill_ms, live_ms,
		       emulate ? " -e" : "", rt ? " -r" : "",
		       live_selftest ? " -l" : "",
		       disabled ? " -d " : "");
	for (g = 0; g < NR_GROUPS; g++)
		if (disabled & (1U << g))
			printf("%s%s", group_names[g],
			       (disabled >> (g + 1)) ? "," : "");
	if (duration)
		printf(" -t %llu", duration / NSEC);
	if (ops)
		printf(" -n %llu", ops);
	printf("\n");

	/* FUTEX_SPIN_UNLOCK on a free word: EPERM if the kernel has it. */
	ret = sys_futex(&z, FUTEX_SPIN_UNLOCK | FUTEX_PRIVATE_FLAG, 0, NULL,
			NULL, 0);
	if (!emulate && !(ret == -1 && errno == EPERM)) {
		int err = errno;

		for (c = 0; c < NR_CHECKS; c++)
			ksft_test_result_skip("%s: no FUTEX_SPIN_* (probe: %ld %s)\n",
					      check_names[c], ret,
					      ret < 0 ? errname(err) : "");
		ksft_print_cnts();
		exit(KSFT_SKIP);
	}

	memfd = memfd_create("futex_spin_fuzz", 0);
	if (memfd < 0 || ftruncate(memfd, SHM_SIZE))
		ksft_exit_fail_msg("memfd: %s\n", strerror(errno));
	H = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (H == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	H->cfg.seed = seed;
	H->cfg.ops_budget = ops ? (ops + nprocs * nthreads - 1) / (nprocs * nthreads) : 0;
	H->cfg.slack = slack * NSEC;
	H->cfg.nprocs = nprocs;
	H->cfg.nthreads = nthreads;
	H->cfg.nhs = nhs;
	H->cfg.disabled = disabled;
	H->cfg.emulate = emulate;
	H->cfg.rt = rt;
	H->cfg.kill_ms = kill_ms;
	H->cfg.live_ms = live_ms;
	H->cfg.live_selftest = live_selftest;
	H->cfg.memfd = memfd;
	H->t0 = mono_ns();
	P.shm = (char *)H;

	X.hw.sl = &H->slots[HARNESS_SLOT];
	X.hw.pr = &H->procs[0];
	X.hw.rng = mix64(seed ^ 0x4a52);
	X.hw.sidx = HARNESS_SLOT;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	X.kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (X.kmsg >= 0)
		lseek(X.kmsg, 0, SEEK_END);
	if (!emulate && debugfs_ready())
		read_file(FS_DIR "/stats", X.stats0, sizeof(X.stats0));

	ksft_print_msg("%u processes x %u threads, %u+%u honest locks, %s, slack %llu s\n",
		       nprocs, nthreads, nhs, NR_HP,
		       emulate ? "PI emulation" : "FUTEX_SPIN_*", slack);
	run_harness(duration);
	secs = (double)(mono_ns() - X.start) / NSEC;
	print_fails(true);

	res[CK_HEADS] = check_live_heads(msg[CK_HEADS], sizeof(msg[0]));
	res[CK_KLOG] = check_klog(msg[CK_KLOG], sizeof(msg[0]));
	print_kstats();
	print_counts(secs);
	print_fails(true);

	for (c = 0; c < NR_CHECKS; c++) {
		if (c == CK_HEADS || c == CK_KLOG)
			continue;
		res[c] = H->fail_cnt[c] ? KSFT_FAIL : KSFT_PASS;
		snprintf(msg[c], sizeof(msg[0]), "%u failure(s)", H->fail_cnt[c]);
	}
	if (!total_ops()) {
		res[CK_RUN] = KSFT_FAIL;
		snprintf(msg[CK_RUN], sizeof(msg[0]), "no operation ran");
	}
	if (emulate) {
		res[CK_ABI] = KSFT_SKIP;
		snprintf(msg[CK_ABI], sizeof(msg[0]), "PI emulation");
	}
	for (c = 0; c < NR_CHECKS; c++)
		ksft_test_result_code(res[c], check_names[c], "%s", msg[c]);
	ksft_finished();
}
