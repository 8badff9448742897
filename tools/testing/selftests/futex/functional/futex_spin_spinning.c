// SPDX-License-Identifier: GPL-2.0
/*
 * Optimistic spinning of FUTEX_SPIN_LOCK: contended acquisitions are taken
 * by spinning rather than sleeping while the owner runs, the unlocker
 * rarely enters the kernel, mutual exclusion survives faults on the word
 * while tasks spin on it, a SCHED_FIFO task spinning on a preempted owner
 * does not livelock, a spinner that is preempted leaves its place, and a
 * spinner queues behind many sleepers sooner than behind few and then
 * wakes one to spin in its place, even when its cmpxchg of the word
 * failed on the way, a waiter spins for at most 10 ms per call on an
 * owner that keeps the lock on its CPU, and a word whose owner alternates
 * between running tasks stretches no spin past its segment.
 *
 * The figures come from the debugfs counters of the feature, which count
 * the whole system: nothing else may use FUTEX_SPIN_LOCK meanwhile.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "futex_spin_test.h"

#define RUN_MS		1000
#define CS_PAUSES	20
#define OUTSIDE_PAUSES	100

enum {
	L_CALLS, U_CALLS, SPUN, SLEPT, WOKEN, FAULTS, OFF_CPU, RESCHED,
	CAPPED, BOUNDED, LIMIT, NR_COUNTERS
};

static const char * const counter_names[NR_COUNTERS] = {
	"lock_calls", "unlock_calls", "spin_acquired", "sleeps", "wakes",
	"spin_aborted_fault", "spin_aborted_owner", "spin_aborted_resched",
	"spin_aborted_cap", "spin_aborted_bound", "spin_aborted_limit",
};

struct hammer {
	struct futex_spin_mutex *m;
	unsigned long *counter;
	atomic_bool *stop;
	long iterations;	/* 0: until *stop */
	int cpu;		/* -1: any */
	int fifo_prio;		/* 0: SCHED_OTHER */
	int nap_us;		/* sleep between iterations */
	long ops;
	int err;
};

/* Why the waiters of this kernel do not spin; NULL when they do */
static const char *no_spinning(void)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return "needs a second CPU";
	if (fs_preempt_rt())
		return "PREEMPT_RT: waiters do not spin";
	return NULL;
}

static inline void pause_n(int n)
{
	while (n--)
		__builtin_ia32_pause();
}

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;
	struct futex_spin_thread self;
	unsigned long c;

	h->err = fs_pin(h->cpu);
	if (h->err)
		return NULL;
	if (h->fifo_prio) {
		struct sched_param sp = { .sched_priority = h->fifo_prio };

		h->err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
		if (h->err)
			return NULL;
	}
	futex_spin_thread_init(&self, false);

	while (h->iterations ? h->ops < h->iterations : !atomic_load(h->stop)) {
		h->err = -futex_spin_lock(h->m, &self);
		if (h->err)
			return NULL;
		/* Not atomic on purpose: the lock is what protects it. */
		c = *h->counter;
		pause_n(CS_PAUSES);
		*h->counter = c + 1;
		h->err = -futex_spin_unlock(h->m, &self);
		if (h->err)
			return NULL;
		h->ops++;
		pause_n(OUTSIDE_PAUSES);
		if (h->nap_us)
			usleep(h->nap_us);
	}
	return NULL;
}

static void read_counters(long long *v)
{
	int i;

	for (i = 0; i < NR_COUNTERS; i++)
		v[i] = futex_spin_stat(counter_names[i]);
}

struct run {
	/* Lock and counter share one MAP_SHARED page: see fault_while_spinning */
	struct futex_spin_mutex *m;
	unsigned long *counter;
	atomic_bool stop;
	long long before[NR_COUNTERS], delta[NR_COUNTERS];
};

/* r->delta: the counters' growth since read_counters(r->before) */
static void read_delta(struct run *r)
{
	int i;

	read_counters(r->delta);
	for (i = 0; i < NR_COUNTERS; i++)
		r->delta[i] -= r->before[i];
}

FIXTURE(spinning) {
	struct run r;
};

FIXTURE_SETUP(spinning)
{
	void *page;

	fs_setup(_metadata);
	ASSERT_LE(0, futex_spin_stat("lock_calls")) TH_LOG("debugfs not mounted");
	page = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	self->r.m = page;
	self->r.counter = (unsigned long *)((char *)page + 64);
	futex_spin_mutex_init(self->r.m, 0);
	atomic_init(&self->r.stop, false);
}

FIXTURE_TEARDOWN(spinning)
{
	fs_inject_off();
	munmap(self->r.m, getpagesize());
	fs_teardown(_metadata);
}

/* Run @n hammers (already filled in), for RUN_MS unless they count. */
static long run_hammers(struct __test_metadata *_metadata, struct run *r,
			struct hammer *h, int n)
{
	pthread_t t[8];
	long ops = 0;
	int i;

	read_counters(r->before);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, pthread_create(&t[i], NULL, hammer_fn, &h[i]));
	if (!h[0].iterations) {
		usleep(RUN_MS * 1000);
		atomic_store(&r->stop, true);
	}
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, fs_join(t[i], NULL)) TH_LOG("hammer %d hangs", i);
		EXPECT_EQ(0, h[i].err) TH_LOG("hammer %d: %s", i, strerror(h[i].err));
		ops += h[i].ops;
	}
	read_delta(r);
	EXPECT_EQ(ops, *r->counter);
	return ops;
}

