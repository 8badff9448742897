// SPDX-License-Identifier: GPL-2.0
/*
 * FUTEX_SPIN_LOCK wake order and starvation: sleepers are served by
 * real-time priority, then in arrival order (normal tasks all equal,
 * whatever their nice level); an unlock hands the lock to a waiter that
 * asked for it past its due time, which for a real-time waiter is at
 * once, so a thread re-locking in a tight loop cannot starve another
 * waiter, whether that one sleeps or spins, nor can a woken waiter that
 * does not run hold back the others; handoffs come
 * at most about once per T (1 ms), so that the lock does not convoy; and
 * an unlock costs the same with thousands of woken sleepers that cannot
 * run as with a few.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <fcntl.h>

#include "kselftest_harness.h"
#include "futex_spin_test.h"

#define NR_ORDERED	6

/* A sleeper that notes when its turn came */
struct orderly {
	__u32 *word;
	int policy;
	int prio;
	int nice;
	int id;
	int *next;
	int *order;
	pthread_t thread;
	int started;
	pid_t tid;
	int ret;
	long unlock_ret;
};

static void *orderly_fn(void *arg)
{
	struct orderly *o = arg;
	struct timespec to = fs_deadline(CLOCK_MONOTONIC, FS_MUST_MS);

	o->tid = fs_gettid();
	if (o->nice && setpriority(PRIO_PROCESS, o->tid, o->nice))
		o->ret = -errno;
	__atomic_store_n(&o->started, 1, __ATOMIC_SEQ_CST);
	if (o->ret)
		return NULL;
	o->ret = fs_lock(o->word, FUTEX_SPIN_LOCK_PRIVATE, &to);
	if (o->ret)
		return NULL;
	o->order[__atomic_fetch_add(o->next, 1, __ATOMIC_SEQ_CST)] = o->id;
	o->unlock_ret = fs_unlock(o->word, FUTEX_SPIN_UNLOCK_PRIVATE);
	return NULL;
}

static int orderly_start(struct orderly *o)
{
	int err = fs_thread_create(&o->thread, o->policy, o->prio, orderly_fn, o);

	if (err)
		return err;
	while (!__atomic_load_n(&o->started, __ATOMIC_SEQ_CST))
		usleep(100);
	return 0;
}

/* Sleepers queued behind one lock, and the order they got it in */
struct queue {
	__u32 word;
	int next;
	int order[NR_ORDERED];
	struct orderly o[NR_ORDERED];
};

FIXTURE(spin_sched) {
	struct queue q;
	__u32 word;
	pid_t tid;
};

FIXTURE_SETUP(spin_sched)
{
	fs_setup(_metadata);
	self->tid = fs_gettid();
}

FIXTURE_TEARDOWN(spin_sched)
{
	fs_teardown(_metadata);
}

/*
 * Until the kernel has queued @target waiters in all: a thread seen blocked
 * twice may still be on its way to the lock (a page fault, a lock of the
 * C library's), and one that gets there after the unlock takes the lock
 * out of turn.
 */
static bool contended_reach(struct __test_metadata *_metadata, long long target)
{
	long long start = fs_now_ns(CLOCK_MONOTONIC);

	while (fs_stat(_metadata, "contended") < target) {
		if (fs_ms_since(start) >= FS_MUST_MS)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * Queue the sleepers behind a lock a holder thread keeps, one at a time
 * in array order, then let go and record the order they got it in.
 */
static void run_order_once(struct __test_metadata *_metadata, struct queue *q,
			   int nr)
{
	long long contended = fs_stat(_metadata, "contended");
	struct holder h = { .word = &q->word, .op = FUTEX_SPIN_LOCK_PRIVATE };
	pthread_t holder;
	int i, err;

	q->word = 0;
	q->next = 0;
	ASSERT_EQ(0, pthread_create(&holder, NULL, holder_fn, &h));
	ASSERT_TRUE(fs_wait_flag(&h.locked));
	ASSERT_EQ(0, h.ret);
	/*
	 * Not while it is still on a CPU on its way to sleep: a sleeper that
	 * spins on it past its due time asks for the lock, and is handed it
	 * before those ahead of it in line that did not ask.
	 */
	ASSERT_TRUE(fs_wait_blocked(getpid(), h.tid));
	for (i = 0; i < nr; i++) {
		q->o[i].word = &q->word;
		q->o[i].id = i;
		q->o[i].next = &q->next;
		q->o[i].order = q->order;
		q->order[i] = -1;
		err = orderly_start(&q->o[i]);
		if (err == EPERM) {
			/* Let those already queued go before skipping */
			holder_release(&h, holder);
			while (i--)
				fs_join(q->o[i].thread, NULL);
			SKIP(return, "no permission for SCHED_FIFO");
		}
		ASSERT_EQ(0, err);
		ASSERT_EQ(0, q->o[i].ret) TH_LOG("setup of waiter %d: %s", i,
						 strerror(-q->o[i].ret));
		ASSERT_TRUE(contended < 0 ||
			    contended_reach(_metadata, contended + i + 1));
		ASSERT_TRUE(fs_wait_blocked(getpid(), q->o[i].tid));
	}
	EXPECT_EQ(0, holder_release(&h, holder));
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, fs_join(q->o[i].thread, NULL))
			TH_LOG("waiter %d never got the lock", i);
		EXPECT_EQ(0, q->o[i].ret);
		EXPECT_LE(0, q->o[i].unlock_ret);
	}
	EXPECT_EQ(0, q->word);
}

