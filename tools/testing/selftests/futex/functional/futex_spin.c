// SPDX-License-Identifier: GPL-2.0
/*
 * FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK: mutual exclusion, every errno,
 * timeouts, signals, shared and file-backed words, faults, and other futex
 * opcodes thrown at a spin-locked word.
 *
 * Each test probes for the opcodes first and fails on a kernel without
 * them, and ends by checking that no queue head is left in the kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/futex.h>

#include "kselftest_harness.h"
#include "futex_spin_test.h"

#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32		0x02
#endif

#define PAGE			4096

/* Mutual exclusion checked by a counter the lock alone protects */
struct counter {
	struct futex_spin_mutex *m;
	long long run_ms;
	/* holding the lock across a yield now and then forces contention */
	int yield_every;
	int inside;
	unsigned long count;
	unsigned long total;
	unsigned long contended;
	unsigned long violations;
	unsigned long errors;
	int last_error;
};

/* @m is passed apart: in another process it may sit at another address */
static void counter_run(struct counter *c, struct futex_spin_mutex *m)
{
	struct futex_spin_thread self;
	long long start = fs_now_ns(CLOCK_MONOTONIC);
	unsigned long n = 0;
	int ret;

	futex_spin_thread_init(&self, false);
	/*
	 * Past run_ms, go on until the lock was contended: a loaded host may
	 * not have run both threads at once yet.
	 */
	while (fs_ms_since(start) < c->run_ms ||
	       (!__atomic_load_n(&c->contended, __ATOMIC_RELAXED) &&
		fs_ms_since(start) < FS_MUST_MS)) {
		if (fs_load(&m->word))
			__atomic_fetch_add(&c->contended, 1, __ATOMIC_RELAXED);
		ret = futex_spin_lock(m, &self);
		if (ret) {
			__atomic_fetch_add(&c->errors, 1, __ATOMIC_RELAXED);
			c->last_error = ret;
			break;
		}
		if (__atomic_exchange_n(&c->inside, 1, __ATOMIC_SEQ_CST) ||
		    (fs_load(&m->word) & FUTEX_TID_MASK) != (__u32)self.tid)
			__atomic_fetch_add(&c->violations, 1, __ATOMIC_RELAXED);
		/* Not atomic on purpose: a broken lock loses increments. */
		c->count++;
		n++;
		if (c->yield_every && !(n % c->yield_every))
			sched_yield();
		__atomic_store_n(&c->inside, 0, __ATOMIC_SEQ_CST);
		ret = futex_spin_unlock(m, &self);
		if (ret) {
			__atomic_fetch_add(&c->errors, 1, __ATOMIC_RELAXED);
			c->last_error = ret;
			break;
		}
	}
	__atomic_fetch_add(&c->total, n, __ATOMIC_SEQ_CST);
}

static void *counter_thread(void *arg)
{
	struct counter *c = arg;

	counter_run(c, c->m);
	return NULL;
}

static void counter_reset(struct counter *c)
{
	c->inside = 0;
	c->count = 0;
	c->total = 0;
	c->contended = 0;
	c->violations = 0;
	c->errors = 0;
}

static void counter_verdict(struct __test_metadata *_metadata,
			    struct counter *c)
{
	EXPECT_EQ(0, c->errors) TH_LOG("lock/unlock failed: %s",
				       strerror(-c->last_error));
	EXPECT_EQ(0, c->violations) TH_LOG("two owners at once");
	EXPECT_EQ(c->total, c->count) TH_LOG("increments lost");
	EXPECT_NE(0, c->contended) TH_LOG("the lock was never contended");
	EXPECT_EQ(0, fs_load(&c->m->word));
}

/* Run @nr threads on @c and check the count */
static void counter_check(struct __test_metadata *_metadata,
			  struct counter *c, int nr)
{
	pthread_t threads[8];
	int i;

	counter_reset(c);
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, counter_thread, c));
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, fs_join(threads[i], NULL));
	counter_verdict(_metadata, c);
}

FIXTURE(spin) {
	void *page;
	__u32 *word;
	struct futex_spin_mutex *m;
	int lock_op;
	int unlock_op;
	pid_t tid;
};

FIXTURE_VARIANT(spin) {
	bool shared;
};

FIXTURE_VARIANT_ADD(spin, private) {
	.shared = false,
};

FIXTURE_VARIANT_ADD(spin, shared) {
	.shared = true,
};

FIXTURE_SETUP(spin)
{
	int map = variant->shared ? MAP_SHARED : MAP_PRIVATE;

	fs_setup(_metadata);
	self->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			  map | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	self->word = self->page;
	self->m = (struct futex_spin_mutex *)((char *)self->page + 256);
	futex_spin_mutex_init(self->m,
			      variant->shared ? FUTEX_SPIN_SHARED : 0);
	self->lock_op = variant->shared ? FUTEX_SPIN_LOCK :
					  FUTEX_SPIN_LOCK_PRIVATE;
	self->unlock_op = fs_unlock_op(self->lock_op);
	self->tid = fs_gettid();
}

FIXTURE_TEARDOWN(spin)
{
	fs_teardown(_metadata);
}

TEST_F(spin, probe)
{
	__u32 zero = 0;

	EXPECT_EQ(-EPERM, fs_unlock(&zero, FUTEX_SPIN_UNLOCK));
	EXPECT_EQ(-EPERM, fs_unlock(&zero, FUTEX_SPIN_UNLOCK_PRIVATE));
	EXPECT_EQ(0, zero);
}

TEST_F(spin, uncontended)
{
	struct timespec to = fs_deadline(CLOCK_MONOTONIC, 1000);
	long long locks = fs_stat(_metadata, "lock_calls");
	long long unlocks = fs_stat(_metadata, "unlock_calls");
	struct futex_spin_thread me;
	int i;

	/* The kernel paths on a free word */
	ASSERT_EQ(0, fs_lock(self->word, self->lock_op, NULL));
	EXPECT_EQ(self->tid, fs_load(self->word));
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
	EXPECT_EQ(0, fs_load(self->word));

	ASSERT_EQ(0, fs_lock(self->word, self->lock_op, &to));
	EXPECT_EQ(self->tid, fs_load(self->word));
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
	EXPECT_EQ(0, fs_load(self->word));

	/* A FUTEX_WAITERS left behind with nobody waiting: woken none */
	fs_store(self->word, self->tid | FUTEX_WAITERS);
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
	EXPECT_EQ(0, fs_load(self->word));

	if (locks >= 0) {
		EXPECT_LE(locks + 2, fs_stat(_metadata, "lock_calls"));
		EXPECT_LE(unlocks + 3, fs_stat(_metadata, "unlock_calls"));
	}

	/* The library's fast paths */
	ASSERT_EQ(0, futex_spin_thread_init(&me, false));
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, futex_spin_lock(self->m, &me));
		ASSERT_EQ(self->tid, fs_load(&self->m->word));
		ASSERT_EQ(0, futex_spin_unlock(self->m, &me));
	}
	EXPECT_EQ(0, fs_load(&self->m->word));
}

TEST_F(spin, trylock)
{
	struct futex_spin_thread me;

	ASSERT_EQ(0, futex_spin_thread_init(&me, false));
	ASSERT_EQ(0, futex_spin_trylock(self->m, &me));
	EXPECT_EQ(self->tid, fs_load(&self->m->word));
	EXPECT_EQ(-EBUSY, futex_spin_trylock(self->m, &me));
	EXPECT_EQ(0, futex_spin_unlock(self->m, &me));

	fs_store(&self->m->word, FS_NO_SUCH_TID);
	EXPECT_EQ(-EBUSY, futex_spin_trylock(self->m, &me));
	EXPECT_EQ(FS_NO_SUCH_TID, fs_load(&self->m->word));

	/* An owner died and nobody took it since: the kernel hands it over */
	fs_store(&self->m->word, FUTEX_OWNER_DIED);
	EXPECT_EQ(-EOWNERDEAD, futex_spin_trylock(self->m, &me));
	EXPECT_EQ(self->tid | FUTEX_OWNER_DIED, fs_load(&self->m->word));
	futex_spin_consistent(self->m);
	EXPECT_EQ(self->tid, fs_load(&self->m->word));
	EXPECT_EQ(0, futex_spin_unlock(self->m, &me));
	EXPECT_EQ(0, fs_load(&self->m->word));
}

