// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Tests of libfutex-spin's own interface, in TAP. They pass in both modes:
 * with FUTEX_SPIN_LOCK (a kernel with the opcodes) and in the wait-wake
 * fallback (any other kernel, or FUTEX_SPIN_MODE=waitwake).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/futex.h>

#include "../futex-spin.h"
#include "tap.h"

static pid_t gettid_(void)
{
	return syscall(SYS_gettid);
}

static void *do_trylock(void *m)
{
	long ret = futex_spin_mutex_trylock(m);

	if (!ret)
		futex_spin_mutex_unlock(m);
	return (void *)ret;
}

static void *do_unlock(void *m)
{
	return (void *)(long)futex_spin_mutex_unlock(m);
}

static void *lock_and_exit(void *m)
{
	return (void *)(long)futex_spin_mutex_lock(m);
}

static int test_probe(void)
{
	int probe = futex_spin_probe();
	const char *env = getenv("FUTEX_SPIN_MODE");
	enum futex_spin_mode mode = futex_spin_mode();

	printf("# probe %s, mode %s\n", probe ? strerror(probe) : "EPERM (supported)",
	       mode == FUTEX_SPIN_MODE_SPIN ? "spin" : "waitwake");
	CHECK(probe == 0 || probe == ENOSYS);
	if (env && !strcmp(env, "waitwake"))
		CHECK_EQ(mode, FUTEX_SPIN_MODE_WAITWAKE);
	else
		CHECK_EQ(mode, probe ? FUTEX_SPIN_MODE_WAITWAKE :
			 FUTEX_SPIN_MODE_SPIN);
	/* The feature a kernel is expected to have, when a script says so */
	env = getenv("FUTEX_SPIN_EXPECT");
	if (env && !strcmp(env, "spin"))
		CHECK_EQ(probe, 0);
	return 0;
}

/* What futex_spin_mode_from_env() says for FUTEX_SPIN_MODE=@value */
static int mode_for(const char *value, enum futex_spin_mode *mode)
{
	const char *old = getenv("FUTEX_SPIN_MODE");
	char *saved = old ? strdup(old) : NULL;
	int ret;

	if (value)
		setenv("FUTEX_SPIN_MODE", value, 1);
	else
		unsetenv("FUTEX_SPIN_MODE");
	*mode = 0;
	ret = futex_spin_mode_from_env(mode);
	if (saved)
		setenv("FUTEX_SPIN_MODE", saved, 1);
	else
		unsetenv("FUTEX_SPIN_MODE");
	free(saved);
	return ret;
}

static int test_mode_env(void)
{
	enum futex_spin_mode probed, mode;
	int spin = !futex_spin_probe();

	probed = spin ? FUTEX_SPIN_MODE_SPIN : FUTEX_SPIN_MODE_WAITWAKE;
	CHECK_EQ(mode_for(NULL, &mode), 0);
	CHECK_EQ(mode, probed);
	CHECK_EQ(mode_for("", &mode), 0);
	CHECK_EQ(mode, probed);
	CHECK_EQ(mode_for("auto", &mode), 0);
	CHECK_EQ(mode, probed);
	CHECK_EQ(mode_for("waitwake", &mode), 0);
	CHECK_EQ(mode, FUTEX_SPIN_MODE_WAITWAKE);
	CHECK_EQ(mode_for("spin", &mode), spin ? 0 : ENOSYS);
	if (spin)
		CHECK_EQ(mode, FUTEX_SPIN_MODE_SPIN);
	/* Typos are errors, not a quiet probe */
	CHECK_EQ(mode_for("wait-wake", &mode), EINVAL);
	CHECK_EQ(mode_for("Spin", &mode), EINVAL);
	CHECK_EQ(mode_for("1", &mode), EINVAL);
	return 0;
}

static int test_word(void)
{
	struct futex_spin_mutex m = FUTEX_SPIN_MUTEX_INITIALIZER;

	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(m.word, gettid_());
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(m.word, 0);
	return 0;
}