#define ORDER_TRIES	5

/*
 * Turn @turn went to a waiter @ahead places behind the first one left in
 * @expect's order: each pass-over lets the next waiter in line go before
 * the one it passed over, so at most @passes places.
 */
static void order_check(struct __test_metadata *_metadata, int *left,
			int nr_left, int turn, int taker, long long passes)
{
	int ahead;

	for (ahead = 0; ahead < nr_left && left[ahead] != taker; ahead++)
		;
	ASSERT_GT(nr_left, ahead) TH_LOG("turn %d went to waiter %d twice",
					 turn, taker);
	EXPECT_GE(passes, ahead)
		TH_LOG("turn %d went to waiter %d, %d places before its turn, with %lld pass-overs",
		       turn, taker, ahead, passes);
	memmove(&left[ahead], &left[ahead + 1],
		(nr_left - ahead - 1) * sizeof(*left));
}

/*
 * The wakeups come in line order, one per unlock, and so does the lock,
 * unless a woken sleeper does not look at the word within S + T: then the
 * pass-over timer wakes the next one, which may take the free word first,
 * as the rule says. In a guest whose wakeups take longer than S + T that
 * happens often. The round runs again until one has no pass-over, where
 * the order must be exact; after ORDER_TRIES, each turn may go at most
 * as many places early as there were pass-overs in that round.
 */
static void run_order(struct __test_metadata *_metadata, struct queue *q,
		      const int *expect, int nr)
{
	long long before, passes = 0;
	int left[NR_ORDERED];
	int i, try;

	for (try = 0; try < ORDER_TRIES; try++) {
		before = fs_stat(_metadata, "unanswered_wakes");
		run_order_once(_metadata, q, nr);
		if (_metadata->exit_code == KSFT_SKIP)
			return;
		/* Without the stats, no pass-over is allowed for */
		if (before >= 0)
			passes = fs_stat(_metadata, "unanswered_wakes") - before;
		if (!passes)
			break;
		TH_LOG("try %d: %lld pass-over timers expired", try, passes);
	}
	memcpy(left, expect, nr * sizeof(*left));
	for (i = 0; i < nr; i++)
		order_check(_metadata, left, nr - i, i, q->order[i], passes);
}

TEST_F(spin_sched, fifo_among_equals)
{
	static const int expect[] = { 0, 1, 2, 3 };

	/* Nice levels do not order normal tasks: arrival alone does */
	self->q.o[0].nice = 10;
	self->q.o[2].nice = 5;
	run_order(_metadata, &self->q, expect, 4);
}

TEST_F(spin_sched, rt_priority_order)
{
	static const int expect[] = { 5, 2, 1, 3, 0, 4 };
	static const int prio[] = { 0, 10, 20, 10, 0, 30 };
	int i;

	for (i = 0; i < NR_ORDERED; i++) {
		self->q.o[i].policy = prio[i] ? SCHED_FIFO : SCHED_OTHER;
		self->q.o[i].prio = prio[i];
	}
	run_order(_metadata, &self->q, expect, NR_ORDERED);
}

/*
 * A real-time waiter is due at once. Five normal waiters queue behind the
 * test's hold while the test thread is off the CPU, so they sleep at once
 * and do not ask. A SCHED_FIFO waiter then spins, alone on CPU 1, on the
 * test thread, which keeps the word on CPU 0 for RT_HOLD_MS: it queues
 * after T and asks at once, ends its segment T later and sleeps as an
 * asker, so that the test's unlock hands it the lock. Had its due time
 * counted the five normal waiters (6T), it would have slept without
 * asking and been woken instead, and the normal askers that a lock in use
 * has by then would have been handed the lock before it, turn by turn.
 * A try whose spin ended early (the test thread preempted, a wakeup) did
 * not set the scene and is run again.
 */
#define RT_AHEAD	5
#define RT_HOLD_MS	30
#define RT_TRIES	5

/* One try: true if it set the scene; *@handed, handoffs until it returned */
static bool rt_try(struct __test_metadata *_metadata, __u32 *word,
		   __u32 me, long long *handed)
{
	struct waiter n[RT_AHEAD], r = {
		.word = word, .op = FUTEX_SPIN_LOCK_PRIVATE,
		.timeout_ms = FS_MUST_MS, .unlock = true,
	};
	long long handoffs, cut;
	int i, go = 0;

	fs_store(word, me);
	for (i = 0; i < RT_AHEAD; i++) {
		n[i] = r;
		EXPECT_TRUE(waiter_queue(&n[i])) TH_LOG("waiter %d did not sleep", i);
	}
	r.go = &go;
	EXPECT_EQ(0, fs_thread_create_on(&r.thread, 1, SCHED_FIFO, 10, waiter_fn, &r));
	EXPECT_TRUE(fs_wait_flag(&r.started));
	handoffs = fs_stat(_metadata, "handoffs");
	cut = fs_stat(_metadata, "spin_aborted_owner") +
	      fs_stat(_metadata, "spin_aborted_resched");

	__atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
	fs_busy_until(fs_now_ns(CLOCK_MONOTONIC) + RT_HOLD_MS * 1000000LL);
	/*
	 * Only the real-time waiter spins during the hold. After the unlock
	 * the normal waiters do too: the one woken to watch the handoff, and
	 * each in its turn, so their spins do not count.
	 */
	cut = fs_stat(_metadata, "spin_aborted_owner") +
	      fs_stat(_metadata, "spin_aborted_resched") - cut;
	EXPECT_LE(0, fs_unlock(word, FUTEX_SPIN_UNLOCK_PRIVATE));
	EXPECT_EQ(0, fs_join(r.thread, NULL));
	*handed = fs_stat(_metadata, "handoffs") - handoffs;
	for (i = 0; i < RT_AHEAD; i++) {
		EXPECT_EQ(0, fs_join(n[i].thread, NULL));
		EXPECT_EQ(0, n[i].ret);
		EXPECT_GT(n[i].taken_ns, r.taken_ns)
			TH_LOG("normal waiter %d got the lock first", i);
	}
	EXPECT_EQ(0, r.ret);
	TH_LOG("real-time waiter: %lld handoffs, %lld spins cut short", *handed, cut);
	return !cut;
}

