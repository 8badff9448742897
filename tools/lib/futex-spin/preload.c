// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * libfutex-spin-preload.so: the pthread mutex and condition variable API on
 * spinning futexes, for unmodified programs:
 *
 *   LD_PRELOAD=/path/to/libfutex-spin-preload.so program ...
 *
 * Which mutexes are taken over, and how a mutex is recognised: every
 * pthread_mutex_t of the process is initialised either statically (the
 * initializers give __kind 0..3: normal, recursive, errorcheck, adaptive)
 * or by pthread_mutex_init(), which is this file's. This file initialises
 * mutexes with the PTHREAD_PRIO_INHERIT or PTHREAD_PRIO_PROTECT protocol by
 * calling glibc's pthread_mutex_init, whose __kind then carries glibc's PI
 * or PP bit; every other mutex it initialises itself. Each entry point
 * looks at __kind: with the PI or PP bit the call goes to glibc, untouched;
 * otherwise the mutex is ours. The two kinds of mutex therefore mix freely
 * in one program; one mutex is never driven by both.
 *
 * What this cannot see: glibc locking a pthread_mutex_t internally. glibc
 * does so in its condition variables (which is why pthread_cond_* are here
 * too) and in the C11 mtx_* and cnd_* functions, which stay glibc's from
 * mtx_init on; a mtx_t must not be handed to pthread_mutex_*. A mutex in
 * shared memory must be used by processes that all run with the preload.
 *
 * Condition variables are all ours, whatever mutex they are used with: a
 * sequence counter futex. A waiter reads the counter, releases the mutex
 * and sleeps while the counter is unchanged; signal and broadcast bump the
 * counter and wake one or all sleepers. The waiters are woken, not
 * requeued: FUTEX_CMP_REQUEUE would move them to a FUTEX_WAIT queue on the
 * mutex word, which FUTEX_SPIN_UNLOCK does not look at.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#include "futex-spin.h"

#define EXPORT __attribute__((visibility("default")))

/* glibc's __kind bits for the protocols left to glibc */
#define GLIBC_KIND_PI	0x20
#define GLIBC_KIND_PP	0x40

/* For tests and scripts: dlsym(RTLD_DEFAULT, "futex_spin_preload") */
EXPORT const int futex_spin_preload = 1;

_Static_assert(sizeof(pthread_mutex_t) == sizeof(struct futex_spin_mutex),
	       "pthread_mutex_t");

struct real {
	int (*init)(pthread_mutex_t *, const pthread_mutexattr_t *);
	int (*destroy)(pthread_mutex_t *);
	int (*lock)(pthread_mutex_t *);
	int (*trylock)(pthread_mutex_t *);
	int (*timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*unlock)(pthread_mutex_t *);
	int (*consistent)(pthread_mutex_t *);
};

static struct real real;

/*
 * Only mutexes that glibc initialised need glibc, and those are made by
 * pthread_mutex_init() here, which resolves glibc's functions first.
 */
static void resolve(void)
{
	if (__atomic_load_n(&real.consistent, __ATOMIC_ACQUIRE))
		return;
	real.init = dlsym(RTLD_NEXT, "pthread_mutex_init");
	real.destroy = dlsym(RTLD_NEXT, "pthread_mutex_destroy");
	real.lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
	real.trylock = dlsym(RTLD_NEXT, "pthread_mutex_trylock");
	real.timedlock = dlsym(RTLD_NEXT, "pthread_mutex_timedlock");
	real.clocklock = dlsym(RTLD_NEXT, "pthread_mutex_clocklock");
	real.unlock = dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	__atomic_store_n(&real.consistent,
			 dlsym(RTLD_NEXT, "pthread_mutex_consistent"),
			 __ATOMIC_RELEASE);
	if (!real.init || !real.lock || !real.unlock || !real.consistent) {
		fprintf(stderr, "futex-spin: glibc's pthread_mutex_* not found\n");
		abort();
	}
}

__attribute__((constructor)) static void preload_init(void)
{
	const char *v = getenv("FUTEX_SPIN_VERBOSE");

	resolve();
	if (v && *v && *v != '0')
		fprintf(stderr, "futex-spin: preload active, mode %s\n",
			futex_spin_mode() == FUTEX_SPIN_MODE_SPIN ?
			"spin" : "waitwake (no FUTEX_SPIN_LOCK)");
}

