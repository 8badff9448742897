// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The differential test: every pthread call the preload implements, on
 * the same inputs, misuse included. Built against plain glibc, it prints
 * one line per case, "name: result result ...", the results being what
 * each call returned (errno names), what a check saw, and HANG or a signal
 * name when the case did not finish. tests/run.sh runs it without and
 * with the preload and compares the lines; a difference must be listed in
 * tests/differences.txt (and so in the README's table).
 *
 * Each case runs in a child process of its own with a time limit, so that
 * a hang or a crash in one (glibc deadlocks on a relocked normal mutex)
 * shows as its result and the others still run. The limit is on the time
 * without a new result: a case that goes on giving them (the rounds of
 * "waiters") is not cut short on a slow machine, one stuck in a call is.
 * Nothing depends on timing: deadlines are in the past, other threads
 * are joined.
 *
 *   test-diff            all cases
 *   test-diff NAME...    the cases of these names (as printed; globs) only
 *   test-diff --probe    exit 0 when the kernel has FUTEX_SPIN_LOCK
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <linux/futex.h>

#ifndef FUTEX_SPIN_UNLOCK
#define FUTEX_SPIN_UNLOCK	15
#endif

/*
 * Generous for one step of a case: a debug kernel under TCG, three runs
 * at once on two vCPUs of a loaded host
 */
#define CASE_LIMIT_MS	3000

/* (Re)start the running case's time limit: SIGALRM, a HANG, at its end */
static void arm_limit(void)
{
	static const struct itimerval limit = {
		.it_value = { CASE_LIMIT_MS / 1000, CASE_LIMIT_MS % 1000 * 1000 },
	};

	setitimer(ITIMER_REAL, &limit, NULL);
}

static int out_fd = -1;

/* While set, res() keeps the results here too, or only (keep_only) */
static char *kept;
static size_t kept_len;
static bool keep_only;

#define KEPT_SIZE	1024

/*
 * One result of the running case, written at once: a hang keeps it. The
 * case has CASE_LIMIT_MS from now for its next one.
 */
static void res(const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	arm_limit();
	buf[0] = ' ';
	va_start(ap, fmt);
	n = vsnprintf(buf + 1, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	if (kept) {
		if (kept_len + n + 1 < KEPT_SIZE) {
			memcpy(kept + kept_len, buf, n + 1);
			kept_len += n + 1;
			kept[kept_len] = 0;
		}
		if (keep_only)
			return;
	}
	if (write(out_fd, buf, n + 1) < 0)
		_exit(3);
}

static void r(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	if (name)
		res("%s", name);
	else
		res("E%d", err);
}

/* Mutex variants: type, robust, process-shared, protocol */
struct variant {
	const char *name;
	int type;
	int robust, pshared, proto;
};

#define ROBUST	.robust = 1
#define SHARED	.pshared = 1
#define PI	.proto = PTHREAD_PRIO_INHERIT

static const struct variant variants[] = {
	{ .name = "normal", .type = PTHREAD_MUTEX_NORMAL },
	{ .name = "default", .type = PTHREAD_MUTEX_DEFAULT },
	{ .name = "errorcheck", .type = PTHREAD_MUTEX_ERRORCHECK },
	{ .name = "recursive", .type = PTHREAD_MUTEX_RECURSIVE },
	{ .name = "adaptive", .type = PTHREAD_MUTEX_ADAPTIVE_NP },
	{ .name = "normal-robust", .type = PTHREAD_MUTEX_NORMAL, ROBUST },
	{ .name = "errorcheck-robust", .type = PTHREAD_MUTEX_ERRORCHECK, ROBUST },
	{ .name = "recursive-robust", .type = PTHREAD_MUTEX_RECURSIVE, ROBUST },
	{ .name = "normal-shared", .type = PTHREAD_MUTEX_NORMAL, SHARED },
	{ .name = "recursive-shared", .type = PTHREAD_MUTEX_RECURSIVE, SHARED },
	{ .name = "recursive-shared-robust", .type = PTHREAD_MUTEX_RECURSIVE, ROBUST, SHARED },
	{ .name = "errorcheck-shared-robust", .type = PTHREAD_MUTEX_ERRORCHECK, ROBUST, SHARED },
	{ .name = "normal-pi", .type = PTHREAD_MUTEX_NORMAL, PI },
	{ .name = "errorcheck-pi", .type = PTHREAD_MUTEX_ERRORCHECK, PI },
};

static const struct variant *v;

/* Shared memory for a process-shared mutex, else a fork child's copy */
static void *new_page(int shared)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_ANONYMOUS |
		       (shared ? MAP_SHARED : MAP_PRIVATE), -1, 0);

	if (p == MAP_FAILED)
		_exit(4);
	return p;
}