static void init_hammers(struct run *r, struct hammer *h, int n)
{
	int i;

	memset(h, 0, n * sizeof(*h));
	for (i = 0; i < n; i++) {
		h[i].m = r->m;
		h[i].counter = r->counter;
		h[i].stop = &r->stop;
		h[i].cpu = -1;
	}
}

/*
 * As many threads as CPUs, short critical sections: whoever finds the lock
 * taken finds its owner running, so it should spin and get the lock without
 * sleeping, and the owner should unlock without a system call.
 */
TEST_F(spinning, contended_acquisitions_spin)
{
	struct hammer h[2];
	long long *d;
	long ops;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "spinning needs a second CPU");

	init_hammers(&self->r, h, 2);
	ops = run_hammers(_metadata, &self->r, h, 2);
	d = self->r.delta;

	TH_LOG("%ld ops: lock syscalls %lld, by spinning %lld, sleeps %lld, unlock syscalls %lld",
	       ops, d[L_CALLS], d[SPUN], d[SLEPT], d[U_CALLS]);
	ASSERT_LT(0, d[L_CALLS]) TH_LOG("no contention: nothing measured");
	if (fs_preempt_rt()) {
		/* The policy of PREEMPT_RT: sleep, never spin. */
		EXPECT_EQ(0, d[SPUN]);
		return;
	}
	/* The majority of contended acquisitions are taken by spinning. */
	EXPECT_LT(d[L_CALLS], 2 * d[SPUN]);
	/* Unlock enters the kernel for less than one operation in ten. */
	EXPECT_LT(10 * d[U_CALLS], ops);
}

/*
 * At most two tasks spin on a lock (FUTEX_SPIN_MAX_SPINNERS), and one less
 * than there are CPUs, for the owner needs one to finish: more threads than
 * that must not push the most seen spinning at once (debugfs spin_max)
 * past it, and a spin that queues on the OSQ finds at most one less
 * ahead of it.
 */
#define MAX_SPINNERS		2

TEST_F(spinning, spinners_stay_below_cpus)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = cpus + 2 < 8 ? cpus + 2 : 8;
	long cap = cpus - 1 < MAX_SPINNERS ? cpus - 1 : MAX_SPINNERS;
	long long queued, ahead, most;
	struct hammer h[8];

	if (no_spinning())
		SKIP(return, "%s", no_spinning());
	queued = futex_spin_stat("spin_queued");
	ahead = futex_spin_stat("spin_ahead");
	ASSERT_LE(0, queued);
	ASSERT_LE(0, ahead);
	ASSERT_EQ(0, fs_knob_write(FUTEX_SPIN_DEBUGFS "/spin_max", "0\n"));

	init_hammers(&self->r, h, n);
	run_hammers(_metadata, &self->r, h, n);
	most = futex_spin_debugfs_read("spin_max", "spinners");
	queued = futex_spin_stat("spin_queued") - queued;
	ahead = futex_spin_stat("spin_ahead") - ahead;

	TH_LOG("%d threads on %ld CPUs: %lld spinning at most; %lld queued behind %lld",
	       n, cpus, most, queued, ahead);
	ASSERT_LT(0, self->r.delta[SPUN]) TH_LOG("nobody spun: nothing measured");
	EXPECT_LE(1, most);
	EXPECT_GE(cap, most);
	EXPECT_LE(ahead, queued * (cap - 1));
}

/*
 * The page of the word loses its page table entry over and over while
 * tasks spin on it and sleep on it: every access may fault, and the lock
 * must stay exclusive. MAP_SHARED memory keeps its content across
 * MADV_DONTNEED, so only the mapping goes away, not the lock.
 */
TEST_F(spinning, fault_while_spinning)
{
	long long start = fs_now_ns(CLOCK_MONOTONIC);
	struct hammer h[3];
	pthread_t t[3];
	long zaps = 0, ops = 0;
	int i;

	init_hammers(&self->r, h, 3);
	read_counters(self->r.before);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, hammer_fn, &h[i]));
	while (fs_ms_since(start) < RUN_MS) {
		ASSERT_EQ(0, madvise(self->r.m, getpagesize(), MADV_DONTNEED));
		zaps++;
		usleep(100);
	}
	atomic_store(&self->r.stop, true);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, fs_join(t[i], NULL));
		EXPECT_EQ(0, h[i].err) TH_LOG("hammer %d: %s", i, strerror(h[i].err));
		ops += h[i].ops;
	}
	read_delta(&self->r);
	TH_LOG("%ld ops, %ld zaps, lock syscalls %lld, spins aborted by a fault %lld",
	       ops, zaps, self->r.delta[L_CALLS], self->r.delta[FAULTS]);
	EXPECT_EQ(ops, *self->r.counter);
}

/*
 * A SCHED_FIFO task shares a CPU with a SCHED_OTHER task. The FIFO task
 * naps between iterations, so the other one runs and takes the lock, and
 * is preempted holding it when the FIFO task wakes up: its owner is then
 * not running, so the FIFO task must stop spinning and sleep, or neither
 * would ever make progress again (real-time throttling is off in this
 * test to make such a livelock permanent).
 */
