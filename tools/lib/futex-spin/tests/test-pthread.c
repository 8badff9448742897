// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Tests of the pthread mutex and condition variable API, in TAP. Built
 * against plain glibc: run alone they check glibc (and so the tests
 * themselves); run with LD_PRELOAD=libfutex-spin-preload.so they check the
 * preload, and with FUTEX_SPIN_EXPECT_PRELOAD=1 they fail if it is absent.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/futex.h>

#include "tap.h"

static bool preloaded;

static void *do_trylock(void *m)
{
	long ret = pthread_mutex_trylock(m);

	if (!ret)
		pthread_mutex_unlock(m);
	return (void *)ret;
}

static void *lock_and_exit(void *m)
{
	return (void *)(long)pthread_mutex_lock(m);
}

static int test_preload(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	const char *env = getenv("FUTEX_SPIN_EXPECT_PRELOAD");

	preloaded = dlsym(RTLD_DEFAULT, "futex_spin_preload") != NULL;
	printf("# preload %s\n", preloaded ? "active" : "absent");
	if (env && *env == '1')
		CHECK(preloaded);
	if (!preloaded)
		return 0;
	/* Ours: the word holds the TID (glibc's normal mutex holds 1) */
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	CHECK_EQ(m.__data.__lock, syscall(SYS_gettid));
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(m.__data.__lock, 0);
	return 0;
}

static int test_static_initializers(void)
{
	pthread_mutex_t n = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t r = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	pthread_mutex_t e = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	pthread_mutex_t a = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;

	CHECK_EQ(pthread_mutex_lock(&n), 0);
	CHECK_EQ(pthread_mutex_trylock(&n), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&n), 0);
	CHECK_EQ(pthread_mutex_lock(&r), 0);
	CHECK_EQ(pthread_mutex_lock(&r), 0);
	CHECK_EQ(in_thread(do_trylock, &r), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&r), 0);
	CHECK_EQ(in_thread(do_trylock, &r), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&r), 0);
	CHECK_EQ(in_thread(do_trylock, &r), 0);
	CHECK_EQ(pthread_mutex_unlock(&e), EPERM);
	CHECK_EQ(pthread_mutex_lock(&e), 0);
	CHECK_EQ(pthread_mutex_lock(&e), EDEADLK);
	CHECK_EQ(pthread_mutex_unlock(&e), 0);
	CHECK_EQ(pthread_mutex_lock(&a), 0);
	CHECK_EQ(in_thread(do_trylock, &a), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&a), 0);
	return 0;
}

static int init_type(pthread_mutex_t *m, int type)
{
	pthread_mutexattr_t attr;
	int ret;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, type);
	ret = pthread_mutex_init(m, &attr);
	pthread_mutexattr_destroy(&attr);
	return ret;
}

static void *do_unlock(void *m)
{
	return (void *)(long)pthread_mutex_unlock(m);
}

