/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Minimal TAP for the futex-spin tests: each test is a function that
 * returns its result, so the plan is known before the first runs and a
 * crash leaves points missing, which tap-summary.sh counts as failed.
 */
#ifndef _FUTEX_SPIN_TAP_H
#define _FUTEX_SPIN_TAP_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct tap_test {
	const char *name;
	int (*fn)(void);	/* 0: pass */
};

/* A failed check says what and where, then fails the test. */
#define CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("# %s:%d: check failed: %s\n", __FILE__,	\
		       __LINE__, #cond);				\
		return 1;						\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (a), _b = (b);					\
	if (_a != _b) {							\
		printf("# %s:%d: %s == %lld, expected %s == %lld\n",	\
		       __FILE__, __LINE__, #a, _a, #b, _b);		\
		return 1;						\
	}								\
} while (0)

static inline int tap_run(const char *prefix, const struct tap_test *t,
			  int n)
{
	int i, failed = 0;

	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
	for (i = 0; i < n; i++) {
		int ret = t[i].fn();

		printf("%sok %d %s %s\n", ret ? "not " : "", i + 1, prefix,
		       t[i].name);
		fflush(stdout);
		failed += !!ret;
	}
	return failed ? 1 : 0;
}

/* Run @fn(@arg) in a new thread and return its result */
static inline long in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	void *ret;

	if (pthread_create(&t, NULL, fn, arg) || pthread_join(t, &ret))
		return -1;
	return (long)ret;
}

static inline long long ns_since(clockid_t clock, const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000000LL + t.tv_nsec - t0->tv_nsec;
}

/* Now on @clock plus @ms milliseconds */
static inline struct timespec deadline(clockid_t clock, long ms)
{
	struct timespec t;

	clock_gettime(clock, &t);
	t.tv_nsec += (ms % 1000) * 1000000L;
	t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

#endif