TEST_F(spinning, fifo_spinner_does_not_livelock)
{
	struct hammer h[3];
	char runtime[32];
	long long *d;
	int i;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs a second CPU");
	ASSERT_TRUE(fs_knob_read(FS_RT_RUNTIME, runtime, sizeof(runtime)));
	ASSERT_EQ(0, fs_knob_write(FS_RT_RUNTIME, "-1"));

	init_hammers(&self->r, h, 3);
	for (i = 0; i < 3; i++)
		h[i].iterations = 2000;
	h[0].cpu = 0;
	h[0].fifo_prio = 10;
	h[0].nap_us = 50;
	h[1].cpu = 0;
	h[2].cpu = 1;
	run_hammers(_metadata, &self->r, h, 3);

	fs_knob_write(FS_RT_RUNTIME, runtime);
	d = self->r.delta;
	TH_LOG("lock syscalls %lld, by spinning %lld, sleeps %lld",
	       d[L_CALLS], d[SPUN], d[SLEPT]);
	TH_LOG("spins stopped on an owner off CPU: %lld", d[OFF_CPU]);
}

/*
 * Regression: a deadline expiring between the waiter's last check and its
 * going to sleep was lost, and the waiter slept until a signal came.
 * Waiters with deadlines of up to 300 us on a word whose owner never
 * unlocks must all come back with ETIMEDOUT, promptly.
 */
struct short_waiter {
	__u32 *word;
	int calls;
	int late;
	int err;
};

static void *short_waiter_fn(void *arg)
{
	struct short_waiter *sw = arg;
	unsigned int seed = fs_gettid();
	struct timespec ts;
	long long late_ns;
	int i, ret;

	for (i = 0; i < sw->calls; i++) {
		ts = fs_deadline(CLOCK_MONOTONIC, 0);
		ts.tv_nsec += rand_r(&seed) % 300000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		ret = fs_lock(sw->word, FUTEX_SPIN_LOCK_PRIVATE, &ts);
		if (ret != -ETIMEDOUT) {
			sw->err = ret;
			return NULL;
		}
		late_ns = fs_now_ns(CLOCK_MONOTONIC) - fs_ts_ns(&ts);
		if (late_ns > FS_MUST_MS * 1000000LL)
			sw->late++;
	}
	return NULL;
}

TEST_F(spinning, short_deadlines_all_expire)
{
	struct short_waiter sw[4];
	pthread_t t[4];
	int i;

	/* Owned by a TID that exists nowhere, with sleepers announced. */
	fs_store(&self->r.m->word, FS_NO_SUCH_TID | FUTEX_WAITERS);
	for (i = 0; i < 4; i++) {
		sw[i] = (struct short_waiter){ &self->r.m->word, 500, 0, 0 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, short_waiter_fn, &sw[i]));
	}
	for (i = 0; i < 4; i++) {
		/* A lost wakeup leaves the thread asleep: the join times out. */
		EXPECT_EQ(0, fs_join(t[i], NULL)) TH_LOG("waiter %d hangs", i);
		EXPECT_EQ(0, sw[i].err) TH_LOG("waiter %d: %s", i, strerror(-sw[i].err));
		EXPECT_EQ(0, sw[i].late);
	}
}

/*
 * Regression: a spinner preempted as its spin ended still counted as a
 * spinner until it ran again, and the task that preempted it found one
 * place less to spin: on two CPUs none, and it slept although the owner
 * ran.
 *
 * The owner takes the lock on CPU 0 before anyone asks, and holds it until
 * PREEMPT_HOLD_US. A SCHED_OTHER task on CPU 1 asks for it at
 * PREEMPT_SPIN_US and spins; a SCHED_FIFO task on CPU 1 wakes up at
 * PREEMPT_WAKE_US, which ends that spin, and asks in turn. Both spins fit
 * in T (1 ms), the longest segment of a spin. The owner holds on for
 * PREEMPT_HOLD_US - PREEMPT_WAKE_US past the FIFO task's actual wakeup
 * too: a guest whose timer wakeups come 0.8 ms late (a debug kernel under
 * TCG) would otherwise wake it onto a free word, in every try.
 *
 * The two tasks share CPU 1, so they never spin at once: no spin is refused
 * a place, and the most spinners seen on the lock (debugfs spin_max) is
 * one, however late a slow machine runs them. With the old count, the FIFO
 * task was refused a place on two CPUs, and seen spinning beside the
 * preempted task on more. Only whether a try sets the scene (a spin ended
 * by a wakeup, both tasks in the kernel) depends on time; a try that did
 * not is run again.
 */
#define PREEMPT_SPIN_US		1000
#define PREEMPT_WAKE_US		1600
#define PREEMPT_HOLD_US		2400
#define PREEMPT_TRIES		20

struct preempt_role {
	struct futex_spin_mutex *m;
	long long start_ns;	/* CLOCK_MONOTONIC: time 0 of the try */
	long long at_us;	/* when to ask for the lock */
	long long hold_us;	/* the owner: when to unlock */
	bool asleep;		/* wait for at_us asleep, not running */
	long long late_us;	/* asleep: how late it woke past at_us */
	long long woke_ns;	/* asleep: when it woke */
	long long *woken;	/* the owner: the woke_ns to hold past */
	int locked;		/* the owner: set once it holds the lock */
	int cpu;
	int err;
};

