// SPDX-License-Identifier: GPL-2.0
/*
 * FUTEX_SPIN_LOCK and robust futexes: when the owner of a word on its
 * robust list dies, the kernel marks the word FUTEX_OWNER_DIED, clears the
 * TID and wakes one waiter, which then owns it. Threads and processes,
 * sleeping and spinning waiters, with and without waiters, several locks,
 * and a death half way through a lock operation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "futex_spin_test.h"

#define PAGE		4096
#define NR_LOCKS	3

/* A thread that takes robust locks, then dies holding them */
struct owner {
	struct futex_spin_mutex *m[NR_LOCKS];
	int nr;
	bool running;	/* stay on a CPU until told to die */
	struct futex_spin_thread self;
	pthread_t thread;
	int locked;
	int die;
	int ret;
};

static void *owner_fn(void *arg)
{
	struct owner *o = arg;
	int i;

	o->ret = futex_spin_thread_init(&o->self, true);
	for (i = 0; i < o->nr && !o->ret; i++)
		o->ret = futex_spin_lock(o->m[i], &o->self);
	__atomic_store_n(&o->locked, 1, __ATOMIC_SEQ_CST);
	/*
	 * One that is not running sleeps until told to die, not in a loop
	 * of short sleeps: a waiter that finds it on a CPU spins, and one
	 * that spins past its due time asks for the lock, which puts it
	 * before the sleepers ahead of it that did not ask.
	 */
	while (!__atomic_load_n(&o->die, __ATOMIC_SEQ_CST)) {
		if (!o->running)
			fs_sleep_until_flag(&o->die);
	}
	/* Returning ends the thread: the kernel walks its robust list. */
	return NULL;
}

static int owner_start(struct owner *o)
{
	int err = pthread_create(&o->thread, NULL, owner_fn, o);

	if (err)
		return err;
	while (!__atomic_load_n(&o->locked, __ATOMIC_SEQ_CST))
		usleep(1000);
	return o->ret;
}

static int owner_kill(struct owner *o)
{
	fs_set_flag(&o->die);
	return fs_join(o->thread, NULL);
}

/* What the waiter that inherits a dead owner's lock must see */
static void check_inherited(struct __test_metadata *_metadata,
			    struct waiter *w)
{
	EXPECT_EQ(0, w->ret) TH_LOG("lock returned %s", strerror(-w->ret));
	EXPECT_EQ(w->tid | FUTEX_OWNER_DIED, w->seen & ~FUTEX_WAITERS)
		TH_LOG("word %#x", w->seen);
}

FIXTURE(spin_robust) {
	struct futex_spin_mutex *m[NR_LOCKS];
	int lock_op;
	long long owner_died;
};

FIXTURE_VARIANT(spin_robust) {
	bool shared;
};

FIXTURE_VARIANT_ADD(spin_robust, private) {
	.shared = false,
};

FIXTURE_VARIANT_ADD(spin_robust, shared) {
	.shared = true,
};

FIXTURE_SETUP(spin_robust)
{
	__u32 attr = FUTEX_SPIN_ROBUST;
	char *page;
	int i;

	fs_setup(_metadata);
	if (variant->shared)
		attr |= FUTEX_SPIN_SHARED;
	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    (variant->shared ? MAP_SHARED : MAP_PRIVATE) |
		    MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	for (i = 0; i < NR_LOCKS; i++) {
		self->m[i] = (struct futex_spin_mutex *)(page + 128 * i);
		futex_spin_mutex_init(self->m[i], attr);
	}
	self->lock_op = futex_spin_op(self->m[0], FUTEX_SPIN_LOCK);
	self->owner_died = fs_stat(_metadata, "owner_died");
}

FIXTURE_TEARDOWN(spin_robust)
{
	fs_teardown(_metadata);
}

static void thread_death(struct __test_metadata *_metadata,
			 struct futex_spin_mutex *m, long long owner_died,
			 bool running)
{
	struct owner o = { .m = { m }, .nr = 1, .running = running };
	struct waiter w = {
		.word = &m->word, .op = futex_spin_op(m, FUTEX_SPIN_LOCK),
		.timeout_ms = FS_MUST_MS, .unlock = true,
	};

	ASSERT_EQ(0, owner_start(&o));
	if (running) {
		/* It may spin rather than sleep: just let it get going */
		ASSERT_EQ(0, waiter_start(&w));
		usleep(20000);
	} else {
		ASSERT_TRUE(waiter_queue(&w));
	}
	ASSERT_EQ(0, owner_kill(&o));
	ASSERT_EQ(0, fs_join(w.thread, NULL)) TH_LOG("waiter never woken");
	check_inherited(_metadata, &w);
	EXPECT_EQ(0, w.unlock_ret);
	EXPECT_EQ(0, fs_load(&m->word));
	if (owner_died >= 0)
		EXPECT_LT(owner_died, fs_stat(_metadata, "owner_died"));
}