TEST_F(spin, contended_counter)
{
	struct counter c = {
		.m = self->m,
		.run_ms = 500,
		.yield_every = 16,
	};
	long long sleeps = fs_stat(_metadata, "sleeps");

	counter_check(_metadata, &c, 4);
	TH_LOG("%lu locks, %lu contended", c.total, c.contended);
	if (sleeps >= 0)
		EXPECT_LT(sleeps, fs_stat(_metadata, "sleeps"));
}

/*
 * A lock in steady contended use keeps one queue head: the tasks using it
 * keep it between their calls, so neither a new head per contended burst
 * nor the hash-bucket lock is needed. Every contended lock/unlock pair
 * took that lock four times when heads lived only as long as a call.
 */
TEST_F(spin, steady_lock_keeps_its_head)
{
	struct counter c = { .m = self->m, .run_ms = 500, .yield_every = 16 };
	long long calls = fs_stat(_metadata, "lock_calls");
	long long created = futex_spin_stat("heads_created");
	long long hb = fs_hb_lock_acquisitions();

	if (calls < 0)
		SKIP(return, "debugfs not mounted");
	counter_check(_metadata, &c, 2);
	calls = fs_stat(_metadata, "lock_calls") - calls;
	TH_LOG("%lld lock calls into the kernel", calls);
	ASSERT_LE(20, calls) TH_LOG("too little contention to tell");

	/*
	 * Thread creation, join and exit use a few futex operations of their
	 * own; the lock itself needs the bucket lock to link and unlink.
	 */
	if (hb >= 0) {
		hb = fs_hb_lock_acquisitions() - hb;
		TH_LOG("%lld hash-bucket lock acquisitions", hb);
		EXPECT_GT(calls / 4, hb);
	} else {
		TH_LOG("no /proc/lock_stat: hash-bucket lock not counted");
	}
	ASSERT_LE(0, created) TH_LOG("no heads_created in %s/stats", FUTEX_SPIN_DEBUGFS);
	created = futex_spin_stat("heads_created") - created;
	TH_LOG("%lld heads created", created);
	EXPECT_EQ(1, created);
}

/* Each task keeps the head it used last, and no other. */
TEST_F(spin, task_keeps_one_head)
{
	struct timespec to;
	__u32 *words = self->word + 8;
	long long heads;
	int i;

	if (futex_spin_live_heads() < 0)
		SKIP(return, "no %s/live_heads", FUTEX_SPIN_DEBUGFS);
	heads = futex_spin_live_heads();
	for (i = 0; i < 8; i++) {
		fs_store(&words[i], FS_NO_SUCH_TID);
		to = fs_deadline(CLOCK_MONOTONIC, 1);
		EXPECT_EQ(-ETIMEDOUT, fs_lock(&words[i], self->lock_op, &to));
	}
	/* Kept: at most the one this task held before, and the last one. */
	EXPECT_GE(heads + 1, futex_spin_live_heads());
	EXPECT_LE(1, futex_spin_live_heads());
}

TEST_F(spin, edeadlk)
{
	struct timespec to = fs_deadline(CLOCK_MONOTONIC, 100);
	__u32 held[] = {
		self->tid,
		self->tid | FUTEX_WAITERS,
		self->tid | FUTEX_OWNER_DIED,
	};
	int i;

	for (i = 0; i < 3; i++) {
		fs_store(self->word, held[i]);
		EXPECT_EQ(-EDEADLK, fs_lock(self->word, self->lock_op, NULL));
		EXPECT_EQ(-EDEADLK, fs_lock(self->word, self->lock_op, &to));
		EXPECT_EQ(held[i], fs_load(self->word));
	}
	fs_store(self->word, self->tid);
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
}

TEST_F(spin, eperm)
{
	__u32 other[] = {
		0,
		FUTEX_WAITERS,
		FUTEX_OWNER_DIED,
		FS_NO_SUCH_TID,
		1,
		getppid() | FUTEX_WAITERS,
		(self->tid + 1) & FUTEX_TID_MASK,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(other); i++) {
		fs_store(self->word, other[i]);
		EXPECT_EQ(-EPERM, fs_unlock(self->word, self->unlock_op))
			TH_LOG("word %#x", other[i]);
		EXPECT_EQ(other[i], fs_load(self->word));
	}
	fs_store(self->word, 0);
}

TEST_F(spin, einval_misaligned)
{
	char *base = (char *)self->page + 64;
	int i;

	for (i = 1; i < 4; i++) {
		__u32 *bad = (__u32 *)(base + i);

		EXPECT_EQ(-EINVAL, fs_lock(bad, self->lock_op, NULL));
		EXPECT_EQ(-EINVAL, fs_unlock(bad, self->unlock_op));
	}
	for (i = 0; i < 12; i++)
		EXPECT_EQ(0, base[i]);
}