/* The owner: hold on for the window past the FIFO task's wakeup */
static void hold_past_wakeup(struct preempt_role *r)
{
	long long give_up = r->start_ns + 1000000000LL, woke;

	do {
		woke = __atomic_load_n(r->woken, __ATOMIC_SEQ_CST);
	} while (!woke && fs_now_ns(CLOCK_MONOTONIC) < give_up);
	if (woke)
		fs_busy_until(woke + (PREEMPT_HOLD_US - PREEMPT_WAKE_US) * 1000LL);
}

static void *preempt_role_fn(void *arg)
{
	struct preempt_role *r = arg;
	struct futex_spin_thread self;
	long long at_ns, woke_ns;
	struct timespec at;

	r->err = fs_pin(r->cpu);
	if (r->err)
		return NULL;
	futex_spin_thread_init(&self, false);
	if (r->hold_us) {
		r->err = -futex_spin_lock(r->m, &self);
		fs_set_flag(&r->locked);
		if (!r->err) {
			/* Time 0 is set once the lock is held: wait for it. */
			while (!__atomic_load_n(&r->start_ns, __ATOMIC_SEQ_CST))
				;
			fs_busy_until(r->start_ns + r->hold_us * 1000);
			hold_past_wakeup(r);
			r->err = -futex_spin_unlock(r->m, &self);
		}
		return NULL;
	}
	at_ns = r->start_ns + r->at_us * 1000;
	if (r->asleep) {
		at = fs_ns_ts(at_ns);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
		woke_ns = fs_now_ns(CLOCK_MONOTONIC);
		r->late_us = (woke_ns - at_ns) / 1000;
		__atomic_store_n(&r->woke_ns, woke_ns, __ATOMIC_SEQ_CST);
	} else {
		fs_busy_until(at_ns);
	}
	r->err = -futex_spin_lock(r->m, &self);
	if (!r->err)
		r->err = -futex_spin_unlock(r->m, &self);
	return NULL;
}

/* One try; false when it did not set the scene, see above. */
static bool preempt_try(struct __test_metadata *_metadata, struct run *run,
			long long *most)
{
	struct preempt_role r[3];
	long long *d = run->delta;
	long long start;
	pthread_t t[3];
	int i;

	for (i = 0; i < 3; i++)
		r[i] = (struct preempt_role){ .m = run->m, .cpu = 1 };
	r[0].cpu = 0;
	r[0].hold_us = PREEMPT_HOLD_US;
	r[0].woken = &r[2].woke_ns;
	r[1].at_us = PREEMPT_SPIN_US;
	r[2].at_us = PREEMPT_WAKE_US;
	r[2].asleep = true;

	EXPECT_EQ(0, fs_knob_write(FUTEX_SPIN_DEBUGFS "/spin_max", "0\n"));
	read_counters(run->before);
	EXPECT_EQ(0, fs_thread_create(&t[0], SCHED_OTHER, 0, preempt_role_fn, &r[0]));
	EXPECT_TRUE(fs_wait_flag(&r[0].locked)) TH_LOG("the owner never took the lock");
	/* Time enough for the others to start and move to their CPUs. */
	start = fs_now_ns(CLOCK_MONOTONIC) + 50 * 1000000LL;
	r[1].start_ns = start;
	r[2].start_ns = start;
	__atomic_store_n(&r[0].start_ns, start, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, fs_thread_create(&t[1], SCHED_OTHER, 0, preempt_role_fn, &r[1]));
	EXPECT_EQ(0, fs_thread_create(&t[2], SCHED_FIFO, 10, preempt_role_fn, &r[2]));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, fs_join(t[i], NULL)) TH_LOG("role %d hangs", i);
		EXPECT_EQ(0, r[i].err) TH_LOG("role %d: %s", i, strerror(r[i].err));
	}
	read_delta(run);
	*most = futex_spin_debugfs_read("spin_max", "spinners");
	TH_LOG("lock syscalls %lld, spins ended by a wakeup %lld, most spinning at once %lld",
	       d[L_CALLS], d[RESCHED], *most);
	TH_LOG("spins: refused a place %lld, took the lock %lld, ended at T %lld",
	       d[CAPPED], d[SPUN], d[LIMIT]);
	TH_LOG("the FIFO task woke %lld us late", r[2].late_us);
	return d[RESCHED] > 0 && d[L_CALLS] >= 2;
}

TEST_F(spinning, preempted_spinner_leaves_its_place)
{
	long long most = -1;
	int i;

	if (no_spinning())
		SKIP(return, "%s", no_spinning());

	for (i = 0; i < PREEMPT_TRIES; i++)
		if (preempt_try(_metadata, &self->r, &most))
			break;
	ASSERT_GT(PREEMPT_TRIES, i) TH_LOG("no spin was ever ended by the wakeup");
	EXPECT_EQ(0, self->r.delta[CAPPED]);
	EXPECT_EQ(1, most);
}