static int test_types(void)
{
	pthread_mutex_t m;
	int i;

	CHECK_EQ(init_type(&m, PTHREAD_MUTEX_ERRORCHECK), 0);
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	CHECK_EQ(pthread_mutex_lock(&m), EDEADLK);
	CHECK_EQ(in_thread(do_unlock, &m), EPERM);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(pthread_mutex_destroy(&m), 0);

	CHECK_EQ(init_type(&m, PTHREAD_MUTEX_RECURSIVE), 0);
	for (i = 0; i < 5; i++)
		CHECK_EQ(pthread_mutex_trylock(&m), 0);
	CHECK_EQ(in_thread(do_unlock, &m), EPERM);
	for (i = 0; i < 5; i++)
		CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
	CHECK_EQ(pthread_mutex_destroy(&m), 0);

	CHECK_EQ(init_type(&m, PTHREAD_MUTEX_ADAPTIVE_NP), 0);
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	CHECK_EQ(in_thread(do_trylock, &m), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(pthread_mutex_destroy(&m), 0);

	CHECK_EQ(pthread_mutex_init(&m, NULL), 0);
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	CHECK_EQ(pthread_mutex_destroy(&m), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(pthread_mutex_destroy(&m), 0);
	return 0;
}

struct timed {
	pthread_mutex_t *m;
	int clock;	/* -1: pthread_mutex_timedlock */
	long long elapsed;
};

static void *do_timed(void *arg)
{
	struct timed *t = arg;
	clockid_t clock = t->clock < 0 ? CLOCK_REALTIME : t->clock;
	struct timespec t0, d;
	long ret;

	/* t0 first, as in test-lib.c's do_timedlock() */
	clock_gettime(clock, &t0);
	d = deadline(clock, 50);
	if (t->clock < 0)
		ret = pthread_mutex_timedlock(t->m, &d);
	else
		ret = pthread_mutex_clocklock(t->m, clock, &d);
	t->elapsed = ns_since(clock, &t0);
	if (!ret)
		pthread_mutex_unlock(t->m);
	return (void *)ret;
}

static int test_timed(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct timed t = { .m = &m };
	struct timespec d = deadline(CLOCK_REALTIME, 1000);
	int clocks[] = { -1, CLOCK_MONOTONIC, CLOCK_REALTIME };
	unsigned int i;

	CHECK_EQ(pthread_mutex_lock(&m), 0);
	for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		t.clock = clocks[i];
		CHECK_EQ(in_thread(do_timed, &t), ETIMEDOUT);
		CHECK(t.elapsed >= 50 * 1000000LL);
	}
	CHECK_EQ(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &d),
		 EINVAL);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		t.clock = clocks[i];
		CHECK_EQ(in_thread(do_timed, &t), 0);
	}
	return 0;
}

#define THREADS	4
#define LOOPS	5000

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *count(void *arg)
{
	int i;

	for (i = 0; i < LOOPS; i++) {
		if (pthread_mutex_lock(&counter_lock))
			return (void *)1L;
		counter = *(volatile long *)&counter + 1;
		if (pthread_mutex_unlock(&counter_lock))
			return (void *)1L;
	}
	return NULL;
}

static int test_contention(void)
{
	pthread_t t[THREADS];
	void *ret;
	int i, bad = 0;

	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, count, NULL), 0);
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], &ret);
		bad += ret != NULL;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(counter, THREADS * LOOPS);
	return 0;
}

/* A bounded queue: producers and consumers on two condition variables */
#define QSIZE	8
#define ITEMS	5000

struct queue {
	pthread_mutex_t *m;
	pthread_cond_t not_empty, not_full;
	long items[QSIZE];
	int head, len;
	long long sum;
	int stop;
	long items_each;
};

static void *produce(void *arg)
{
	struct queue *q = arg;
	long i;

	for (i = 1; i <= q->items_each; i++) {
		pthread_mutex_lock(q->m);
		while (q->len == QSIZE)
			pthread_cond_wait(&q->not_full, q->m);
		q->items[(q->head + q->len++) % QSIZE] = i;
		pthread_cond_signal(&q->not_empty);
		pthread_mutex_unlock(q->m);
	}
	return NULL;
}

static void *consume(void *arg)
{
	struct queue *q = arg;
	long v;

	for (;;) {
		pthread_mutex_lock(q->m);
		while (!q->len && !q->stop)
			pthread_cond_wait(&q->not_empty, q->m);
		if (!q->len) {
			pthread_mutex_unlock(q->m);
			return NULL;
		}
		v = q->items[q->head];
		q->head = (q->head + 1) % QSIZE;
		q->len--;
		q->sum += v;
		pthread_cond_signal(&q->not_full);
		pthread_mutex_unlock(q->m);
	}
}

static int queue_test(pthread_mutex_t *m, long items)
{
	static struct queue q;
	pthread_t p[2], c[2];
	int i;

	memset(&q, 0, sizeof(q));
	q.m = m;
	q.items_each = items;
	pthread_cond_init(&q.not_empty, NULL);
	q.not_full = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	for (i = 0; i < 2; i++) {
		CHECK_EQ(pthread_create(&p[i], NULL, produce, &q), 0);
		CHECK_EQ(pthread_create(&c[i], NULL, consume, &q), 0);
	}
	for (i = 0; i < 2; i++)
		pthread_join(p[i], NULL);
	pthread_mutex_lock(m);
	q.stop = 1;
	pthread_cond_broadcast(&q.not_empty);
	pthread_mutex_unlock(m);
	for (i = 0; i < 2; i++)
		pthread_join(c[i], NULL);
	CHECK_EQ(q.sum, 2LL * items * (items + 1) / 2);
	CHECK_EQ(pthread_cond_destroy(&q.not_empty), 0);
	CHECK_EQ(pthread_cond_destroy(&q.not_full), 0);
	return 0;
}