TEST_F(spin, einval_args)
{
	__u32 *other = self->word + 1;
	struct timespec ts = { 0 };

	/* Nothing may be taken by a call that fails */
	EXPECT_EQ(-1, futex_spin_syscall(self->word, self->lock_op, 1, NULL,
					 NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, futex_spin_syscall(self->word, self->lock_op, 0, NULL,
					 other, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, futex_spin_syscall(self->word, self->lock_op, 0, NULL,
					 NULL, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, fs_load(self->word));

	/* Nor released */
	fs_store(self->word, self->tid);
	EXPECT_EQ(-1, futex_spin_syscall(self->word, self->unlock_op, 1, NULL,
					 NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, futex_spin_syscall(self->word, self->unlock_op, 0, NULL,
					 other, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, futex_spin_syscall(self->word, self->unlock_op, 0, NULL,
					 NULL, 1));
	EXPECT_EQ(EINVAL, errno);
	/* The timeout slot is unused, and not read: any pointer is EINVAL */
	EXPECT_EQ(-1, futex_spin_syscall(self->word, self->unlock_op, 0, &ts,
					 NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, futex_spin_syscall(self->word, self->unlock_op, 0,
					 (struct timespec *)(1UL << 32), NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->tid, fs_load(self->word));
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
	EXPECT_EQ(0, *other);
}

TEST_F(spin, einval_timespec)
{
	struct timespec bad[] = {
		{ .tv_sec = 0, .tv_nsec = 1000000000 },
		{ .tv_sec = 0, .tv_nsec = -1 },
		{ .tv_sec = -1, .tv_nsec = 0 },
	};
	long long start;
	int i;

	for (i = 0; i < 3; i++) {
		fs_store(self->word, 0);
		EXPECT_EQ(-EINVAL, fs_lock(self->word, self->lock_op, &bad[i]));
		EXPECT_EQ(-EINVAL, fs_lock(self->word,
					   self->lock_op | FUTEX_CLOCK_REALTIME,
					   &bad[i]));
		EXPECT_EQ(0, fs_load(self->word));

		/* Refused before any wait for a held word */
		fs_store(self->word, FS_NO_SUCH_TID);
		start = fs_now_ns(CLOCK_MONOTONIC);
		EXPECT_EQ(-EINVAL, fs_lock(self->word, self->lock_op, &bad[i]));
		EXPECT_GT(FS_MUST_MS, fs_ms_since(start));
	}
	fs_store(self->word, 0);
}

/*
 * Bits of the operation beyond the command and the flags make another
 * command of it: it fails as unknown futex commands do. A flag that means
 * nothing to the operation makes it unknown too, as for every futex
 * command: FUTEX_CLOCK_REALTIME on the unlock, which takes no timeout, and
 * FUTEX_ROBUST_UNLOCK on the lock. FUTEX_ROBUST_LIST32 only gives the
 * width of the pending op that FUTEX_ROBUST_UNLOCK clears: alone, it is
 * refused with EINVAL (futex_spin_robust tests FUTEX_ROBUST_UNLOCK).
 */
TEST_F(spin, unknown_flags)
{
	int bits[] = { 1 << 11, 1 << 16, 1 << 30 };
	long unknown;
	int i;

	/* What an unknown command gets, 127 being none */
	unknown = fs_unlock(self->word, 127);
	ASSERT_GT(0, unknown);
	ASSERT_NE(-EINVAL, unknown);

	for (i = 0; i < ARRAY_SIZE(bits); i++) {
		EXPECT_EQ(unknown, fs_lock(self->word, self->lock_op | bits[i],
					   NULL))
			TH_LOG("FUTEX_SPIN_LOCK with flag %#x", bits[i]);
		EXPECT_EQ(0, fs_load(self->word));
	}
	EXPECT_EQ(unknown, fs_lock(self->word,
				   self->lock_op | FUTEX_ROBUST_UNLOCK, NULL));
	EXPECT_EQ(0, fs_load(self->word));
	EXPECT_EQ(-EINVAL, fs_lock(self->word,
				   self->lock_op | FUTEX_ROBUST_LIST32, NULL));
	EXPECT_EQ(0, fs_load(self->word));

	fs_store(self->word, self->tid);
	for (i = 0; i < ARRAY_SIZE(bits); i++) {
		EXPECT_EQ(unknown, fs_unlock(self->word,
					     self->unlock_op | bits[i]))
			TH_LOG("FUTEX_SPIN_UNLOCK with flag %#x", bits[i]);
		EXPECT_EQ(self->tid, fs_load(self->word));
	}
	EXPECT_EQ(unknown, fs_unlock(self->word,
				     self->unlock_op | FUTEX_CLOCK_REALTIME));
	EXPECT_EQ(self->tid, fs_load(self->word));
	EXPECT_EQ(-EINVAL, fs_unlock(self->word,
				     self->unlock_op | FUTEX_ROBUST_LIST32));
	EXPECT_EQ(self->tid, fs_load(self->word));
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
}

TEST_F(spin, efault_unmapped)
{
	struct timespec to = fs_deadline(CLOCK_MONOTONIC, 200);
	char *area = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u32 *gone, *none;

	ASSERT_NE(MAP_FAILED, area);
	gone = (__u32 *)area;
	none = (__u32 *)(area + PAGE);
	ASSERT_EQ(0, munmap(gone, PAGE));
	ASSERT_EQ(0, mprotect(none, PAGE, PROT_NONE));

	EXPECT_EQ(-EFAULT, fs_lock(gone, self->lock_op, NULL));
	EXPECT_EQ(-EFAULT, fs_lock(gone, self->lock_op, &to));
	EXPECT_EQ(-EFAULT, fs_unlock(gone, self->unlock_op));
	EXPECT_EQ(-EFAULT, fs_lock(none, self->lock_op, NULL));
	EXPECT_EQ(-EFAULT, fs_unlock(none, self->unlock_op));
	munmap(none, PAGE);

	/* A timeout the kernel cannot read, for a word it would wait on */
	fs_store(self->word, FS_NO_SUCH_TID);
	EXPECT_EQ(-EFAULT, fs_lock(self->word, self->lock_op,
				   (struct timespec *)gone));
	EXPECT_EQ(FS_NO_SUCH_TID, fs_load(self->word) & FUTEX_TID_MASK);
	fs_store(self->word, 0);
}

TEST_F(spin, efault_readonly)
{
	__u32 *ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			    (variant->shared ? MAP_SHARED : MAP_PRIVATE) |
			    MAP_ANONYMOUS, -1, 0);
	struct timespec to;

	ASSERT_NE(MAP_FAILED, ro);
	ro[0] = 0;
	ro[1] = self->tid;
	ro[2] = FS_NO_SUCH_TID;
	ASSERT_EQ(0, mprotect(ro, PAGE, PROT_READ));

	EXPECT_EQ(-EFAULT, fs_lock(&ro[0], self->lock_op, NULL));
	EXPECT_EQ(-EFAULT, fs_unlock(&ro[1], self->unlock_op));
	/* Waiting would need FUTEX_WAITERS written: fail, do not wait */
	to = fs_deadline(CLOCK_MONOTONIC, 500);
	EXPECT_EQ(-EFAULT, fs_lock(&ro[2], self->lock_op, &to));
	EXPECT_EQ(0, ro[0]);
	EXPECT_EQ(self->tid, ro[1]);
	EXPECT_EQ(FS_NO_SUCH_TID, ro[2]);
	munmap(ro, PAGE);
}

/*
 * Handoffs and pass-overs so far: the two ways the rule lets the second
 * in line go first.
 */
static long long unlock_passes(struct __test_metadata *_metadata)
{
	return fs_stat(_metadata, "handoffs") +
	       fs_stat(_metadata, "unanswered_wakes");
}

/*
 * The second in line took the lock first. The owner slept while they
 * queued, so neither spun; but a waiter kept from running in its call for
 * T (a slow guest) has spun that long by its clock, asks for the lock,
 * and is handed it. Or the first woken did not look at the word for T,
 * and the pass-over timer woke the second. Nothing else lets it.
 */
static bool unlock_second_went_first(struct __test_metadata *_metadata,
				     struct waiter w[2], long long passes)
{
	if (!__atomic_load_n(&w[1].done, __ATOMIC_SEQ_CST) ||
	    w[1].taken_ns > w[0].taken_ns)
		return false;
	EXPECT_LT(passes, unlock_passes(_metadata))
		TH_LOG("the second went first, neither handed it nor woken past the first");
	return true;
}

TEST_F(spin, unlock_wakes_one)
{
	struct holder h = { .word = self->word, .op = self->lock_op };
	int released = 0;
	struct waiter w[2] = {
		{ .word = self->word, .op = self->lock_op,
		  .timeout_ms = FS_MUST_MS, .released = &released,
		  .hold_ms = 200, .unlock = true },
		{ .word = self->word, .op = self->lock_op,
		  .timeout_ms = FS_MUST_MS, .released = &released,
		  .unlock = true },
	};
	long long passes;
	pthread_t holder;

	ASSERT_EQ(0, pthread_create(&holder, NULL, holder_fn, &h));
	ASSERT_TRUE(fs_wait_flag(&h.locked));
	ASSERT_EQ(0, h.ret);
	ASSERT_TRUE(waiter_queue(&w[0]));
	ASSERT_TRUE(waiter_queue(&w[1]));
	/* Sleepers must be visible to the user fast path, or be lost */
	EXPECT_EQ(h.tid | FUTEX_WAITERS, fs_load(self->word));

	passes = unlock_passes(_metadata);
	__atomic_store_n(&released, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, holder_release(&h, holder));
	EXPECT_NE(h.tid, fs_load(self->word) & FUTEX_TID_MASK);

	/* The first queued takes it; the other sleeps on, still flagged */
	ASSERT_TRUE(wait_done(&w[0]));
	EXPECT_EQ(0, w[0].ret) TH_LOG("lock returned %s", strerror(-w[0].ret));
	EXPECT_EQ(w[0].tid, w[0].seen & FUTEX_TID_MASK);
	if (!unlock_second_went_first(_metadata, w, passes)) {
		EXPECT_FALSE(__atomic_load_n(&w[1].done, __ATOMIC_SEQ_CST));
		EXPECT_TRUE(fs_wait_blocked(getpid(), w[1].tid));
		EXPECT_EQ(w[0].tid | FUTEX_WAITERS, fs_load(self->word));
	}

	/* Its unlock wakes the second (unlocks return 0, not whom they woke) */
	ASSERT_EQ(0, fs_join(w[0].thread, NULL));
	EXPECT_EQ(0, w[0].unlock_ret);
	ASSERT_EQ(0, fs_join(w[1].thread, NULL));
	EXPECT_EQ(0, w[1].ret) TH_LOG("lock returned %s", strerror(-w[1].ret));
	EXPECT_EQ(w[1].tid, w[1].seen & FUTEX_TID_MASK);
	EXPECT_EQ(0, w[1].unlock_ret);
	EXPECT_EQ(0, fs_load(self->word));
}

TEST_F(spin, timeout_monotonic)
{
	struct waiter w = {
		.word = self->word, .op = self->lock_op, .timeout_ms = 200,
	};
	long long timeouts = fs_stat(_metadata, "timeouts");

	ASSERT_EQ(0, fs_lock(self->word, self->lock_op, NULL));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(-ETIMEDOUT, w.ret);
	EXPECT_TRUE(w.past_deadline) TH_LOG("returned %lld ms early", 200 - w.ms);
	EXPECT_EQ(self->tid, w.seen & FUTEX_TID_MASK);
	EXPECT_LE(0, fs_unlock(self->word, self->unlock_op));
	EXPECT_EQ(0, fs_load(self->word));
	if (timeouts >= 0)
		EXPECT_LT(timeouts, fs_stat(_metadata, "timeouts"));
}

TEST_F(spin, timeout_realtime)
{
	struct waiter w = {
		.word = self->word, .op = self->lock_op | FUTEX_CLOCK_REALTIME,
		.timeout_ms = 200,
	};
	struct timespec mono = fs_deadline(CLOCK_MONOTONIC, FS_MUST_MS);
	long long start;

	ASSERT_EQ(0, fs_lock(self->word, self->lock_op, NULL));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_EQ(0, fs_join(w.thread, NULL)) TH_LOG("wall clock deadline missed");
	EXPECT_EQ(-ETIMEDOUT, w.ret);
	EXPECT_TRUE(w.past_deadline) TH_LOG("returned %lld ms early", 200 - w.ms);
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));

	/* Time since boot, read as wall clock time, is long past */
	fs_store(self->word, FS_NO_SUCH_TID);
	start = fs_now_ns(CLOCK_MONOTONIC);
	EXPECT_EQ(-ETIMEDOUT, fs_lock(self->word,
				      self->lock_op | FUTEX_CLOCK_REALTIME,
				      &mono));
	EXPECT_GT(FS_MUST_MS - 1000, fs_ms_since(start));
	fs_store(self->word, 0);
}

TEST_F(spin, timeout_past)
{
	struct timespec zero = { 0, 0 };
	struct timespec ago = fs_deadline(CLOCK_MONOTONIC, -1000);
	struct timespec wall_ago = fs_deadline(CLOCK_REALTIME, -1000);
	struct waiter w = {
		.word = self->word, .op = self->lock_op, .timeout_ms = -1000,
	};
	long long start;

	/* Held: fails at once, on either clock */
	ASSERT_EQ(0, fs_lock(self->word, self->lock_op, NULL));
	start = fs_now_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(-ETIMEDOUT, w.ret);
	w.started = 0;
	w.op = self->lock_op | FUTEX_CLOCK_REALTIME;
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(-ETIMEDOUT, w.ret);
	EXPECT_GT(FS_MUST_MS, fs_ms_since(start));
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));

	/* Free: taken */
	EXPECT_EQ(0, fs_lock(self->word, self->lock_op, &zero));
	EXPECT_EQ(self->tid, fs_load(self->word));
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
	EXPECT_EQ(0, fs_lock(self->word, self->lock_op, &ago));
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
	EXPECT_EQ(0, fs_lock(self->word, self->lock_op | FUTEX_CLOCK_REALTIME,
			     &wall_ago));
	EXPECT_EQ(self->tid, fs_load(self->word));
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
}

struct busy_holder {
	struct futex_spin_mutex *m;
	long long hold_ms;
	int locked;
	int ret;
};

static void *busy_holder_fn(void *arg)
{
	struct busy_holder *h = arg;
	struct futex_spin_thread me;
	long long start;

	futex_spin_thread_init(&me, false);
	h->ret = futex_spin_lock(h->m, &me);
	__atomic_store_n(&h->locked, 1, __ATOMIC_SEQ_CST);
	start = fs_now_ns(CLOCK_MONOTONIC);
	while (fs_ms_since(start) < h->hold_ms)
		;
	if (!h->ret)
		h->ret = futex_spin_unlock(h->m, &me);
	return NULL;
}

TEST_F(spin, timeout_owner_running)
{
	struct busy_holder h = { .m = self->m, .hold_ms = 800 };
	struct waiter w = {
		.word = &self->m->word, .op = self->lock_op, .timeout_ms = 200,
	};
	pthread_t t;

	/* The owner stays on a CPU: a spinning waiter must still give up */
	ASSERT_EQ(0, pthread_create(&t, NULL, busy_holder_fn, &h));
	while (!__atomic_load_n(&h.locked, __ATOMIC_SEQ_CST))
		usleep(1000);
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(-ETIMEDOUT, w.ret);
	EXPECT_TRUE(w.past_deadline);
	ASSERT_EQ(0, fs_join(t, NULL));
	EXPECT_EQ(0, h.ret);
	EXPECT_EQ(0, fs_load(&self->m->word));
}

TEST_F(spin, owner_does_not_exist)
{
	struct timespec to = fs_deadline(CLOCK_MONOTONIC, 100);

	fs_store(self->word, FS_NO_SUCH_TID);
	EXPECT_EQ(-ETIMEDOUT, fs_lock(self->word, self->lock_op, &to));
	EXPECT_EQ(FS_NO_SUCH_TID, fs_load(self->word) & FUTEX_TID_MASK);
	fs_store(self->word, 0);
}

static void *lock_and_exit(void *arg)
{
	struct futex_spin_mutex *m = arg;
	struct futex_spin_thread me;

	futex_spin_thread_init(&me, false);
	return (void *)(long)futex_spin_lock(m, &me);
}

TEST_F(spin, owner_exited_not_robust)
{
	struct timespec to;
	void *ret;
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, lock_and_exit, self->m));
	ASSERT_EQ(0, fs_join(t, &ret));
	ASSERT_EQ(NULL, ret);
	ASSERT_NE(0, fs_load(&self->m->word));

	/* Nothing to recover it from: waiters wait, timeouts work */
	to = fs_deadline(CLOCK_MONOTONIC, 100);
	EXPECT_EQ(-ETIMEDOUT, fs_lock(&self->m->word, self->lock_op, &to));
	EXPECT_EQ(0, fs_load(&self->m->word) & FUTEX_OWNER_DIED);
	fs_store(&self->m->word, 0);
}

