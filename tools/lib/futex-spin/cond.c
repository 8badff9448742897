// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * libfutex-spin's condition variable: a sequence counter futex. A waiter
 * counts itself, reads the counter, releases the mutex and sleeps while
 * the counter is unchanged; signal and broadcast bump the counter and wake
 * one or all sleepers if anyone waits. The waiters are woken, not
 * requeued: FUTEX_CMP_REQUEUE would move them to a FUTEX_WAIT queue on the
 * mutex word, which FUTEX_SPIN_UNLOCK does not look at.
 *
 * The mutex is unlocked and locked again through hooks, so that the
 * LD_PRELOAD object can use the same condition variable with glibc's
 * mutexes (priority inheritance and protection) too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <linux/futex.h>

#pragma GCC visibility push(default)
#include "futex-spin.h"
#pragma GCC visibility pop
#include "futex-spin-internal.h"

/* In waiters, while destroy waits for the count to drop to 0 */
#define DESTROY_WAITS	0x80000000u

/* A futex operation on @word of @c: 0 or more, or -errno */
static long cond_futex(struct futex_spin_cond *c, uint32_t *word, int op,
		       uint32_t val, const struct timespec *ts)
{
	if (!(c->flags & FUTEX_SPIN_COND_SHARED))
		op |= FUTEX_PRIVATE_FLAG;
	return sys_futex(word, op, val, ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

int futex_spin_cond_init(struct futex_spin_cond *c, int flags)
{
	if (flags & ~FUTEX_SPIN_COND_SHARED)
		return EINVAL;
	*c = (struct futex_spin_cond)FUTEX_SPIN_COND_INITIALIZER;
	c->flags = flags;
	return 0;
}

/*
 * Waiters leave before they relock the mutex: once signal or broadcast
 * woke them, this waits only for them to be scheduled, and a woken waiter
 * touches nothing of the condition variable after it has left. It waits
 * asleep, since a waiter may never leave: a process killed in its wait
 * on a shared condition variable (then this waits for good, as glibc's
 * destroy does).
 */
int futex_spin_cond_destroy(struct futex_spin_cond *c)
{
	uint32_t w = __atomic_or_fetch(&c->waiters, DESTROY_WAITS,
				       __ATOMIC_ACQUIRE);

	while (w != DESTROY_WAITS) {
		cond_futex(c, &c->waiters, FUTEX_WAIT, w, NULL);
		w = __atomic_load_n(&c->waiters, __ATOMIC_ACQUIRE);
	}
	/* As it was: a program may init it again, or (wrongly) not */
	__atomic_and_fetch(&c->waiters, ~DESTROY_WAITS, __ATOMIC_RELAXED);
	return 0;
}

/* A waiter leaves: the last one wakes a destroy waiting for it */
static void count_out(struct futex_spin_cond *c)
{
	if (__atomic_sub_fetch(&c->waiters, 1, __ATOMIC_RELEASE) ==
	    DESTROY_WAITS)
		cond_futex(c, &c->waiters, FUTEX_WAKE, 1, NULL);
}

static int wake(struct futex_spin_cond *c, int n)
{
	/*
	 * Both seq_cst: a waiter counts itself before it reads seq, so either
	 * it reads the new seq, or this reads its count and wakes.
	 */
	__atomic_add_fetch(&c->seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST))
		cond_futex(c, &c->seq, FUTEX_WAKE, n, NULL);
	return 0;
}

int futex_spin_cond_signal(struct futex_spin_cond *c)
{
	return wake(c, 1);
}

int futex_spin_cond_broadcast(struct futex_spin_cond *c)
{
	return wake(c, INT32_MAX);
}

struct wait {
	struct futex_spin_cond *c;
	void *m;
	const struct futex_spin_cond_ops *ops;
};

static void leave(struct futex_spin_cond *c, bool woken, uint32_t seq)
{
	/*
	 * Woken while seq still holds the value we slept on: the wake was
	 * meant for a waiter that came before us (we took the signal of an
	 * earlier generation). Pass it on; our return is a spurious wakeup.
	 */
	if (woken && __atomic_load_n(&c->seq, __ATOMIC_RELAXED) == seq)
		cond_futex(c, &c->seq, FUTEX_WAKE, 1, NULL);
	count_out(c);
}

/* Cancelled while asleep: leave, and hold the mutex as POSIX requires */
static void wait_cancelled(void *arg)
{
	struct wait *w = arg;

	/* A signal we may have consumed goes to another waiter. */
	cond_futex(w->c, &w->c->seq, FUTEX_WAKE, 1, NULL);
	count_out(w->c);
	w->ops->lock(w->m);
}

/*
 * A cancellation point: the futex system call is made with asynchronous
 * cancellation enabled, as for any blocking call. Apart so that nothing of
 * the caller lives across the cleanup's setjmp. Returns 0 when woken or
 * the futex call's errno value.
 */
static __attribute__((noinline)) int sleep_on(struct wait *w, int op,
					      uint32_t seq,
					      const struct timespec *abstime)
{
	int oldtype;
	long err;

	pthread_cleanup_push(wait_cancelled, w);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
	err = -cond_futex(w->c, &w->c->seq, op, seq, abstime);
	pthread_setcanceltype(oldtype, NULL);
	pthread_cleanup_pop(0);
	return err;
}

/*
 * What the wait returns once the mutex is back: a timeout, or 0 for a
 * wakeup, a changed counter (EAGAIN) or a signal (EINTR), which the
 * caller's loop takes for what they are. Anything else is an error, not a
 * spurious wakeup a caller would retry at once, forever.
 */
static int wait_result(int err)
{
	return err == EAGAIN || err == EINTR ? 0 : err;
}

int futex_spin_cond_wait_ops(struct futex_spin_cond *c, void *m,
			     const struct futex_spin_cond_ops *ops,
			     clockid_t clock, const struct timespec *abstime)
{
	struct wait w = { .c = c, .m = m, .ops = ops };
	int op = FUTEX_WAIT_BITSET, ret, err;
	uint32_t seq;

	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	if (abstime &&
	    (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000L))
		return EINVAL;
	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;

	__atomic_add_fetch(&c->waiters, 1, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&c->seq, __ATOMIC_SEQ_CST);
	ret = ops->unlock(m);
	if (ret) {
		count_out(c);
		return ret;
	}

	/* Before the epoch: passed (the kernel would call it invalid) */
	if (abstime && abstime->tv_sec < 0)
		err = ETIMEDOUT;
	else
		err = sleep_on(&w, op, seq, abstime);

	leave(c, !err, seq);
	ret = ops->lock(m);
	return ret ? ret : wait_result(err);
}

static int unlock(void *m)
{
	return futex_spin_mutex_unlock(m);
}

static int lock(void *m)
{
	return futex_spin_mutex_lock(m);
}

static const struct futex_spin_cond_ops ops = {
	.unlock = unlock,
	.lock = lock,
};

int futex_spin_cond_wait(struct futex_spin_cond *c,
			 struct futex_spin_mutex *m)
{
	return futex_spin_cond_wait_ops(c, m, &ops, CLOCK_REALTIME, NULL);
}

int futex_spin_cond_timedwait(struct futex_spin_cond *c,
			      struct futex_spin_mutex *m, clockid_t clock,
			      const struct timespec *abstime)
{
	return futex_spin_cond_wait_ops(c, m, &ops, clock, abstime);
}
