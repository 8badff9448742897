/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libfutex-spin's plumbing, shared by the library and the LD_PRELOAD
 * object, not installed: the uncontended fast paths (inline, so that the
 * preload's pthread_mutex_lock is one compare-and-exchange away from its
 * caller), the thread-local TID and the hooks of the condition variable.
 */
#ifndef _FUTEX_SPIN_INTERNAL_H
#define _FUTEX_SPIN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "futex-spin.h"

#define FUTEX_SPIN_HIDDEN	__attribute__((visibility("hidden")))

/*
 * Thread-local state uses the initial-exec TLS model. Code built with -fPIC
 * otherwise reaches it through a call to __tls_get_addr() on every lock
 * and unlock (for the cached TID): under the preload that call cost
 * sysbench mutex a third of its throughput. initial-exec needs the object
 * loaded with the program, linked in or preloaded; a late dlopen() works
 * only while glibc's spare static TLS lasts.
 */
#define FUTEX_SPIN_TLS	__attribute__((tls_model("initial-exec")))

/* The caller's TID, 0 until its first slow path (and in a fork child) */
extern __thread int futex_spin_tid FUTEX_SPIN_TLS FUTEX_SPIN_HIDDEN;

/* The caller's TID, cached per thread (and reset in a fork child) */
int futex_spin_gettid(void) FUTEX_SPIN_HIDDEN;

/* The kinds the fast paths take: any type, shared or not, not robust */
#define FUTEX_SPIN_FAST_KINDS	(FUTEX_SPIN_MUTEX_TYPE_MASK | \
				 FUTEX_SPIN_MUTEX_SHARED)

/*
 * The uncontended lock: one compare-and-exchange of 0 to the TID, as
 * glibc's is one of 0 to 1. Anything else (robust, destroyed or foreign
 * kind, no cached TID yet, a held word) is the slow path's. A recursive
 * mutex's count is 0 whenever its word is free, so taking it here needs
 * no store to the count.
 */
static inline bool futex_spin_lock_fast(struct futex_spin_mutex *m)
{
	uint32_t zero = 0, tid = futex_spin_tid;

	if (__builtin_expect(m->kind & ~FUTEX_SPIN_FAST_KINDS, 0) || !tid)
		return false;
	return __atomic_compare_exchange_n(&m->word, &zero, tid, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/*
 * The uncontended unlock: the owner's TID to 0. A recursion count, a
 * flag in the word (waiters), another owner: the slow path's.
 */
static inline bool futex_spin_unlock_fast(struct futex_spin_mutex *m)
{
	uint32_t tid = futex_spin_tid;

	if (__builtin_expect(m->kind & ~FUTEX_SPIN_FAST_KINDS, 0) || !tid ||
	    m->count)
		return false;
	return __atomic_compare_exchange_n(&m->word, &tid, 0, false,
					   __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* The slow paths of lock (@try: trylock) and unlock */
int futex_spin_lock_slow(struct futex_spin_mutex *m, clockid_t clock,
			 const struct timespec *abstime,
			 bool try) FUTEX_SPIN_HIDDEN;
int futex_spin_unlock_slow(struct futex_spin_mutex *m) FUTEX_SPIN_HIDDEN;

/*
 * For a condition variable: release the mutex completely (whatever the
 * recursion count) and take it back, restoring the count. *@saved carries
 * the count between the two. Release by a thread that does not own the
 * mutex does what unlock does then (normal and adaptive: release it).
 */
int futex_spin_mutex_release(struct futex_spin_mutex *m,
			     uint32_t *saved) FUTEX_SPIN_HIDDEN;
int futex_spin_mutex_reacquire(struct futex_spin_mutex *m,
			       uint32_t saved) FUTEX_SPIN_HIDDEN;

/* The preload's condvars keep pthread_cond_timedwait's clock in flags */
#define FUTEX_SPIN_COND_MONOTONIC	0x1

/* How a condition variable releases and retakes a mutex of either kind */
struct futex_spin_cond_ops {
	int (*release)(void *m, uint32_t *saved);
	int (*reacquire)(void *m, uint32_t saved);
};

int futex_spin_cond_wait_ops(struct futex_spin_cond *c, void *m,
			     const struct futex_spin_cond_ops *ops,
			     clockid_t clock,
			     const struct timespec *abstime) FUTEX_SPIN_HIDDEN;

#endif /* _FUTEX_SPIN_INTERNAL_H */