TEST_F(spin, fatal_signal_no_owner)
{
	int status;
	pid_t pid;

	fs_store(self->word, FS_NO_SUCH_TID);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(fs_lock(self->word, self->lock_op, NULL));

	ASSERT_TRUE(fs_wait_blocked(pid, pid)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	ASSERT_EQ(0, kill(pid, SIGKILL));
	status = fs_reap(pid);
	ASSERT_NE(-1, status) TH_LOG("SIGKILLed waiter does not die");
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	fs_store(self->word, 0);
}

static int signals_seen;

static void count_signal(int sig)
{
	__atomic_fetch_add(&signals_seen, 1, __ATOMIC_SEQ_CST);
}

static void install_handler(struct __test_metadata *_metadata)
{
	struct sigaction sa = { .sa_handler = count_signal };

	/* No SA_RESTART: a lock call must not need it to avoid EINTR */
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	signals_seen = 0;
}

TEST_F(spin, signal_then_acquire)
{
	int released = 0;
	struct waiter w = {
		.word = self->word, .op = self->lock_op, .forever = true,
		.released = &released, .unlock = true,
	};
	long long start;
	int i;

	install_handler(_metadata);
	ASSERT_EQ(0, fs_lock(self->word, self->lock_op, NULL));
	ASSERT_TRUE(waiter_queue(&w));
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(0, pthread_kill(w.thread, SIGUSR1));
		start = fs_now_ns(CLOCK_MONOTONIC);
		while (__atomic_load_n(&signals_seen, __ATOMIC_SEQ_CST) < i &&
		       fs_ms_since(start) < FS_MUST_MS)
			usleep(1000);
		ASSERT_EQ(i, signals_seen) TH_LOG("handler did not run");
		/* Back to sleep in the same call, not out with EINTR */
		ASSERT_TRUE(fs_wait_blocked(getpid(), w.tid));
	}
	__atomic_store_n(&released, 1, __ATOMIC_SEQ_CST);
	EXPECT_LE(0, fs_unlock(self->word, self->unlock_op));
	ASSERT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret) TH_LOG("lock returned %s", strerror(-w.ret));
	EXPECT_FALSE(w.early);
	EXPECT_EQ(w.tid, w.seen & FUTEX_TID_MASK);
	EXPECT_EQ(0, w.unlock_ret);
	EXPECT_EQ(0, fs_load(self->word));
}

