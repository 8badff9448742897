// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * libfutex-spin: see futex-spin.h for the interface and the layout.
 *
 * Only syscall(2), compiler atomics and TLS are used: no libc lock, so
 * that the library can stand under pthread_mutex_lock itself (the
 * LD_PRELOAD build) without recursing.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

/* The public functions are the shared library's exports; nothing else. */
#pragma GCC visibility push(default)
#include "futex-spin.h"
#pragma GCC visibility pop
#include "futex-spin-internal.h"

#ifndef FUTEX_SPIN_LOCK
#define FUTEX_SPIN_LOCK		14
#endif
#ifndef FUTEX_SPIN_UNLOCK
#define FUTEX_SPIN_UNLOCK	15
#endif

#define TYPE(kind)	((kind) & FUTEX_SPIN_MUTEX_TYPE_MASK)
#define ROBUST(kind)	((kind) & FUTEX_SPIN_MUTEX_ROBUST)
#define VALID_KIND	(FUTEX_SPIN_MUTEX_TYPE_MASK | \
			 FUTEX_SPIN_MUTEX_ROBUST | FUTEX_SPIN_MUTEX_SHARED)

/* Relocking deadlocks these types, and any thread may unlock them */
static bool normal_type(int kind)
{
	return TYPE(kind) == FUTEX_SPIN_MUTEX_NORMAL ||
	       TYPE(kind) == FUTEX_SPIN_MUTEX_ADAPTIVE;
}

/* The kernel finds a robust entry's word at this offset from the entry */
#define ROBUST_OFFSET	((long)offsetof(struct futex_spin_mutex, word) - \
			 (long)offsetof(struct futex_spin_mutex, next))

_Static_assert(sizeof(struct futex_spin_mutex) == 40, "pthread_mutex_t size");
_Static_assert(offsetof(struct futex_spin_mutex, kind) == 16, "__kind");
_Static_assert(offsetof(struct futex_spin_mutex, prev) == 24, "__list");

/* See trylock_word_spinning(); the perf benchmark's --spin-tries default */
#define FUTEX_SPIN_USER_TRIES	8

static int mode;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * The TID is cached per thread: gettid() is a system call. A fork child
 * has a new TID but inherits the cache, hence the atfork reset. The
 * handler is registered by a constructor, so that it runs before any
 * child handler a program registers later (they run in registration
 * order) and never from inside fork's own handler calls.
 */
__thread int futex_spin_tid FUTEX_SPIN_TLS;

static void reset_after_fork(void);

__attribute__((constructor)) static void futex_spin_lib_init(void)
{
	pthread_atfork(NULL, NULL, reset_after_fork);
}

int futex_spin_gettid(void)
{
	if (__builtin_expect(!futex_spin_tid, 0))
		futex_spin_tid = syscall(SYS_gettid);
	return futex_spin_tid;
}