TEST_F(spin_robust, thread_death_sleeping_waiter)
{
	thread_death(_metadata, self->m[0], self->owner_died, false);
}

TEST_F(spin_robust, thread_death_spinning_waiter)
{
	thread_death(_metadata, self->m[0], self->owner_died, true);
}

/*
 * glibc's PI mutex code links its robust list entries with the PI bit (bit
 * 0 of the pointer). A FUTEX_SPIN_LOCK word listed that way has no
 * pi_state, so the walk must wake its sleepers itself. Regression: it
 * marked the word OWNER_DIED and woke nobody; the waiter slept on to its
 * deadline.
 */
struct pi_owner {
	struct futex_spin_mutex *m;
	struct futex_spin_thread self;
	int locked;
	int die;
	int ret;
};

static void *pi_owner_fn(void *arg)
{
	struct pi_owner *o = arg;
	struct futex_spin_thread *me = &o->self;

	o->ret = futex_spin_thread_init(me, true);
	if (!o->ret)
		o->ret = fs_lock(&o->m->word, futex_spin_op(o->m, FUTEX_SPIN_LOCK),
				 NULL);
	if (!o->ret) {
		o->m->node.next = me->robust.list.next;
		me->robust.list.next = (struct robust_list *)
				       ((unsigned long)&o->m->node | 1);
	}
	__atomic_store_n(&o->locked, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&o->die, __ATOMIC_SEQ_CST))
		usleep(1000);
	return NULL;
}

TEST_F(spin_robust, thread_death_pi_bit_entry)
{
	struct pi_owner o = { .m = self->m[0] };
	struct waiter w = {
		.word = &self->m[0]->word, .op = self->lock_op,
		.timeout_ms = FS_MUST_MS, .unlock = true,
	};
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, pi_owner_fn, &o));
	ASSERT_TRUE(fs_wait_flag(&o.locked));
	ASSERT_EQ(0, o.ret);
	ASSERT_TRUE(waiter_queue(&w));
	__atomic_store_n(&o.die, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, fs_join(t, NULL));
	ASSERT_EQ(0, fs_join(w.thread, NULL)) TH_LOG("waiter never woken");
	check_inherited(_metadata, &w);
	EXPECT_GT(FS_MUST_MS / 2, w.ms) TH_LOG("woken by its deadline, not the walk");
	EXPECT_EQ(0, w.unlock_ret);
	EXPECT_EQ(0, fs_load(&self->m[0]->word));
}

TEST_F(spin_robust, thread_death_no_waiter)
{
	struct owner o = { .m = { self->m[0] }, .nr = 1 };
	struct futex_spin_thread me;

	ASSERT_EQ(0, owner_start(&o));
	ASSERT_EQ(0, owner_kill(&o));
	EXPECT_EQ(FUTEX_OWNER_DIED, fs_load(&self->m[0]->word));

	/* Free to take, by the kernel since it is not 0; the mark stays */
	ASSERT_EQ(0, futex_spin_thread_init(&me, true));
	EXPECT_EQ(-EOWNERDEAD, futex_spin_lock(self->m[0], &me));
	EXPECT_EQ(me.tid | FUTEX_OWNER_DIED, fs_load(&self->m[0]->word));
	futex_spin_consistent(self->m[0]);
	EXPECT_EQ(0, futex_spin_unlock(self->m[0], &me));
	EXPECT_EQ(0, fs_load(&self->m[0]->word));
	EXPECT_EQ(0, futex_spin_lock(self->m[0], &me));
	EXPECT_EQ(0, futex_spin_unlock(self->m[0], &me));
}

/* One inherits the lock marked; those after it get it as repaired */
struct heir {
	struct futex_spin_mutex *m;
	pthread_t thread;
	int started;
	pid_t tid;
	int ret;
	long long passes_seen;	/* "unanswered_wakes" once it had the lock */
};