static int test_trylock(void)
{
	struct futex_spin_mutex m = FUTEX_SPIN_MUTEX_INITIALIZER;

	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(futex_spin_mutex_trylock(&m), EBUSY);
	CHECK_EQ(in_thread(do_trylock, &m), EBUSY);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(in_thread(do_trylock, &m), 0);
	CHECK_EQ(futex_spin_mutex_trylock(&m), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	return 0;
}

static int test_errorcheck(void)
{
	struct futex_spin_mutex m;

	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_ERRORCHECK), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), EPERM);
	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), EDEADLK);
	CHECK_EQ(futex_spin_mutex_trylock(&m), EBUSY);
	CHECK_EQ(in_thread(do_unlock, &m), EPERM);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), EPERM);
	return 0;
}

static int test_recursive(void)
{
	struct futex_spin_mutex m;
	int i;

	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_RECURSIVE), 0);
	for (i = 0; i < 3; i++)
		CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(futex_spin_mutex_trylock(&m), 0);
	CHECK_EQ(in_thread(do_trylock, &m), EBUSY);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
		CHECK_EQ(in_thread(do_trylock, &m), EBUSY);
	}
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(in_thread(do_trylock, &m), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), EPERM);
	return 0;
}

struct timed {
	struct futex_spin_mutex *m;
	clockid_t clock;
	long ms;
	long long elapsed;
};

static void *do_timedlock(void *arg)
{
	struct timed *t = arg;
	struct timespec t0, d;
	long ret;

	/*
	 * Start the clock before reading it for the deadline: the other
	 * way round, a wakeup right at the deadline measures as less than
	 * the timeout by the time between the two reads (seen on one CPU).
	 */
	clock_gettime(t->clock, &t0);
	d = deadline(t->clock, t->ms);
	ret = futex_spin_mutex_timedlock(t->m, t->clock, &d);
	t->elapsed = ns_since(t->clock, &t0);
	if (!ret)
		futex_spin_mutex_unlock(t->m);
	return (void *)ret;
}

static int timedlock(clockid_t clock)
{
	struct futex_spin_mutex m = FUTEX_SPIN_MUTEX_INITIALIZER;
	struct timed t = { .m = &m, .clock = clock, .ms = 100 };

	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(in_thread(do_timedlock, &t), ETIMEDOUT);
	CHECK(t.elapsed >= 100 * 1000000LL);
	CHECK(t.elapsed < 10 * 1000000000LL);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(in_thread(do_timedlock, &t), 0);
	return 0;
}

static int test_timedlock_monotonic(void)
{
	return timedlock(CLOCK_MONOTONIC);
}

static int test_timedlock_realtime(void)
{
	return timedlock(CLOCK_REALTIME);
}

static void *do_badtime(void *m)
{
	struct timespec bad = { .tv_sec = 0, .tv_nsec = 1000000000L };

	return (void *)(long)futex_spin_mutex_timedlock(m, CLOCK_REALTIME, &bad);
}

static int test_timedlock_invalid(void)
{
	struct futex_spin_mutex m = FUTEX_SPIN_MUTEX_INITIALIZER;
	struct timespec past = { 0, 0 };

	CHECK_EQ(futex_spin_mutex_timedlock(&m, CLOCK_PROCESS_CPUTIME_ID,
					    &past), EINVAL);
	/* A free lock is taken whatever the deadline */
	CHECK_EQ(futex_spin_mutex_timedlock(&m, CLOCK_MONOTONIC, &past), 0);
	CHECK_EQ(in_thread(do_badtime, &m), EINVAL);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	return 0;
}

#define HAMMER_THREADS	4
#define HAMMER_LOOPS	5000

struct hammer {
	struct futex_spin_mutex m;
	long counter;
	int errors;
};