/*
 * A task that has spun T (1 ms) without queueing takes its place in line,
 * behind the sleepers, and spins on: its wait is then bounded by the rule
 * like theirs. Without it, when waiters outnumber CPUs, the task that last
 * lost the lock could spin while the others sleep, take the word back at
 * each release, and keep the lock turning among a few tasks.
 *
 * SLEEPERS_QUEUED tasks sleep on a lock whose owner is off CPU. The word
 * is then made as an owner leaves it that took the lock back in user
 * space after a release to 0: owned, WAITERS clear. The owner runs on CPU
 * 0 for SLEEPERS_HOLD_MS, while a newcomer on CPU 1 asks for the lock and
 * spins: it must stop to queue once within the hold.
 */
#define SLEEPERS_QUEUED		16
#define SLEEPERS_HOLD_MS	4
#define SLEEPERS_TRIES		5

/*
 * With SLEEPERS_FAILS, the newcomer's first cmpxchgs of the word fail, as
 * the futex helper of an LL/SC architecture's may: the owner runs and
 * keeps the word, so the first comes past T, at its look under the lock.
 * It looks again, and still queues within the hold. A count, not a time:
 * a thread that ended a time would need a CPU, and both are taken.
 */
#define SLEEPERS_FAILS		3

struct newcomer {
	__u32 *word;
	int fails;		/* its first cmpxchgs that fail; 0: none */
	int fail_ms;		/* or for how long they fail; 0: none */
	int started;
	int ret;
	long unlock_ret;
};

/* Busy on CPU 1 until *stop, as a task runnable there besides the newcomer */
struct bystander {
	atomic_bool stop;
	int started;
	int err;
};

static void *bystander_fn(void *arg)
{
	struct bystander *b = arg;

	b->err = fs_pin(1);
	__atomic_store_n(&b->started, 1, __ATOMIC_SEQ_CST);
	while (!b->err && !atomic_load(&b->stop))
		;
	return NULL;
}

static void *newcomer_fn(void *arg)
{
	struct newcomer *n = arg;

	struct fs_fail_window fail;
	pid_t tid = fs_gettid();

	n->ret = fs_pin(1);
	if (!n->ret && n->fails)
		n->ret = fs_fail_cmpxchg(tid, n->fails);
	if (!n->ret && n->fail_ms)
		n->ret = fs_fail_window_start(&fail, tid, n->fail_ms);
	__atomic_store_n(&n->started, 1, __ATOMIC_SEQ_CST);
	if (n->ret)
		return NULL;
	n->ret = fs_lock(n->word, FUTEX_SPIN_LOCK_PRIVATE, NULL);
	if (!n->ret)
		n->unlock_ret = fs_unlock(n->word, FUTEX_SPIN_UNLOCK_PRIVATE);
	/* Before it exits: pthread_join() waits for a shared futex wake */
	if (n->fails && fs_fail_cmpxchg(tid, 0) && !n->ret)
		n->ret = -EIO;
	if (n->fail_ms && fs_fail_window_end(&fail) && !n->ret)
		n->ret = -EIO;
	return NULL;
}

/*
 * One try; false when the setup failed. The counters are in run->delta.
 * With @bystander, the newcomer runs SCHED_FIFO beside a SCHED_OTHER task
 * busy on CPU 1: runnable there all along, that one never preempts it.
 */
static bool sleepers_try(struct __test_metadata *_metadata, struct run *run,
			 bool bystander, int fails)
{
	struct waiter w[SLEEPERS_QUEUED] = { 0 };
	__u32 *word = &run->m->word;
	long long *d = run->delta;
	struct newcomer n = { .word = word, .fails = fails };
	struct bystander b = { .stop = false };
	bool ok = true;
	pthread_t t, bt;
	int i, queued;

	fs_store(word, fs_gettid());
	for (queued = 0; ok && queued < SLEEPERS_QUEUED; queued++) {
		w[queued] = (struct waiter){ .word = word, .forever = true,
					     .op = FUTEX_SPIN_LOCK_PRIVATE,
					     .unlock = true };
		ok = waiter_queue(&w[queued]);
		EXPECT_TRUE(ok) TH_LOG("waiter %d did not sleep", queued);
	}

	if (bystander) {
		bystander = ok && !pthread_create(&bt, NULL, bystander_fn, &b);
		ok = bystander && fs_wait_flag(&b.started);
		EXPECT_TRUE(ok);
	}

	fs_store(word, fs_gettid());
	read_counters(run->before);
	ok = ok && !fs_thread_create(&t, bystander ? SCHED_FIFO : SCHED_OTHER,
				     10, newcomer_fn, &n);
	if (ok) {
		/* Running all along: the newcomer finds its owner on a CPU. */
		while (!__atomic_load_n(&n.started, __ATOMIC_SEQ_CST))
			;
		fs_busy_until(fs_now_ns(CLOCK_MONOTONIC) +
			      SLEEPERS_HOLD_MS * 1000000LL);
	}
	read_delta(run);
	EXPECT_EQ(0, fs_unlock(word, FUTEX_SPIN_UNLOCK_PRIVATE));

	if (ok) {
		EXPECT_EQ(0, fs_join(t, NULL)) TH_LOG("the newcomer hangs");
		EXPECT_EQ(0, n.ret);
		EXPECT_EQ(0, n.unlock_ret);
	}
	if (ok && fails)
		EXPECT_EQ(0, fs_fail_cmpxchg_left())
			TH_LOG("the newcomer's cmpxchg did not fail %d times", fails);
	if (bystander) {
		atomic_store(&b.stop, true);
		EXPECT_EQ(0, fs_join(bt, NULL));
		EXPECT_EQ(0, b.err);
	}
	for (i = 0; i < queued; i++) {
		EXPECT_TRUE(wait_done(&w[i])) TH_LOG("waiter %d hangs", i);
		EXPECT_EQ(0, w[i].ret);
		EXPECT_EQ(0, fs_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].unlock_ret);
	}
	TH_LOG("during the hold: lock syscalls %lld, sleeps %lld, wakes %lld",
	       d[L_CALLS], d[SLEPT], d[WOKEN]);
	TH_LOG("spins ended at the bound %lld, owner off CPU %lld, wakeup %lld, refused %lld",
	       d[BOUNDED], d[OFF_CPU], d[RESCHED], d[CAPPED]);
	return ok;
}