static pthread_mutex_t *new_mutex(void)
{
	pthread_mutex_t *m = new_page(v->pshared);
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, v->type);
	if (v->robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (v->pshared)
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (v->proto)
		pthread_mutexattr_setprotocol(&a, v->proto);
	r(pthread_mutex_init(m, &a));
	pthread_mutexattr_destroy(&a);
	return m;
}

typedef long (*thread_fn)(pthread_mutex_t *m);

/* @fn(@m) in a thread of its own: call_start() to call_end() */
struct call {
	thread_fn fn;
	pthread_mutex_t *m;
	pthread_t t;
	pid_t tid;
	int done;
	long ret;
};

static void *call_thread(void *arg)
{
	struct call *c = arg;

	__atomic_store_n(&c->tid, gettid(), __ATOMIC_RELEASE);
	c->ret = c->fn(c->m);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void call_start(struct call *c, thread_fn fn, pthread_mutex_t *m)
{
	memset(c, 0, sizeof(*c));
	c->fn = fn;
	c->m = m;
	if (pthread_create(&c->t, NULL, call_thread, c))
		_exit(5);
}

static long call_end(struct call *c)
{
	if (pthread_join(c->t, NULL))
		_exit(5);
	return c->ret;
}

/* @fn(@m) in another thread that then exits: its result */
static int other(thread_fn fn, pthread_mutex_t *m)
{
	struct call c;

	call_start(&c, fn, m);
	return call_end(&c);
}

/*
 * Until the thread @id of this process (@dir "/proc/self/task") or the
 * process @id (@dir "/proc") sleeps, or *@done is set: it is then waiting
 * in the call it was about to make. A thread whose call returned at once
 * may set *@done and be gone between the look at it and the open of its
 * stat file: only a thread that is gone without setting it is an error.
 */
static void wait_asleep(const char *dir, pid_t id, const int *done)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", dir, id);
	while (!done || !__atomic_load_n(done, __ATOMIC_ACQUIRE)) {
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			if (done && __atomic_load_n(done, __ATOMIC_ACQUIRE))
				return;
			_exit(6);
		}
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		p = strrchr(buf, ')');
		if (p && !strncmp(p, ") S", 3))
			return;
		usleep(1000);
	}
}

/* call_start(), and return once the thread sleeps in @fn or is done */
static void call_asleep(struct call *c, thread_fn fn, pthread_mutex_t *m)
{
	call_start(c, fn, m);
	while (!__atomic_load_n(&c->tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	wait_asleep("/proc/self/task", c->tid, &c->done);
}

/* After a lock call's result @ret: unlock @m if it was taken */
static long unlock_taken(pthread_mutex_t *m, long ret)
{
	if (!ret || ret == EOWNERDEAD)
		pthread_mutex_unlock(m);
	return ret;
}

static long t_lock(pthread_mutex_t *m) { return pthread_mutex_lock(m); }
static long t_unlock(pthread_mutex_t *m) { return pthread_mutex_unlock(m); }
/* Leave it as found, but say whether it was free */
static long t_trylock(pthread_mutex_t *m)
{
	return unlock_taken(m, pthread_mutex_trylock(m));
}

static const struct timespec past = { 0, 0 };

/* Whether another thread finds @m free: "free" or "held" */
static void probe_free(pthread_mutex_t *m)
{
	int ret = other(t_trylock, m);

	res("%s", ret == EBUSY ? "held" : ret ? strerrorname_np(ret) : "free");
}

/* Lock, trylock and unlock by the owner, unlock of an unlocked mutex */
static void c_basic(void)
{
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_lock(m));
	r(pthread_mutex_trylock(m));
	r(pthread_mutex_unlock(m));
	probe_free(m);
	r(pthread_mutex_unlock(m));
	probe_free(m);
	r(pthread_mutex_unlock(m));
	r(pthread_mutex_trylock(m));
	r(pthread_mutex_unlock(m));
}

/* glibc counts users: an extra unlock leaves it "busy" for destroy */
static void c_destroy_extra_unlock(void)
{
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_lock(m));
	r(pthread_mutex_unlock(m));
	r(pthread_mutex_unlock(m));
	r(pthread_mutex_destroy(m));
}

static void c_relock(void)
{
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_lock(m));
	r(pthread_mutex_lock(m));
	r(pthread_mutex_unlock(m));
	r(pthread_mutex_unlock(m));
	probe_free(m);
}

static long relock_first, relock_timed;