TEST_F(spin, signal_keeps_deadline)
{
	struct waiter w = {
		.word = self->word, .op = self->lock_op, .timeout_ms = 300,
	};
	long long start;

	install_handler(_metadata);
	ASSERT_EQ(0, fs_lock(self->word, self->lock_op, NULL));
	ASSERT_EQ(0, waiter_start(&w));
	/* Faster than the timeout: a restart from scratch never ends */
	start = fs_now_ns(CLOCK_MONOTONIC);
	while (!__atomic_load_n(&w.done, __ATOMIC_SEQ_CST) &&
	       fs_ms_since(start) < FS_MUST_MS) {
		pthread_kill(w.thread, SIGUSR1);
		usleep(10000);
	}
	ASSERT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(-ETIMEDOUT, w.ret) TH_LOG("lock returned %s", strerror(-w.ret));
	EXPECT_TRUE(w.past_deadline);
	EXPECT_LT(0, signals_seen);
	EXPECT_EQ(0, fs_unlock(self->word, self->unlock_op));
}

TEST_F(spin, fault_in)
{
	char *fresh = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
			   (variant->shared ? MAP_SHARED : MAP_PRIVATE) |
			   MAP_ANONYMOUS, -1, 0);
	__u32 *a, *b, *c;

	ASSERT_NE(MAP_FAILED, fresh);
	/* Not one of these pages is touched before the kernel sees it */
	a = (__u32 *)(fresh + 128);
	b = (__u32 *)(fresh + 2 * PAGE - 4);
	c = (__u32 *)(fresh + 2 * PAGE + 16);
	EXPECT_EQ(0, fs_lock(a, self->lock_op, NULL));
	EXPECT_EQ(0, fs_lock(b, self->lock_op, NULL));
	EXPECT_EQ(-EPERM, fs_unlock(c, self->unlock_op));
	EXPECT_EQ(self->tid, *a);
	EXPECT_EQ(self->tid, *b);
	EXPECT_EQ(0, *c);
	EXPECT_EQ(0, fs_unlock(a, self->unlock_op));
	EXPECT_EQ(0, fs_unlock(b, self->unlock_op));
	munmap(fresh, 3 * PAGE);
}

/* Other futex opcodes on a spin-locked word: each returns, nothing breaks */

struct other_op {
	__u32 *uaddr;
	int op;
	__u32 val;
	struct timespec to;	/* relative for FUTEX_WAIT, else absolute */
	bool timed;
	/*
	 * Or an absolute timeout that many milliseconds after the thread
	 * starts on @clock: a deadline set before pthread_create() may pass
	 * before the call is made on a busy host.
	 */
	long long abs_ms;
	clockid_t clock;
	__u32 *uaddr2;
	__u32 val3;
	struct futex_waitv *waitv;
	unsigned int nr_waitv;
	pthread_t thread;
	int started;
	pid_t tid;
	long ret;
	int err;
};

static void *other_op_fn(void *arg)
{
	struct other_op *o = arg;

	o->tid = fs_gettid();
	if (o->abs_ms) {
		o->to = fs_deadline(o->clock, o->abs_ms);
		o->timed = true;
	}
	__atomic_store_n(&o->started, 1, __ATOMIC_SEQ_CST);
	if (o->waitv)
		o->ret = syscall(__NR_futex_waitv, o->waitv, o->nr_waitv, 0,
				 &o->to, CLOCK_MONOTONIC);
	else
		o->ret = syscall(SYS_futex, o->uaddr, o->op, o->val,
				 o->timed ? &o->to : NULL, o->uaddr2, o->val3);
	o->err = o->ret < 0 ? errno : 0;
	return NULL;
}

static int other_op_start(struct other_op *o)
{
	int err = pthread_create(&o->thread, NULL, other_op_fn, o);

	if (err)
		return err;
	while (!__atomic_load_n(&o->started, __ATOMIC_SEQ_CST))
		usleep(100);
	return 0;
}

/* Run @o in a thread and let it finish: it must, by its own timeout */
static void other_op_run(struct __test_metadata *_metadata,
			 struct other_op *o, const char *what)
{
	ASSERT_EQ(0, other_op_start(o));
	ASSERT_EQ(0, fs_join(o->thread, NULL)) TH_LOG("%s never returned", what);
	TH_LOG("%s: %ld (%s)", what, o->ret, o->ret < 0 ? strerror(o->err) : "ok");
}

static struct timespec relative_ms(long long ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000,
	};

	return ts;
}

/* The word still works as a lock after whatever was done to it */
static void still_a_lock(struct __test_metadata *_metadata,
			 struct futex_spin_mutex *m)
{
	struct counter c = { .m = m, .run_ms = 200, .yield_every = 8 };

	fs_store(&m->word, 0);
	counter_check(_metadata, &c, 2);
}

struct mixed {
	struct futex_spin_mutex *m;
	struct futex_spin_mutex *other_m;
	__u32 *word;
	__u32 *other;
	int priv;
	int lock_op;
	int unlock_op;
	pid_t tid;
	int released;
	struct waiter spinner;
};

FIXTURE(spin_mixed) {
	struct mixed mx;
};

FIXTURE_VARIANT(spin_mixed) {
	bool shared;
};

FIXTURE_VARIANT_ADD(spin_mixed, private) {
	.shared = false,
};

FIXTURE_VARIANT_ADD(spin_mixed, shared) {
	.shared = true,
};

/*
 * The word starts locked by the test with a FUTEX_SPIN_LOCK waiter queued
 * behind it, so the other opcodes meet both the word and the queue head.
 */
FIXTURE_SETUP(spin_mixed)
{
	struct mixed *mx = &self->mx;
	__u32 attr = variant->shared ? FUTEX_SPIN_SHARED : 0;
	char *page;

	fs_setup(_metadata);
	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    (variant->shared ? MAP_SHARED : MAP_PRIVATE) |
		    MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	mx->m = (struct futex_spin_mutex *)page;
	mx->other_m = (struct futex_spin_mutex *)(page + 512);
	futex_spin_mutex_init(mx->m, attr);
	futex_spin_mutex_init(mx->other_m, attr);
	mx->word = &mx->m->word;
	mx->other = &mx->other_m->word;
	mx->priv = variant->shared ? 0 : FUTEX_PRIVATE_FLAG;
	mx->lock_op = FUTEX_SPIN_LOCK | mx->priv;
	mx->unlock_op = FUTEX_SPIN_UNLOCK | mx->priv;
	mx->tid = fs_gettid();
	mx->released = 0;

	ASSERT_EQ(0, fs_lock(mx->word, mx->lock_op, NULL));
	mx->spinner = (struct waiter) {
		.word = mx->word, .op = mx->lock_op,
		.timeout_ms = FS_MUST_MS, .released = &mx->released,
		.unlock = true,
	};
	ASSERT_TRUE(waiter_queue(&mx->spinner));
}

FIXTURE_TEARDOWN(spin_mixed)
{
	fs_teardown(_metadata);
}

/*
 * Let go of the word, if the test still holds it, and collect the queued
 * FUTEX_SPIN_LOCK waiter: it takes the lock, or times out if another opcode
 * emptied the word behind the queue's back, but never takes it early nor
 * fails otherwise. Then the word must still work as a lock.
 */
static void release_spinner(struct __test_metadata *_metadata,
			    struct mixed *mx)
{
	struct waiter *w = &mx->spinner;

	__atomic_store_n(&mx->released, 1, __ATOMIC_SEQ_CST);
	if ((fs_load(mx->word) & FUTEX_TID_MASK) == (__u32)mx->tid)
		EXPECT_LE(0, fs_unlock(mx->word, mx->unlock_op));
	/* Its deadline may be due just now: FS_MUST_MS after that */
	ASSERT_EQ(0, fs_join_ms(w->thread, NULL, w->timeout_ms + FS_MUST_MS))
		TH_LOG("FUTEX_SPIN_LOCK waiter never returned");
	EXPECT_FALSE(w->early) TH_LOG("lock taken from its owner");
	if (w->ret) {
		EXPECT_EQ(-ETIMEDOUT, w->ret) TH_LOG("FUTEX_SPIN_LOCK: %s",
						     strerror(-w->ret));
	} else {
		EXPECT_EQ(w->tid, w->seen & FUTEX_TID_MASK);
		EXPECT_EQ(0, w->unlock_ret);
	}
	still_a_lock(_metadata, mx->m);
}

