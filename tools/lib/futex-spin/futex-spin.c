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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* See futex-spin-internal.h */
__thread struct futex_spin_self futex_spin_self FUTEX_SPIN_TLS = {
	.epoch = FUTEX_SPIN_NO_EPOCH,
};
struct futex_spin_guard futex_spin_guard;

/* The last epoch given out, here or in an ancestor: a child inherits it */
static uint32_t last_epoch;
static bool no_wipeonfork;

static __thread struct robust_list_head *robust_head FUTEX_SPIN_TLS;

/*
 * The process's epoch; a new one the first time and in a new child. Any
 * epoch a thread has cached is at most last_epoch, so the child's next
 * one differs from the forking thread's. 0 when the kernel has no
 * MADV_WIPEONFORK (before Linux 4.14): nothing is cached then.
 */
static uint32_t process_epoch(void)
{
	uint32_t epoch = __atomic_load_n(&futex_spin_guard.epoch,
					 __ATOMIC_ACQUIRE), zero = 0;

	if (epoch || no_wipeonfork)
		return epoch;
	if (futex_spin_syscall(SYS_madvise, (long)&futex_spin_guard,
			       sizeof(futex_spin_guard), MADV_WIPEONFORK,
			       0, 0, 0)) {
		no_wipeonfork = true;
		return 0;
	}
	do {
		epoch = __atomic_add_fetch(&last_epoch, 1, __ATOMIC_SEQ_CST);
	} while (!epoch || epoch == FUTEX_SPIN_NO_EPOCH);
	/* Racing threads of a new process agree on the first one set. */
	if (!__atomic_compare_exchange_n(&futex_spin_guard.epoch, &zero, epoch,
					 false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		epoch = zero;
	return epoch;
}

int futex_spin_gettid(void)
{
	struct futex_spin_self *self = &futex_spin_self;
	uint32_t epoch = process_epoch();
	int tid;

	if (__builtin_expect(self->epoch == epoch, 1))
		return self->tid;
	/*
	 * A new thread, or the forking thread in a child, whose robust list
	 * glibc registered anew (fork, _Fork) or nobody did (clone).
	 */
	robust_head = NULL;
	tid = futex_spin_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
	self->tid = tid;
	/* Without an epoch nothing is cached: each call asks the kernel. */
	self->epoch = epoch ? epoch : FUTEX_SPIN_NO_EPOCH;
	return tid;
}

int futex_spin_probe(void)
{
	uint32_t word = 0;
	long ret = sys_futex(&word, FUTEX_SPIN_UNLOCK | FUTEX_PRIVATE_FLAG, 0,
			     NULL, NULL, 0);

	if (!ret)
		return EINVAL;
	return ret == -EPERM ? 0 : -ret;
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

static __thread struct own_robust_head own_head FUTEX_SPIN_TLS;

static struct robust_list_head *get_robust_head(void)
{
	struct robust_list_head *head;
	size_t len;

	/* A forking thread's list head is not the child's. */
	futex_spin_gettid();
	if (robust_head)
		return robust_head;
	if (futex_spin_syscall(SYS_get_robust_list, 0, (long)&head, (long)&len,
			       0, 0, 0))
		head = NULL;
	if (head && (len != sizeof(*head) || head->futex_offset != ROBUST_OFFSET))
		return NULL;
	if (!head) {
		own_head.head.list.next = &own_head.head.list;
		own_head.head.futex_offset = ROBUST_OFFSET;
		own_head.head.list_op_pending = NULL;
		own_head.prev = &own_head.head;
		head = &own_head.head;
		if (futex_spin_syscall(SYS_set_robust_list, (long)head,
				       sizeof(*head), 0, 0, 0, 0))
			return NULL;
	}
	robust_head = head;
	return head;
}

int futex_spin_robust_available(void)
{
	return get_robust_head() ? 0 : ENOTSUP;
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
	long ret;

	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	/* The kernel restarts after a signal: EINTR is not expected. */
	do {
		ret = sys_futex(&m->word, op, 0, abstime, NULL, 0);
	} while (ret == -EINTR);
	return -ret;
}

/*
 * The fallback: wait while the word has an owner, with FUTEX_WAITERS set
 * so that its unlock wakes us. Once we have slept (@woken: before the
 * call) we take the word with FUTEX_WAITERS set, since others may still
 * sleep and the unlocker that woke us cleared it.
 */
static int waitwake_lock_word(struct futex_spin_mutex *m, uint32_t tid,
			      int clock, const struct timespec *abstime,
			      bool woken)
{
	int op = FUTEX_WAIT_BITSET | private_flag(m);
	uint32_t waiters = woken ? FUTEX_WAITERS : 0, v;
	long ret;

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
		ret = sys_futex(&m->word, op, v | FUTEX_WAITERS, abstime, NULL,
				FUTEX_BITSET_MATCH_ANY);
		if (ret && ret != -EAGAIN && ret != -EINTR)
			return -ret;
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

/* @woken: the caller slept on the word, and may have taken a wakeup */
static int lock_word(struct futex_spin_mutex *m, int kind, uint32_t tid,
		     int clock, const struct timespec *abstime, bool woken)
{
	uint32_t zero = 0;
	int ret;

	if (futex_spin_mode() == FUTEX_SPIN_MODE_SPIN)
		woken = false;
	if (!woken && __atomic_compare_exchange_n(&m->word, &zero, tid, false,
						  __ATOMIC_ACQUIRE,
						  __ATOMIC_RELAXED))
		return 0;
	/* Only a lock taken at once may skip the check of the deadline. */
	ret = check_deadline(kind, &abstime);
	if (ret)
		return ret;
	if (!woken && trylock_word_spinning(m, tid))
		return 0;
	if (futex_spin_mode() == FUTEX_SPIN_MODE_SPIN)
		return spin_lock_word(m, clock, abstime);
	return waitwake_lock_word(m, tid, clock, abstime, woken);
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
	if (futex_spin_mode() == FUTEX_SPIN_MODE_SPIN)
		return -sys_futex(&m->word, FUTEX_SPIN_UNLOCK | private_flag(m),
				  0, NULL, NULL, 0);
	v = __atomic_exchange_n(&m->word, 0, __ATOMIC_RELEASE);
	if (v & FUTEX_WAITERS)
		sys_futex(&m->word, FUTEX_WAKE | private_flag(m), 1, NULL,
			  NULL, 0);
	return 0;
}

/*
 * The owner of a normal mutex that locks it again sleeps on the word until
 * another thread unlocks it (relock_wait()), counted in m->relockers.
 * Wake them all: in spin mode they are the only sleepers on the word that
 * FUTEX_WAKE reaches; in the fallback the others woken look again. The
 * fence orders the release before the look at the count, as the
 * relocker's count is ordered before its look at the word.
 */
static void wake_relockers(struct futex_spin_mutex *m)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&m->relockers, __ATOMIC_RELAXED))
		sys_futex(&m->word, FUTEX_WAKE | private_flag(m), INT_MAX,
			  NULL, NULL, 0);
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
		ret = 0;
		if (!next) {
			if (v & FUTEX_WAITERS)
				sys_futex(&m->word,
					  FUTEX_WAKE | private_flag(m), 1,
					  NULL, NULL, 0);
		} else {
			ret = unlock_word(m, tid);
			/* Another thread took the owner's place after us */
			if (ret == EPERM) {
				v = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
				continue;
			}
		}
		wake_relockers(m);
		return ret;
	}
}