static inline bool glibcs(const pthread_mutex_t *m)
{
	int kind = __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);

	return kind != -1 && (kind & (GLIBC_KIND_PI | GLIBC_KIND_PP));
}

static inline struct futex_spin_mutex *fsm(pthread_mutex_t *m)
{
	return (struct futex_spin_mutex *)m;
}

EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	int type = PTHREAD_MUTEX_NORMAL, robust = PTHREAD_MUTEX_STALLED;
	int pshared = PTHREAD_PROCESS_PRIVATE, proto = PTHREAD_PRIO_NONE;
	int kind;

	if (a && (pthread_mutexattr_gettype(a, &type) ||
		  pthread_mutexattr_getrobust(a, &robust) ||
		  pthread_mutexattr_getpshared(a, &pshared) ||
		  pthread_mutexattr_getprotocol(a, &proto)))
		return EINVAL;
	if (proto != PTHREAD_PRIO_NONE) {
		resolve();
		return real.init(m, a);
	}
	kind = type;
	if (robust == PTHREAD_MUTEX_ROBUST) {
		if (!futex_spin_robust_available())
			return ENOTSUP;
		kind |= FUTEX_SPIN_MUTEX_ROBUST;
	}
	if (pshared == PTHREAD_PROCESS_SHARED)
		kind |= FUTEX_SPIN_MUTEX_SHARED;
	return futex_spin_mutex_init(fsm(m), kind);
}

EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	if (glibcs(m))
		return real.destroy(m);
	return futex_spin_mutex_destroy(fsm(m));
}

EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (glibcs(m))
		return real.lock(m);
	return futex_spin_mutex_lock(fsm(m));
}

EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (glibcs(m))
		return real.trylock(m);
	return futex_spin_mutex_trylock(fsm(m));
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m,
				   const struct timespec *abstime)
{
	if (glibcs(m))
		return real.timedlock(m, abstime);
	return futex_spin_mutex_timedlock(fsm(m), CLOCK_REALTIME, abstime);
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
				   const struct timespec *abstime)
{
	if (glibcs(m))
		return real.clocklock(m, clock, abstime);
	return futex_spin_mutex_timedlock(fsm(m), clock, abstime);
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (glibcs(m))
		return real.unlock(m);
	return futex_spin_mutex_unlock(fsm(m));
}

EXPORT int pthread_mutex_consistent(pthread_mutex_t *m)
{
	if (glibcs(m))
		return real.consistent(m);
	return futex_spin_mutex_consistent(fsm(m));
}

/* Condition variables */

#define COND_MONOTONIC	0x1
#define COND_SHARED	0x2

struct cond {
	uint32_t seq;		/* bumped by every signal and broadcast */
	uint32_t flags;		/* COND_*; 0 for PTHREAD_COND_INITIALIZER */
	uint32_t waiters;	/* inside pthread_cond_*wait */
};

_Static_assert(sizeof(struct cond) <= sizeof(pthread_cond_t), "cond");

static inline struct cond *cv(pthread_cond_t *c)
{
	return (struct cond *)c;
}

static long cond_futex(struct cond *c, int op, uint32_t val,
		       const struct timespec *ts)
{
	if (!(c->flags & COND_SHARED))
		op |= FUTEX_PRIVATE_FLAG;
	return syscall(SYS_futex, &c->seq, op, val, ts, NULL,
		       FUTEX_BITSET_MATCH_ANY);
}

EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	clockid_t clock = CLOCK_REALTIME;
	struct cond *k = cv(c);

	if (a && (pthread_condattr_getpshared(a, &pshared) ||
		  pthread_condattr_getclock(a, &clock)))
		return EINVAL;
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	*c = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	if (clock == CLOCK_MONOTONIC)
		k->flags |= COND_MONOTONIC;
	if (pshared == PTHREAD_PROCESS_SHARED)
		k->flags |= COND_SHARED;
	return 0;
}

/*
 * Waiters leave before they relock the mutex: once signal or broadcast
 * woke them, this waits only for them to be scheduled, and a woken waiter
 * touches nothing of the condition variable after it has left.
 */
EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	while (__atomic_load_n(&cv(c)->waiters, __ATOMIC_ACQUIRE))
		sched_yield();
	return 0;
}

EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	struct cond *k = cv(c);

	/*
	 * Both seq_cst: a waiter counts itself before it reads seq, so either
	 * it reads the new seq, or this reads its count and wakes.
	 */
	__atomic_add_fetch(&k->seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&k->waiters, __ATOMIC_SEQ_CST))
		cond_futex(k, FUTEX_WAKE, 1, NULL);
	return 0;
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	struct cond *k = cv(c);

	__atomic_add_fetch(&k->seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&k->waiters, __ATOMIC_SEQ_CST))
		cond_futex(k, FUTEX_WAKE, INT32_MAX, NULL);
	return 0;
}

struct wait {
	struct cond *c;
	pthread_mutex_t *m;
	uint32_t saved;
};

static int release(pthread_mutex_t *m, uint32_t *saved)
{
	*saved = 0;
	if (glibcs(m))
		return real.unlock(m);
	return futex_spin_mutex_release(fsm(m), saved);
}

static int reacquire(pthread_mutex_t *m, uint32_t saved)
{
	if (glibcs(m))
		return real.lock(m);
	return futex_spin_mutex_reacquire(fsm(m), saved);
}

static void leave(struct cond *c, bool woken, uint32_t seq)
{
	/*
	 * Woken while seq still holds the value we slept on: the wake was
	 * meant for a waiter that came before us (we took the signal of an
	 * earlier generation). Pass it on; our return is a spurious wakeup.
	 */
	if (woken && __atomic_load_n(&c->seq, __ATOMIC_RELAXED) == seq)
		cond_futex(c, FUTEX_WAKE, 1, NULL);
	__atomic_sub_fetch(&c->waiters, 1, __ATOMIC_RELEASE);
}

/* Cancelled while asleep: leave, and hold the mutex as POSIX requires */
static void wait_cancelled(void *arg)
{
	struct wait *w = arg;

	/* A signal we may have consumed goes to another waiter. */
	cond_futex(w->c, FUTEX_WAKE, 1, NULL);
	__atomic_sub_fetch(&w->c->waiters, 1, __ATOMIC_RELEASE);
	reacquire(w->m, w->saved);
}

/*
 * A cancellation point: the futex system call is made with asynchronous
 * cancellation enabled, as for any blocking call. Apart so that nothing of
 * the caller lives across the cleanup's setjmp.
 */
static __attribute__((noinline)) long sleep_on(struct wait *w, int op,
					       uint32_t seq,
					       const struct timespec *abstime)
{
	int oldtype, err;
	long r;

	pthread_cleanup_push(wait_cancelled, w);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
	r = cond_futex(w->c, op, seq, abstime);
	err = errno;
	pthread_setcanceltype(oldtype, NULL);
	pthread_cleanup_pop(0);
	errno = err;
	return r;
}

static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
		     const struct timespec *abstime)
{
	struct wait w = { .c = cv(c), .m = m };
	int op = FUTEX_WAIT_BITSET, ret, err;
	uint32_t seq;
	long r;

	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	if (abstime && (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000L))
		return EINVAL;
	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;

	__atomic_add_fetch(&w.c->waiters, 1, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&w.c->seq, __ATOMIC_SEQ_CST);
	ret = release(m, &w.saved);
	if (ret) {
		__atomic_sub_fetch(&w.c->waiters, 1, __ATOMIC_RELEASE);
		return ret;
	}

	r = sleep_on(&w, op, seq, abstime);
	err = r ? errno : 0;

	leave(w.c, !r, seq);
	ret = reacquire(m, w.saved);
	if (ret)
		return ret;
	return err == ETIMEDOUT ? ETIMEDOUT : 0;
}

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return cond_wait(c, m, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abstime)
{
	clockid_t clock = (cv(c)->flags & COND_MONOTONIC) ? CLOCK_MONOTONIC :
							    CLOCK_REALTIME;

	return cond_wait(c, m, clock, abstime);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
				  clockid_t clock,
				  const struct timespec *abstime)
{
	return cond_wait(c, m, clock, abstime);
}

/*
 * glibc also exports these names of the mutex functions (GLIBC_2.2.5);
 * a binary that calls them must reach the same code.
 */
#define ALIAS(name) \
	extern __typeof(name) __##name __attribute__((alias(#name), copy(name), \
						       visibility("default")))
ALIAS(pthread_mutex_init);
ALIAS(pthread_mutex_destroy);
ALIAS(pthread_mutex_lock);
ALIAS(pthread_mutex_trylock);
ALIAS(pthread_mutex_unlock);