/* Lock, then lock again: timed (1 s) or not */
static long t_relock(pthread_mutex_t *m)
{
	struct timespec ts;

	relock_first = pthread_mutex_lock(m);
	if (!relock_timed)
		return pthread_mutex_lock(m);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec++;
	return pthread_mutex_timedlock(m, &ts);
}

/*
 * The owner locks again and sleeps; another thread unlocks it: a binary
 * semaphore, which a normal mutex can be
 */
static void c_relock_other_unlock(void)
{
	struct call c;
	pthread_mutex_t *m;

	for (relock_timed = 1; relock_timed >= 0; relock_timed--) {
		res(relock_timed ? "timed:" : "lock:");
		m = new_mutex();
		call_asleep(&c, t_relock, m);
		r(pthread_mutex_unlock(m));
		r(call_end(&c));
		r(relock_first);
		probe_free(m);
	}
}

static void c_unlock_unowned(void)
{
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_unlock(m));
	probe_free(m);
	r(pthread_mutex_lock(m));
	r(pthread_mutex_unlock(m));
}

/* A thread unlocks a mutex another holds: a binary semaphore's use */
static void c_unlock_other(void)
{
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_lock(m));
	r(other(t_unlock, m));
	probe_free(m);
	r(pthread_mutex_unlock(m));
	probe_free(m);
}

/* Held by a thread that is still alive while this one unlocks it */
struct holder {
	pthread_mutex_t *m;
	pthread_mutex_t gate;
	pthread_t t;
	int state;
};

static void *hold(void *arg)
{
	struct holder *h = arg;

	h->state = pthread_mutex_lock(h->m) ? -1 : 1;
	/* glibc's mutex: the gate is not one under test */
	while (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == 1)
		usleep(1000);
	r(pthread_mutex_unlock(h->m));
	return NULL;
}

static void hold_start(struct holder *h, pthread_mutex_t *m)
{
	h->m = m;
	h->state = 0;
	if (pthread_create(&h->t, NULL, hold, h))
		_exit(5);
	while (!__atomic_load_n(&h->state, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static void hold_end(struct holder *h)
{
	__atomic_store_n(&h->state, 2, __ATOMIC_RELEASE);
	pthread_join(h->t, NULL);
}

static void c_unlock_live_owner(void)
{
	pthread_mutex_t *m = new_mutex();
	struct holder h;

	hold_start(&h, m);
	r(pthread_mutex_unlock(m));
	r(pthread_mutex_trylock(m));
	hold_end(&h);
	probe_free(m);
}

static long t_timed(pthread_mutex_t *m, const struct timespec *ts)
{
	long ret = pthread_mutex_timedlock(m, ts);

	if (!ret)
		pthread_mutex_unlock(m);
	return ret;
}

static const struct timespec timespecs[] = {
	{ 0, 0 }, { -1, 0 }, { -1, 999999999 }, { -100000, 5 },
	{ 0, 1000000000 }, { 0, -1 }, { -1, -1 }, { 1, 0 },
};

#define NTIMESPECS (sizeof(timespecs) / sizeof(timespecs[0]))

static long timed_i;
static long t_timed_i(pthread_mutex_t *m) { return t_timed(m, &timespecs[timed_i]); }

/* Deadlines in the past, negative, invalid: on a free and a held mutex */
static void c_timedlock(void)
{
	pthread_mutex_t *m = new_mutex();

	for (timed_i = 0; timed_i < (long)NTIMESPECS; timed_i++)
		r(t_timed(m, &timespecs[timed_i]));
	r(pthread_mutex_lock(m));
	for (timed_i = 0; timed_i < (long)NTIMESPECS; timed_i++)
		r(other(t_timed_i, m));
	/* By the owner: a relock, with each deadline */
	res("own:");
	for (timed_i = 0; timed_i < (long)NTIMESPECS; timed_i++)
		r(pthread_mutex_timedlock(m, &timespecs[timed_i]));
	r(pthread_mutex_unlock(m));
}

static const clockid_t clocks[] = {
	CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID,
	CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME, -1, 12345,
};

#define NCLOCKS (sizeof(clocks) / sizeof(clocks[0]))

static long clock_i;
static long t_clock_i(pthread_mutex_t *m)
{
	long ret = pthread_mutex_clocklock(m, clocks[clock_i], &past);

	if (!ret)
		pthread_mutex_unlock(m);
	return ret;
}

static void c_clocklock(void)
{
	pthread_mutex_t *m = new_mutex();

	for (clock_i = 0; clock_i < (long)NCLOCKS; clock_i++)
		r(t_clock_i(m));
	r(pthread_mutex_lock(m));
	for (clock_i = 0; clock_i < (long)NCLOCKS; clock_i++)
		r(other(t_clock_i, m));
	r(pthread_mutex_unlock(m));
}

static long t_timed_null(pthread_mutex_t *m)
{
	return t_timed(m, NULL);
}

/* No deadline: the free mutex is taken; on a held one, no answer is right */
static void c_timed_null(void)
{
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_timedlock(m, NULL));
	r(pthread_mutex_unlock(m));
	r(pthread_mutex_lock(m));
	r(other(t_timed_null, m));
}

static void c_destroy(void)
{
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_lock(m));
	r(pthread_mutex_destroy(m));
	r(pthread_mutex_unlock(m));
	r(pthread_mutex_destroy(m));
	/* Used after destroy */
	r(pthread_mutex_trylock(m));
	r(pthread_mutex_unlock(m));
	r(pthread_mutex_destroy(m));
}

static void c_consistent(void)
{
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_consistent(m));
	r(pthread_mutex_lock(m));
	r(pthread_mutex_consistent(m));
	r(pthread_mutex_unlock(m));
}

