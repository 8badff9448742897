/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of futex_spin_fuzz share: the layout of the shared memory
 * and of each process, the records every task keeps, small helpers, and
 * the functions one file calls in another. futex_spin_fuzz.c says what the
 * test does.
 */
#ifndef _FUTEX_SPIN_FUZZ_H
#define _FUTEX_SPIN_FUZZ_H

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

extern const char * const op_names[NR_OPS];

/*
 * Result buckets. BUSY is a user space cmpxchg that lost, SEGV a user space
 * access to a page that was unmapped or read-only (caught and survived).
 */
enum bucket {
	EB_OK, EB_BUSY, EB_SEGV, EB_EPERM, EB_ESRCH, EB_EINTR, EB_EAGAIN,
	EB_ENOMEM, EB_EFAULT, EB_EINVAL, EB_NOSYS, EB_EDEADLK, EB_ETIMEDOUT,
	EB_EEXIST, EB_EOWNERDEAD, EB_OTHER, NR_EB
};

extern int nosys_errno;

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

extern const char * const check_names[NR_CHECKS];

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
	unsigned long long late_max_ns;		/* honest ETIMEDOUT past its deadline */
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

extern struct shm_hdr *H;
extern struct pctx P;

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define RLOAD(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define RSTORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define XCHG(p, v)	__atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define ADD(p, v)	__atomic_add_fetch((p), (v), __ATOMIC_RELAXED)

static inline bool cas32(unsigned int *p, unsigned int old, unsigned int new,
			 unsigned int *seen)
{
	bool ok = __atomic_compare_exchange_n(p, &old, new, false,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE);
	if (seen)
		*seen = old;
	return ok;
}

static inline unsigned long long clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static inline unsigned long long mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline void ns_to_ts(unsigned long long ns, struct timespec *ts)
{
	ts->tv_sec = ns / NSEC;
	ts->tv_nsec = ns % NSEC;
}

static inline void sleep_ns(unsigned long long ns)
{
	struct timespec ts;

	ns_to_ts(ns, &ts);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline unsigned int gettid_raw(void)
{
	return syscall(SYS_gettid);
}

static inline long sys_futex(void *uaddr, int op, unsigned int val,
			     const void *tmo, void *uaddr2, unsigned int val3)
{
	return syscall(SYS_futex, uaddr, op, val, tmo, uaddr2, val3);
}

/* splitmix64: seeds every thread from the run seed and its identity. */
static inline unsigned long long mix64(unsigned long long x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline unsigned long long rng_next(unsigned long long *s)
{
	/* xorshift64*: cheap, and good enough to pick operations */
	unsigned long long x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static inline unsigned int rnd(unsigned long long *s, unsigned int n)
{
	return n ? (rng_next(s) >> 33) % n : 0;
}

static inline bool chance(unsigned long long *s, unsigned int percent)
{
	return rnd(s, 100) < percent;
}

static inline bool group_on(int g)
{
	return !(H->cfg.disabled & (1U << g));
}

extern __thread unsigned int tls_sigs;

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

/* ------------------------------------------------------------------ */
/* Words                                                               */

enum wkind { WK_HS, WK_HP, WK_AS, WK_ALIAS, WK_COW, WK_RO, WK_AP, WK_AV,
	     WK_BAD, WK_KL };

extern const char * const wkind_names[];

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

extern struct harness X;

#define FS_DIR	"/sys/kernel/debug/futex_spin"

/* ------------------------------------------------------------------ */
/* Functions called from other files, by the file that has them       */

/* futex_spin_fuzz_record.c */
const char *bucket_name(int b);
const char *errname(int err);
void read_file(const char *path, char *buf, size_t len);
int fmt_wid(char *b, size_t n, int wid);
size_t ring_format(struct slot *sl, char *buf, size_t len);
__printf(3, 4) void failf(struct worker *w, int ck, const char *fmt, ...);
void account(struct worker *w, int op, int b, int wid, unsigned int fop,
	     unsigned int before, unsigned int after, int ret, int err);
void account_sys(struct worker *w, int op, int wid, unsigned int fop,
		 unsigned int before, unsigned int after, long ret, int err);
void wd_begin(struct worker *w, int op, void *uaddr,
	      unsigned long long deadline);
void wd_end(struct worker *w);
unsigned int ts_register(unsigned int tid, unsigned int child,
			 unsigned int cslot);
void ts_set(unsigned int gid, unsigned int state);
bool gid_dead(unsigned int gid);
void dead_push(unsigned int tid);
unsigned int some_live_tid(unsigned long long *r);
unsigned int some_dead_tid(unsigned long long *r);

/* futex_spin_fuzz_proc.c */
bool g_cas(unsigned int *p, unsigned int old, unsigned int new,
	   unsigned int *seen);
bool g_store(unsigned int *p, unsigned int v);
bool g_store_ptr(struct robust_list **p, struct robust_list *v);
unsigned int peek(unsigned int *p);
void set_handlers(void);
void setup_process(int slot);

/* futex_spin_fuzz_words.c */
struct hlock *hl_addr(int li, bool alias);
int hl_fop(int li);
struct aword *aw_addr(int kind, int i);
struct aword *pick_aword(struct worker *w, int *kind, int *wid);
unsigned int forge(struct worker *w);
void robust_register(struct worker *w);
void robust_pending(struct worker *w, struct robust_list *n);
void robust_link(struct worker *w, struct robust_list *n);
void robust_unlink(struct worker *w, struct robust_list *n);
void mk_abs(struct worker *w, int cls, bool rt, struct tmo *t);
void check_early(struct worker *w, struct tmo *t, int op, int wid);
void note_late(struct tmo *t);
int spin_lock_op(int flags);
int spin_unlock_op(int flags);
long spin_call(struct worker *w, int op, void *uaddr, int fop, unsigned int val,
	       const void *tmo, void *uaddr2, unsigned int val3,
	       unsigned long long deadline, int *err);

/* futex_spin_fuzz_honest.c */
int nr_honest(struct worker *w);
int hl_wid(int li);
void honest_lock(struct worker *w, int op);
void honest_unlock(struct worker *w);
void release_all(struct worker *w);
void honest_relock(struct worker *w);
void honest_foreign_unlock(struct worker *w);
void honest_badargs(struct worker *w);

/* futex_spin_fuzz_abuse.c */
void abuse_lock(struct worker *w);
void abuse_unlock(struct worker *w);
void abuse_fast(struct worker *w, int op);
void abuse_badaddr(struct worker *w);
void abuse_badargs(struct worker *w);
void other_op(struct worker *w, int op);

/* futex_spin_fuzz_env.c */
void page_op(struct worker *w);
void signal_op(struct worker *w);
void robust_garbage(struct worker *w, int n);
void hash_resize(struct worker *w);

/* futex_spin_fuzz_worker.c */
void set_weights(struct worker *w);
void step(struct worker *w);
__noreturn void worker_proc(int slot, bool via_exec);

/* futex_spin_fuzz_fork.c */
void fork_op(struct worker *w);
void exec_op(struct worker *w);
void thread_exit_op(struct worker *w);

/* futex_spin_fuzz_kill.c */
void kill_waiter_op(struct worker *w);

/* futex_spin_fuzz_harness.c */
unsigned long long total_ops(void);
void run_harness(unsigned long long duration);

/* futex_spin_fuzz_watchdog.c */
void watchdog(unsigned long long now);
void live_check(unsigned long long now);
void dump_proc(int p, const char *why);

/* futex_spin_fuzz_report.c */
void print_fails(bool final);
bool debugfs_ready(void);
int check_live_heads(char *msg, size_t len);
int check_klog(char *msg, size_t len);
void print_kstats(void);
void print_counts(double secs);

/* futex_spin_fuzz.c */
__noreturn void harness_bail(const char *what);

#endif /* _FUTEX_SPIN_FUZZ_H */