TEST_F(spin_sched, rt_waiter_asks_at_once)
{
	long long handed = 0;
	int try;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs a second CPU");
	if (fs_preempt_rt())
		SKIP(return, "PREEMPT_RT: waiters do not spin");
	if (fs_stat(_metadata, "handoffs") < 0)
		SKIP(return, "no futex_spin stats in debugfs");
	ASSERT_EQ(0, fs_pin(0));
	for (try = 0; try < RT_TRIES; try++)
		if (rt_try(_metadata, &self->word, self->tid, &handed))
			break;
	ASSERT_GT(RT_TRIES, try) TH_LOG("no try set the scene");
	/*
	 * The unlock's handoff to it; and the waiter's own unlock may hand
	 * the lock on to the normal waiter woken to watch that handoff,
	 * which asked on finding the word taken. Woken instead of handed the
	 * lock, it would have made no handoff: nobody watches a wakeup.
	 */
	EXPECT_LE(1, handed) TH_LOG("the real-time waiter was not handed the lock");
	EXPECT_EQ(0, self->word);
}

/*
 * The handoff itself: a waiter past its due time that finds the lock taken
 * asks for it, and the next unlock gives it the word, so that the unlocker
 * cannot take it back. The waiter first sleeps behind the test's hold; the
 * unlock wakes it and the test takes the word back in user space (if the
 * waiter was faster, again); holding it asleep, the test lets the waiter
 * look at the word, 20 ms past its due time of 1 ms, and ask.
 */