/* The owner exits holding it: robust ones say so, others stay held */
static void c_owner_died(void)
{
	pthread_mutex_t *m = new_mutex();

	r(other(t_lock, m));
	r(pthread_mutex_trylock(m));
	if (!v->robust)
		return;
	r(pthread_mutex_consistent(m));
	r(pthread_mutex_unlock(m));
	r(other(t_lock, m));
	r(pthread_mutex_lock(m));
	r(pthread_mutex_unlock(m));
	r(pthread_mutex_lock(m));
	r(pthread_mutex_trylock(m));
	r(pthread_mutex_timedlock(m, &past));
	r(pthread_mutex_consistent(m));
	r(pthread_mutex_destroy(m));
}

static long t_lock_unlock(pthread_mutex_t *m)
{
	return unlock_taken(m, pthread_mutex_lock(m));
}

static int cmp_long(const void *a, const void *b)
{
	return *(const long *)a < *(const long *)b ? -1 :
	       *(const long *)a > *(const long *)b;
}

#define NWAITERS	3
#define WAITER_ROUNDS	20

/*
 * Waiters asleep on a mutex when it is unlocked: each gets it in turn;
 * a robust one unlocked after EOWNERDEAD turns unrecoverable under them.
 */
static void waiters_round(void)
{
	pthread_mutex_t *m = new_mutex();
	struct call w[NWAITERS];
	long rets[NWAITERS];
	int i;

	if (v->robust)
		r(other(t_lock, m));
	r(pthread_mutex_lock(m));
	for (i = 0; i < NWAITERS; i++)
		call_asleep(&w[i], t_lock_unlock, m);
	r(pthread_mutex_unlock(m));
	for (i = 0; i < NWAITERS; i++)
		rets[i] = call_end(&w[i]);
	qsort(rets, NWAITERS, sizeof(rets[0]), cmp_long);
	res("waiters:");
	for (i = 0; i < NWAITERS; i++)
		r(rets[i]);
	r(t_lock_unlock(m));
	munmap(m, 4096);
}

/* Rounds, as the waiters race: the first, then any that differs from it */
static void c_waiters(void)
{
	char first[KEPT_SIZE] = "", buf[KEPT_SIZE];
	int i;

	kept = first;
	kept_len = 0;
	waiters_round();
	kept = buf;
	keep_only = true;
	for (i = 1; i < WAITER_ROUNDS; i++) {
		buf[0] = 0;
		kept_len = 0;
		waiters_round();
		if (strcmp(buf, first))
			dprintf(out_fd, " round%d:%s", i, buf);
	}
	kept = NULL;
	keep_only = false;
}

static void c_fork(void)
{
	pthread_mutex_t *m = new_mutex();
	int status;
	pid_t pid;

	r(pthread_mutex_lock(m));
	pid = fork();
	if (!pid) {
		res("child:");
		r(pthread_mutex_unlock(m));
		r(pthread_mutex_trylock(m));
		_exit(0);
	}
	waitpid(pid, &status, 0);
	res("parent:");
	r(pthread_mutex_unlock(m));
}

/* The child processes fork() makes, and those it does not see */
static pid_t raw_clone(void)
{
	return syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
}

static const struct {
	const char *name;
	pid_t (*spawn)(void);
} spawners[] = {
	{ "fork", fork },
	{ "_Fork", _Fork },
	{ "clone", raw_clone },
};