static int test_cond_queue(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

	return queue_test(&m, ITEMS);
}

struct bcast {
	pthread_mutex_t m;
	pthread_cond_t c;
	int go, waiting, woken;
};

static void *wait_go(void *arg)
{
	struct bcast *b = arg;

	pthread_mutex_lock(&b->m);
	b->waiting++;
	while (!b->go)
		pthread_cond_wait(&b->c, &b->m);
	b->woken++;
	pthread_mutex_unlock(&b->m);
	return NULL;
}

static int test_cond_broadcast(void)
{
	static struct bcast b = { .m = PTHREAD_MUTEX_INITIALIZER,
				  .c = PTHREAD_COND_INITIALIZER };
	pthread_t t[THREADS];
	int i, waiting = 0;

	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, wait_go, &b), 0);
	while (waiting < THREADS) {
		usleep(1000);
		pthread_mutex_lock(&b.m);
		waiting = b.waiting;
		pthread_mutex_unlock(&b.m);
	}
	pthread_mutex_lock(&b.m);
	b.go = 1;
	pthread_cond_broadcast(&b.c);
	pthread_mutex_unlock(&b.m);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(b.woken, THREADS);
	return 0;
}

/* Times out on the condvar's clock, and comes back holding the mutex */
static int timedwait(pthread_cond_t *c, clockid_t clock, bool clockwait)
{
	pthread_mutex_t m;
	struct timespec t0, d;

	CHECK_EQ(init_type(&m, PTHREAD_MUTEX_ERRORCHECK), 0);
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	/* The 50 ms count from t0: the deadline must not be older. */
	clock_gettime(clock, &t0);
	d = deadline(clock, 50);
	if (clockwait)
		CHECK_EQ(pthread_cond_clockwait(c, &m, clock, &d), ETIMEDOUT);
	else
		CHECK_EQ(pthread_cond_timedwait(c, &m, &d), ETIMEDOUT);
	CHECK(ns_since(clock, &t0) >= 50 * 1000000LL);
	CHECK_EQ(pthread_mutex_lock(&m), EDEADLK);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	return 0;
}

static int test_cond_timeouts(void)
{
	pthread_cond_t c = PTHREAD_COND_INITIALIZER, mc;
	pthread_condattr_t attr;

	CHECK_EQ(timedwait(&c, CLOCK_REALTIME, false), 0);
	CHECK_EQ(timedwait(&c, CLOCK_MONOTONIC, true), 0);
	CHECK_EQ(timedwait(&c, CLOCK_REALTIME, true), 0);
	pthread_condattr_init(&attr);
	CHECK_EQ(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC), 0);
	CHECK_EQ(pthread_cond_init(&mc, &attr), 0);
	CHECK_EQ(timedwait(&mc, CLOCK_MONOTONIC, false), 0);
	CHECK_EQ(pthread_cond_destroy(&mc), 0);
	return 0;
}

/* Priority inheritance: left to glibc, also under a condvar of ours */
static int test_pi(void)
{
	pthread_mutexattr_t attr;
	static pthread_mutex_t m;

	pthread_mutexattr_init(&attr);
	CHECK_EQ(pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT), 0);
	CHECK_EQ(pthread_mutex_init(&m, &attr), 0);
	/* glibc's kind bit for PI: the preload must have let glibc init it */
	CHECK(m.__data.__kind & 0x20);
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	CHECK_EQ(in_thread(do_trylock, &m), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	/* Every contended PI operation is a system call: fewer items */
	CHECK_EQ(queue_test(&m, ITEMS / 10), 0);
	CHECK_EQ(pthread_mutex_destroy(&m), 0);
	return 0;
}