/*
 * After taking a robust mutex's word, before linking it: what the caller
 * gets. An unrecoverable one is released again, waking the next waiter.
 */
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
 * Relocking a normal mutex deadlocks, as POSIX says: the caller sleeps on
 * the word until the deadline, if there is one, or until another thread
 * unlocks the mutex, as glibc lets it (a binary semaphore): then
 * -EAGAIN, and the caller takes the mutex as a waiter that was woken.
 */
static int relock_wait(struct futex_spin_mutex *m, int kind, uint32_t tid,
		       int clock, const struct timespec *abstime)
{
	int op = FUTEX_WAIT_BITSET | private_flag(m);
	long ret = check_deadline(kind, &abstime);
	uint32_t v;

	if (ret)
		return ret;
	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	/* Counted before the look at the word: see wake_relockers() */
	__atomic_add_fetch(&m->relockers, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		v = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
		if ((v & FUTEX_TID_MASK) != tid) {
			ret = -EAGAIN;
			break;
		}
		ret = sys_futex(&m->word, op, v, abstime, NULL,
				FUTEX_BITSET_MATCH_ANY);
		if (ret && ret != -EINTR && ret != -EAGAIN) {
			ret = -ret;
			break;
		}
	}
	__atomic_sub_fetch(&m->relockers, 1, __ATOMIC_RELAXED);
	return ret;
}

/*
 * The owner locks again: what each type says; -EAGAIN when another
 * thread unlocked it meanwhile (see relock_wait())
 */
static int relock(struct futex_spin_mutex *m, int kind, uint32_t tid,
		  bool try, int clock, const struct timespec *abstime)
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
	return relock_wait(m, kind, tid, clock, abstime);
}

static bool owned_by(struct futex_spin_mutex *m, uint32_t tid)
{
	return (__atomic_load_n(&m->word, __ATOMIC_RELAXED) & FUTEX_TID_MASK) ==
	       tid;
}

static int robust_lock(struct futex_spin_mutex *m, int kind, uint32_t tid,
		       int clock, const struct timespec *abstime, bool try,
		       bool woken)
{
	struct robust_list_head *head;
	int ret;

	if (__atomic_load_n(&m->state, __ATOMIC_RELAXED) &
	    FUTEX_SPIN_STATE_NOTRECOVERABLE)
		return ENOTRECOVERABLE;
	head = get_robust_head();
	if (!head)
		return ENOTSUP;
	robust_pending(head, &m->next);
	ret = try ? trylock_word(m, tid) :
		    lock_word(m, kind, tid, clock, abstime, woken);
	if (!ret)
		ret = acquired(m, tid);
	/*
	 * Linked only when kept: an unrecoverable one is released at once,
	 * and the next waiter links it into its own list as soon as it is.
	 */
	if (!ret || ret == EOWNERDEAD)
		robust_link(head, m);
	robust_pending(head, NULL);
	return ret;
}

int futex_spin_lock_slow(struct futex_spin_mutex *m, clockid_t clock,
			 const struct timespec *abstime, bool try)
{
	int kind = __atomic_load_n(&m->kind, __ATOMIC_RELAXED);
	bool woken = false;
	uint32_t tid;
	int ret;

	/* Destroyed (-1), or no mutex at all */
	if (kind & ~VALID_KIND)
		return EINVAL;
	if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)
		return EINVAL;
	tid = futex_spin_gettid();
	/* The first lock of a thread comes here to cache its TID. */
	if (!ROBUST(kind) && futex_spin_lock_fast(m))
		return 0;
	if (owned_by(m, tid)) {
		ret = relock(m, kind, tid, try, clock, abstime);
		if (ret != -EAGAIN)
			return ret;
		woken = true;
	}
	if (ROBUST(kind))
		return robust_lock(m, kind, tid, clock, abstime, try, woken);
	return try ? trylock_word(m, tid) :
		     lock_word(m, kind, tid, clock, abstime, woken);
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