/*
 * A thread that has locked before (and knows its TID) makes a child that
 * locks the mutex and exits holding it; then the thread tries it. A
 * process-shared mutex is held by the dead child, or was (robust).
 */
static void c_fork_like(void)
{
	pthread_mutex_t *m;
	unsigned int i;
	int status, ret;
	pid_t pid;

	for (i = 0; i < sizeof(spawners) / sizeof(spawners[0]); i++) {
		res("%s:", spawners[i].name);
		m = new_mutex();
		r(pthread_mutex_lock(m));
		r(pthread_mutex_unlock(m));
		pid = spawners[i].spawn();
		if (!pid) {
			r(pthread_mutex_lock(m));
			_exit(0);
		}
		waitpid(pid, &status, 0);
		ret = pthread_mutex_timedlock(m, &past);
		r(ret);
		if (!ret || ret == EOWNERDEAD)
			r(pthread_mutex_unlock(m));
	}
}

/* Condition variables */

static pthread_cond_t *new_cond(clockid_t clock, int pshared)
{
	pthread_cond_t *c = new_page(pshared);
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, clock);
	if (pshared)
		pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	r(pthread_cond_init(c, &a));
	pthread_condattr_destroy(&a);
	return c;
}

/* Timed waits that end at once: past, negative, invalid deadlines */
static void c_cond_timed(void)
{
	pthread_cond_t *c = new_cond(CLOCK_REALTIME, 0);
	pthread_mutex_t *m = new_mutex();
	unsigned int i;

	r(pthread_mutex_lock(m));
	for (i = 0; i < NTIMESPECS; i++) {
		if (timespecs[i].tv_sec > 0)
			continue;
		r(pthread_cond_timedwait(c, m, &timespecs[i]));
	}
	probe_free(m);
	r(pthread_mutex_unlock(m));
	r(pthread_cond_destroy(c));
}

static void c_cond_clock(void)
{
	pthread_cond_t *c = new_cond(CLOCK_MONOTONIC, 0);
	pthread_mutex_t *m = new_mutex();
	unsigned int i;

	r(pthread_mutex_lock(m));
	r(pthread_cond_timedwait(c, m, &past));
	for (i = 0; i < NCLOCKS; i++)
		r(pthread_cond_clockwait(c, m, clocks[i], &past));
	r(pthread_cond_clockwait(c, m, CLOCK_MONOTONIC, &timespecs[1]));
	r(pthread_cond_clockwait(c, m, CLOCK_MONOTONIC, &timespecs[4]));
	probe_free(m);
	r(pthread_mutex_unlock(m));
	r(pthread_cond_destroy(c));
}

/* Waiting without holding the mutex: after it, who holds it? */
static void c_cond_unheld(void)
{
	pthread_cond_t *c = new_cond(CLOCK_REALTIME, 0);
	pthread_mutex_t *m = new_mutex();

	r(pthread_cond_timedwait(c, m, &past));
	probe_free(m);
	r(pthread_mutex_unlock(m));
	probe_free(m);
	r(pthread_cond_timedwait(c, m, &timespecs[1]));
	r(pthread_mutex_unlock(m));
}

static void c_cond_recursive(void)
{
	pthread_cond_t *c = new_cond(CLOCK_REALTIME, 0);
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_lock(m));
	r(pthread_mutex_trylock(m));
	r(pthread_cond_timedwait(c, m, &past));
	r(pthread_mutex_unlock(m));
	probe_free(m);
	r(pthread_mutex_unlock(m));
	probe_free(m);
	r(pthread_mutex_unlock(m));
}

static pthread_cond_t *during_cond;
static int during_go;
static long during_rets[5];

/*
 * Lock (a recursive mutex twice), wait until told to go, unlock as often;
 * the results in during_rets[], for the main thread to print in order
 */
static long t_wait_held(pthread_mutex_t *m)
{
	int depth = v->type == PTHREAD_MUTEX_RECURSIVE ? 2 : 1, i, n = 0;
	long ret = 0;

	for (i = 0; i < depth; i++)
		during_rets[n++] = pthread_mutex_lock(m);
	while (!__atomic_load_n(&during_go, __ATOMIC_ACQUIRE) && !ret)
		ret = pthread_cond_wait(during_cond, m);
	during_rets[n++] = ret;
	for (i = 0; i < depth; i++)
		during_rets[n++] = pthread_mutex_unlock(m);
	return n;
}