/*
 * Tries until the newcomer's spin ended to queue or at the hold's end,
 * not by a wakeup on its CPU, for want of a spinning slot, or because the
 * owner, which should run all along, was preempted.
 */
static void sleepers_run(struct __test_metadata *_metadata, struct run *run,
			 bool bystander, int fails)
{
	long long *d = run->delta;
	int i;

	ASSERT_EQ(0, fs_pin(0));
	for (i = 0; i < SLEEPERS_TRIES; i++)
		if (sleepers_try(_metadata, run, bystander, fails) &&
		    !d[RESCHED] && !d[CAPPED] && !d[OFF_CPU])
			break;
	ASSERT_GT(SLEEPERS_TRIES, i) TH_LOG("every spin was cut short");
}

TEST_F(spinning, spinner_queues_after_spinning_t)
{
	if (no_spinning())
		SKIP(return, "%s", no_spinning());
	sleepers_run(_metadata, &self->r, false, 0);
	EXPECT_LE(1, self->r.delta[BOUNDED]);
}

/*
 * Regression: a spinner that had to look at the word again after a failed
 * cmpxchg on its way to the queue lost track of why it was there.
 */
TEST_F(spinning, spinner_queues_after_a_failed_cmpxchg)
{
	if (no_spinning())
		SKIP(return, "%s", no_spinning());
	if (!fs_fail_futex_present())
		SKIP(return, "no %s (CONFIG_FAIL_FUTEX)", FS_FAIL_FUTEX);
	sleepers_run(_metadata, &self->r, false, SLEEPERS_FAILS);
	EXPECT_LE(1, self->r.delta[BOUNDED]);
}

/*
 * Regression: the spinner's cmpxchg of a free word that failed returned
 * before its clock was read and without cpu_relax(), so a spinner whose
 * cmpxchg kept failing (an LL/SC helper giving up, a line another CPU
 * hammers; here fail_futex) spun with preemption off for as
 * long as it failed, past every limit, and took the word at the end. Its
 * clock must end the spin within T, to queue (bound) or for good (limit).
 * A try whose spin something else cut short (the owner preempted, a wakeup
 * on the spinner's CPU) shows nothing either way, and is run again.
 */
#define FREE_FAIL_MS	50
#define FREE_TRIES	5

/* One try, the counters in run->delta; false when a spin was cut short */
static bool failing_cmpxchg_try(struct __test_metadata *_metadata,
				struct run *run)
{
	struct newcomer n = { .word = &run->m->word, .fail_ms = FREE_FAIL_MS };
	long long *d = run->delta;
	pthread_t t;

	/* Owned by us, running, so that it spins; free soon after it does */
	fs_store(n.word, fs_gettid());
	read_counters(run->before);
	/*
	 * SCHED_FIFO: no task of its CPU asks it to stop spinning. On CPU 1:
	 * placed on ours, it would preempt the owner it is to spin on.
	 */
	ASSERT_EQ(0, fs_thread_create_on(&t, 1, SCHED_FIFO, 10, newcomer_fn, &n));
	while (!__atomic_load_n(&n.started, __ATOMIC_SEQ_CST))
		;
	fs_busy_until(fs_now_ns(CLOCK_MONOTONIC) + 300000);
	fs_store(n.word, 0);
	ASSERT_EQ(0, fs_join(t, NULL));
	EXPECT_EQ(0, n.ret);
	EXPECT_EQ(0, n.unlock_ret);
	fs_inject_off();
	read_delta(run);
	TH_LOG("spins ended by the spinner's clock: %lld; words taken spinning: %lld",
	       d[BOUNDED] + d[LIMIT], d[SPUN]);
	TH_LOG("spins cut short: owner off CPU %lld, wakeup %lld, refused %lld",
	       d[OFF_CPU], d[RESCHED], d[CAPPED]);
	return !d[OFF_CPU] && !d[RESCHED] && !d[CAPPED];
}

TEST_F(spinning, spin_on_a_failing_cmpxchg_stops)
{
	long long *d = self->r.delta;
	int i;

	if (no_spinning())
		SKIP(return, "%s", no_spinning());
	if (!fs_fail_futex_present())
		SKIP(return, "no %s (CONFIG_FAIL_FUTEX)", FS_FAIL_FUTEX);
	ASSERT_EQ(0, fs_pin(0));
	for (i = 0; i < FREE_TRIES; i++)
		if (failing_cmpxchg_try(_metadata, &self->r))
			break;
	ASSERT_GT(FREE_TRIES, i) TH_LOG("every spin was cut short");
	EXPECT_LE(1, d[BOUNDED] + d[LIMIT]);
	EXPECT_EQ(0, d[SPUN]);
}

