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
 * Condition variables are all the library's (cond.c), whatever mutex they
 * are used with: with one of glibc's, they release and retake it through
 * glibc.
 *
 * The uncontended lock and unlock are the library's inline fast paths:
 * one compare-and-exchange after a look at __kind and the cached TID, as
 * cheap as glibc's. Everything else is out of line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "futex-spin.h"
#include "futex-spin-internal.h"

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

/*
 * The mode is chosen here, at load: a FUTEX_SPIN_MODE the library refuses
 * (unknown, or spin on a kernel without the opcodes) stops the program
 * before it runs rather than at its first contended lock. Otherwise the
 * preload is quiet, as every process of a pipeline or a build would say
 * the same: FUTEX_SPIN_VERBOSE=1 makes it say its mode, and why.
 */
__attribute__((constructor)) static void preload_init(void)
{
	const char *v = getenv("FUTEX_SPIN_VERBOSE");
	const char *env = getenv("FUTEX_SPIN_MODE");
	enum futex_spin_mode mode;

	resolve();
	mode = futex_spin_mode();
	if (!v || !*v || *v == '0')
		return;
	if (mode == FUTEX_SPIN_MODE_SPIN)
		fprintf(stderr, "futex-spin: preload active, mode spin\n");
	else if (env && !strcmp(env, "waitwake"))
		fprintf(stderr, "futex-spin: preload active, mode waitwake\n");
	else
		fprintf(stderr, "futex-spin: preload active, mode waitwake "
			"(no FUTEX_SPIN_LOCK in this kernel)\n");
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
	int kind, ret;

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
		ret = futex_spin_robust_available();
		if (ret)
			return ret;
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

/* Out of line, so that the fast paths stay short */
static __attribute__((noinline)) int lock_slow(pthread_mutex_t *m, bool try)
{
	if (glibcs(m))
		return try ? real.trylock(m) : real.lock(m);
	return futex_spin_lock_slow(fsm(m), CLOCK_MONOTONIC, NULL, try);
}

static __attribute__((noinline)) int unlock_slow(pthread_mutex_t *m)
{
	if (glibcs(m))
		return real.unlock(m);
	return futex_spin_unlock_slow(fsm(m));
}

/* glibc's kinds (PI, PP) fail the fast paths' look at __kind. */
EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (__builtin_expect(futex_spin_lock_fast(fsm(m)), 1))
		return 0;
	return lock_slow(m, false);
}

EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (__builtin_expect(futex_spin_lock_fast(fsm(m)), 1))
		return 0;
	return lock_slow(m, true);
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (__builtin_expect(futex_spin_unlock_fast(fsm(m)), 1))
		return 0;
	return unlock_slow(m);
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

EXPORT int pthread_mutex_consistent(pthread_mutex_t *m)
{
	if (glibcs(m))
		return real.consistent(m);
	return futex_spin_mutex_consistent(fsm(m));
}

/* Condition variables: the library's, with either kind of mutex */

_Static_assert(sizeof(struct futex_spin_cond) <= sizeof(pthread_cond_t),
	       "pthread_cond_t");

static inline struct futex_spin_cond *cv(pthread_cond_t *c)
{
	return (struct futex_spin_cond *)c;
}

EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	int pshared = PTHREAD_PROCESS_PRIVATE, ret;
	clockid_t clock = CLOCK_REALTIME;

	if (a && (pthread_condattr_getpshared(a, &pshared) ||
		  pthread_condattr_getclock(a, &clock)))
		return EINVAL;
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	memset(c, 0, sizeof(*c));
	ret = futex_spin_cond_init(cv(c), pshared == PTHREAD_PROCESS_SHARED ?
				   FUTEX_SPIN_COND_SHARED : 0);
	/* The library's API takes the clock per wait; this is the preload's */
	if (!ret && clock == CLOCK_MONOTONIC)
		cv(c)->flags |= FUTEX_SPIN_COND_MONOTONIC;
	return ret;
}

EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	return futex_spin_cond_destroy(cv(c));
}

EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	return futex_spin_cond_signal(cv(c));
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	return futex_spin_cond_broadcast(cv(c));
}

static int unlock(void *m)
{
	return pthread_mutex_unlock(m);
}

static int lock(void *m)
{
	return pthread_mutex_lock(m);
}

static const struct futex_spin_cond_ops ops = {
	.unlock = unlock,
	.lock = lock,
};

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return futex_spin_cond_wait_ops(cv(c), m, &ops, CLOCK_REALTIME, NULL);
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abstime)
{
	clockid_t clock = cv(c)->flags & FUTEX_SPIN_COND_MONOTONIC ?
			  CLOCK_MONOTONIC : CLOCK_REALTIME;

	return futex_spin_cond_wait_ops(cv(c), m, &ops, clock, abstime);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
				  clockid_t clock,
				  const struct timespec *abstime)
{
	return futex_spin_cond_wait_ops(cv(c), m, &ops, clock, abstime);
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