/* What another thread finds while one waits: the mutex free or held */
static void c_cond_during(void)
{
	struct call c;
	pthread_mutex_t *m;
	long i, n;

	during_cond = new_cond(CLOCK_REALTIME, v->pshared);
	m = new_mutex();
	call_asleep(&c, t_wait_held, m);
	res("during:");
	probe_free(m);
	__atomic_store_n(&during_go, 1, __ATOMIC_RELEASE);
	r(pthread_cond_signal(during_cond));
	n = call_end(&c);
	res("waiter:");
	for (i = 0; i < n; i++)
		r(during_rets[i]);
	probe_free(m);
}

struct signaller {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int flag, broadcast;
};

static void *signal_it(void *arg)
{
	struct signaller *s = arg;

	pthread_mutex_lock(s->m);
	s->flag = 1;
	if (s->broadcast)
		r(pthread_cond_broadcast(s->c));
	else
		r(pthread_cond_signal(s->c));
	pthread_mutex_unlock(s->m);
	return NULL;
}

/* An untimed wait woken by signal, then by broadcast */
static void c_cond_wake(void)
{
	pthread_cond_t *c = new_cond(CLOCK_REALTIME, v->pshared);
	struct signaller s = { .c = c };
	pthread_t t;
	int ret;

	s.m = new_mutex();
	r(pthread_cond_signal(c));
	r(pthread_cond_broadcast(c));
	for (s.broadcast = 0; s.broadcast < 2; s.broadcast++) {
		r(pthread_mutex_lock(s.m));
		s.flag = 0;
		pthread_create(&t, NULL, signal_it, &s);
		ret = 0;
		while (!s.flag && !ret)
			ret = pthread_cond_wait(c, s.m);
		r(ret);
		r(pthread_mutex_unlock(s.m));
		pthread_join(t, NULL);
	}
	r(pthread_cond_destroy(c));
}

/* errno: what main() found, and a value no call here should leave */
static int main_errno;

#define ERRNO_MARK	EXDEV

/* Whether the calls since the last look left errno alone */
static void errno_kept(void)
{
	res("%s", errno == ERRNO_MARK ? "kept" :
	    errno ? strerrorname_np(errno) : "0");
	errno = ERRNO_MARK;
}

struct errno_peer {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	pthread_t t;
	pid_t main_tid;
	int locked, go, flag;
};

/* Hold the mutex until the main thread sleeps in its lock, then unlock */
static void *hold_until_asleep(void *arg)
{
	struct errno_peer *p = arg;

	pthread_mutex_lock(p->m);
	__atomic_store_n(&p->locked, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&p->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	wait_asleep("/proc/self/task", p->main_tid, NULL);
	pthread_mutex_unlock(p->m);
	return NULL;
}

static int errno_during;

static void errno_handler(int sig)
{
	errno_during = errno;
}

/* Interrupt the main thread's wait with a signal, then end it */
static void *interrupt_wait(void *arg)
{
	struct errno_peer *p = arg;

	wait_asleep("/proc/self/task", p->main_tid, NULL);
	pthread_kill(p->t, SIGUSR1);
	pthread_mutex_lock(p->m);
	p->flag = 1;
	pthread_cond_signal(p->c);
	pthread_mutex_unlock(p->m);
	return NULL;
}

/* A deadline 20 ms ahead on CLOCK_REALTIME: nobody ends the wait before */
static void soon(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += 20000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/*
 * errno as main() found it, and after each kind of call: contended,
 * timing out, sleeping in a wait, and in a signal handler during a wait
 */
static void c_errno(void)
{
	struct sigaction sa = { .sa_handler = errno_handler };
	struct errno_peer p = { .main_tid = gettid(), .t = pthread_self() };
	struct timespec ts;
	pthread_t t;
	int ret;

	res("main: %s", main_errno ? strerrorname_np(main_errno) : "0");
	errno = ERRNO_MARK;
	p.m = new_mutex();
	p.c = new_cond(CLOCK_REALTIME, 0);
	errno_kept();
	r(pthread_mutex_lock(p.m));
	r(pthread_mutex_unlock(p.m));
	errno_kept();
	if (pthread_create(&t, NULL, hold_until_asleep, &p))
		_exit(5);
	while (!__atomic_load_n(&p.locked, __ATOMIC_ACQUIRE))
		usleep(1000);
	errno = ERRNO_MARK;
	res("held:");
	r(pthread_mutex_trylock(p.m));
	errno_kept();
	r(pthread_mutex_timedlock(p.m, &past));
	errno_kept();
	soon(&ts);
	r(pthread_mutex_timedlock(p.m, &ts));
	errno_kept();
	__atomic_store_n(&p.go, 1, __ATOMIC_RELEASE);
	r(pthread_mutex_lock(p.m));
	errno_kept();
	pthread_join(t, NULL);
	errno = ERRNO_MARK;
	res("cond:");
	r(pthread_cond_timedwait(p.c, p.m, &past));
	errno_kept();
	soon(&ts);
	r(pthread_cond_timedwait(p.c, p.m, &ts));
	errno_kept();
	sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&t, NULL, interrupt_wait, &p))
		_exit(5);
	errno = ERRNO_MARK;
	ret = 0;
	while (!p.flag && !ret)
		ret = pthread_cond_wait(p.c, p.m);
	r(ret);
	errno_kept();
	res("during: %s", errno_during == ERRNO_MARK ? "kept" :
	    strerrorname_np(errno_during));
	r(pthread_mutex_unlock(p.m));
	pthread_join(t, NULL);
	errno_kept();
}