static int test_pp(void)
{
	pthread_mutexattr_t attr;
	pthread_mutex_t m;
	int ret;

	pthread_mutexattr_init(&attr);
	CHECK_EQ(pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_PROTECT), 0);
	CHECK_EQ(pthread_mutexattr_setprioceiling(&attr,
		 sched_get_priority_min(SCHED_FIFO)), 0);
	CHECK_EQ(pthread_mutex_init(&m, &attr), 0);
	CHECK(m.__data.__kind & 0x40);
	ret = pthread_mutex_lock(&m);
	/* Raising the priority needs privileges: the same answer either way */
	printf("# PTHREAD_PRIO_PROTECT lock: %s\n", strerror(ret));
	CHECK(ret == 0 || ret == EINVAL || ret == EPERM);
	if (!ret)
		CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(pthread_mutex_destroy(&m), 0);
	return 0;
}

static int test_robust(void)
{
	pthread_mutexattr_t attr;
	pthread_mutex_t m;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	CHECK_EQ(pthread_mutex_init(&m, &attr), 0);
	CHECK_EQ(in_thread(lock_and_exit, &m), 0);
	CHECK_EQ(pthread_mutex_lock(&m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_consistent(&m), 0);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(in_thread(lock_and_exit, &m), 0);
	CHECK_EQ(pthread_mutex_trylock(&m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(pthread_mutex_lock(&m), ENOTRECOVERABLE);
	return 0;
}

struct cancel {
	pthread_mutex_t m;
	pthread_cond_t c;
	int waiting, held_in_cleanup;
};

static void cleanup(void *arg)
{
	struct cancel *x = arg;

	/* Errorcheck: EDEADLK says we hold it, as POSIX wants */
	x->held_in_cleanup = pthread_mutex_lock(&x->m) == EDEADLK;
	pthread_mutex_unlock(&x->m);
}

static void *wait_forever(void *arg)
{
	struct cancel *x = arg;

	pthread_mutex_lock(&x->m);
	x->waiting = 1;
	pthread_cleanup_push(cleanup, x);
	for (;;)
		pthread_cond_wait(&x->c, &x->m);
	pthread_cleanup_pop(0);
	return NULL;
}

static int test_cond_cancel(void)
{
	static struct cancel x = { .m = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
				   .c = PTHREAD_COND_INITIALIZER };
	pthread_t t;
	void *ret;
	int waiting = 0;

	CHECK_EQ(pthread_create(&t, NULL, wait_forever, &x), 0);
	while (!waiting) {
		usleep(1000);
		pthread_mutex_lock(&x.m);
		waiting = x.waiting;
		pthread_mutex_unlock(&x.m);
	}
	usleep(10000);
	CHECK_EQ(pthread_cancel(t), 0);
	CHECK_EQ(pthread_join(t, &ret), 0);
	CHECK(ret == PTHREAD_CANCELED);
	CHECK_EQ(x.held_in_cleanup, 1);
	CHECK_EQ(pthread_mutex_lock(&x.m), 0);
	CHECK_EQ(pthread_mutex_unlock(&x.m), 0);
	CHECK_EQ(pthread_cond_destroy(&x.c), 0);
	return 0;
}

/* A recursive mutex held once works under a condvar, with its count */
static int test_cond_recursive(void)
{
	static struct bcast b = { .m = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
				  .c = PTHREAD_COND_INITIALIZER };
	pthread_t t;
	int waiting = 0;

	CHECK_EQ(pthread_create(&t, NULL, wait_go, &b), 0);
	while (!waiting) {
		usleep(1000);
		pthread_mutex_lock(&b.m);
		pthread_mutex_lock(&b.m);
		waiting = b.waiting;
		pthread_mutex_unlock(&b.m);
		pthread_mutex_unlock(&b.m);
	}
	pthread_mutex_lock(&b.m);
	b.go = 1;
	pthread_cond_signal(&b.c);
	pthread_mutex_unlock(&b.m);
	pthread_join(t, NULL);
	CHECK_EQ(b.woken, 1);
	CHECK_EQ(in_thread(do_trylock, &b.m), 0);
	return 0;
}

/*
 * Signals sent after unlocking, waiters with short deadlines: the races
 * between a signal, a waiter going to sleep and a timeout. Every token
 * must be taken exactly once and nobody may hang.
 */
#define TOKENS	5000

struct tokens {
	pthread_mutex_t m;
	pthread_cond_t c;
	long available, taken, done;
};

static void *give(void *arg)
{
	struct tokens *k = arg;
	long i;

	for (i = 0; i < TOKENS; i++) {
		pthread_mutex_lock(&k->m);
		k->available++;
		pthread_mutex_unlock(&k->m);
		if (i & 1)
			pthread_cond_signal(&k->c);
		else
			pthread_cond_broadcast(&k->c);
	}
	pthread_mutex_lock(&k->m);
	k->done = 1;
	pthread_mutex_unlock(&k->m);
	pthread_cond_broadcast(&k->c);
	return NULL;
}

static void *take(void *arg)
{
	struct tokens *k = arg;
	struct timespec d;
	int ret;

	pthread_mutex_lock(&k->m);
	for (;;) {
		while (!k->available && !k->done) {
			d = deadline(CLOCK_MONOTONIC, 1);
			ret = pthread_cond_clockwait(&k->c, &k->m,
						     CLOCK_MONOTONIC, &d);
			if (ret && ret != ETIMEDOUT) {
				pthread_mutex_unlock(&k->m);
				return (void *)1L;
			}
		}
		if (!k->available)
			break;
		k->available--;
		k->taken++;
	}
	pthread_mutex_unlock(&k->m);
	return NULL;
}

static int test_cond_races(void)
{
	static struct tokens k = { .m = PTHREAD_MUTEX_INITIALIZER,
				   .c = PTHREAD_COND_INITIALIZER };
	pthread_t g, t[THREADS];
	void *ret;
	int i, bad = 0;

	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, take, &k), 0);
	CHECK_EQ(pthread_create(&g, NULL, give, &k), 0);
	pthread_join(g, NULL);
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], &ret);
		bad += ret != NULL;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(k.taken, TOKENS);
	CHECK_EQ(k.available, 0);
	return 0;
}

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static int child_unlock_ret = -1;