static long futex_call(__u32 *uaddr, int op, __u32 val, long val2,
		       __u32 *uaddr2, __u32 val3, const char *what,
		       struct __test_metadata *_metadata)
{
	long ret = syscall(SYS_futex, uaddr, op, val, (void *)val2, uaddr2,
			   val3);

	TH_LOG("%s: %ld (%s)", what, ret, ret < 0 ? strerror(errno) : "ok");
	return ret;
}

TEST_F(spin_mixed, wait_wake)
{
	struct mixed *mx = &self->mx;
	struct other_op wait = {
		.uaddr = mx->word, .op = FUTEX_WAIT | mx->priv,
		.val = fs_load(mx->word), .to = relative_ms(100),
		.timed = true,
	};
	struct other_op bitset = {
		.uaddr = mx->word, .op = FUTEX_WAIT_BITSET | mx->priv,
		.val = fs_load(mx->word), .abs_ms = 100,
		.clock = CLOCK_MONOTONIC, .val3 = FUTEX_BITSET_MATCH_ANY,
	};
	struct other_op wake = {
		.uaddr = mx->word, .op = FUTEX_WAKE | mx->priv,
		.val = INT_MAX,
	};
	struct other_op wait_long = wait;

	other_op_run(_metadata, &wait, "FUTEX_WAIT");
	other_op_run(_metadata, &bitset, "FUTEX_WAIT_BITSET");
	other_op_run(_metadata, &wake, "FUTEX_WAKE");

	/* A plain waiter and a spin waiter queued on one word at once */
	wait_long.to = relative_ms(1500);
	ASSERT_EQ(0, other_op_start(&wait_long));
	ASSERT_TRUE(fs_wait_blocked(getpid(), wait_long.tid));
	other_op_run(_metadata, &wake, "FUTEX_WAKE with a FUTEX_WAIT waiter");
	ASSERT_EQ(0, fs_join(wait_long.thread, NULL))
		TH_LOG("FUTEX_WAIT never returned");
	release_spinner(_metadata, mx);
}

TEST_F(spin_mixed, lock_pi)
{
	struct mixed *mx = &self->mx;
	struct other_op lock_pi = {
		.uaddr = mx->word, .op = FUTEX_LOCK_PI | mx->priv,
		.abs_ms = 200, .clock = CLOCK_REALTIME,
	};
	struct other_op lock_pi2 = {
		.uaddr = mx->word, .op = FUTEX_LOCK_PI2 | mx->priv,
		.abs_ms = 200, .clock = CLOCK_MONOTONIC,
	};
	struct other_op trylock_pi = {
		.uaddr = mx->word, .op = FUTEX_TRYLOCK_PI | mx->priv,
	};

	/* FUTEX_LOCK_PI takes wall clock time, FUTEX_LOCK_PI2 boot time */
	other_op_run(_metadata, &lock_pi, "FUTEX_LOCK_PI");
	other_op_run(_metadata, &lock_pi2, "FUTEX_LOCK_PI2");
	other_op_run(_metadata, &trylock_pi, "FUTEX_TRYLOCK_PI");
	EXPECT_NE(0, lock_pi.ret) TH_LOG("FUTEX_LOCK_PI took a held word");
	EXPECT_NE(0, lock_pi2.ret) TH_LOG("FUTEX_LOCK_PI2 took a held word");
	EXPECT_NE(0, trylock_pi.ret) TH_LOG("FUTEX_TRYLOCK_PI took a held word");
	EXPECT_EQ(mx->tid, fs_load(mx->word) & FUTEX_TID_MASK);
	release_spinner(_metadata, mx);
}

TEST_F(spin_mixed, unlock_pi)
{
	struct mixed *mx = &self->mx;

	/*
	 * Its owner lets go the PI way, which wakes no spin waiter: the
	 * waiter takes the free word when its deadline wakes it.
	 */
	__atomic_store_n(&mx->released, 1, __ATOMIC_SEQ_CST);
	futex_call(mx->word, FUTEX_UNLOCK_PI | mx->priv, 0, 0, NULL, 0,
		   "FUTEX_UNLOCK_PI by the owner", _metadata);
	release_spinner(_metadata, mx);
	/* And a FUTEX_UNLOCK_PI by somebody else */
	fs_store(mx->word, FS_NO_SUCH_TID | FUTEX_WAITERS);
	futex_call(mx->word, FUTEX_UNLOCK_PI | mx->priv, 0, 0, NULL, 0,
		   "FUTEX_UNLOCK_PI by another", _metadata);
	fs_store(mx->word, 0);
	still_a_lock(_metadata, mx->m);
}

TEST_F(spin_mixed, cmp_requeue)
{
	struct mixed *mx = &self->mx;
	struct other_op wait = {
		.uaddr = mx->other, .op = FUTEX_WAIT | mx->priv,
		.val = 0, .to = relative_ms(1500), .timed = true,
	};
	struct other_op wait_pi = {
		.uaddr = mx->other, .op = FUTEX_WAIT_REQUEUE_PI | mx->priv,
		.val = 0, .abs_ms = 1500, .clock = CLOCK_MONOTONIC,
		.uaddr2 = mx->word,
	};

	/* A plain waiter moved onto the spin word, the spin queue off it */
	ASSERT_EQ(0, other_op_start(&wait));
	ASSERT_TRUE(fs_wait_blocked(getpid(), wait.tid));
	futex_call(mx->other, FUTEX_CMP_REQUEUE | mx->priv, 0, INT_MAX,
		   mx->word, 0, "FUTEX_CMP_REQUEUE onto the spin word",
		   _metadata);
	futex_call(mx->word, FUTEX_CMP_REQUEUE | mx->priv, 0, INT_MAX,
		   mx->other, fs_load(mx->word),
		   "FUTEX_CMP_REQUEUE off the spin word", _metadata);
	futex_call(mx->word, FUTEX_WAKE | mx->priv, INT_MAX, 0, NULL, 0,
		   "FUTEX_WAKE of the spin word", _metadata);
	futex_call(mx->other, FUTEX_WAKE | mx->priv, INT_MAX, 0, NULL, 0,
		   "FUTEX_WAKE of the other word", _metadata);
	ASSERT_EQ(0, fs_join(wait.thread, NULL)) TH_LOG("FUTEX_WAIT never returned");

	/* A requeue-PI waiter whose PI target is the spin word */
	ASSERT_EQ(0, other_op_start(&wait_pi));
	ASSERT_TRUE(fs_wait_blocked(getpid(), wait_pi.tid));
	futex_call(mx->other, FUTEX_CMP_REQUEUE_PI | mx->priv, 1, INT_MAX,
		   mx->word, 0, "FUTEX_CMP_REQUEUE_PI onto the spin word",
		   _metadata);
	ASSERT_EQ(0, fs_join(wait_pi.thread, NULL))
		TH_LOG("FUTEX_WAIT_REQUEUE_PI never returned");
	TH_LOG("FUTEX_WAIT_REQUEUE_PI: %ld (%s)", wait_pi.ret,
	       wait_pi.ret < 0 ? strerror(wait_pi.err) : "ok");
	/* Had it been given the word, it leaves it held by a dead thread */
	if (!wait_pi.ret) {
		EXPECT_EQ(wait_pi.tid, fs_load(mx->word) & FUTEX_TID_MASK);
		fs_store(mx->word, mx->tid | FUTEX_WAITERS);
	}
	release_spinner(_metadata, mx);
}