/* Lock, trylock and timedlock in turn, each with a non-atomic increment */
static void *hammer(void *arg)
{
	struct hammer *h = arg;
	struct timespec d;
	int i, ret;

	for (i = 0; i < HAMMER_LOOPS; i++) {
		switch (i % 3) {
		case 0:
			ret = futex_spin_mutex_lock(&h->m);
			break;
		case 1:
			while ((ret = futex_spin_mutex_trylock(&h->m)) == EBUSY)
				;
			break;
		default:
			d = deadline(CLOCK_MONOTONIC, 60000);
			ret = futex_spin_mutex_timedlock(&h->m, CLOCK_MONOTONIC, &d);
		}
		if (ret) {
			__atomic_add_fetch(&h->errors, 1, __ATOMIC_RELAXED);
			continue;
		}
		h->counter = *(volatile long *)&h->counter + 1;
		if (futex_spin_mutex_unlock(&h->m))
			__atomic_add_fetch(&h->errors, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int test_contention(void)
{
	static struct hammer h;
	pthread_t t[HAMMER_THREADS];
	int i;

	for (i = 0; i < HAMMER_THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, hammer, &h), 0);
	for (i = 0; i < HAMMER_THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(h.errors, 0);
	CHECK_EQ(h.counter, HAMMER_THREADS * HAMMER_LOOPS);
	CHECK_EQ(h.m.word, 0);
	return 0;
}

static int test_robust_owner_died(void)
{
	struct futex_spin_mutex m;

	/* 0 or an errno value, as every function here */
	CHECK_EQ(futex_spin_robust_available(), 0);
	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_ROBUST), 0);
	CHECK_EQ(in_thread(lock_and_exit, &m), 0);
	CHECK_EQ(m.word, FUTEX_OWNER_DIED);
	CHECK_EQ(futex_spin_mutex_lock(&m), EOWNERDEAD);
	CHECK_EQ(futex_spin_mutex_consistent(&m), 0);
	CHECK_EQ(futex_spin_mutex_consistent(&m), EINVAL);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	/* trylock sees the death too */
	CHECK_EQ(in_thread(lock_and_exit, &m), 0);
	CHECK_EQ(futex_spin_mutex_trylock(&m), EOWNERDEAD);
	CHECK_EQ(futex_spin_mutex_consistent(&m), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	return 0;
}

static int test_robust_notrecoverable(void)
{
	struct futex_spin_mutex m;

	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_ROBUST |
				       FUTEX_SPIN_MUTEX_RECURSIVE), 0);
	CHECK_EQ(in_thread(lock_and_exit, &m), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), EOWNERDEAD);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), ENOTRECOVERABLE);
	CHECK_EQ(futex_spin_mutex_trylock(&m), ENOTRECOVERABLE);
	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_ROBUST), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	return 0;
}

static void *lock_wait_exit(void *m)
{
	if (futex_spin_mutex_lock(m))
		return (void *)1L;
	usleep(200000);
	return NULL;
}

/* The owner dies while we sleep in the lock: its death wakes us */
static int test_robust_waiter(void)
{
	struct futex_spin_mutex m;
	struct timespec d;
	pthread_t t;

	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_ROBUST), 0);
	CHECK_EQ(pthread_create(&t, NULL, lock_wait_exit, &m), 0);
	while (!__atomic_load_n(&m.word, __ATOMIC_RELAXED))
		usleep(1000);
	d = deadline(CLOCK_MONOTONIC, 10000);
	CHECK_EQ(futex_spin_mutex_timedlock(&m, CLOCK_MONOTONIC, &d),
		 EOWNERDEAD);
	pthread_join(t, NULL);
	CHECK_EQ(futex_spin_mutex_consistent(&m), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	return 0;
}

struct mixed {
	struct futex_spin_mutex a, b, c;
	pthread_mutex_t g1, g2;
};

/*
 * Robust mutexes of glibc and of the library on the one robust list of
 * the thread, locked and unlocked interleaved: glibc's list handling and
 * ours must keep each other's entries.
 */
static void *lock_mixed(void *arg)
{
	struct mixed *x = arg;

	if (futex_spin_mutex_lock(&x->a) || pthread_mutex_lock(&x->g1) ||
	    futex_spin_mutex_lock(&x->b) || pthread_mutex_lock(&x->g2) ||
	    futex_spin_mutex_lock(&x->c))
		return (void *)1L;
	/* Remove from the middle, from the front, from the back */
	if (futex_spin_mutex_unlock(&x->b) || futex_spin_mutex_unlock(&x->c) ||
	    pthread_mutex_unlock(&x->g1))
		return (void *)2L;
	if (futex_spin_mutex_lock(&x->b) || futex_spin_mutex_lock(&x->c) ||
	    futex_spin_mutex_unlock(&x->c))
		return (void *)3L;
	return NULL;	/* dies holding a, g2 and b */
}