static void *heir_fn(void *arg)
{
	struct heir *h = arg;
	struct futex_spin_thread me;
	struct timespec to;

	futex_spin_thread_init(&me, false);
	h->tid = me.tid;
	to = fs_deadline(CLOCK_MONOTONIC, FS_MUST_MS);
	__atomic_store_n(&h->started, 1, __ATOMIC_SEQ_CST);
	h->ret = futex_spin_timedlock(h->m, &me, CLOCK_MONOTONIC, &to);
	if (h->ret && h->ret != -EOWNERDEAD)
		return NULL;
	h->passes_seen = futex_spin_stat("unanswered_wakes");
	if (h->ret == -EOWNERDEAD)
		futex_spin_consistent(h->m);
	usleep(10000);
	if (futex_spin_unlock(h->m, &me))
		h->ret = -1;
	return NULL;
}

#define NR_HEIRS	3
#define HEIR_TRIES	5

/*
 * Three heirs queue behind a sleeping owner, which then dies. Returns
 * whether a pass-over timer expired before the first heir had the lock.
 */
static bool heirs_round(struct __test_metadata *_metadata,
			struct futex_spin_mutex *m, struct heir *h)
{
	struct owner o = { .m = { m }, .nr = 1 };
	long long before;
	int i, marked = 0;

	ASSERT_EQ(0, owner_start(&o));
	for (i = 0; i < NR_HEIRS; i++) {
		h[i] = (struct heir){ .m = m };
		ASSERT_EQ(0, pthread_create(&h[i].thread, NULL, heir_fn, &h[i]));
		while (!__atomic_load_n(&h[i].started, __ATOMIC_SEQ_CST))
			usleep(100);
		ASSERT_TRUE(fs_wait_blocked(getpid(), h[i].tid));
	}
	before = fs_stat(_metadata, "unanswered_wakes");
	ASSERT_EQ(0, owner_kill(&o));
	for (i = 0; i < NR_HEIRS; i++) {
		ASSERT_EQ(0, fs_join(h[i].thread, NULL))
			TH_LOG("waiter %d never got the lock", i);
		EXPECT_TRUE(h[i].ret == 0 || h[i].ret == -EOWNERDEAD)
			TH_LOG("waiter %d: %d", i, h[i].ret);
		marked += h[i].ret == -EOWNERDEAD;
	}
	EXPECT_EQ(1, marked);
	EXPECT_EQ(0, fs_load(&m->word));
	/* Without the stats, no pass-over is allowed for */
	for (i = 0; i < NR_HEIRS && before >= 0; i++) {
		if (h[i].ret == -EOWNERDEAD)
			return h[i].passes_seen > before;
	}
	return false;
}

/*
 * The owner never ran while they queued, so none of them spun and none
 * asked for the lock: the death woke the first queued, and it inherits
 * the lock, unless it does not look at the word within S + T. Then the
 * pass-over timer wakes the second, which may take the word first, as
 * the rule says; the round runs again until one has no pass-over before
 * the lock was taken, and there the first queued must be the heir.
 */
TEST_F(spin_robust, thread_death_many_waiters)
{
	struct heir h[NR_HEIRS];
	int try;

	for (try = 0; try < HEIR_TRIES; try++) {
		if (!heirs_round(_metadata, self->m[0], h))
			break;
		TH_LOG("try %d: a pass-over came before the heir took the lock",
		       try);
	}
	if (try < HEIR_TRIES)
		EXPECT_EQ(-EOWNERDEAD, h[0].ret)
			TH_LOG("heir 0: %d, not -EOWNERDEAD", h[0].ret);
}

TEST_F(spin_robust, thread_death_several_locks)
{
	struct owner o = { .nr = NR_LOCKS };
	struct waiter w[NR_LOCKS];
	int i;

	for (i = 0; i < NR_LOCKS; i++)
		o.m[i] = self->m[i];
	ASSERT_EQ(0, owner_start(&o));
	for (i = 0; i < NR_LOCKS; i++) {
		w[i] = (struct waiter){
			.word = &self->m[i]->word, .op = self->lock_op,
			.timeout_ms = FS_MUST_MS, .unlock = true,
		};
		ASSERT_TRUE(waiter_queue(&w[i]));
	}
	ASSERT_EQ(0, owner_kill(&o));
	for (i = 0; i < NR_LOCKS; i++) {
		ASSERT_EQ(0, fs_join(w[i].thread, NULL))
			TH_LOG("waiter of lock %d never woken", i);
		check_inherited(_metadata, &w[i]);
		EXPECT_EQ(0, fs_load(&self->m[i]->word));
	}
}

/*
 * FUTEX_ROBUST_UNLOCK: once the unlock released the word, the kernel clears
 * the robust list's pending op that the second address points to (a
 * 32-bit one with FUTEX_ROBUST_LIST32), so that a task dying right after
 * the call leaves no pending op naming a lock it no longer owns. An unlock
 * that fails leaves the pending op alone; FUTEX_ROBUST_LIST32 without
 * FUTEX_ROBUST_UNLOCK is refused.
 */