TEST_F(spin_mixed, waitv)
{
	struct mixed *mx = &self->mx;
	struct futex_waitv wv[2] = {
		{
			.val = fs_load(mx->word),
			.uaddr = (uintptr_t)mx->word,
			.flags = FUTEX2_SIZE_U32 | mx->priv,
		},
		{
			.val = 0,
			.uaddr = (uintptr_t)mx->other,
			.flags = FUTEX2_SIZE_U32 | mx->priv,
		},
	};
	struct other_op timed = {
		.waitv = wv, .nr_waitv = 2,
		.abs_ms = 100, .clock = CLOCK_MONOTONIC,
	};
	struct other_op woken = {
		.waitv = wv, .nr_waitv = 2,
		.abs_ms = 1500, .clock = CLOCK_MONOTONIC,
	};

	other_op_run(_metadata, &timed, "futex_waitv");
	ASSERT_EQ(0, other_op_start(&woken));
	ASSERT_TRUE(fs_wait_blocked(getpid(), woken.tid));
	futex_call(mx->word, FUTEX_WAKE | mx->priv, 1, 0, NULL, 0,
		   "FUTEX_WAKE with a futex_waitv waiter", _metadata);
	ASSERT_EQ(0, fs_join(woken.thread, NULL))
		TH_LOG("futex_waitv never returned");
	TH_LOG("woken futex_waitv: %ld (%s)", woken.ret,
	       woken.ret < 0 ? strerror(woken.err) : "ok");
	release_spinner(_metadata, mx);
}

/* And the other way round: spin opcodes on a word a PI lock uses */
TEST_F(spin_mixed, spin_on_pi_word)
{
	struct mixed *mx = &self->mx;
	struct other_op lock_pi = {
		.uaddr = mx->other, .op = FUTEX_LOCK_PI | mx->priv,
		.abs_ms = 1500, .clock = CLOCK_REALTIME,
	};
	struct waiter w = {
		.word = mx->other, .op = mx->lock_op, .timeout_ms = 200,
	};
	long long start;

	release_spinner(_metadata, mx);

	/* Owned by the test, a PI waiter blocked on it: pi_state exists */
	ASSERT_EQ(0, syscall(SYS_futex, mx->other,
			     FUTEX_LOCK_PI | mx->priv, 0, NULL, NULL, 0));
	ASSERT_EQ(0, other_op_start(&lock_pi));
	/*
	 * FUTEX_WAITERS on the word says the PI waiter has attached its
	 * pi_state. Whether it sleeps is not observable: the rt_mutex lets it
	 * spin while this thread, the owner, runs.
	 */
	start = fs_now_ns(CLOCK_MONOTONIC);
	while (!(fs_load(mx->other) & FUTEX_WAITERS) &&
	       fs_ms_since(start) < FS_MUST_MS)
		usleep(1000);
	ASSERT_TRUE(fs_load(mx->other) & FUTEX_WAITERS)
		TH_LOG("FUTEX_LOCK_PI: %ld (%s)", lock_pi.ret,
		       strerror(lock_pi.err));

	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_EQ(0, fs_join(w.thread, NULL)) TH_LOG("spin lock never returned");
	EXPECT_NE(0, w.ret) TH_LOG("FUTEX_SPIN_LOCK took a PI-held word");
	TH_LOG("FUTEX_SPIN_LOCK on a PI word: %s", strerror(-w.ret));
	EXPECT_EQ(-EDEADLK, fs_lock(mx->other, mx->lock_op, NULL));

	/* The owner lets go the spin way, the PI waiter still queued */
	futex_call(mx->other, mx->unlock_op, 0, 0, NULL, 0,
		   "FUTEX_SPIN_UNLOCK of a PI word", _metadata);
	ASSERT_EQ(0, fs_join(lock_pi.thread, NULL))
		TH_LOG("FUTEX_LOCK_PI waiter never returned");
	TH_LOG("FUTEX_LOCK_PI waiter: %ld (%s)", lock_pi.ret,
	       lock_pi.ret < 0 ? strerror(lock_pi.err) : "ok");
	futex_call(mx->other, FUTEX_UNLOCK_PI | mx->priv, 0, 0, NULL, 0,
		   "FUTEX_UNLOCK_PI after it", _metadata);

	still_a_lock(_metadata, mx->other_m);
}

/* Across processes: fork with MAP_SHARED, and file mappings */

FIXTURE(spin_shm) {
	pid_t tid;
};

FIXTURE_SETUP(spin_shm)
{
	fs_setup(_metadata);
	self->tid = fs_gettid();
}

FIXTURE_TEARDOWN(spin_shm)
{
	fs_teardown(_metadata);
}

/*
 * Run the counter in @nr_children children and this process at once. With
 * @fd, the counter and mutex live in that file at @offset and each child
 * reaches them through a mapping of its own, at another address.
 */
static void counter_across_fork(struct __test_metadata *_metadata,
				struct counter *c, int nr_children,
				int fd, size_t c_off, size_t m_off)
{
	pid_t pids[4];
	int i, status;

	counter_reset(c);
	for (i = 0; i < nr_children; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			char *map;

			if (fd < 0) {
				counter_run(c, c->m);
				_exit(0);
			}
			map = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0);
			if (map == MAP_FAILED)
				_exit(1);
			counter_run((struct counter *)(map + c_off),
				    (struct futex_spin_mutex *)(map + m_off));
			_exit(0);
		}
	}
	counter_run(c, c->m);
	for (i = 0; i < nr_children; i++) {
		status = fs_reap(pids[i]);
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	counter_verdict(_metadata, c);
}

TEST_F(spin_shm, fork_shared_anon)
{
	struct {
		struct futex_spin_mutex m;
		struct counter c;
	} *shm;

	shm = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shm);
	futex_spin_mutex_init(&shm->m, FUTEX_SPIN_SHARED);
	shm->c = (struct counter){
		.m = &shm->m, .run_ms = 400, .yield_every = 16,
	};
	counter_across_fork(_metadata, &shm->c, 2, -1, 0, 0);
	munmap(shm, PAGE);
}

TEST_F(spin_shm, fork_private_cow)
{
	__u32 *word = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int status;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, word);
	/* Touched before fork, so the child's copy is shared read-only */
	*word = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (fs_lock(word, FUTEX_SPIN_LOCK_PRIVATE, NULL))
			_exit(1);
		if (*word != (__u32)fs_gettid())
			_exit(2);
		_exit(fs_unlock(word, FUTEX_SPIN_UNLOCK_PRIVATE) ? 3 : 0);
	}
	status = fs_reap(pid);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, *word) TH_LOG("the child wrote the parent's page");
	munmap(word, PAGE);
}

static int tmpfile_of(size_t size)
{
	char path[] = "/tmp/futex_spin.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	if (ftruncate(fd, size)) {
		close(fd);
		return -1;
	}
	return fd;
}

TEST_F(spin_shm, file_mapping)
{
	int fd = tmpfile_of(PAGE);
	int released = 0;
	struct counter *c;
	struct waiter w;
	char *map1, *map2;
	__u32 *w1, *w2;

	ASSERT_LE(0, fd);
	map1 = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	map2 = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map1);
	ASSERT_NE(MAP_FAILED, map2);
	w1 = (__u32 *)map1;
	w2 = (__u32 *)map2;

	/* Taken through one mapping, the word is held through the other */
	ASSERT_EQ(0, fs_lock(w1, FUTEX_SPIN_LOCK, NULL));
	EXPECT_EQ(self->tid, *w2);
	w = (struct waiter){
		.word = w2, .op = FUTEX_SPIN_LOCK, .timeout_ms = 100,
	};
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(-ETIMEDOUT, w.ret);

	/* A waiter through one is woken by an unlock through the other */
	w = (struct waiter){
		.word = w2, .op = FUTEX_SPIN_LOCK, .timeout_ms = FS_MUST_MS,
		.released = &released, .unlock = true,
	};
	ASSERT_TRUE(waiter_queue(&w));
	__atomic_store_n(&released, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, fs_unlock(w1, FUTEX_SPIN_UNLOCK));
	ASSERT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_FALSE(w.early);
	EXPECT_EQ(0, w.unlock_ret);
	EXPECT_EQ(0, *w1);
	munmap(map2, PAGE);

	/* Processes that share nothing but the file */
	c = (struct counter *)(map1 + 512);
	*c = (struct counter){
		.m = (struct futex_spin_mutex *)(map1 + 64),
		.run_ms = 400, .yield_every = 16,
	};
	futex_spin_mutex_init(c->m, FUTEX_SPIN_SHARED);
	counter_across_fork(_metadata, c, 2, fd, 512, 64);

	munmap(map1, PAGE);
	close(fd);
}