static int test_robust_glibc_mix(void)
{
	static struct mixed x;
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	CHECK_EQ(pthread_mutex_init(&x.g1, &attr), 0);
	CHECK_EQ(pthread_mutex_init(&x.g2, &attr), 0);
	CHECK_EQ(futex_spin_mutex_init(&x.a, FUTEX_SPIN_MUTEX_ROBUST), 0);
	CHECK_EQ(futex_spin_mutex_init(&x.b, FUTEX_SPIN_MUTEX_ROBUST), 0);
	CHECK_EQ(futex_spin_mutex_init(&x.c, FUTEX_SPIN_MUTEX_ROBUST), 0);
	CHECK_EQ(in_thread(lock_mixed, &x), 0);
	CHECK_EQ(futex_spin_mutex_lock(&x.a), EOWNERDEAD);
	CHECK_EQ(futex_spin_mutex_lock(&x.b), EOWNERDEAD);
	CHECK_EQ(futex_spin_mutex_lock(&x.c), 0);
	CHECK_EQ(pthread_mutex_lock(&x.g1), 0);
	CHECK_EQ(pthread_mutex_lock(&x.g2), EOWNERDEAD);
	/* Our own list must be intact: unlock everything in another order */
	CHECK_EQ(pthread_mutex_consistent(&x.g2), 0);
	CHECK_EQ(futex_spin_mutex_consistent(&x.a), 0);
	CHECK_EQ(futex_spin_mutex_consistent(&x.b), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&x.b), 0);
	CHECK_EQ(pthread_mutex_unlock(&x.g2), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&x.a), 0);
	CHECK_EQ(pthread_mutex_unlock(&x.g1), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&x.c), 0);
	return 0;
}

static void *shared_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int test_robust_process(void)
{
	struct futex_spin_mutex *m = shared_map(4096);
	int status;
	pid_t pid;

	CHECK(m);
	CHECK_EQ(futex_spin_mutex_init(m, FUTEX_SPIN_MUTEX_ROBUST |
				       FUTEX_SPIN_MUTEX_SHARED), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(futex_spin_mutex_lock(m) ? 1 : 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(futex_spin_mutex_lock(m), EOWNERDEAD);
	CHECK_EQ(futex_spin_mutex_consistent(m), 0);
	CHECK_EQ(futex_spin_mutex_unlock(m), 0);
	munmap(m, 4096);
	return 0;
}

struct shared_counter {
	struct futex_spin_mutex m;
	long counter;
};

static int count_shared(struct shared_counter *s)
{
	int i;

	for (i = 0; i < HAMMER_LOOPS; i++) {
		if (futex_spin_mutex_lock(&s->m))
			return 1;
		s->counter = *(volatile long *)&s->counter + 1;
		if (futex_spin_mutex_unlock(&s->m))
			return 1;
	}
	return 0;
}

static int test_shared_processes(void)
{
	struct shared_counter *s = shared_map(4096);
	int status, ret;
	pid_t pid;

	CHECK(s);
	CHECK_EQ(futex_spin_mutex_init(&s->m, FUTEX_SPIN_MUTEX_SHARED), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(count_shared(s));
	ret = count_shared(s);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(ret, 0);
	CHECK_EQ(s->counter, 2 * HAMMER_LOOPS);
	munmap(s, 4096);
	return 0;
}

static pid_t raw_clone(void)
{
	return syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
}

/*
 * A child has its own TID: the cached one must not follow it, also where
 * no atfork handler runs (_Fork, clone). A process-shared recursive
 * mutex the child dies holding stays held for the parent.
 */
static int test_fork_tid(void)
{
	static pid_t (*const spawn[])(void) = { fork, _Fork, raw_clone };
	struct futex_spin_mutex *m = shared_map(4096);
	unsigned int i;
	int status;
	pid_t pid;

	CHECK(m);
	for (i = 0; i < sizeof(spawn) / sizeof(spawn[0]); i++) {
		printf("# child %u\n", i);
		CHECK_EQ(futex_spin_mutex_init(m, FUTEX_SPIN_MUTEX_RECURSIVE |
					       FUTEX_SPIN_MUTEX_SHARED), 0);
		CHECK_EQ(futex_spin_mutex_lock(m), 0);
		CHECK_EQ(futex_spin_mutex_unlock(m), 0);
		pid = spawn[i]();
		CHECK(pid >= 0);
		if (!pid)
			_exit(futex_spin_mutex_lock(m) ||
			      m->word != (uint32_t)gettid_());
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK_EQ(status, 0);
		CHECK_EQ(futex_spin_mutex_trylock(m), EBUSY);
	}
	munmap(m, 4096);
	return 0;
}

static int test_destroy(void)
{
	struct futex_spin_mutex m = FUTEX_SPIN_MUTEX_INITIALIZER;

	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(futex_spin_mutex_destroy(&m), EBUSY);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(futex_spin_mutex_destroy(&m), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), EINVAL);
	CHECK_EQ(futex_spin_mutex_init(&m, 0x100), EINVAL);
	return 0;
}

static void *do_negative_deadline(void *m)
{
	struct timespec neg = { .tv_sec = -1, .tv_nsec = 0 };
	long a = futex_spin_mutex_timedlock(m, CLOCK_REALTIME, &neg);
	long b = futex_spin_mutex_timedlock(m, CLOCK_MONOTONIC, &neg);

	return (void *)(a == ETIMEDOUT && b == ETIMEDOUT ? 0L : a ? a : b);
}

/* A deadline before the epoch has passed: ETIMEDOUT, not the kernel's EINVAL */
static int test_timedlock_negative(void)
{
	struct futex_spin_mutex m = FUTEX_SPIN_MUTEX_INITIALIZER;
	struct timespec neg = { .tv_sec = -1, .tv_nsec = 0 };

	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(in_thread(do_negative_deadline, &m), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(futex_spin_mutex_timedlock(&m, CLOCK_REALTIME, &neg), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	return 0;
}

/* A normal mutex as a binary semaphore: any thread may release it */
static int test_unlock_by_other(void)
{
	struct futex_spin_mutex m;

	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_NORMAL), 0);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(in_thread(do_unlock, &m), 0);
	CHECK_EQ(m.word, 0);
	CHECK_EQ(in_thread(do_trylock, &m), 0);
	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_ERRORCHECK), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(in_thread(do_unlock, &m), EPERM);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_ROBUST), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(in_thread(do_unlock, &m), EPERM);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	return 0;
}