static void fork_prepare(void)
{
	pthread_mutex_lock(&fork_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&fork_lock);
}

static void fork_child(void)
{
	child_unlock_ret = pthread_mutex_unlock(&fork_lock);
}

static void *lock_unlock(void *m)
{
	long ret = pthread_mutex_lock(m);

	return (void *)(ret ? ret : (long)pthread_mutex_unlock(m));
}

/*
 * pthread_atfork(lock, unlock, unlock): the child unlocks a mutex that
 * its thread locked under its parent's TID, then threads use it.
 */
static int test_atfork(void)
{
	int status;
	pid_t pid;

	CHECK_EQ(pthread_atfork(fork_prepare, fork_parent, fork_child), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		if (child_unlock_ret)
			_exit(1);
		if (in_thread(lock_unlock, &fork_lock))
			_exit(2);
		_exit(pthread_mutex_trylock(&fork_lock) ? 3 : 0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(in_thread(lock_unlock, &fork_lock), 0);
	return 0;
}

static const struct tap_test tests[] = {
	{ "preload active when expected", test_preload },
	{ "static initializers", test_static_initializers },
	{ "errorcheck, recursive, adaptive, normal", test_types },
	{ "timedlock and clocklock", test_timed },
	{ "contention keeps mutual exclusion", test_contention },
	{ "condvar producer/consumer", test_cond_queue },
	{ "condvar broadcast", test_cond_broadcast },
	{ "condvar timeouts on both clocks", test_cond_timeouts },
	{ "condvar cancellation relocks the mutex", test_cond_cancel },
	{ "condvar races: signals outside the mutex, 1 ms deadlines",
	  test_cond_races },
	{ "condvar with a recursive mutex", test_cond_recursive },
	{ "PI mutex left to glibc", test_pi },
	{ "PP mutex left to glibc", test_pp },
	{ "robust: EOWNERDEAD, consistent, ENOTRECOVERABLE", test_robust },
	{ "fork child unlocks what pthread_atfork locked", test_atfork },
};

int main(int argc, char **argv)
{
	return tap_run(argc > 1 ? argv[1] : "pthread:", tests,
		       sizeof(tests) / sizeof(tests[0]));
}
