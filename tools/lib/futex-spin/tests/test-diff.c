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
 * shows as its result and the others still run. Nothing depends on
 * timing: deadlines are in the past, other threads are joined.
 *
 *   test-diff            all cases
 *   test-diff --probe    exit 0 when the kernel has FUTEX_SPIN_LOCK
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
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

/* Generous: a debug kernel under TCG, three runs at once on two vCPUs */
#define CASE_LIMIT_MS	3000

static int out_fd = -1;

/* One result of the running case, written at once: a hang keeps it */
static void res(const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	buf[0] = ' ';
	va_start(ap, fmt);
	n = vsnprintf(buf + 1, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
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
	{ .name = "recursive-shared-robust", .type = PTHREAD_MUTEX_RECURSIVE, ROBUST, SHARED },
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

struct call {
	thread_fn fn;
	pthread_mutex_t *m;
	long ret;
};

static void *call_thread(void *arg)
{
	struct call *c = arg;

	c->ret = c->fn(c->m);
	return NULL;
}

/* @fn(@m) in another thread that then exits: its result */
static int other(thread_fn fn, pthread_mutex_t *m)
{
	struct call c = { fn, m, -1 };
	pthread_t t;

	if (pthread_create(&t, NULL, call_thread, &c) || pthread_join(t, NULL))
		_exit(5);
	return c.ret;
}

static long t_lock(pthread_mutex_t *m) { return pthread_mutex_lock(m); }
static long t_unlock(pthread_mutex_t *m) { return pthread_mutex_unlock(m); }
static long t_trylock(pthread_mutex_t *m)
{
	long ret = pthread_mutex_trylock(m);

	/* Leave it as found, but say whether it was free */
	if (!ret || ret == EOWNERDEAD)
		pthread_mutex_unlock(m);
	return ret;
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

/* Run @fn in a child with a time limit, print its line */
static void run_case(const char *name, void (*fn)(void))
{
	struct itimerval limit = {
		.it_value = { CASE_LIMIT_MS / 1000, CASE_LIMIT_MS % 1000 * 1000 },
	};
	char buf[4096];
	int fds[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		exit(2);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(fds[0]);
		out_fd = fds[1];
		setitimer(ITIMER_REAL, &limit, NULL);
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
	{ "fork", c_fork },
	{ "cond-timed", c_cond_timed },
	{ "cond-clock", c_cond_clock },
	{ "cond-unheld", c_cond_unheld },
	{ "cond-recursive", c_cond_recursive },
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

	if (argc > 1 && !strcmp(argv[1], "--probe"))
		return probe();
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		v = &variants[i];
		for (j = 0; j < sizeof(mutex_cases) / sizeof(mutex_cases[0]); j++) {
			snprintf(name, sizeof(name), "%s.%s", v->name,
				 mutex_cases[j].name);
			run_case(name, mutex_cases[j].fn);
		}
	}
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