struct sem {
	struct futex_spin_mutex m;
	int posted;
};

static void *post_later(void *arg)
{
	struct sem *s = arg;

	usleep(20000);
	s->posted = 1;
	return (void *)(long)futex_spin_mutex_unlock(&s->m);
}

/* Released by another thread while the owner's second lock sleeps */
static int test_unlock_wakes_waiter(void)
{
	static struct sem s;
	pthread_t t;
	void *ret;

	CHECK_EQ(futex_spin_mutex_init(&s.m, FUTEX_SPIN_MUTEX_NORMAL), 0);
	CHECK_EQ(futex_spin_mutex_lock(&s.m), 0);
	CHECK_EQ(pthread_create(&t, NULL, post_later, &s), 0);
	/* Not a relock: the word may be another's by the time we look */
	CHECK_EQ(in_thread(lock_and_exit, &s.m), 0);
	CHECK_EQ(s.posted, 1);
	CHECK_EQ(pthread_join(t, &ret), 0);
	CHECK_EQ((long)ret, 0);
	return 0;
}

/* In a child with a time limit: a hang fails instead of stopping the run */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		alarm(5);
		_exit(fn());
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status)) {
		printf("# child killed by signal %d\n", WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}

static int garbage_calls(void)
{
	struct futex_spin_mutex m;
	struct timespec t = { 0, 0 };
	int i;

	for (i = 0; i < 3; i++) {
		memset(&m, i ? 0x04 + i : 0xff, sizeof(m));
		CHECK_EQ(futex_spin_mutex_lock(&m), EINVAL);
		CHECK_EQ(futex_spin_mutex_trylock(&m), EINVAL);
		CHECK_EQ(futex_spin_mutex_timedlock(&m, CLOCK_MONOTONIC, &t),
			 EINVAL);
		CHECK_EQ(futex_spin_mutex_unlock(&m), EINVAL);
		CHECK_EQ(futex_spin_mutex_consistent(&m), EINVAL);
	}
	return 0;
}

/* Bytes that are no mutex: EINVAL, as glibc, not a wait for their "owner" */
static int test_garbage(void)
{
	return in_child(garbage_calls);
}

static void *cond_signal_later(void *arg)
{
	struct futex_spin_cond *c = arg;

	usleep(20000);
	return (void *)(long)futex_spin_cond_signal(c);
}

static int test_cond(void)
{
	struct futex_spin_cond c = FUTEX_SPIN_COND_INITIALIZER;
	struct futex_spin_mutex m;
	struct timespec neg = { -1, 0 }, bad = { 0, 1000000000L }, d;
	pthread_t t;
	int i;

	CHECK_EQ(futex_spin_cond_init(&c, 0x100), EINVAL);
	/* The preload's flag for pthread_cond_timedwait's clock: not ours */
	CHECK_EQ(futex_spin_cond_init(&c, 0x1), EINVAL);
	CHECK_EQ(futex_spin_cond_init(&c, FUTEX_SPIN_COND_SHARED), 0);
	CHECK_EQ(futex_spin_cond_init(&c, 0), 0);
	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_RECURSIVE), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	CHECK_EQ(futex_spin_mutex_lock(&m), 0);
	/* Deadlines before the epoch time out, every time */
	for (i = 0; i < 3; i++)
		CHECK_EQ(futex_spin_cond_timedwait(&c, &m, CLOCK_REALTIME, &neg),
			 ETIMEDOUT);
	CHECK_EQ(futex_spin_cond_timedwait(&c, &m, CLOCK_MONOTONIC, &neg),
		 ETIMEDOUT);
	CHECK_EQ(futex_spin_cond_timedwait(&c, &m, CLOCK_MONOTONIC, &bad),
		 EINVAL);
	CHECK_EQ(futex_spin_cond_timedwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID,
					   &neg), EINVAL);
	d = deadline(CLOCK_MONOTONIC, 10);
	CHECK_EQ(futex_spin_cond_timedwait(&c, &m, CLOCK_MONOTONIC, &d),
		 ETIMEDOUT);
	/* Woken; the recursion count survives the wait */
	CHECK_EQ(pthread_create(&t, NULL, cond_signal_later, &c), 0);
	CHECK_EQ(futex_spin_cond_wait(&c, &m), 0);
	pthread_join(t, NULL);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(in_thread(do_trylock, &m), EBUSY);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(in_thread(do_trylock, &m), 0);
	/* Not holding an errorcheck mutex: EPERM; a normal one: as glibc */
	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_ERRORCHECK), 0);
	CHECK_EQ(futex_spin_cond_timedwait(&c, &m, CLOCK_REALTIME, &neg), EPERM);
	CHECK_EQ(futex_spin_mutex_init(&m, FUTEX_SPIN_MUTEX_NORMAL), 0);
	CHECK_EQ(futex_spin_cond_timedwait(&c, &m, CLOCK_REALTIME, &neg),
		 ETIMEDOUT);
	CHECK_EQ(in_thread(do_trylock, &m), EBUSY);
	CHECK_EQ(futex_spin_mutex_unlock(&m), 0);
	CHECK_EQ(futex_spin_cond_destroy(&c), 0);
	return 0;
}