static void c_cond_static(void)
{
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_t *m = new_mutex();

	r(pthread_mutex_lock(m));
	r(pthread_cond_timedwait(&c, m, &past));
	r(pthread_cond_signal(&c));
	r(pthread_mutex_unlock(m));
	r(pthread_cond_destroy(&c));
}

static void *destroy_cond(void *c)
{
	return (void *)(long)pthread_cond_destroy(c);
}

/*
 * A process killed in its wait on a process-shared condvar never leaves
 * it: destroy waits for good, as glibc's does. Asleep, or spinning? Its
 * thread's CPU time over half a second says.
 */
static void c_cond_destroy_killed(void)
{
	pthread_cond_t *c = new_cond(CLOCK_REALTIME, 1);
	pthread_mutex_t *m = new_mutex();
	struct timespec cpu;
	clockid_t clock;
	pthread_t t;
	pid_t pid;

	pid = fork();
	if (!pid) {
		pthread_mutex_lock(m);
		for (;;)
			pthread_cond_wait(c, m);
	}
	wait_asleep("/proc", pid, NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (pthread_create(&t, NULL, destroy_cond, c) ||
	    pthread_getcpuclockid(t, &clock))
		_exit(5);
	usleep(500000);
	res("%s", pthread_tryjoin_np(t, NULL) ? "waiting" : "returned");
	clock_gettime(clock, &cpu);
	res("%s", cpu.tv_sec || cpu.tv_nsec > 50000000 ? "spinning" : "asleep");
}

/* Statically initialised mutexes of each kind */
static void c_static(void)
{
	pthread_mutex_t ms[] = {
		PTHREAD_MUTEX_INITIALIZER,
		PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
		PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
		PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP,
	};
	unsigned int i;

	for (i = 0; i < 4; i++) {
		res("|");
		r(pthread_mutex_lock(&ms[i]));
		r(pthread_mutex_trylock(&ms[i]));
		r(pthread_mutex_unlock(&ms[i]));
		r(pthread_mutex_trylock(&ms[i]));
		r(other(t_unlock, &ms[i]));
		probe_free(&ms[i]);
	}
}

/*
 * glibc's other names of the mutex functions, as old binaries call them:
 * compatibility symbols, found only by their version.
 */
static void c_aliases(void)
{
	static const char *const names[] = {
		"__pthread_mutex_init", "__pthread_mutex_lock",
		"__pthread_mutex_trylock", "__pthread_mutex_unlock",
		"__pthread_mutex_destroy",
	};
	int (*fn[5])(pthread_mutex_t *, ...);
	pthread_mutex_t m;
	unsigned int i;

	for (i = 0; i < 5; i++) {
		fn[i] = (int (*)(pthread_mutex_t *, ...))
			dlvsym(RTLD_DEFAULT, names[i], "GLIBC_2.2.5");
		if (!fn[i]) {
			res("missing:%s", names[i]);
			return;
		}
	}
	r(fn[0](&m, NULL));
	r(fn[1](&m));
	r(fn[2](&m));
	r(fn[3](&m));
	r(fn[3](&m));
	r(fn[2](&m));
	r(fn[4](&m));
	r(fn[3](&m));
	r(fn[4](&m));
}

/* Bytes that are no mutex: each call once, on a fresh copy */
static const unsigned char garbage[] = {
	0x01, 0x04, 0x11, 0x5a, 0x7f, 0x8c, 0xab, 0xc3, 0xff,
};

static unsigned char gbyte;

static void fill(pthread_mutex_t *m)
{
	memset(m, gbyte, sizeof(*m));
}

static void c_garbage(void)
{
	pthread_mutex_t m;

	fill(&m);
	r(pthread_mutex_lock(&m));
	fill(&m);
	r(pthread_mutex_trylock(&m));
	fill(&m);
	r(pthread_mutex_timedlock(&m, &past));
	fill(&m);
	r(pthread_mutex_unlock(&m));
	fill(&m);
	r(pthread_mutex_consistent(&m));
	fill(&m);
	r(pthread_mutex_destroy(&m));
}

/* A free word with a kind no initializer gives */
/* Not 0x100: glibc takes it for lock elision, whose result depends on the CPU */
static const int bad_kinds[] = { 4, 8, 0x200, 0x103, 0x1000, -2 };
static int bad_kind;

static void c_bad_kind(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

	m.__data.__kind = bad_kind;
	r(pthread_mutex_lock(&m));
	r(pthread_mutex_trylock(&m));
	r(pthread_mutex_unlock(&m));
	r(pthread_mutex_unlock(&m));
	r(pthread_mutex_destroy(&m));
}

/* The case names given on the command line; none: all cases */
static char **only;
static int nonly;

static bool wanted(const char *name)
{
	int i;

	for (i = 0; i < nonly; i++) {
		if (!fnmatch(only[i], name, 0))
			return true;
	}
	return !nonly;
}

/* Run @fn in a child with a time limit, print its line */
static void run_case(const char *name, void (*fn)(void))
{
	char buf[4096];
	int fds[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (!wanted(name))
		return;
	if (pipe(fds))
		exit(2);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(fds[0]);
		out_fd = fds[1];
		arm_limit();
		fn();
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(buf) - 1 &&
	       (n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	printf("%s:%s", name, buf);
	if (WIFSIGNALED(status))
		printf(" %s", WTERMSIG(status) == SIGALRM ? "HANG" :
		       sigabbrev_np(WTERMSIG(status)));
	else if (WEXITSTATUS(status))
		printf(" EXIT%d", WEXITSTATUS(status));
	printf("\n");
}

static const struct {
	const char *name;
	void (*fn)(void);
} mutex_cases[] = {
	{ "basic", c_basic },
	{ "relock", c_relock },
	{ "relock-other-unlock", c_relock_other_unlock },
	{ "unlock-unowned", c_unlock_unowned },
	{ "unlock-other", c_unlock_other },
	{ "unlock-live-owner", c_unlock_live_owner },
	{ "timedlock", c_timedlock },
	{ "clocklock", c_clocklock },
	{ "timedlock-null", c_timed_null },
	{ "destroy", c_destroy },
	{ "destroy-extra-unlock", c_destroy_extra_unlock },
	{ "consistent", c_consistent },
	{ "owner-died", c_owner_died },
	{ "waiters", c_waiters },
	{ "fork", c_fork },
	{ "fork-like", c_fork_like },
	{ "cond-timed", c_cond_timed },
	{ "cond-clock", c_cond_clock },
	{ "cond-unheld", c_cond_unheld },
	{ "cond-recursive", c_cond_recursive },
	{ "cond-during", c_cond_during },
	{ "errno", c_errno },
	{ "cond-wake", c_cond_wake },
};

static int probe(void)
{
	uint32_t word = 0;

	return syscall(SYS_futex, &word, FUTEX_SPIN_UNLOCK | FUTEX_PRIVATE_FLAG,
		       0, NULL, NULL, 0) && errno == EPERM ? 0 : 1;
}

int main(int argc, char **argv)
{
	char name[128];
	unsigned int i, j;

	main_errno = errno;

	if (argc > 1 && !strcmp(argv[1], "--probe"))
		return probe();
	only = argv + 1;
	nonly = argc - 1;
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		v = &variants[i];
		for (j = 0; j < sizeof(mutex_cases) / sizeof(mutex_cases[0]); j++) {
			snprintf(name, sizeof(name), "%s.%s", v->name,
				 mutex_cases[j].name);
			run_case(name, mutex_cases[j].fn);
		}
	}
	for (i = 0; strcmp(variants[i].name, "normal-shared"); i++)
		;
	v = &variants[i];
	run_case("cond-destroy-killed-waiter", c_cond_destroy_killed);
	v = &variants[0];
	run_case("static", c_static);
	run_case("cond-static", c_cond_static);
	run_case("aliases", c_aliases);
	for (i = 0; i < sizeof(garbage); i++) {
		gbyte = garbage[i];
		snprintf(name, sizeof(name), "garbage-%02x", gbyte);
		run_case(name, c_garbage);
	}
	for (i = 0; i < sizeof(bad_kinds) / sizeof(bad_kinds[0]); i++) {
		bad_kind = bad_kinds[i];
		snprintf(name, sizeof(name), "kind-%x", (unsigned int)bad_kind);
		run_case(name, c_bad_kind);
	}
	return 0;
}