TEST_F(spin_robust, robust_unlock)
{
	struct futex_spin_mutex *m = self->m[0];
	int unlock_op = futex_spin_op(m, FUTEX_SPIN_UNLOCK);
	/* The pending op is a pointer: 32 bits wide in a 32-bit process */
	int width = sizeof(void *) == 4 ? FUTEX_ROBUST_LIST32 : 0;
	int robust_op = unlock_op | FUTEX_ROBUST_UNLOCK | width;
	struct futex_spin_thread me;
	struct waiter w = {
		.word = &m->word, .op = self->lock_op,
		.timeout_ms = FS_MUST_MS, .unlock = true,
	};
	__u32 pending32;

	ASSERT_EQ(0, futex_spin_thread_init(&me, true));

	/* No waiter: the word goes back to 0 */
	fs_store(&m->word, me.tid);
	me.robust.list_op_pending = &m->node;
	EXPECT_EQ(0, futex_spin_syscall(&m->word, robust_op, 0, NULL,
					(void *)&me.robust.list_op_pending, 0))
		TH_LOG("FUTEX_SPIN_UNLOCK | FUTEX_ROBUST_UNLOCK: %s",
		       strerror(errno));
	EXPECT_EQ(0, fs_load(&m->word));
	EXPECT_EQ(NULL, me.robust.list_op_pending);

	/* A sleeper is handed the lock */
	fs_store(&m->word, me.tid);
	ASSERT_TRUE(waiter_queue(&w));
	me.robust.list_op_pending = &m->node;
	EXPECT_EQ(0, futex_spin_syscall(&m->word, robust_op, 0, NULL,
					(void *)&me.robust.list_op_pending, 0))
		TH_LOG("FUTEX_SPIN_UNLOCK | FUTEX_ROBUST_UNLOCK: %s",
		       strerror(errno));
	EXPECT_EQ(NULL, me.robust.list_op_pending);
	ASSERT_EQ(0, fs_join(w.thread, NULL)) TH_LOG("waiter never woken");
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(w.tid, w.seen & FUTEX_TID_MASK);
	EXPECT_EQ(0, w.unlock_ret);
	EXPECT_EQ(0, fs_load(&m->word));

	/* The 32-bit pending op of a compat task */
	fs_store(&m->word, me.tid);
	pending32 = 0x5a5a5a5a;
	EXPECT_EQ(0, futex_spin_syscall(&m->word, unlock_op | FUTEX_ROBUST_UNLOCK |
					FUTEX_ROBUST_LIST32, 0, NULL,
					&pending32, 0))
		TH_LOG("FUTEX_ROBUST_LIST32: %s", strerror(errno));
	EXPECT_EQ(0, fs_load(&m->word));
	EXPECT_EQ(0, pending32);

	/* Not the owner: EPERM, and the pending op stays */
	fs_store(&m->word, FS_NO_SUCH_TID);
	me.robust.list_op_pending = &m->node;
	EXPECT_EQ(-1, futex_spin_syscall(&m->word, robust_op, 0, NULL,
					 (void *)&me.robust.list_op_pending, 0));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(&m->node, me.robust.list_op_pending);
	EXPECT_EQ(FS_NO_SUCH_TID, fs_load(&m->word));

	/* FUTEX_ROBUST_LIST32 alone: EINVAL, nothing released */
	fs_store(&m->word, me.tid);
	EXPECT_EQ(-EINVAL, fs_unlock(&m->word, unlock_op | FUTEX_ROBUST_LIST32));
	EXPECT_EQ(me.tid, fs_load(&m->word));
	EXPECT_EQ(&m->node, me.robust.list_op_pending);
	me.robust.list_op_pending = NULL;
	EXPECT_EQ(0, fs_unlock(&m->word, unlock_op));
	EXPECT_EQ(0, fs_load(&m->word));
}

/* Across processes: the word is in MAP_SHARED memory, shared operations */

/* A child process owning the lock, and the pipes to drive it */
struct child {
	struct futex_spin_mutex *m;
	int to_child[2];
	int from_child[2];
	pid_t pid;
	bool killed;	/* dies by SIGKILL rather than exit */
};

FIXTURE(spin_robust_proc) {
	struct child c;
};

FIXTURE_VARIANT(spin_robust_proc) {
	bool killed;
};

FIXTURE_VARIANT_ADD(spin_robust_proc, exit) {
	.killed = false,
};

