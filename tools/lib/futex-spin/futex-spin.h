/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libfutex-spin: a user space mutex on FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK.
 *
 * Not part of the upstream kernel series: a user of the two opcodes, kept
 * next to them so that the contract (Documentation/locking/
 * spinning-futex.rst) and its first real user are reviewed together.
 *
 * The futex word has the PI layout: owner TID, FUTEX_WAITERS, and
 * FUTEX_OWNER_DIED. Lock is cmpxchg(0 -> TID), else FUTEX_SPIN_LOCK;
 * unlock is cmpxchg(TID -> 0), else FUTEX_SPIN_UNLOCK.
 *
 * On a kernel without the opcodes (the probe: FUTEX_SPIN_UNLOCK on a word
 * holding 0 fails with ENOSYS, not EPERM) the same word is driven by
 * FUTEX_WAIT_BITSET / FUTEX_WAKE instead: a classic wait-wake mutex with
 * the TID layout, so robust locks and EOWNERDEAD work the same way. The
 * choice is made once per process, as FUTEX_SPIN_MODE in the environment
 * says: auto (or unset) probes, spin requires the opcodes, waitwake forces
 * the fallback (for tests and comparisons).
 *
 * The mutex is 40 bytes laid out so that it overlays glibc's x86-64
 * pthread_mutex_t: the word at offset 0, the type at 16 and the robust
 * list node at 24. That lets the LD_PRELOAD build use a pthread_mutex_t
 * as is, statically initialised ones included, and lets robust mutexes sit
 * on the robust list glibc registered for the thread, next to glibc's own.
 *
 * A condition variable, struct futex_spin_cond, works with these mutexes.
 *
 * Functions return 0 or a positive errno value, as pthread functions do.
 * Build with `pkg-config --cflags --libs futex-spin` (add --static for the
 * static library).
 */
#ifndef _FUTEX_SPIN_LIB_H
#define _FUTEX_SPIN_LIB_H

#include <stdint.h>
#include <sys/types.h>	/* clockid_t, which <time.h> gives only to POSIX */
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Types: the values of glibc's static initializers */
#define FUTEX_SPIN_MUTEX_NORMAL		0
#define FUTEX_SPIN_MUTEX_RECURSIVE	1
#define FUTEX_SPIN_MUTEX_ERRORCHECK	2
#define FUTEX_SPIN_MUTEX_ADAPTIVE	3	/* the same as NORMAL here */
#define FUTEX_SPIN_MUTEX_TYPE_MASK	3
/* Flags, or'ed with the type */
#define FUTEX_SPIN_MUTEX_ROBUST		0x10
#define FUTEX_SPIN_MUTEX_SHARED		0x80	/* between processes */

struct futex_spin_mutex {
	uint32_t word;		/* TID | FUTEX_WAITERS | FUTEX_OWNER_DIED */
	uint32_t count;		/* recursive: extra locks by the owner */
	uint32_t state;		/* FUTEX_SPIN_STATE_* */
	uint32_t relockers;	/* normal: owners that lock it again, asleep */
	int32_t kind;		/* type | flags; -1 once destroyed */
	uint32_t reserved2;
	/* Robust list node: prev as glibc keeps it, next read by the kernel */
	void *prev;
	void *next;
};

/* state: after an EOWNERDEAD lock was unlocked without being made consistent */
#define FUTEX_SPIN_STATE_NOTRECOVERABLE	1

/* Every member named: C++ warns about the others of { 0 } */
#define FUTEX_SPIN_MUTEX_INITIALIZER	{ 0, 0, 0, 0, 0, 0, 0, 0 }

enum futex_spin_mode {
	FUTEX_SPIN_MODE_SPIN = 1,	/* FUTEX_SPIN_LOCK/UNLOCK */
	FUTEX_SPIN_MODE_WAITWAKE = 2,	/* fallback: FUTEX_WAIT_BITSET/WAKE */
};

/*
 * Feature probe: 0 when the kernel has the opcodes, ENOSYS when it does
 * not, another errno value when the kernel broke the contract.
 */
int futex_spin_probe(void);
/*
 * The mode FUTEX_SPIN_MODE asks for, on this kernel, into *@mode: 0, or
 * EINVAL when the value is not spin, waitwake, auto or empty, ENOSYS when
 * it is spin and the kernel lacks the opcodes. Not cached: for a program
 * that wants to check before its first lock.
 */
int futex_spin_mode_from_env(enum futex_spin_mode *mode);
/*
 * The mode this process uses: chosen on first use, then fixed. When
 * futex_spin_mode_from_env() fails, says why on stderr and aborts: a
 * locking library cannot run in a mode nobody asked for.
 */