TEST_F(spin_sched, handoff_to_a_waiter_past_its_due_time)
{
	struct waiter w = {
		.word = &self->word, .op = FUTEX_SPIN_LOCK_PRIVATE,
		.timeout_ms = FS_MUST_MS, .unlock = true, .hold_ms = 10,
	};
	long long handoffs = fs_stat(_metadata, "handoffs");
	__u32 zero;
	int tries;

	ASSERT_EQ(0, fs_lock(&self->word, FUTEX_SPIN_LOCK_PRIVATE, NULL));
	ASSERT_TRUE(waiter_queue(&w));
	for (tries = 0; tries < 20; tries++) {
		usleep(20000);
		EXPECT_EQ(0, fs_unlock(&self->word, FUTEX_SPIN_UNLOCK_PRIVATE));
		zero = 0;
		if (__atomic_compare_exchange_n(&self->word, &zero, self->tid,
						false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			break;
		/* The waiter won the word: wait for it to let go and queue again */
		ASSERT_EQ(0, fs_join(w.thread, NULL));
		ASSERT_EQ(0, w.ret);
		w = (struct waiter){ .word = &self->word,
				     .op = FUTEX_SPIN_LOCK_PRIVATE,
				     .timeout_ms = FS_MUST_MS, .unlock = true,
				     .hold_ms = 10 };
		ASSERT_EQ(0, fs_lock(&self->word, FUTEX_SPIN_LOCK_PRIVATE, NULL));
		ASSERT_TRUE(waiter_queue(&w));
	}
	ASSERT_GT(20, tries);
	/* Woken, it looks at the word we hold asleep, asks, and sleeps */
	ASSERT_TRUE(fs_wait_blocked(getpid(), w.tid));
	usleep(20000);
	EXPECT_EQ(0, fs_unlock(&self->word, FUTEX_SPIN_UNLOCK_PRIVATE));
	EXPECT_EQ(w.tid, fs_load(&self->word) & FUTEX_TID_MASK)
		TH_LOG("word %#x after the unlock", fs_load(&self->word));
	/* The unlocker's fast path cannot get it back now */
	EXPECT_FALSE(__atomic_compare_exchange_n(&self->word, &(__u32){0},
						 self->tid, false,
						 __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST));
	ASSERT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(w.tid, w.seen & FUTEX_TID_MASK);
	EXPECT_EQ(0, w.unlock_ret);
	EXPECT_EQ(0, fs_load(&self->word));
	if (handoffs >= 0)
		EXPECT_LT(handoffs, fs_stat(_metadata, "handoffs"));
}

/* A thread that re-locks in a tight loop, holding the lock a while */
struct hog {
	struct futex_spin_mutex m;
	int cpu;		/* pinned there, or -1 */
	long long hold_us;
	int stop;
	unsigned long turns;
	int ret;
};

/*
 * Lock @m, hold it for @hold_ns on the CPU, unlock and count a turn, until
 * *@stop; pinned to @cpu unless it is -1. Returns the first error.
 */
static int relock_until_stopped(struct futex_spin_mutex *m, int cpu,
				long long hold_ns, int *stop,
				unsigned long *turns)
{
	struct futex_spin_thread me;
	int ret;

	futex_spin_thread_init(&me, false);
	ret = fs_pin(cpu);
	while (!ret && !__atomic_load_n(stop, __ATOMIC_SEQ_CST)) {
		ret = futex_spin_lock(m, &me);
		if (ret)
			break;
		fs_busy_until(fs_now_ns(CLOCK_MONOTONIC) + hold_ns);
		ret = futex_spin_unlock(m, &me);
		__atomic_fetch_add(turns, 1, __ATOMIC_SEQ_CST);
	}
	return ret;
}

static void *hog_fn(void *arg)
{
	struct hog *h = arg;

	h->ret = relock_until_stopped(&h->m, h->cpu, h->hold_us * 1000,
				      &h->stop, &h->turns);
	return NULL;
}

FIXTURE(spin_starve) {
	struct hog hog;
	int cpu;	/* of the waiter */
	pthread_t thread;
	bool running;
};

FIXTURE_VARIANT(spin_starve) {
	/*
	 * On the hog's CPU the waiter cannot spin, the hog being off CPU
	 * whenever the waiter runs: it sleeps. On another CPU it spins
	 * while the hog runs, and is woken to spin again.
	 */
	bool same_cpu;
};

FIXTURE_VARIANT_ADD(spin_starve, same_cpu) {
	.same_cpu = true,
};

FIXTURE_VARIANT_ADD(spin_starve, other_cpu) {
	.same_cpu = false,
};

FIXTURE_SETUP(spin_starve)
{
	int cpus[2] = { -1, -1 };
	cpu_set_t set;
	int cpu, nr;

	fs_setup(_metadata);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (cpu = 0, nr = 0; nr < 2 && cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[nr++] = cpu;
	if (!variant->same_cpu && nr < 2)
		SKIP(return, "one CPU only");
	self->cpu = variant->same_cpu ? cpus[0] : cpus[1];
	futex_spin_mutex_init(&self->hog.m, 0);
	self->hog.cpu = cpus[0];
	self->hog.hold_us = 20000;
	self->hog.stop = 0;
	ASSERT_EQ(0, pthread_create(&self->thread, NULL, hog_fn, &self->hog));
	self->running = true;
}

FIXTURE_TEARDOWN(spin_starve)
{
	if (self->running) {
		__atomic_store_n(&self->hog.stop, 1, __ATOMIC_SEQ_CST);
		EXPECT_EQ(0, fs_join(self->thread, NULL));
	}
	fs_teardown(_metadata);
}

/*
 * Each hold of the hog lasts 20 ms, far past the waiter's due time of
 * 1 ms: a waiter that has looked at the word once during a hold has asked
 * for the lock, and is handed it at the hold's end. Counting the hog's
 * turns rather than milliseconds keeps the verdict free of the guest's
 * timing noise; twenty turns leave room for a virtual CPU the host keeps
 * from running.
 */
#define MAX_TURNS_LOST	20

TEST_F(spin_starve, waiter_gets_the_lock)
{
	long long handoffs = fs_stat(_metadata, "handoffs");
	unsigned long turns, lost, worst_lost = 0;
	struct futex_spin_thread me;
	long long start, ms, worst = 0;
	struct timespec to;
	int i, ret;

	ASSERT_EQ(0, futex_spin_thread_init(&me, false));
	ASSERT_EQ(0, fs_pin(self->cpu));
	while (!__atomic_load_n(&self->hog.turns, __ATOMIC_SEQ_CST))
		usleep(1000);
	for (i = 0; i < 40; i++) {
		turns = __atomic_load_n(&self->hog.turns, __ATOMIC_SEQ_CST);
		start = fs_now_ns(CLOCK_MONOTONIC);
		to = fs_deadline(CLOCK_MONOTONIC, FS_MUST_MS);
		ret = futex_spin_timedlock(&self->hog.m, &me, CLOCK_MONOTONIC,
					   &to);
		ms = fs_ms_since(start);
		lost = __atomic_load_n(&self->hog.turns, __ATOMIC_SEQ_CST) -
		       turns;
		ASSERT_EQ(0, ret) TH_LOG("round %d: %s after %lld ms", i,
					 strerror(-ret), ms);
		ASSERT_EQ(0, futex_spin_unlock(&self->hog.m, &me));
		ASSERT_GE(MAX_TURNS_LOST, lost)
			TH_LOG("round %d: waited %lld ms while the hog took the lock %lu times",
			       i, ms, lost);
		if (ms > worst)
			worst = ms;
		if (lost > worst_lost)
			worst_lost = lost;
		usleep(2000);
	}
	__atomic_store_n(&self->hog.stop, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, fs_join(self->thread, NULL));
	self->running = false;
	EXPECT_EQ(0, self->hog.ret);
	TH_LOG("worst wait %lld ms, %lu turns of the hog; %lu turns in all",
	       worst, worst_lost, self->hog.turns);
	/*
	 * A waiter that cannot spin sleeps: once it has looked at the word
	 * during a turn of the hog, its own turn comes by handoff.
	 */
	if (handoffs >= 0 && variant->same_cpu && worst_lost)
		EXPECT_LT(handoffs, fs_stat(_metadata, "handoffs"));
}

/*
 * A sleeping task handed the lock leaves it idle until the task gets a
 * CPU, and when waiters outnumber CPUs most waiters past their due time
 * are asleep: handing the lock to each in turn would convoy it. A waiter
 * is due only after T (1 ms) for each waiter queued before it, so the
 * dues of a queue come about one per T, and so do the handoffs. All
 * threads of this test share one CPU, so none can spin on a running
 * owner and every handoff is to a sleeping task; each still gets its
 * turns.
 */
#define NR_CONVOY	16
#define CONVOY_HOLD_NS	5000
#define CONVOY_MS	300

struct convoy {
	struct futex_spin_mutex m;
	int cpu;
	long long hold_ns;
	int stop;
	unsigned long turns[NR_CONVOY];
	pthread_t thread[NR_CONVOY];
	int ret[NR_CONVOY];
};

struct convoy_arg {
	struct convoy *c;
	int id;
};

static void *convoy_fn(void *arg)
{
	struct convoy_arg *a = arg;
	struct convoy *c = a->c;

	c->ret[a->id] = relock_until_stopped(&c->m, c->cpu, c->hold_ns,
					     &c->stop, &c->turns[a->id]);
	return NULL;
}

/* NR_CONVOY threads on one CPU take turns holding c->hold_ns for CONVOY_MS */
static void convoy_run(struct __test_metadata *_metadata, struct convoy *c)
{
	struct convoy_arg args[NR_CONVOY];
	cpu_set_t set;
	int i;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (c->cpu = 0; !CPU_ISSET(c->cpu, &set); c->cpu++)
		;
	futex_spin_mutex_init(&c->m, 0);
	for (i = 0; i < NR_CONVOY; i++) {
		args[i] = (struct convoy_arg){ .c = c, .id = i };
		ASSERT_EQ(0, pthread_create(&c->thread[i], NULL, convoy_fn, &args[i]));
	}
	usleep(CONVOY_MS * 1000);
	__atomic_store_n(&c->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < NR_CONVOY; i++)
		ASSERT_EQ(0, fs_join(c->thread[i], NULL));
}

TEST(sleepers_handed_the_lock_about_once_per_turn)
{
	long long asleep = fs_stat(_metadata, "handoffs_asleep");
	long long handoffs = fs_stat(_metadata, "handoffs");
	struct convoy c = { .hold_ns = CONVOY_HOLD_NS };
	unsigned long least = 0, most = 0;
	long long start, ms;
	int i;

	fs_setup(_metadata);
	if (handoffs < 0)
		SKIP(return, "no futex_spin stats in debugfs");
	start = fs_now_ns(CLOCK_MONOTONIC);
	convoy_run(_metadata, &c);
	ms = fs_ms_since(start);
	handoffs = fs_stat(_metadata, "handoffs") - handoffs;
	asleep = fs_stat(_metadata, "handoffs_asleep") - asleep;

	for (i = 0; i < NR_CONVOY; i++) {
		least = i && least < c.turns[i] ? least : c.turns[i];
		most = most > c.turns[i] ? most : c.turns[i];
	}
	TH_LOG("%lld handoffs (%lld to a sleeping task) in %lld ms; turns of a thread %lu to %lu",
	       handoffs, asleep, ms, least, most);
	for (i = 0; i < NR_CONVOY; i++) {
		EXPECT_EQ(0, c.ret[i]);
		EXPECT_LT(0, c.turns[i]) TH_LOG("thread %d never got the lock", i);
	}
	/* One per T, one for each thread's first due, and one per end */
	EXPECT_GE(ms + NR_CONVOY + 2, handoffs);
	fs_teardown(_metadata);
}

/*
 * A woken waiter is passed over only once its wakeup has gone unanswered
 * for T (the pass-over timer), and a waiter passes over a handoff only
 * once it is T old; each pass-over wakes or hands anew, which starts that
 * clock again. While unlocks enter the kernel they serve the queue, and
 * each pass-over costs a context switch. Here every holder keeps the lock
 * 1 ms on the one CPU of all threads, so every waiter sleeps, the unlocks
 * enter the kernel, and a woken waiter often waits longer than T for the
 * CPU: it may be passed over, about once per T at most.
 */
TEST(pass_overs_at_most_once_per_turn)
{
	long long unanswered = fs_stat(_metadata, "unanswered_wakes");
	struct convoy c = { .hold_ns = 1000000 };
	unsigned long turns = 0;
	long long start, ms;
	int i;

	fs_setup(_metadata);
	if (unanswered < 0)
		SKIP(return, "no futex_spin stats in debugfs");
	start = fs_now_ns(CLOCK_MONOTONIC);
	convoy_run(_metadata, &c);
	ms = fs_ms_since(start);
	unanswered = fs_stat(_metadata, "unanswered_wakes") - unanswered;
	for (i = 0; i < NR_CONVOY; i++) {
		EXPECT_EQ(0, c.ret[i]);
		turns += c.turns[i];
	}
	TH_LOG("%lld pass-overs in %lld ms, %lu turns", unanswered,
	       ms, turns);
	EXPECT_GE(ms + 2, unanswered);
	fs_teardown(_metadata);
}

#define NR_WOKEN	2048

struct woken_pile {
	__u32 word;
	int stop;
	pthread_t hog;
	pthread_t thread[NR_WOKEN];
	long long unlock_ns[NR_WOKEN];
};

/*
 * Busy until *@stop: run as SCHED_FIFO 99, unthrottled, it keeps its CPU
 * from running anything else.
 */
static void *fifo_hog_fn(void *stop)
{
	while (!__atomic_load_n((int *)stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

static void *pile_waiter_fn(void *arg)
{
	struct woken_pile *p = arg;
	struct timespec to = fs_deadline(CLOCK_MONOTONIC, 10 * FS_MUST_MS);

	if (!fs_lock(&p->word, FUTEX_SPIN_LOCK_PRIVATE, &to))
		fs_unlock(&p->word, FUTEX_SPIN_UNLOCK_PRIVATE);
	return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static long long median_ns(long long *v, int n)
{
	long long tmp[128];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_ll);
	return tmp[n / 2];
}

/*
 * An unlock wakes the first sleeper not woken yet. Woken sleepers that
 * cannot run pile up in front of it (here SCHED_FIFO 1 tasks on a CPU that
 * a SCHED_FIFO 99 task keeps; in real life a throttled cgroup), and
 * finding it must not walk past all of them, with the queue head lock
 * held, on every unlock. The last unlocks, past 2000 woken sleepers, must
 * cost about what the first ones did. Woken sleepers that cannot run
 * never ask for the lock, so none is handed it.
 *
 * Its 2048 threads take time to create and to join: 20 s each on the
 * debug kernel in a 2-vCPU TCG guest beside a kernel build, past the
 * harness's default 30 s for the whole test.
 */
FIXTURE(woken_pile) {};
FIXTURE_SETUP(woken_pile) {}
FIXTURE_TEARDOWN(woken_pile) {}

TEST_F_TIMEOUT(woken_pile, unlock_cost_with_thousands_woken, 120)
{
	struct woken_pile *p;
	long long contended, start, first, last;
	char old[32] = "950000";
	__u32 me = fs_gettid();
	int i, handoffs = 0;
	cpu_set_t set;

	fs_setup(_metadata);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs a second CPU");
	contended = fs_stat(_metadata, "contended");
	if (contended < 0)
		SKIP(return, "no futex_spin stats in debugfs");
	ASSERT_TRUE(fs_knob_read(FS_RT_RUNTIME, old, sizeof(old)));
	p = calloc(1, sizeof(*p));
	ASSERT_NE(NULL, p);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));

	/* Nobody to spin on: each sleeps at once. */
	p->word = FS_NO_SUCH_TID;
	for (i = 0; i < NR_WOKEN; i++)
		ASSERT_EQ(0, fs_thread_create_on(&p->thread[i], 1, SCHED_FIFO, 1,
						 pile_waiter_fn, p));
	start = fs_now_ns(CLOCK_MONOTONIC);
	while (fs_stat(_metadata, "contended") - contended < NR_WOKEN &&
	       fs_ms_since(start) < 5 * FS_MUST_MS)
		usleep(10000);
	ASSERT_EQ(NR_WOKEN, fs_stat(_metadata, "contended") - contended);

	ASSERT_EQ(0, fs_knob_write(FS_RT_RUNTIME, "-1"));
	ASSERT_EQ(0, fs_thread_create_on(&p->hog, 1, SCHED_FIFO, 99, fifo_hog_fn,
					 &p->stop));
	usleep(10000);
	fs_store(&p->word, me | FUTEX_WAITERS);
	for (i = 0; i < NR_WOKEN - 1; i++) {
		start = fs_now_ns(CLOCK_MONOTONIC);
		fs_unlock(&p->word, FUTEX_SPIN_UNLOCK_PRIVATE);
		p->unlock_ns[i] = fs_now_ns(CLOCK_MONOTONIC) - start;
		/*
		 * Free, or handed to a sleeper that waited past the bound
		 * (one per 5 ms): that one cannot run either, and the test
		 * takes the word back from it.
		 */
		if (fs_load(&p->word) & FUTEX_TID_MASK)
			handoffs++;
		fs_store(&p->word, me);
	}
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
	pthread_join(p->hog, NULL);
	fs_knob_write(FS_RT_RUNTIME, old);

	first = median_ns(p->unlock_ns, 128);
	last = median_ns(p->unlock_ns + NR_WOKEN - 1 - 128, 128);
	TH_LOG("unlock: %lld ns past the first woken sleepers, %lld ns past %d; %d handoffs",
	       first, last, NR_WOKEN - 129, handoffs);
	EXPECT_GT(2 * first, last);

	fs_unlock(&p->word, FUTEX_SPIN_UNLOCK_PRIVATE);
	for (i = 0; i < NR_WOKEN; i++)
		pthread_join(p->thread[i], NULL);
	free(p);
	fs_teardown(_metadata);
}

/*
 * A woken waiter that cannot run must not hold back the sleepers behind
 * it while the lock turns. A (in the three-sleeper form), then W, then B
 * sleep behind O's hold of STUCK_HOLD_MS, long enough for any timer of
 * theirs to fire once; O, a holder, sleeps meanwhile, so none of them
 * spins, and none has run past its due time. W is SCHED_IDLE on CPU 0,
 * which a SCHED_FIFO task then keeps, with RT throttling off and CPU 0's
 * fair server stopped: a nice -20 task still leaves W a few slices, and
 * the fair server runs it 50 ms a second under any real-time load. In such
 * a slice W took the lock and was preempted holding it, and B waited for
 * the rest of the second, 820 to 950 ms: not what this test is about,
 * for no lock can serve B while its holder does not run. O's unlock
 * wakes A, which takes the lock and unlocks at once through the kernel:
 * that wakes W, which cannot run, and frees the word; without A, O's
 * unlock wakes W. M then relocks in a loop on CPU 1, beside A and B, in
 * user space whenever the word lets it. B must get the lock within the
 * rst's bound, (k + 1) * (2(S + T) + L + 2C): k waiters ahead (2, or 1
 * without A), T = 1 ms, S the scheduler's base slice, C the longest hold
 * (the test's), and L the wakeup latency of a task beside M, measured here
 * first. Each round's wait is logged.
 * In the idle form nobody relocks: no unlock enters the kernel after the
 * one that woke W, and B must get the lock within the same bound.
 */
#define STUCK_HOLD_MS	80
#define STUCK_ROUNDS	16
#define STUCK_T_NS	1000000LL
/* S: every task here has the default slice, the base slice */
#define FS_BASE_SLICE	"/sys/kernel/debug/sched/base_slice_ns"

struct stuck {
	__u32 word;
	struct holder o;
	int stop_hog;
	int stop_m;
	unsigned long m_turns;
	int m_ret;
};

/* M: lock and unlock in user space, the kernel only when the word says so */
static void *stuck_m_fn(void *arg)
{
	struct stuck *st = arg;
	__u32 me = fs_gettid(), zero;

	while (!st->m_ret && !__atomic_load_n(&st->stop_m, __ATOMIC_SEQ_CST)) {
		zero = 0;
		if (!__atomic_compare_exchange_n(&st->word, &zero, me, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			st->m_ret = fs_lock(&st->word, FUTEX_SPIN_LOCK_PRIVATE, NULL);
		if (st->m_ret)
			break;
		__atomic_fetch_add(&st->m_turns, 1, __ATOMIC_RELAXED);
		zero = me;
		if (!__atomic_compare_exchange_n(&st->word, &zero, 0, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			st->m_ret = fs_unlock(&st->word, FUTEX_SPIN_UNLOCK_PRIVATE);
	}
	return NULL;
}

/* The longest wakeup latency of a task on CPU 1 beside M, in ns */
static long long stuck_latency(struct __test_metadata *_metadata,
			       struct stuck *st)
{
	struct timespec nap = { .tv_nsec = 1000000 };
	long long start, late, worst = 0;
	pthread_t m;
	int i;

	st->stop_m = 0;
	ASSERT_EQ(0, fs_thread_create_on(&m, 1, SCHED_OTHER, 0, stuck_m_fn, st));
	for (i = 0; i < 20; i++) {
		start = fs_now_ns(CLOCK_MONOTONIC);
		nanosleep(&nap, NULL);
		late = fs_now_ns(CLOCK_MONOTONIC) - start - 1000000;
		worst = late > worst ? late : worst;
	}
	__atomic_store_n(&st->stop_m, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, fs_join(m, NULL));
	EXPECT_EQ(0, st->m_ret);
	return worst;
}

/* One round; B's wait in ms, or -1 if the setup failed */
static long long stuck_round(struct __test_metadata *_metadata,
			     struct stuck *st, long long bound_ms, bool with_a,
			     bool relock)
{
	struct waiter a = { .word = &st->word, .op = FUTEX_SPIN_LOCK_PRIVATE,
			    .forever = true, .unlock = true };
	struct waiter w = a, b = a;
	pthread_t o, hog, m;
	long long after;

	st->word = 0;
	st->o = (struct holder){ .word = &st->word,
				 .op = FUTEX_SPIN_LOCK_PRIVATE };
	st->stop_hog = 0;
	st->stop_m = 0;
	st->m_turns = 0;
	ASSERT_EQ(0, fs_thread_create_on(&o, 1, SCHED_OTHER, 0, holder_fn, &st->o));
	ASSERT_TRUE(fs_wait_flag(&st->o.locked));
	ASSERT_EQ(0, st->o.ret);
	if (with_a) {
		ASSERT_EQ(0, fs_thread_create_on(&a.thread, 1, SCHED_OTHER, 0,
						 waiter_fn, &a));
		ASSERT_TRUE(fs_wait_flag(&a.started));
		ASSERT_TRUE(fs_wait_blocked(getpid(), a.tid));
	}
	ASSERT_EQ(0, fs_thread_create_on(&w.thread, 0, SCHED_IDLE, 0, waiter_fn, &w));
	ASSERT_TRUE(fs_wait_flag(&w.started));
	ASSERT_TRUE(fs_wait_blocked(getpid(), w.tid));
	ASSERT_EQ(0, fs_thread_create_on(&hog, 0, SCHED_FIFO, 99, fifo_hog_fn,
					 &st->stop_hog));
	ASSERT_EQ(0, fs_thread_create_on(&b.thread, 1, SCHED_OTHER, 0, waiter_fn, &b));
	ASSERT_TRUE(fs_wait_flag(&b.started));
	ASSERT_TRUE(fs_wait_blocked(getpid(), b.tid));

	usleep(STUCK_HOLD_MS * 1000);
	EXPECT_EQ(0, holder_release(&st->o, o));
	if (with_a) {
		EXPECT_TRUE(wait_done(&a));
		EXPECT_EQ(0, fs_join(a.thread, NULL));
	}
	if (relock)
		ASSERT_EQ(0, fs_thread_create_on(&m, 1, SCHED_OTHER, 0,
						 stuck_m_fn, st));

	/* M stops at twice the bound, which lets a starved B through */
	while (!__atomic_load_n(&b.done, __ATOMIC_SEQ_CST) &&
	       fs_ms_since(st->o.unlocked) < 2 * bound_ms)
		usleep(1000);
	__atomic_store_n(&st->stop_m, 1, __ATOMIC_SEQ_CST);
	if (relock)
		EXPECT_EQ(0, fs_join(m, NULL));
	EXPECT_TRUE(wait_done(&b));
	after = fs_ms_since(st->o.unlocked);
	EXPECT_EQ(0, fs_join(b.thread, NULL));
	__atomic_store_n(&st->stop_hog, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, fs_join(hog, NULL));
	EXPECT_EQ(0, fs_join(w.thread, NULL));
	EXPECT_EQ(0, st->m_ret);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(0, b.ret);
	EXPECT_EQ(0, w.ret);
	TH_LOG("B waited %lld ms, done %lld ms after O's unlock; M relocked %lu times",
	       b.ms, after, st->m_turns);
	TH_LOG("W got the lock %lld ms after O's unlock, B %lld ms after",
	       (w.taken_ns - st->o.unlocked) / 1000000,
	       (b.taken_ns - st->o.unlocked) / 1000000);
	return b.ms;
}

/* Runtime of CPU 0's fair server: CFS tasks' share under real-time load */
#define FS_FAIR_SERVER0	"/sys/kernel/debug/sched/fair_server/cpu0/runtime"

/* @rounds of stuck_round() against the rst's bound */
static void stuck_rounds(struct __test_metadata *_metadata, int rounds,
			 bool with_a, bool relock)
{
	long long unanswered = futex_spin_stat("unanswered_wakes");
	long long l_ns, s_ns, bound_ms, waited, worst = 0;
	struct stuck st = { 0 };
	int ahead = with_a ? 2 : 1;
	char old[32], fair[32], slice[32];
	bool fair_server;
	int i;

	ASSERT_TRUE(fs_knob_read(FS_RT_RUNTIME, old, sizeof(old)));
	ASSERT_EQ(0, fs_knob_write(FS_RT_RUNTIME, "-1"));
	fair_server = fs_knob_read(FS_FAIR_SERVER0, fair, sizeof(fair));
	if (fair_server)
		ASSERT_EQ(0, fs_knob_write(FS_FAIR_SERVER0, "0"));
	ASSERT_EQ(0, fs_pin(1));
	ASSERT_TRUE(fs_knob_read(FS_BASE_SLICE, slice, sizeof(slice)));
	s_ns = atoll(slice);
	l_ns = stuck_latency(_metadata, &st);
	bound_ms = (ahead + 1) * (2 * (s_ns + STUCK_T_NS) + l_ns +
				  2 * STUCK_HOLD_MS * 1000000LL) / 1000000;
	TH_LOG("%d ahead of B, S %lld us, L %lld us beside the relocker: bound %lld ms",
	       ahead, s_ns / 1000, l_ns / 1000, bound_ms);
	for (i = 0; i < rounds; i++) {
		waited = stuck_round(_metadata, &st, bound_ms, with_a, relock);
		EXPECT_GE(bound_ms, waited) TH_LOG("round %d: B waited %lld ms",
						   i, waited);
		worst = waited > worst ? waited : worst;
	}
	fs_knob_write(FS_RT_RUNTIME, old);
	if (fair_server)
		fs_knob_write(FS_FAIR_SERVER0, fair);
	TH_LOG("worst wait of B %lld ms; bound %lld ms", worst, bound_ms);
	if (unanswered >= 0)
		TH_LOG("%lld pass-over timers expired",
		       futex_spin_stat("unanswered_wakes") - unanswered);
}

static bool stuck_cpus_present(void)
{
	cpu_set_t set;

	return !sched_getaffinity(0, sizeof(set), &set) &&
	       CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
}

/* The scenario with A ahead of W (@with_a), and with M relocking (@relock) */
static void stuck_test(struct __test_metadata *_metadata, bool with_a,
		       bool relock)
{
	fs_setup(_metadata);
	if (!stuck_cpus_present())
		SKIP(return, "needs CPUs 0 and 1");
	stuck_rounds(_metadata, STUCK_ROUNDS, with_a, relock);
	fs_teardown(_metadata);
}

TEST(woken_waiter_that_cannot_run_holds_back_nobody)
{
	stuck_test(_metadata, true, true);
}

TEST(woken_waiter_that_cannot_run_holds_back_nobody_behind)
{
	stuck_test(_metadata, false, true);
}

TEST(woken_waiter_that_cannot_run_holds_back_nobody_idle)
{
	stuck_test(_metadata, false, false);
}

TEST_HARNESS_MAIN