static const struct tap_test tests[] = {
	{ "probe and mode", test_probe },
	{ "FUTEX_SPIN_MODE: spin, waitwake, auto, errors", test_mode_env },
	{ "lock word holds the TID", test_word },
	{ "trylock", test_trylock },
	{ "errorcheck", test_errorcheck },
	{ "recursive", test_recursive },
	{ "timedlock CLOCK_MONOTONIC", test_timedlock_monotonic },
	{ "timedlock CLOCK_REALTIME", test_timedlock_realtime },
	{ "timedlock invalid clock and timespec", test_timedlock_invalid },
	{ "contention keeps mutual exclusion", test_contention },
	{ "robust: EOWNERDEAD and consistent", test_robust_owner_died },
	{ "robust: ENOTRECOVERABLE", test_robust_notrecoverable },
	{ "robust: owner death wakes a waiter", test_robust_waiter },
	{ "robust: shares glibc's robust list", test_robust_glibc_mix },
	{ "robust: shared between processes", test_robust_process },
	{ "shared between processes", test_shared_processes },
	{ "fork child uses its own TID", test_fork_tid },
	{ "destroy", test_destroy },
	{ "timedlock: a deadline before 1970 times out", test_timedlock_negative },
	{ "unlock of a normal mutex by another thread", test_unlock_by_other },
	{ "unlock by another thread wakes a waiter", test_unlock_wakes_waiter },
	{ "garbage: EINVAL, no hang", test_garbage },
	{ "condition variable", test_cond },
};

int main(void)
{
	return tap_run("futex-spin-lib:", tests,
		       sizeof(tests) / sizeof(tests[0]));
}