struct long_owner {
	__u32 *word;
	long long hold_ns;
	int ready;
};

/* SCHED_FIFO on CPU 0: takes the word the moment it is free, holds it long */
static void *long_owner_fn(void *arg)
{
	struct sched_param sp = { .sched_priority = 5 };
	struct long_owner *o = arg;
	__u32 me = fs_gettid(), zero;

	fs_pin(0);
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	__atomic_store_n(&o->ready, 1, __ATOMIC_SEQ_CST);
	do {
		zero = 0;
	} while (!__atomic_compare_exchange_n(o->word, &zero, me, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	fs_busy_until(fs_now_ns(CLOCK_MONOTONIC) + o->hold_ns);
	if (!__atomic_compare_exchange_n(o->word, &me, 0, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		fs_unlock(o->word, FUTEX_SPIN_UNLOCK_PRIVATE);
	return NULL;
}

/*
 * One attempt: false if the unlock handed @w the lock instead (it had
 * looked at the word past its due time, on a slow machine).
 */
static bool capped_attempt(struct __test_metadata *_metadata, long long *ran_ms)
{
	struct long_owner o = { .hold_ns = 1000000000LL };
	struct waiter w = {
		.op = FUTEX_SPIN_LOCK_PRIVATE, .timeout_ms = 2 * FS_MUST_MS,
		.unlock = true,
	};
	struct timespec before, after;
	pthread_t owner;
	clockid_t clock;
	__u32 word;
	bool handed;

	o.word = &word;
	w.word = &word;
	fs_store(&word, fs_gettid() | FUTEX_WAITERS);
	EXPECT_EQ(0, pthread_create(&owner, NULL, long_owner_fn, &o));
	EXPECT_TRUE(fs_wait_flag(&o.ready));
	EXPECT_EQ(0, fs_thread_create_on(&w.thread, 1, SCHED_FIFO, 10, waiter_fn, &w));
	EXPECT_EQ(0, pthread_getcpuclockid(w.thread, &clock));
	EXPECT_TRUE(fs_wait_flag(&w.started));
	/* Asleep since its first look, before its due time: it has not asked */
	while (!fs_task_blocked(getpid(), w.tid))
		;
	EXPECT_EQ(0, clock_gettime(clock, &before));
	EXPECT_LE(0, fs_unlock(&word, FUTEX_SPIN_UNLOCK_PRIVATE));
	usleep(300 * 1000);
	handed = __atomic_load_n(&w.done, __ATOMIC_SEQ_CST);
	if (handed)
		TH_LOG("the waiter was handed the lock after %lld ms", w.ms);
	if (!handed) {
		EXPECT_EQ(0, clock_gettime(clock, &after));
		*ran_ms = (fs_ts_ns(&after) - fs_ts_ns(&before)) / 1000000;
	}
	pthread_join(owner, NULL);
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.ret);
	return !handed;
}

/*
 * A sleeper is woken and the lock goes at once to an owner that then
 * keeps it for a second on its CPU (a long critical section, or one of
 * two tasks spinning on each other's lock). Owner and waiter are
 * SCHED_FIFO, each alone on its CPU: the owner is never preempted and the
 * waiter never asked to give its CPU up. The waiter passes its due time,
 * asks, and spins on: it must stop by itself, after T (1 ms) on that
 * owner, and sleep. Its CPU time over the 300 ms after its wakeup shows
 * which it did.
 */
TEST(spinning_stops_after_t_on_one_owner)
{
	long long ran_ms = -1;
	int attempt;

	if (no_spinning())
		SKIP(return, "%s", no_spinning());
	for (attempt = 0; attempt < 5; attempt++) {
		if (capped_attempt(_metadata, &ran_ms))
			break;
		TH_LOG("attempt %d: handed the lock, not woken: again", attempt);
	}
	ASSERT_GT(5, attempt);
	TH_LOG("the waiter ran %lld ms of the 300 after its wakeup", ran_ms);
	EXPECT_GT(100, ran_ms)
		TH_LOG("a waiter spun on with the owner holding the lock for long");
}

/*
 * The word's owner alternates between two running tasks, each of which
 * stores one TID and then the other into it every 0.4 ms (as any task of
 * the process may): more often than T, and seldom enough for the
 * spinner's cmpxchg of the word to queue and ask to go through, so that it
 * spins on rather than sleeps. Both store, so that the TID changes while
 * either runs: a guest whose vCPUs share host CPUs runs them by turns. A
 * spinner with a 3 s deadline polls the word, each on a CPU of its own.
 * Its segment must end after T (1 ms) however often the owner changed,
 * and since nobody unlocks it then sleeps: its CPU time shows which it
 * did. With a fourth CPU, a second spinner with a 2 ms deadline waits
 * behind it in the OSQ, where it checks nothing but need_resched(): it
 * must return by its deadline, not after the first one's 3 s. All are
 * SCHED_FIFO: nothing that a normal task does ends a spin by
 * need_resched(), or takes an owner off its CPU.
 */
#define ALT_SWITCH_NS		400000
#define ALT_FIRST_MS		3000
#define ALT_SECOND_MS		2
/* Slack for a slow guest: far below the first spinner's deadline */
#define ALT_LATE_MS		1000

struct alternator {
	__u32 *word;
	atomic_bool *stop;
	pid_t tid[2];
	int ready;
};

static void *alternator_fn(void *arg)
{
	struct alternator *a = arg;
	int me = __atomic_fetch_add(&a->ready, 1, __ATOMIC_SEQ_CST);

	__atomic_store_n(&a->tid[me], fs_gettid(), __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&a->ready, __ATOMIC_SEQ_CST) < 2)
		;
	while (!atomic_load(a->stop)) {
		fs_store(a->word, a->tid[me]);
		fs_busy_until(fs_now_ns(CLOCK_MONOTONIC) + ALT_SWITCH_NS);
		fs_store(a->word, a->tid[!me]);
		fs_busy_until(fs_now_ns(CLOCK_MONOTONIC) + ALT_SWITCH_NS);
	}
	return NULL;
}

/* A waiter that also notes the CPU time its lock call took */
struct cpu_waiter {
	struct waiter w;
	long long cpu_ns;
};

static void *cpu_waiter_fn(void *arg)
{
	struct cpu_waiter *cw = arg;
	long long start = fs_now_ns(CLOCK_THREAD_CPUTIME_ID);

	waiter_fn(&cw->w);
	cw->cpu_ns = fs_now_ns(CLOCK_THREAD_CPUTIME_ID) - start;
	return NULL;
}

TEST(alternating_owners_end_the_segment)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	__u32 word = 0;
	atomic_bool stop = false;
	struct alternator a = { .word = &word, .stop = &stop };
	struct cpu_waiter first = { .w = {
		.word = &word, .op = FUTEX_SPIN_LOCK_PRIVATE,
		.timeout_ms = ALT_FIRST_MS,
	} };
	struct waiter second = {
		.word = &word, .op = FUTEX_SPIN_LOCK_PRIVATE,
		.timeout_ms = ALT_SECOND_MS,
	};
	long long queued_ns, segment_ns, before[NR_COUNTERS], after[NR_COUNTERS];
	pthread_t t[2];
	int i;

	if (no_spinning())
		SKIP(return, "%s", no_spinning());
	if (cpus < 3)
		SKIP(return, "needs 3 CPUs: two owners and a spinner");
	ASSERT_EQ(0, fs_knob_write(FUTEX_SPIN_DEBUGFS "/spin_max", "0\n"));
	read_counters(before);

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, fs_thread_create_on(&t[i], i, SCHED_FIFO, 10,
						 alternator_fn, &a));
	while (!(fs_load(&word) & FUTEX_TID_MASK))
		;
	ASSERT_EQ(0, fs_thread_create_on(&first.w.thread, 2, SCHED_FIFO, 10,
					 cpu_waiter_fn, &first));
	if (cpus >= 4) {
		/* Past the first spinner's queueing and asking, which take 2T */
		usleep(100 * 1000);
		ASSERT_EQ(0, fs_thread_create_on(&second.thread, 3, SCHED_FIFO, 10,
						 waiter_fn, &second));
		EXPECT_TRUE(fs_wait_flag_ms(&second.done, ALT_SECOND_MS + ALT_LATE_MS))
			TH_LOG("the second spinner has not returned %d ms after its %d ms deadline",
			       ALT_LATE_MS, ALT_SECOND_MS);
	}
	EXPECT_TRUE(fs_wait_flag_ms(&first.w.done, ALT_FIRST_MS + ALT_LATE_MS));
	atomic_store(&stop, true);
	for (i = 0; i < 2; i++)
		EXPECT_EQ(0, fs_join(t[i], NULL));
	EXPECT_EQ(0, fs_join(first.w.thread, NULL));
	if (cpus >= 4)
		EXPECT_EQ(0, fs_join(second.thread, NULL));

	queued_ns = futex_spin_debugfs_read("spin_max", "queued_ns");
	segment_ns = futex_spin_debugfs_read("spin_max", "segment_ns");
	TH_LOG("longest OSQ wait %lld us, longest segment %lld us",
	       queued_ns / 1000, segment_ns / 1000);
	read_counters(after);
	TH_LOG("spins ended: after T %lld, to queue or ask %lld, owner off CPU %lld,",
	       after[LIMIT] - before[LIMIT], after[BOUNDED] - before[BOUNDED],
	       after[OFF_CPU] - before[OFF_CPU]);
	TH_LOG("resched %lld; sleeps %lld", after[RESCHED] - before[RESCHED],
	       after[SLEPT] - before[SLEPT]);
	TH_LOG("first: %s after %lld ms, %lld ms on a CPU", strerror(-first.w.ret),
	       first.w.ms, first.cpu_ns / 1000000);
	EXPECT_EQ(-ETIMEDOUT, first.w.ret);
	EXPECT_GT(ALT_LATE_MS * 1000000LL, first.cpu_ns);
	EXPECT_GT(ALT_LATE_MS * 1000000LL, queued_ns);
	EXPECT_GT(ALT_LATE_MS * 1000000LL, segment_ns);
	if (cpus < 4)
		return;
	TH_LOG("second: %s after %lld ms", strerror(-second.ret), second.ms);
	EXPECT_EQ(-ETIMEDOUT, second.ret);
	EXPECT_GT(ALT_SECOND_MS + ALT_LATE_MS, second.ms);
}

TEST_HARNESS_MAIN