static long sys_futex(uint32_t *uaddr, int op, uint32_t val,
		      const struct timespec *ts, uint32_t *uaddr2,
		      uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

int futex_spin_probe(void)
{
	uint32_t word = 0;

	if (!sys_futex(&word, FUTEX_SPIN_UNLOCK | FUTEX_PRIVATE_FLAG, 0,
		       NULL, NULL, 0))
		return EINVAL;
	return errno == EPERM ? 0 : errno;
}

int futex_spin_mode_from_env(enum futex_spin_mode *mode)
{
	const char *env = getenv("FUTEX_SPIN_MODE");
	int probe;

	if (env && !strcmp(env, "waitwake")) {
		*mode = FUTEX_SPIN_MODE_WAITWAKE;
		return 0;
	}
	if (env && *env && strcmp(env, "auto") && strcmp(env, "spin"))
		return EINVAL;
	probe = futex_spin_probe();
	if (probe && env && !strcmp(env, "spin"))
		return ENOSYS;
	*mode = probe ? FUTEX_SPIN_MODE_WAITWAKE : FUTEX_SPIN_MODE_SPIN;
	return 0;
}

static void __attribute__((noreturn)) bad_mode(int err)
{
	const char *env = getenv("FUTEX_SPIN_MODE");

	if (err == EINVAL)
		fprintf(stderr, "futex-spin: FUTEX_SPIN_MODE=%s: unknown mode "
			"(spin, waitwake or auto)\n", env);
	else
		fprintf(stderr, "futex-spin: FUTEX_SPIN_MODE=spin: the kernel "
			"has no FUTEX_SPIN_LOCK (probe: %s)\n",
			strerror(futex_spin_probe()));
	abort();
}

enum futex_spin_mode futex_spin_mode(void)
{
	enum futex_spin_mode m = __atomic_load_n(&mode, __ATOMIC_RELAXED);
	int err;

	if (m)
		return m;
	/* Racing first callers all reach the same answer. */
	err = futex_spin_mode_from_env(&m);
	if (err)
		bad_mode(err);
	__atomic_store_n(&mode, m, __ATOMIC_RELAXED);
	return m;
}

/*
 * The robust list. glibc registers one per thread (set_robust_list) and
 * there can be only one, so robust mutexes here go on glibc's list, kept
 * the way glibc keeps it: doubly linked through (prev, next), with next
 * pointing at the next entry's next field (what the kernel follows) and
 * prev at the previous entry's next field. The head stands for a node
 * whose next field is head->list and whose prev field is the pointer just
 * before the head. Only a list with our futex_offset is shared; a thread
 * without any list gets one of ours, laid out the same way.
 */
struct robust_node {
	void *prev;
	void *next;
};

struct own_robust_head {
	void *prev;
	struct robust_list_head head;
};

static __thread struct robust_list_head *robust_head FUTEX_SPIN_TLS;
static __thread struct own_robust_head own_head FUTEX_SPIN_TLS;

static void reset_after_fork(void)
{
	futex_spin_tid = 0;
	/* glibc registers its list again in the child; a list of ours is gone */
	robust_head = NULL;
}

static struct robust_list_head *get_robust_head(void)
{
	struct robust_list_head *head;
	size_t len;

	if (robust_head)
		return robust_head;
	if (syscall(SYS_get_robust_list, 0, &head, &len))
		head = NULL;
	if (head && (len != sizeof(*head) || head->futex_offset != ROBUST_OFFSET))
		return NULL;
	if (!head) {
		own_head.head.list.next = &own_head.head.list;
		own_head.head.futex_offset = ROBUST_OFFSET;
		own_head.head.list_op_pending = NULL;
		own_head.prev = &own_head.head;
		head = &own_head.head;
		if (syscall(SYS_set_robust_list, head, sizeof(*head)))
			return NULL;
	}
	robust_head = head;
	return head;
}

int futex_spin_robust_available(void)
{
	return get_robust_head() != NULL;
}

/* The node whose next field is at @p (bit 0 marks a PI entry) */
static struct robust_node *node_of(void *p)
{
	return (struct robust_node *)(((uintptr_t)p & ~1UL) -
				      offsetof(struct robust_node, next));
}

/*
 * The kernel reads the list when the thread dies, which can happen
 * between any two instructions: compiler barriers keep the stores in
 * program order (the kernel runs on this thread, so no CPU fence).
 */
static void robust_pending(struct robust_list_head *head, void *entry)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	head->list_op_pending = entry;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void robust_link(struct robust_list_head *head,
			struct futex_spin_mutex *m)
{
	void *first = head->list.next;

	node_of(first)->prev = &m->next;
	m->next = first;
	m->prev = head;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	head->list.next = (struct robust_list *)&m->next;
}

static void robust_unlink(struct futex_spin_mutex *m)
{
	node_of(m->next)->prev = m->prev;
	node_of(m->prev)->next = m->next;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	m->next = NULL;
}

int futex_spin_mutex_init(struct futex_spin_mutex *m, int kind)
{
	if (kind & ~VALID_KIND)
		return EINVAL;
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	return 0;
}

/*
 * glibc's rule: a robust mutex is destroyed whatever its state (and a
 * kind of -1 has the robust bit), any other only when nobody holds it.
 */
int futex_spin_mutex_destroy(struct futex_spin_mutex *m)
{
	if (!ROBUST(m->kind) &&
	    (__atomic_load_n(&m->word, __ATOMIC_RELAXED) & FUTEX_TID_MASK))
		return EBUSY;
	m->kind = -1;
	return 0;
}

/*
 * Robust locks are waited for with shared futex operations in the
 * fallback: the kernel's robust list walk wakes a FUTEX_WAIT sleeper
 * through the shared key only. For FUTEX_SPIN_LOCK it tries both keys.
 */
static int private_flag(const struct futex_spin_mutex *m)
{
	if (m->kind & FUTEX_SPIN_MUTEX_SHARED)
		return 0;
	if (ROBUST(m->kind) && futex_spin_mode() != FUTEX_SPIN_MODE_SPIN)
		return 0;
	return FUTEX_PRIVATE_FLAG;
}

/* A deadline that has passed, in a form every futex operation accepts */
static const struct timespec past;

/*
 * Check @*ts before a wait. One before the epoch has passed (POSIX allows
 * it; the kernel calls it invalid): it becomes @past. glibc checks tv_nsec
 * before the sign for robust mutexes only, which decides between EINVAL
 * and ETIMEDOUT for a negative deadline with a bad tv_nsec; so does this.
 */
static int check_deadline(int kind, const struct timespec **ts)
{
	const struct timespec *t = *ts;

	if (!t)
		return 0;
	if (t->tv_sec < 0 && !ROBUST(kind)) {
		*ts = &past;
		return 0;
	}
	if (t->tv_nsec < 0 || t->tv_nsec >= 1000000000L)
		return EINVAL;
	if (t->tv_sec < 0)
		*ts = &past;
	return 0;
}

/* Take the word with FUTEX_SPIN_LOCK: 0 or errno */
static int spin_lock_word(struct futex_spin_mutex *m, int clock,
			  const struct timespec *abstime)
{
	int op = FUTEX_SPIN_LOCK | private_flag(m);

	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	/* The kernel restarts after a signal: EINTR is not expected. */
	while (sys_futex(&m->word, op, 0, abstime, NULL, 0)) {
		if (errno != EINTR)
			return errno;
	}
	return 0;
}

/*
 * The fallback: wait while the word has an owner, with FUTEX_WAITERS set
 * so that its unlock wakes us. Once we have slept we take the word with
 * FUTEX_WAITERS set, since others may still sleep and the unlocker that
 * woke us cleared it.
 */
static int waitwake_lock_word(struct futex_spin_mutex *m, uint32_t tid,
			      int clock, const struct timespec *abstime)
{
	int op = FUTEX_WAIT_BITSET | private_flag(m);
	uint32_t waiters = 0, v;

	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	for (;;) {
		v = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
		if (!(v & FUTEX_TID_MASK)) {
			if (__atomic_compare_exchange_n(&m->word, &v,
							v | tid | waiters,
							false, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return 0;
			continue;
		}
		if ((v & FUTEX_TID_MASK) == tid)
			return EDEADLK;
		if (!(v & FUTEX_WAITERS) &&
		    !__atomic_compare_exchange_n(&m->word, &v, v | FUTEX_WAITERS,
						 false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			continue;
		waiters = FUTEX_WAITERS;
		if (sys_futex(&m->word, op, v | FUTEX_WAITERS, abstime, NULL,
			      FUTEX_BITSET_MATCH_ANY) &&
		    errno != EAGAIN && errno != EINTR)
			return errno;
	}
}

/*
 * Look at a contended word a few times before entering the kernel: a
 * critical section shorter than the trip in is over before FUTEX_SPIN_LOCK
 * could begin to spin. The bound keeps the cost of a preempted owner at
 * about one trip; past it the kernel, which sees whether the owner runs,
 * spins or sleeps. Stop at once at a flag in the word: with WAITERS tasks
 * sleep and the kernel decides who is next, and only the kernel takes a
 * word with flags.
 */
static bool trylock_word_spinning(struct futex_spin_mutex *m, uint32_t tid)
{
	unsigned int i;
	uint32_t v;

	for (i = 0; i < FUTEX_SPIN_USER_TRIES; i++) {
		v = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
		if (v & ~FUTEX_TID_MASK)
			return false;
		if (!v && __atomic_compare_exchange_n(&m->word, &v, tid, false,
						      __ATOMIC_ACQUIRE,
						      __ATOMIC_RELAXED))
			return true;
		cpu_relax();
	}
	return false;
}

static int lock_word(struct futex_spin_mutex *m, int kind, uint32_t tid,
		     int clock, const struct timespec *abstime)
{
	uint32_t zero = 0;
	int ret;

	if (__atomic_compare_exchange_n(&m->word, &zero, tid, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	/* Only a lock taken at once may skip the check of the deadline. */
	ret = check_deadline(kind, &abstime);
	if (ret)
		return ret;
	if (trylock_word_spinning(m, tid))
		return 0;
	if (futex_spin_mode() == FUTEX_SPIN_MODE_SPIN)
		return spin_lock_word(m, clock, abstime);
	return waitwake_lock_word(m, tid, clock, abstime);
}

/* A word without an owner but with other bits: whoever takes it keeps them */
static int trylock_word(struct futex_spin_mutex *m, uint32_t tid)
{
	/* A deadline in the past: the kernel takes a free word or fails. */
	static const struct timespec past;
	uint32_t v = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
	int ret;

	while (!(v & FUTEX_TID_MASK)) {
		if (v && futex_spin_mode() == FUTEX_SPIN_MODE_SPIN) {
			/* Only the kernel takes a word with bits set. */
			ret = spin_lock_word(m, CLOCK_MONOTONIC, &past);
			return ret == ETIMEDOUT ? EBUSY : ret;
		}
		if (__atomic_compare_exchange_n(&m->word, &v, v | tid, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 0;
	}
	return EBUSY;
}

static int unlock_word(struct futex_spin_mutex *m, uint32_t tid)
{
	uint32_t v = tid;

	if (__atomic_compare_exchange_n(&m->word, &v, 0, false,
					__ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return 0;
	if ((v & FUTEX_TID_MASK) != tid)
		return EPERM;
	if (futex_spin_mode() == FUTEX_SPIN_MODE_SPIN) {
		if (sys_futex(&m->word, FUTEX_SPIN_UNLOCK | private_flag(m), 0,
			      NULL, NULL, 0) < 0)
			return errno;
		return 0;
	}
	v = __atomic_exchange_n(&m->word, 0, __ATOMIC_RELEASE);
	if (v & FUTEX_WAITERS)
		sys_futex(&m->word, FUTEX_WAKE | private_flag(m), 1, NULL,
			  NULL, 0);
	return 0;
}

/*
 * glibc's unlock of a normal mutex does not look at the owner: another
 * thread's unlock releases it (programs use such a mutex as a binary
 * semaphore, or unlock in a fork child what the parent's thread locked),
 * and an unlock of a free one does nothing. A word with flags is released
 * by FUTEX_SPIN_UNLOCK, which only its owner may call, so the caller takes
 * the owner's place first, keeping the flags: a compare-and-exchange, as
 * the kernel may be setting them.
 */
static int unlock_foreign(struct futex_spin_mutex *m, uint32_t tid)
{
	uint32_t v = __atomic_load_n(&m->word, __ATOMIC_RELAXED), next;
	int ret;

	for (;;) {
		if (!(v & FUTEX_TID_MASK))
			return 0;
		next = 0;
		if ((v & ~FUTEX_TID_MASK) &&
		    futex_spin_mode() == FUTEX_SPIN_MODE_SPIN)
			next = (v & ~FUTEX_TID_MASK) | tid;
		if (!__atomic_compare_exchange_n(&m->word, &v, next, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		if (!next) {
			if (v & FUTEX_WAITERS)
				sys_futex(&m->word,
					  FUTEX_WAKE | private_flag(m), 1,
					  NULL, NULL, 0);
			return 0;
		}
		ret = unlock_word(m, tid);
		/* Another thread took the owner's place after us: again */
		if (ret != EPERM)
			return ret;
		v = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
	}
}

/* After taking a robust mutex's word: what the caller gets */
static int acquired(struct futex_spin_mutex *m, uint32_t tid)
{
	/* A dead owner's recursion count */
	m->count = 0;
	if (__atomic_load_n(&m->state, __ATOMIC_RELAXED) &
	    FUTEX_SPIN_STATE_NOTRECOVERABLE) {
		unlock_word(m, tid);
		return ENOTRECOVERABLE;
	}
	if (__atomic_load_n(&m->word, __ATOMIC_RELAXED) & FUTEX_OWNER_DIED)
		return EOWNERDEAD;
	return 0;
}

/*
 * Relocking a normal mutex deadlocks, as POSIX says, until the deadline if
 * there is one: the caller sleeps on a word nobody wakes.
 */
static int deadlock(int kind, int clock, const struct timespec *abstime)
{
	int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	uint32_t never = 0;
	int ret = check_deadline(kind, &abstime);

	if (ret)
		return ret;
	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	for (;;) {
		if (sys_futex(&never, op, 0, abstime, NULL,
			      FUTEX_BITSET_MATCH_ANY) &&
		    errno != EINTR && errno != EAGAIN)
			return errno;
	}
}

/* The owner locks again: what each type says */
static int relock(struct futex_spin_mutex *m, int kind, bool try, int clock,
		  const struct timespec *abstime)
{
	if (TYPE(kind) == FUTEX_SPIN_MUTEX_RECURSIVE) {
		if (m->count == UINT32_MAX)
			return EAGAIN;
		m->count++;
		return 0;
	}
	/* glibc's trylock of its own robust errorcheck mutex: EDEADLK */
	if (try)
		return ROBUST(kind) &&
		       TYPE(kind) == FUTEX_SPIN_MUTEX_ERRORCHECK ? EDEADLK : EBUSY;
	if (TYPE(kind) == FUTEX_SPIN_MUTEX_ERRORCHECK)
		return EDEADLK;
	return deadlock(kind, clock, abstime);
}

static bool owned_by(struct futex_spin_mutex *m, uint32_t tid)
{
	return (__atomic_load_n(&m->word, __ATOMIC_RELAXED) & FUTEX_TID_MASK) ==
	       tid;
}

static int robust_lock(struct futex_spin_mutex *m, int kind, uint32_t tid,
		       int clock, const struct timespec *abstime, bool try)
{
	struct robust_list_head *head;
	int ret;

	if (__atomic_load_n(&m->state, __ATOMIC_RELAXED) &
	    FUTEX_SPIN_STATE_NOTRECOVERABLE)
		return ENOTRECOVERABLE;
	if (owned_by(m, tid))
		return relock(m, kind, try, clock, abstime);
	head = get_robust_head();
	if (!head)
		return ENOTSUP;
	robust_pending(head, &m->next);
	ret = try ? trylock_word(m, tid) :
		    lock_word(m, kind, tid, clock, abstime);
	if (!ret) {
		robust_link(head, m);
		ret = acquired(m, tid);
		if (ret == ENOTRECOVERABLE)
			robust_unlink(m);
	}
	robust_pending(head, NULL);
	return ret;
}

int futex_spin_lock_slow(struct futex_spin_mutex *m, clockid_t clock,
			 const struct timespec *abstime, bool try)
{
	int kind = __atomic_load_n(&m->kind, __ATOMIC_RELAXED);
	uint32_t tid;

	/* Destroyed (-1), or no mutex at all */
	if (kind & ~VALID_KIND)
		return EINVAL;
	if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)
		return EINVAL;
	tid = futex_spin_gettid();
	if (ROBUST(kind))
		return robust_lock(m, kind, tid, clock, abstime, try);
	/* The first lock of a thread comes here to cache its TID. */
	if (futex_spin_lock_fast(m))
		return 0;
	if (owned_by(m, tid))
		return relock(m, kind, try, clock, abstime);
	return try ? trylock_word(m, tid) :
		     lock_word(m, kind, tid, clock, abstime);
}

int futex_spin_mutex_lock(struct futex_spin_mutex *m)
{
	if (futex_spin_lock_fast(m))
		return 0;
	return futex_spin_lock_slow(m, CLOCK_MONOTONIC, NULL, false);
}

int futex_spin_mutex_trylock(struct futex_spin_mutex *m)
{
	if (futex_spin_lock_fast(m))
		return 0;
	return futex_spin_lock_slow(m, CLOCK_MONOTONIC, NULL, true);
}

int futex_spin_mutex_timedlock(struct futex_spin_mutex *m, clockid_t clock,
			       const struct timespec *abstime)
{
	return futex_spin_lock_slow(m, clock, abstime, false);
}

/* Unlock by the owner, with no recursion count left */
static int do_unlock(struct futex_spin_mutex *m, int kind, uint32_t tid)
{
	struct robust_list_head *head;
	int ret;

	if (!ROBUST(kind))
		return unlock_word(m, tid);
	head = get_robust_head();
	if (!head)
		return ENOTSUP;
	/*
	 * Unlocked while still marked: nobody repaired the state it
	 * protects, so nobody may have it any more.
	 */
	if (__atomic_load_n(&m->word, __ATOMIC_RELAXED) & FUTEX_OWNER_DIED) {
		__atomic_or_fetch(&m->state, FUTEX_SPIN_STATE_NOTRECOVERABLE,
				  __ATOMIC_RELAXED);
		__atomic_and_fetch(&m->word, ~FUTEX_OWNER_DIED,
				   __ATOMIC_RELAXED);
	}
	robust_pending(head, &m->next);
	robust_unlink(m);
	ret = unlock_word(m, tid);
	robust_pending(head, NULL);
	return ret;
}

/* Unlock by a thread that is not the owner: EPERM, but for normal types */
static int unlock_unowned(struct futex_spin_mutex *m, int kind, uint32_t tid)
{
	if (ROBUST(kind) || !normal_type(kind))
		return EPERM;
	return unlock_foreign(m, tid);
}

int futex_spin_unlock_slow(struct futex_spin_mutex *m)
{
	int kind = __atomic_load_n(&m->kind, __ATOMIC_RELAXED);
	uint32_t tid;

	if (kind & ~VALID_KIND)
		return EINVAL;
	tid = futex_spin_gettid();
	if (!owned_by(m, tid))
		return unlock_unowned(m, kind, tid);
	if (m->count) {
		m->count--;
		return 0;
	}
	return do_unlock(m, kind, tid);
}

int futex_spin_mutex_unlock(struct futex_spin_mutex *m)
{
	if (futex_spin_unlock_fast(m))
		return 0;
	return futex_spin_unlock_slow(m);
}

int futex_spin_mutex_consistent(struct futex_spin_mutex *m)
{
	uint32_t v = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
	int kind = m->kind;

	if ((kind & ~VALID_KIND) || !ROBUST(kind) || !(v & FUTEX_OWNER_DIED) ||
	    (v & FUTEX_TID_MASK) != (uint32_t)futex_spin_gettid())
		return EINVAL;
	/* Atomic: the kernel may set FUTEX_WAITERS at the same time. */
	__atomic_and_fetch(&m->word, ~FUTEX_OWNER_DIED, __ATOMIC_RELAXED);
	return 0;
}

int futex_spin_mutex_release(struct futex_spin_mutex *m, uint32_t *saved)
{
	int kind = __atomic_load_n(&m->kind, __ATOMIC_RELAXED);
	uint32_t tid;

	*saved = 0;
	if (kind & ~VALID_KIND)
		return EINVAL;
	tid = futex_spin_gettid();
	if (!owned_by(m, tid))
		return unlock_unowned(m, kind, tid);
	*saved = m->count;
	m->count = 0;
	return do_unlock(m, kind, tid);
}

int futex_spin_mutex_reacquire(struct futex_spin_mutex *m, uint32_t saved)
{
	int ret = futex_spin_mutex_lock(m);

	if (!ret || ret == EOWNERDEAD)
		m->count = saved;
	return ret;
}
