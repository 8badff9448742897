// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * The cost of an uncontended pthread_mutex_lock + unlock pair, glibc's
 * against the preload's, in one process: run under LD_PRELOAD, it calls
 * glibc's functions (looked up in libc.so.6) and the preload's (the
 * global names) through pointers alike, in paired rounds whose order
 * alternates, so that both see the same machine state. Each round's ratio
 * is glibc's time over the preload's: the preload's rate relative to
 * glibc's, 1.0 for the same cost.
 *
 *   bench-uncontended [--single] [ROUNDS]
 *                                     paired rounds (default 10)
 *   bench-uncontended [--single] --count glibc|preload N
 *                                     N pairs of one, in pairs(), for
 *                                     valgrind --tool=callgrind
 *                                     --toggle-collect=pairs
 *
 * glibc takes a mutex that is not process-shared with plain loads and
 * stores while the process has one thread (__libc_single_threaded), and
 * with atomic instructions once it has two; the preload always uses
 * them. A program that needs a mutex has two threads or more, so a
 * second, idle thread is started first; --single leaves it out and
 * measures glibc's single-threaded path.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*mutex_fn)(pthread_mutex_t *);

struct impl {
	const char *name;
	mutex_fn lock, unlock;
	pthread_mutex_t m;
};

static struct impl glibc = { "glibc", .m = PTHREAD_MUTEX_INITIALIZER };
static struct impl preload = { "preload", .m = PTHREAD_MUTEX_INITIALIZER };

static void resolve(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	if (!libc || !dlsym(RTLD_DEFAULT, "futex_spin_preload")) {
		fprintf(stderr, "run with LD_PRELOAD=.../libfutex-spin-preload.so\n");
		exit(2);
	}
	glibc.lock = (mutex_fn)dlsym(libc, "pthread_mutex_lock");
	glibc.unlock = (mutex_fn)dlsym(libc, "pthread_mutex_unlock");
	preload.lock = (mutex_fn)dlsym(RTLD_DEFAULT, "pthread_mutex_lock");
	preload.unlock = (mutex_fn)dlsym(RTLD_DEFAULT, "pthread_mutex_unlock");
	if (!glibc.lock || !glibc.unlock || glibc.lock == preload.lock) {
		fprintf(stderr, "glibc's pthread_mutex_lock not found apart\n");
		exit(2);
	}
}

static __attribute__((noinline)) void pairs(struct impl *p, long n)
{
	long i;

	for (i = 0; i < n; i++) {
		p->lock(&p->m);
		p->unlock(&p->m);
	}
}

static double seconds(struct impl *p, long n)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pairs(p, n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* 95% bootstrap interval of the median, a fixed seed: reproducible */
static void bootstrap(const double *v, int n, double *lo, double *hi)
{
	enum { B = 2000 };
	static double meds[B];
	double s[256];
	unsigned int seed = 1;
	int b, i;

	for (b = 0; b < B; b++) {
		for (i = 0; i < n; i++)
			s[i] = v[rand_r(&seed) % n];
		meds[b] = median(s, n);
	}
	qsort(meds, B, sizeof(meds[0]), cmp);
	*lo = meds[B * 25 / 1000];
	*hi = meds[B * 975 / 1000];
}

static void *idle_thread(void *arg)
{
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	double ratio[256], sorted[256], tg, tp, lo, hi, med;
	bool single = argc > 1 && !strcmp(argv[1], "--single");
	int rounds, r;
	pthread_t idle;
	long n = 1000;

	if (single) {
		argc--;
		argv++;
	}
	rounds = argc > 1 ? atoi(argv[1]) : 10;
	resolve();
	if (!single && pthread_create(&idle, NULL, idle_thread, NULL)) {
		fprintf(stderr, "no second thread\n");
		return 2;
	}
	if (argc > 3 && !strcmp(argv[1], "--count")) {
		pairs(!strcmp(argv[2], "glibc") ? &glibc : &preload, 1);
		pairs(!strcmp(argv[2], "glibc") ? &glibc : &preload,
		      atol(argv[3]));
		return 0;
	}
	if (rounds < 1 || rounds > 256)
		rounds = 10;
	/* The first lock caches the TID; then about 0.2 s per sample */
	pairs(&preload, 1);
	while (seconds(&glibc, n) < 0.05)
		n *= 2;
	n *= 4;
	printf("# %d paired rounds of %ld lock/unlock pairs each, %s\n", rounds,
	       n, single ? "one thread" : "an idle second thread");
	printf("# round  glibc ns/pair  preload ns/pair  ratio\n");
	for (r = 0; r < rounds; r++) {
		/* The second of a pair ran faster without this warm-up. */
		seconds(&glibc, n / 8);
		seconds(&preload, n / 8);
		if (r % 2) {
			tp = seconds(&preload, n);
			tg = seconds(&glibc, n);
		} else {
			tg = seconds(&glibc, n);
			tp = seconds(&preload, n);
		}
		ratio[r] = tg / tp;
		printf("%7d  %13.2f  %15.2f  %.3f\n", r + 1, tg * 1e9 / n,
		       tp * 1e9 / n, ratio[r]);
	}
	memcpy(sorted, ratio, sizeof(ratio[0]) * rounds);
	med = median(sorted, rounds);
	bootstrap(ratio, rounds, &lo, &hi);
	printf("ratio median %.3f, min %.3f, max %.3f\n", med, sorted[0],
	       sorted[rounds - 1]);
	printf("95%% bootstrap interval of the median [%.3f, %.3f]\n", lo, hi);
	return 0;
}