FIXTURE_VARIANT_ADD(spin_robust_proc, sigkill) {
	.killed = true,
};

FIXTURE_SETUP(spin_robust_proc)
{
	struct child *c = &self->c;

	fs_setup(_metadata);
	c->m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c->m);
	futex_spin_mutex_init(c->m, FUTEX_SPIN_SHARED | FUTEX_SPIN_ROBUST);
	ASSERT_EQ(0, pipe(c->to_child));
	ASSERT_EQ(0, pipe(c->from_child));
	c->pid = -1;
	c->killed = variant->killed;
}

FIXTURE_TEARDOWN(spin_robust_proc)
{
	if (self->c.pid > 0) {
		kill(self->c.pid, SIGKILL);
		waitpid(self->c.pid, NULL, 0);
	}
	fs_teardown(_metadata);
}

/*
 * A child takes the lock (@pending: dies with the lock taken but only in
 * list_op_pending, as if killed inside futex_spin_lock()), reports, and
 * dies when told.
 */
static void child_owner(struct __test_metadata *_metadata, struct child *c,
			bool pending)
{
	char msg = 0;

	c->pid = fork();
	ASSERT_LE(0, c->pid);
	if (!c->pid) {
		struct futex_spin_thread me;
		int ret;

		if (futex_spin_thread_init(&me, true))
			_exit(1);
		if (pending) {
			me.robust.list_op_pending = &c->m->node;
			ret = fs_lock(&c->m->word, FUTEX_SPIN_LOCK, NULL);
		} else {
			ret = futex_spin_lock(c->m, &me);
		}
		msg = ret ? 'E' : 'L';
		if (write(c->from_child[1], &msg, 1) != 1 ||
		    read(c->to_child[0], &msg, 1) != 1)
			_exit(2);
		if (c->killed)
			pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(c->from_child[0], &msg, 1));
	ASSERT_EQ('L', msg);
}

static void child_die(struct __test_metadata *_metadata, struct child *c)
{
	char msg = 'D';
	int status, ret;

	if (c->killed)
		ret = kill(c->pid, SIGKILL);
	else
		ret = write(c->to_child[1], &msg, 1) == 1 ? 0 : -1;
	ASSERT_EQ(0, ret);
	status = fs_reap(c->pid);
	ASSERT_NE(-1, status);
	c->pid = -1;
	EXPECT_TRUE(c->killed ? WIFSIGNALED(status) :
		    WIFEXITED(status) && !WEXITSTATUS(status));
}

TEST_F(spin_robust_proc, death_with_waiter)
{
	struct child *c = &self->c;
	struct waiter w = {
		.word = &c->m->word, .op = FUTEX_SPIN_LOCK,
		.timeout_ms = FS_MUST_MS, .unlock = true,
	};

	child_owner(_metadata, c, false);
	ASSERT_TRUE(waiter_queue(&w));
	child_die(_metadata, c);
	ASSERT_EQ(0, fs_join(w.thread, NULL)) TH_LOG("waiter never woken");
	check_inherited(_metadata, &w);
	EXPECT_EQ(0, w.unlock_ret);
	EXPECT_EQ(0, fs_load(&c->m->word));
}

TEST_F(spin_robust_proc, death_no_waiter)
{
	struct child *c = &self->c;
	struct futex_spin_thread me;

	child_owner(_metadata, c, false);
	child_die(_metadata, c);
	EXPECT_EQ(FUTEX_OWNER_DIED, fs_load(&c->m->word));
	ASSERT_EQ(0, futex_spin_thread_init(&me, true));
	EXPECT_EQ(-EOWNERDEAD, futex_spin_lock(c->m, &me));
	EXPECT_EQ(me.tid | FUTEX_OWNER_DIED, fs_load(&c->m->word));
	EXPECT_EQ(0, futex_spin_unlock(c->m, &me));
	EXPECT_EQ(0, fs_load(&c->m->word));
}

TEST_F(spin_robust_proc, death_while_pending)
{
	struct child *c = &self->c;
	struct waiter w = {
		.word = &c->m->word, .op = FUTEX_SPIN_LOCK,
		.timeout_ms = FS_MUST_MS, .unlock = true,
	};

	child_owner(_metadata, c, true);
	ASSERT_TRUE(waiter_queue(&w));
	child_die(_metadata, c);
	ASSERT_EQ(0, fs_join(w.thread, NULL)) TH_LOG("waiter never woken");
	check_inherited(_metadata, &w);
	EXPECT_EQ(0, fs_load(&c->m->word));
}

TEST_HARNESS_MAIN