TEST_F(spin_shm, file_fault_in_and_readonly)
{
	int fd = tmpfile_of(2 * PAGE);
	__u32 *rw, *ro;
	char path[64];
	int rofd;

	ASSERT_LE(0, fd);
	rw = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, rw);
	/* The page is in no page table and not even in the page cache yet */
	ASSERT_EQ(0, fs_lock(&rw[PAGE / 4 + 3], FUTEX_SPIN_LOCK, NULL));
	EXPECT_EQ(self->tid, rw[PAGE / 4 + 3]);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rofd = open(path, O_RDONLY);
	ASSERT_LE(0, rofd);
	ro = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, rofd, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-EFAULT, fs_lock(&ro[8], FUTEX_SPIN_LOCK, NULL));
	EXPECT_EQ(-EFAULT, fs_unlock(&ro[PAGE / 4 + 3], FUTEX_SPIN_UNLOCK));
	EXPECT_EQ(0, ro[8]);
	EXPECT_EQ(self->tid, ro[PAGE / 4 + 3]);

	EXPECT_EQ(0, fs_unlock(&rw[PAGE / 4 + 3], FUTEX_SPIN_UNLOCK));
	EXPECT_EQ(0, ro[PAGE / 4 + 3]);
	munmap(ro, 2 * PAGE);
	munmap(rw, 2 * PAGE);
	close(rofd);
	close(fd);
}

/*
 * PID namespaces: an owner in this namespace and a waiter that is PID 1 of
 * a child namespace share a lock. Each finds the TID of its own namespace
 * in the word once it has the lock, whether it was handed the lock or took
 * it free, and EDEADLK and EPERM go by those TIDs.
 */
struct pidns {
	__u32 word;
	pid_t o_tid;		/* the owner's TID (this namespace) */
	pid_t w_tid;		/* the waiter's TID in its namespace */
	pid_t w_outer;		/* and in this one */
	int o_locked, o_release, w_got, w_release, o_got, o_release2, w_done;
	int o_unlock, o_eperm, o_ret, o_unlock2;
	int w_ret, w_deadlk, w_unlock, w_ret2, w_unlock2;
	__u32 o_seen, w_seen, w_seen2;
};

static void pidns_set(int *flag)
{
	__atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
}

/* Wait for @flag, or end the process: the test reports the hang */
static void pidns_wait(int *flag)
{
	if (!fs_wait_flag(flag))
		_exit(2);
}

static struct timespec pidns_deadline(void)
{
	return fs_deadline(CLOCK_MONOTONIC, 2 * FS_MUST_MS);
}

static void pidns_owner(struct pidns *p)
{
	struct timespec to;

	p->o_tid = fs_gettid();
	fs_store(&p->word, p->o_tid);
	pidns_set(&p->o_locked);
	pidns_wait(&p->o_release);
	p->o_unlock = fs_unlock(&p->word, FUTEX_SPIN_UNLOCK);

	/* The waiter owns it now, under a TID that is not ours */
	pidns_wait(&p->w_got);
	p->o_eperm = fs_unlock(&p->word, FUTEX_SPIN_UNLOCK);
	to = pidns_deadline();
	p->o_ret = fs_lock(&p->word, FUTEX_SPIN_LOCK, &to);
	p->o_seen = fs_load(&p->word);
	pidns_set(&p->o_got);

	pidns_wait(&p->o_release2);
	p->o_unlock2 = fs_unlock(&p->word, FUTEX_SPIN_UNLOCK);
}

static void pidns_waiter(struct pidns *p)
{
	struct timespec to;

	p->w_tid = fs_gettid();
	pidns_wait(&p->o_locked);
	to = pidns_deadline();
	p->w_ret = fs_lock(&p->word, FUTEX_SPIN_LOCK, &to);
	p->w_seen = fs_load(&p->word);
	p->w_deadlk = fs_lock(&p->word, FUTEX_SPIN_LOCK, &to);
	pidns_set(&p->w_got);
	pidns_wait(&p->w_release);
	p->w_unlock = fs_unlock(&p->word, FUTEX_SPIN_UNLOCK);

	/* Again, this time taking it as the owner lets go */
	pidns_wait(&p->o_got);
	to = pidns_deadline();
	p->w_ret2 = fs_lock(&p->word, FUTEX_SPIN_LOCK, &to);
	p->w_seen2 = fs_load(&p->word);
	p->w_unlock2 = fs_unlock(&p->word, FUTEX_SPIN_UNLOCK);
	pidns_set(&p->w_done);
}

TEST_F(spin_shm, pid_namespace)
{
	struct pidns *p;
	pid_t owner, ns;
	int status;

	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0, sizeof(*p));

	owner = fork();
	ASSERT_LE(0, owner);
	if (!owner) {
		pidns_owner(p);
		_exit(0);
	}
	/* A child that makes a PID namespace; its child is PID 1 there */
	ns = fork();
	ASSERT_LE(0, ns);
	if (!ns) {
		pid_t pid;

		if (unshare(CLONE_NEWPID))
			_exit(errno == EPERM || errno == EINVAL ? KSFT_SKIP : 1);
		pid = fork();
		if (pid < 0)
			_exit(1);
		if (!pid) {
			pidns_waiter(p);
			_exit(0);
		}
		p->w_outer = pid;
		status = fs_reap(pid);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
	}

	/* The waiter has waited 30 ms when the owner lets go */
	if (!fs_wait_flag(&p->o_locked) || !fs_wait_flag(&p->w_outer) ||
	    !fs_wait_blocked(p->w_outer, p->w_outer)) {
		kill(owner, SIGKILL);
		kill(ns, SIGKILL);
		status = fs_reap(ns);
		if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_SKIP)
			SKIP(goto out, "no PID namespace (CONFIG_PID_NS, root)");
		ASSERT_TRUE(0) TH_LOG("the waiter does not block");
	}
	usleep(30000);
	pidns_set(&p->o_release);
	ASSERT_TRUE(fs_wait_flag(&p->w_got));

	/* The owner waits on the waiter's lock, and gets it back */
	ASSERT_TRUE(fs_wait_blocked(owner, owner));
	usleep(30000);
	pidns_set(&p->w_release);
	ASSERT_TRUE(fs_wait_flag(&p->o_got));

	/* The waiter waits again; the owner lets go at once */
	ASSERT_TRUE(fs_wait_blocked(p->w_outer, p->w_outer));
	pidns_set(&p->o_release2);
	ASSERT_TRUE(fs_wait_flag(&p->w_done));

	status = fs_reap(owner);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	status = fs_reap(ns);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	EXPECT_EQ(1, p->w_tid);
	EXPECT_NE(p->w_tid, p->w_outer);
	EXPECT_EQ(0, p->o_unlock);
	EXPECT_EQ(0, p->w_ret);
	EXPECT_EQ(p->w_tid, p->w_seen & FUTEX_TID_MASK)
		TH_LOG("waiter %d (%d outside) handed the word %#x",
		       p->w_tid, p->w_outer, p->w_seen);
	EXPECT_EQ(-EDEADLK, p->w_deadlk);
	EXPECT_EQ(-EPERM, p->o_eperm);
	EXPECT_EQ(0, p->w_unlock);
	EXPECT_EQ(0, p->o_ret);
	EXPECT_EQ(p->o_tid, p->o_seen & FUTEX_TID_MASK)
		TH_LOG("owner %d handed the word %#x", p->o_tid, p->o_seen);
	EXPECT_EQ(0, p->o_unlock2);
	EXPECT_EQ(0, p->w_ret2);
	EXPECT_EQ(p->w_tid, p->w_seen2 & FUTEX_TID_MASK)
		TH_LOG("waiter %d (%d outside) got the word %#x",
		       p->w_tid, p->w_outer, p->w_seen2);
	EXPECT_EQ(0, p->w_unlock2);
	EXPECT_EQ(0, fs_load(&p->word));
out:
	munmap(p, PAGE);
}

TEST_HARNESS_MAIN