enum futex_spin_mode futex_spin_mode(void);

/* @kind: a type or'ed with flags; EINVAL for anything else */
int futex_spin_mutex_init(struct futex_spin_mutex *m, int kind);
/* EBUSY when locked (robust mutexes: never, as glibc's) */
int futex_spin_mutex_destroy(struct futex_spin_mutex *m);

/*
 * 0, or EOWNERDEAD: locked, but the previous owner of this robust mutex
 * died holding it. Make the protected state consistent and call
 * futex_spin_mutex_consistent(), or unlock and the mutex becomes
 * unrecoverable: later locks fail with ENOTRECOVERABLE.
 * Relocking by the owner: recursive counts it (EAGAIN on overflow),
 * errorcheck fails with EDEADLK, normal and adaptive deadlock, as POSIX
 * says for the normal type (timedlock: until the deadline), until another
 * thread unlocks it (see futex_spin_mutex_unlock()): then it is taken.
 * Other errors: EINVAL (destroyed or not a mutex, bad timespec or clock),
 * ENOTRECOVERABLE.
 */
int futex_spin_mutex_lock(struct futex_spin_mutex *m);
/*
 * As lock; EBUSY when held, also by the caller unless recursive (robust
 * errorcheck: EDEADLK, as glibc)
 */
int futex_spin_mutex_trylock(struct futex_spin_mutex *m);
/*
 * As lock, giving up with ETIMEDOUT at @abstime, absolute on @clock:
 * CLOCK_MONOTONIC or CLOCK_REALTIME (others: EINVAL). NULL waits forever.
 * A deadline before the epoch has passed; an invalid tv_nsec is EINVAL
 * only when the lock is not free.
 */
int futex_spin_mutex_timedlock(struct futex_spin_mutex *m, clockid_t clock,
			       const struct timespec *abstime);
/*
 * EPERM when the caller is not the owner, except for the normal and
 * adaptive types (not robust): those are released whoever holds them, as
 * glibc does, so that a mutex can serve as a binary semaphore.
 */
int futex_spin_mutex_unlock(struct futex_spin_mutex *m);
/* After EOWNERDEAD; EINVAL when not robust or not owned after EOWNERDEAD */
int futex_spin_mutex_consistent(struct futex_spin_mutex *m);

/*
 * Whether robust mutexes work in the calling thread: 0 when its robust
 * list is glibc's (which this library shares) or none (one is
 * registered), else ENOTSUP, which their init and lock return then.
 */
int futex_spin_robust_available(void);

/* Condition variable: 16 bytes, all zero is a valid CLOCK_REALTIME one */
struct futex_spin_cond {
	uint32_t seq;		/* bumped by every signal and broadcast */
	uint32_t flags;		/* FUTEX_SPIN_COND_* */
	uint32_t waiters;	/* inside a wait; bit 31: destroy waits */
	uint32_t reserved;
};

#define FUTEX_SPIN_COND_INITIALIZER	{ 0, 0, 0, 0 }
/* Flag: shared between processes (on MAP_SHARED memory) */
#define FUTEX_SPIN_COND_SHARED		0x2

/* EINVAL for unknown flags */
int futex_spin_cond_init(struct futex_spin_cond *c, int flags);
/*
 * Waits, asleep, for waiters to leave: for good if one never does (a
 * process killed in its wait), as glibc's does
 */
int futex_spin_cond_destroy(struct futex_spin_cond *c);
int futex_spin_cond_signal(struct futex_spin_cond *c);
int futex_spin_cond_broadcast(struct futex_spin_cond *c);
/*
 * Unlock @m, sleep until signalled, lock @m again. As with glibc, that is
 * one unlock: a recursive mutex locked more than once stays held while
 * the caller sleeps (POSIX advises against it for that reason). A
 * cancellation point: a cancelled waiter runs its cleanup handlers
 * holding @m. Returns 0 (also on a spurious wakeup: wait in a loop), or
 * the error of unlocking or locking @m.
 */
int futex_spin_cond_wait(struct futex_spin_cond *c,
			 struct futex_spin_mutex *m);
/*
 * As wait, ETIMEDOUT at @abstime, absolute on @clock (CLOCK_MONOTONIC or
 * CLOCK_REALTIME, else EINVAL; EINVAL for an invalid tv_nsec).
 */
int futex_spin_cond_timedwait(struct futex_spin_cond *c,
			      struct futex_spin_mutex *m, clockid_t clock,
			      const struct timespec *abstime);

#ifdef __cplusplus
}
#endif

#endif /* _FUTEX_SPIN_LIB_H */
