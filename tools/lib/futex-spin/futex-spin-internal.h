/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libfutex-spin's plumbing, shared by the library and the LD_PRELOAD
 * object, not installed: the uncontended fast paths (inline, so that the
 * preload's pthread_mutex_lock is one compare-and-exchange away from its
 * caller), the thread-local TID and the hooks of the condition variable.
 */
#ifndef _FUTEX_SPIN_INTERNAL_H
#define _FUTEX_SPIN_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

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

/*
 * A system call that leaves errno alone, as glibc's own locks make theirs
 * (INTERNAL_SYSCALL): its result, or -errno. errno is the program's: the
 * preload probes the kernel before main(), and a contended lock or a
 * timed-out wait is no failed call. Inline on x86-64; elsewhere through
 * syscall(2), errno saved and restored.
 */
static inline long futex_spin_syscall(long nr, long a1, long a2, long a3,
				      long a4, long a5, long a6)
{
#ifdef __x86_64__
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			       "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	return ret;
#else
	int saved = errno;
	long ret = syscall(nr, a1, a2, a3, a4, a5, a6);

	if (ret == -1)
		ret = -errno;
	errno = saved;
	return ret;
#endif
}

/* futex(2): 0 or more, or -errno */
static inline long sys_futex(uint32_t *uaddr, int op, uint32_t val,
			     const struct timespec *ts, uint32_t *uaddr2,
			     uint32_t val3)
{
	return futex_spin_syscall(SYS_futex, (long)uaddr, op, val, (long)ts,
				  (long)uaddr2, val3);
}

/*
 * The caller's TID, cached per thread (gettid() is a system call) with the
 * epoch of the process it was cached in. A child made by fork(), _Fork()
 * or clone() without CLONE_VM inherits the forking thread's cache, but
 * not the process's epoch: futex_spin_guard is alone on a page that every
 * such child finds zeroed (MADV_WIPEONFORK), whether it ran atfork
 * handlers or not. A cache whose epoch is not the process's is not used.
 */
struct futex_spin_self {
	uint32_t tid;
	uint32_t epoch;		/* FUTEX_SPIN_NO_EPOCH: nothing cached */
};

/* A thread's epoch until it caches its TID: no process's */
#define FUTEX_SPIN_NO_EPOCH	UINT32_MAX

extern __thread struct futex_spin_self futex_spin_self FUTEX_SPIN_TLS
	FUTEX_SPIN_HIDDEN;

struct futex_spin_guard {
	uint32_t epoch;		/* 0 until the first slow path of a process */
} __attribute__((aligned(4096)));

extern struct futex_spin_guard futex_spin_guard FUTEX_SPIN_HIDDEN;

/* Whether futex_spin_self.tid is the caller's: cached in this process */
static inline bool futex_spin_self_valid(void)
{
	return futex_spin_self.epoch ==
	       __atomic_load_n(&futex_spin_guard.epoch, __ATOMIC_RELAXED);
}

/* The caller's TID, from the cache when it is this process's */
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
	uint32_t zero = 0;

	if (__builtin_expect(m->kind & ~FUTEX_SPIN_FAST_KINDS, 0) ||
	    __builtin_expect(!futex_spin_self_valid(), 0))
		return false;
	return __atomic_compare_exchange_n(&m->word, &zero, futex_spin_self.tid,
					   false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

/*
 * The uncontended unlock: the owner's TID to 0. A recursion count, a
 * flag in the word (waiters), another owner: the slow path's.
 */
static inline bool futex_spin_unlock_fast(struct futex_spin_mutex *m)
{
	uint32_t tid;

	if (__builtin_expect(m->kind & ~FUTEX_SPIN_FAST_KINDS, 0) ||
	    __builtin_expect(!futex_spin_self_valid(), 0) || m->count)
		return false;
	tid = futex_spin_self.tid;
	return __atomic_compare_exchange_n(&m->word, &tid, 0, false,
					   __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* The slow paths of lock (@try: trylock) and unlock */
int futex_spin_lock_slow(struct futex_spin_mutex *m, clockid_t clock,
			 const struct timespec *abstime,
			 bool try) FUTEX_SPIN_HIDDEN;
int futex_spin_unlock_slow(struct futex_spin_mutex *m) FUTEX_SPIN_HIDDEN;

/* The preload's condvars keep pthread_cond_timedwait's clock in flags */
#define FUTEX_SPIN_COND_MONOTONIC	0x1

/*
 * How a condition variable unlocks and locks again a mutex of either
 * kind: once each, as glibc's does, so that a recursive mutex held more
 * than once stays held during the wait.
 */
struct futex_spin_cond_ops {
	int (*unlock)(void *m);
	int (*lock)(void *m);
};

int futex_spin_cond_wait_ops(struct futex_spin_cond *c, void *m,
			     const struct futex_spin_cond_ops *ops,
			     clockid_t clock,
			     const struct timespec *abstime) FUTEX_SPIN_HIDDEN;

#endif /* _FUTEX_SPIN_INTERNAL_H */
