// SPDX-License-Identifier: GPL-2.0
/*
 * futex-mutex: throughput of mutexes built on the futex syscall, and of the
 * optimistically spinning FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK in particular.
 *
 * Threads hammer one (or --futexes) lock(s). Each iteration takes the lock,
 * runs a critical section of --load pause instructions on data the lock
 * protects, releases the lock and runs --wait pause instructions of work
 * outside of it. Lock types (--mutex):
 *
 *   ww              three-state mutex on FUTEX_WAIT / FUTEX_WAKE
 *   pi              FUTEX_LOCK_PI / FUTEX_UNLOCK_PI, owner TID in the word
 *   spin            FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK, owner TID in the word
 *   glibc           pthread_mutex_t of type PTHREAD_MUTEX_NORMAL
 *   glibc-adaptive  pthread_mutex_t of type PTHREAD_MUTEX_ADAPTIVE_NP
 *   tas             user-space test-and-test-and-set spinlock with back-off
 *   none            no lock at all: a self-test that must fail the check
 *
 * The futex based types count their own lock and unlock syscalls. The
 * critical section updates a counter without atomic instructions; at exit
 * it must equal the number of acquisitions, otherwise mutual exclusion broke
 * and the benchmark fails. Exit status: 0 ok, 1 exclusion broken or error,
 * 2 lock type not supported by the running kernel.
 */

/* For the CLR_() macros */
#include <string.h>
#include <pthread.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <math.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <sys/time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <perf/cpumap.h>

#include "../util/mutex.h"
#include "../util/stat.h"
#include <subcmd/parse-options.h>
#include "bench.h"
#include "futex.h"

#include <err.h>

#ifndef FUTEX_SPIN_LOCK
#define FUTEX_SPIN_LOCK		14
#endif
#ifndef FUTEX_SPIN_UNLOCK
#define FUTEX_SPIN_UNLOCK	15
#endif

/* Keep locks and per-thread counters on lines of their own. */
#define MUTEX_ALIGN		128
#define TAS_BACKOFF_MAX		1024
#define EXIT_UNSUPPORTED	2

struct bench_lock {
	u32 futex;			/* ww, pi, spin, tas */
	pthread_mutex_t pmutex;		/* glibc, glibc-adaptive */
	/* Protected by the lock and updated without atomics. */
	unsigned long count;
	unsigned int owner;
} __aligned(MUTEX_ALIGN);

struct worker {
	unsigned int id;
	pid_t tid;
	struct bench_lock *lock;
	pthread_t thread;
	unsigned long ops;
	unsigned long lock_syscalls;
	unsigned long unlock_syscalls;
	unsigned long overlaps;
	long nvcsw, nivcsw;
} __aligned(MUTEX_ALIGN);

struct mutex_type {
	const char *name;
	void (*lock)(struct bench_lock *l, struct worker *w);
	void (*unlock)(struct bench_lock *l, struct worker *w);
	int probe_op;		/* unlock op probed on a free word, or -1 */
	int pthread_type;	/* for the glibc types, or -1 */
	bool counts_syscalls;
};

static bool done;
static bool started;
static int futex_flag;
static bool pin, json;
static unsigned int load = 10, wait_pauses;
static const char *mutex_name = "ww";
static const char *cpu_list;
static const struct mutex_type *mtype;

static struct mutex thread_lock;
static unsigned int threads_starting;
static struct cond thread_parent, thread_worker;
static struct bench_lock *locks;
static size_t locks_size;
static struct worker *worker;

static struct bench_futex_parameters params = {
	.nfutexes = 1,
	.runtime  = 10,
};

static const struct option options[] = {
	OPT_STRING('m', "mutex", &mutex_name, "type",
		   "Lock type: ww, pi, spin, glibc, glibc-adaptive, tas, none (default ww)"),
	OPT_UINTEGER('t', "threads", &params.nthreads, "Specify amount of threads"),
	OPT_UINTEGER('r', "runtime", &params.runtime, "Specify runtime (in seconds)"),
	OPT_UINTEGER('f', "futexes", &params.nfutexes, "Specify amount of locks (default 1)"),
	OPT_UINTEGER('l', "load", &load, "Pause instructions inside the lock (default 10)"),
	OPT_UINTEGER('w', "wait", &wait_pauses, "Pause instructions outside the lock (default 0)"),
	OPT_BOOLEAN('S', "shared", &params.fshared, "Use shared futexes instead of private ones"),
	OPT_BOOLEAN('p', "pin", &pin, "Pin thread i to online CPU i % nr_cpus"),
	OPT_STRING('C', "cpu", &cpu_list, "cpus", "Pin threads round-robin to these CPUs"),
	OPT_BOOLEAN('s', "silent", &params.silent, "Silent mode: do not display per-thread data"),
	OPT_BOOLEAN(0, "json", &json, "Print only one JSON object with the results"),
	OPT_BOOLEAN(0, "mlockall", &params.mlockall, "Lock all current and future memory"),
	OPT_END()
};

static const char * const bench_futex_mutex_usage[] = {
	"perf bench futex mutex <options>",
	NULL
};

static inline void cpu_pause(void)
{
#if defined(__x86_64__)
	asm volatile("pause" ::: "memory");
#elif defined(__aarch64__)
	asm volatile("yield" ::: "memory");
#else
	barrier();
#endif
}

static inline void pause_loop(unsigned int n)
{
	while (n--)
		cpu_pause();
}

static inline bool cmpxchg_acquire(u32 *p, u32 old, u32 new)
{
	return __atomic_compare_exchange_n(p, &old, new, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline bool cmpxchg_release(u32 *p, u32 old, u32 new)
{
	return __atomic_compare_exchange_n(p, &old, new, false,
					   __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/*
 * ww: 0 free, 1 locked, 2 locked and maybe waiters. A locker that finds the
 * lock taken marks it 2 and sleeps until it swaps 2 for a 0; an unlocker
 * that swaps out a 2 wakes one sleeper.
 */
static void ww_lock(struct bench_lock *l, struct worker *w)
{
	u32 c;

	if (cmpxchg_acquire(&l->futex, 0, 1))
		return;

	c = __atomic_exchange_n(&l->futex, 2, __ATOMIC_ACQUIRE);
	while (c) {
		w->lock_syscalls++;
		if (futex_syscall(&l->futex, FUTEX_WAIT, 2, NULL, NULL, 0, futex_flag) &&
		    errno != EAGAIN && errno != EINTR)
			err(EXIT_FAILURE, "FUTEX_WAIT");
		c = __atomic_exchange_n(&l->futex, 2, __ATOMIC_ACQUIRE);
	}
}

static void ww_unlock(struct bench_lock *l, struct worker *w)
{
	if (__atomic_exchange_n(&l->futex, 0, __ATOMIC_RELEASE) != 2)
		return;

	w->unlock_syscalls++;
	if (futex_syscall(&l->futex, FUTEX_WAKE, 1, NULL, NULL, 0, futex_flag) < 0)
		err(EXIT_FAILURE, "FUTEX_WAKE");
}

/*
 * pi and spin: the word holds the owner's TID; 0 -> TID and TID -> 0 are
 * done in user space, anything else (contention, waiters) in the kernel.
 */
static void tid_lock(struct bench_lock *l, struct worker *w, int op, const char *what)
{
	if (cmpxchg_acquire(&l->futex, 0, w->tid))
		return;

	w->lock_syscalls++;
	while (futex_syscall(&l->futex, op, 0, NULL, NULL, 0, futex_flag)) {
		if (errno != EINTR)
			err(EXIT_FAILURE, "%s", what);
	}
}

static void tid_unlock(struct bench_lock *l, struct worker *w, int op, const char *what)
{
	if (cmpxchg_release(&l->futex, w->tid, 0))
		return;

	w->unlock_syscalls++;
	if (futex_syscall(&l->futex, op, 0, NULL, NULL, 0, futex_flag) < 0)
		err(EXIT_FAILURE, "%s", what);
}

static void pi_lock(struct bench_lock *l, struct worker *w)
{
	tid_lock(l, w, FUTEX_LOCK_PI, "FUTEX_LOCK_PI");
}

static void pi_unlock(struct bench_lock *l, struct worker *w)
{
	tid_unlock(l, w, FUTEX_UNLOCK_PI, "FUTEX_UNLOCK_PI");
}

static void spin_lock(struct bench_lock *l, struct worker *w)
{
	tid_lock(l, w, FUTEX_SPIN_LOCK, "FUTEX_SPIN_LOCK");
}

static void spin_unlock(struct bench_lock *l, struct worker *w)
{
	tid_unlock(l, w, FUTEX_SPIN_UNLOCK, "FUTEX_SPIN_UNLOCK");
}

static void glibc_lock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	int ret = pthread_mutex_lock(&l->pmutex);

	if (ret)
		errx(EXIT_FAILURE, "pthread_mutex_lock: %s", strerror(ret));
}

static void glibc_unlock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	int ret = pthread_mutex_unlock(&l->pmutex);

	if (ret)
		errx(EXIT_FAILURE, "pthread_mutex_unlock: %s", strerror(ret));
}

/* tas: wait for the word to look free, then swap; back off on a miss. */
static void tas_lock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	unsigned int delay = 1;

	for (;;) {
		while (__atomic_load_n(&l->futex, __ATOMIC_RELAXED))
			cpu_pause();
		if (!__atomic_exchange_n(&l->futex, 1, __ATOMIC_ACQUIRE))
			return;
		pause_loop(delay);
		if (delay < TAS_BACKOFF_MAX)
			delay <<= 1;
	}
}

static void tas_unlock(struct bench_lock *l, struct worker *w __maybe_unused)
{
	__atomic_store_n(&l->futex, 0, __ATOMIC_RELEASE);
}

static void no_lock(struct bench_lock *l __maybe_unused, struct worker *w __maybe_unused)
{
}

static const struct mutex_type mutex_types[] = {
	{ "ww",		ww_lock,	ww_unlock,	-1, -1, true },
	{ "pi",		pi_lock,	pi_unlock,	FUTEX_UNLOCK_PI, -1, true },
	{ "spin",	spin_lock,	spin_unlock,	FUTEX_SPIN_UNLOCK, -1, true },
	{ "glibc",	glibc_lock,	glibc_unlock,	-1, PTHREAD_MUTEX_NORMAL, false },
	{ "glibc-adaptive", glibc_lock,	glibc_unlock,	-1, PTHREAD_MUTEX_ADAPTIVE_NP, false },
	{ "tas",	tas_lock,	tas_unlock,	-1, -1, true },
	{ "none",	no_lock,	no_lock,	-1, -1, true },
};

/*
 * The critical section: a read-modify-write of the protected counter with
 * the load in between, so that two threads inside at once lose an update;
 * the owner field catches the overlap directly as well.
 */
static inline void critical_section(struct bench_lock *l, struct worker *w)
{
	unsigned long count = READ_ONCE(l->count);

	if (READ_ONCE(l->owner))
		w->overlaps++;
	WRITE_ONCE(l->owner, w->id + 1);
	pause_loop(load);
	if (READ_ONCE(l->owner) != w->id + 1)
		w->overlaps++;
	WRITE_ONCE(l->owner, 0);
	WRITE_ONCE(l->count, count + 1);
}

static void toggle_done(int sig __maybe_unused,
			siginfo_t *info __maybe_unused,
			void *uc __maybe_unused)
{
	/* inform all threads that we're done for the day */
	WRITE_ONCE(done, true);
	gettimeofday(&bench__end, NULL);
	timersub(&bench__end, &bench__start, &bench__runtime);
}

static void *workerfn(void *arg)
{
	struct worker *w = (struct worker *)arg;
	struct bench_lock *l = w->lock;
	unsigned long ops = 0;
	struct rusage ru0, ru1;

	w->tid = syscall(__NR_gettid);

	mutex_lock(&thread_lock);
	threads_starting--;
	if (!threads_starting)
		cond_signal(&thread_parent);
	while (!started)
		cond_wait(&thread_worker, &thread_lock);
	mutex_unlock(&thread_lock);

	getrusage(RUSAGE_THREAD, &ru0);
	do {
		mtype->lock(l, w);
		critical_section(l, w);
		mtype->unlock(l, w);
		pause_loop(wait_pauses);
		ops++;
	} while (!READ_ONCE(done));
	getrusage(RUSAGE_THREAD, &ru1);

	w->ops = ops;
	w->nvcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
	w->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
	return NULL;
}

static void create_threads(struct perf_cpu_map *cpu)
{
	cpu_set_t *cpuset;
	unsigned int i;
	int nrcpus = cpu__max_cpu().cpu;
	size_t size;

	cpuset = CPU_ALLOC(nrcpus);
	if (!cpuset)
		err(EXIT_FAILURE, "CPU_ALLOC");
	size = CPU_ALLOC_SIZE(nrcpus);

	for (i = 0; i < params.nthreads; i++) {
		pthread_attr_t thread_attr;

		pthread_attr_init(&thread_attr);
		worker[i].id = i;
		worker[i].lock = &locks[i % params.nfutexes];

		if (pin) {
			CPU_ZERO_S(size, cpuset);
			CPU_SET_S(perf_cpu_map__cpu(cpu, i % perf_cpu_map__nr(cpu)).cpu,
				  size, cpuset);
			if (pthread_attr_setaffinity_np(&thread_attr, size, cpuset)) {
				CPU_FREE(cpuset);
				err(EXIT_FAILURE, "pthread_attr_setaffinity_np");
			}
		}

		if (pthread_create(&worker[i].thread, &thread_attr, workerfn, &worker[i])) {
			CPU_FREE(cpuset);
			err(EXIT_FAILURE, "pthread_create");
		}
		pthread_attr_destroy(&thread_attr);
	}
	CPU_FREE(cpuset);
}

static void init_locks(void)
{
	int flags = MAP_ANONYMOUS | (params.fshared ? MAP_SHARED : MAP_PRIVATE);
	pthread_mutexattr_t attr;
	unsigned int i;
	int ret;

	/* Shared futexes live in MAP_SHARED memory: keyed by inode, not mm. */
	locks_size = params.nfutexes * sizeof(*locks);
	locks = mmap(NULL, locks_size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (locks == MAP_FAILED)
		err(EXIT_FAILURE, "mmap");

	if (mtype->pthread_type < 0)
		return;

	pthread_mutexattr_init(&attr);
	ret = pthread_mutexattr_settype(&attr, mtype->pthread_type);
	if (!ret && params.fshared)
		ret = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	for (i = 0; !ret && i < params.nfutexes; i++)
		ret = pthread_mutex_init(&locks[i].pmutex, &attr);
	if (ret)
		errx(EXIT_FAILURE, "pthread_mutex_init: %s", strerror(ret));
	pthread_mutexattr_destroy(&attr);
}

/* An unlock of a free word fails with EPERM where the kernel has the op. */
static bool mutex_supported(void)
{
	u32 word = 0;

	if (mtype->probe_op < 0)
		return true;
	return futex_syscall(&word, mtype->probe_op, 0, NULL, NULL, 0, futex_flag) < 0 &&
	       errno == EPERM;
}

struct results {
	double secs, ops_per_sec;
	unsigned long ops, lock_syscalls, unlock_syscalls, overlaps;
	long nvcsw, nivcsw;
	struct stats thread_stats;
	double thread_min, thread_max, thread_stddev;
	unsigned int broken_locks;
};

static double per_kop(double n, unsigned long ops)
{
	return ops ? 1000.0 * n / ops : 0.0;
}

static void collect(struct results *r)
{
	unsigned int i, j;

	memset(r, 0, sizeof(*r));
	init_stats(&r->thread_stats);
	r->secs = bench__runtime.tv_sec + bench__runtime.tv_usec / 1e6;

	r->thread_min = worker[0].ops / r->secs;
	for (i = 0; i < params.nthreads; i++) {
		struct worker *w = &worker[i];
		double rate = w->ops / r->secs;

		update_stats(&r->thread_stats, rate);
		r->thread_min = min(r->thread_min, rate);
		r->thread_max = max(r->thread_max, rate);
		r->ops += w->ops;
		r->lock_syscalls += w->lock_syscalls;
		r->unlock_syscalls += w->unlock_syscalls;
		r->overlaps += w->overlaps;
		r->nvcsw += w->nvcsw;
		r->nivcsw += w->nivcsw;
	}
	r->ops_per_sec = r->ops / r->secs;
	if (r->thread_stats.n > 1)
		r->thread_stddev = sqrt(r->thread_stats.M2 / (r->thread_stats.n - 1));

	/* Every acquisition of a lock must show in its counter. */
	for (j = 0; j < params.nfutexes; j++) {
		unsigned long expected = 0;

		for (i = j; i < params.nthreads; i += params.nfutexes)
			expected += worker[i].ops;
		if (locks[j].count != expected) {
			r->broken_locks++;
			fprintf(stderr, "futex-mutex: lock %u: counter %lu, acquisitions %lu\n",
				j, locks[j].count, expected);
		}
	}
}

static void print_syscalls_json(const char *key, double n, unsigned long ops)
{
	if (mtype->counts_syscalls)
		printf("\"%s\": %.3f, ", key, per_kop(n, ops));
	else
		printf("\"%s\": null, ", key);
}

static void print_json(struct results *r)
{
	printf("{\"mutex\": \"%s\", \"threads\": %u, \"futexes\": %u, \"load\": %u, \"wait\": %u, ",
	       mtype->name, params.nthreads, params.nfutexes, load, wait_pauses);
	printf("\"shared\": %s, \"pinned\": %s, \"runtime\": %.6f, \"ops\": %lu, ",
	       params.fshared ? "true" : "false", pin ? "true" : "false", r->secs, r->ops);
	printf("\"ops_per_sec\": %.1f, \"thread_mean\": %.1f, \"thread_min\": %.0f, ",
	       r->ops_per_sec, avg_stats(&r->thread_stats), r->thread_min);
	printf("\"thread_max\": %.0f, \"thread_stddev\": %.1f, ",
	       r->thread_max, r->thread_stddev);
	print_syscalls_json("lock_syscalls_per_kop", r->lock_syscalls, r->ops);
	print_syscalls_json("unlock_syscalls_per_kop", r->unlock_syscalls, r->ops);
	printf("\"vcsw_per_kop\": %.3f, \"ivcsw_per_kop\": %.3f, \"exclusion\": \"%s\"}\n",
	       per_kop(r->nvcsw, r->ops), per_kop(r->nivcsw, r->ops),
	       r->broken_locks || r->overlaps ? "broken" : "ok");
}

static void print_summary(struct results *r)
{
	double mean = avg_stats(&r->thread_stats);
	unsigned int i;

	if (!params.silent) {
		for (i = 0; i < params.nthreads; i++)
			printf("[thread %3d] lock: %p [ %.0f ops/sec ]\n",
			       worker[i].id, worker[i].lock, worker[i].ops / r->secs);
		printf("\n");
	}

	printf("Mutex '%s': %.0f ops/sec total, %lu ops in %.3f secs\n",
	       mtype->name, r->ops_per_sec, r->ops, r->secs);
	printf("Per thread: mean %.0f, min %.0f, max %.0f ops/sec (stddev +- %.2f%%)\n",
	       mean, r->thread_min, r->thread_max, rel_stddev_stats(r->thread_stddev, mean));
	if (mtype->counts_syscalls)
		printf("Syscalls per 1000 ops: lock %.2f, unlock %.2f\n",
		       per_kop(r->lock_syscalls, r->ops), per_kop(r->unlock_syscalls, r->ops));
	else
		printf("Syscalls per 1000 ops: n/a (inside glibc)\n");
	printf("Context switches per 1000 ops: voluntary %.2f, involuntary %.2f\n",
	       per_kop(r->nvcsw, r->ops), per_kop(r->nivcsw, r->ops));
	if (r->broken_locks || r->overlaps)
		printf("Mutual exclusion: BROKEN (%u lock(s) lost updates, %lu overlaps seen)\n",
		       r->broken_locks, r->overlaps);
	else
		printf("Mutual exclusion: ok (%lu critical sections checked)\n", r->ops);

	printf("result: mutex=%s threads=%u futexes=%u load=%u wait=%u shared=%d ops_per_sec=%.1f ",
	       mtype->name, params.nthreads, params.nfutexes, load, wait_pauses,
	       params.fshared, r->ops_per_sec);
	printf("thread_mean=%.1f thread_min=%.0f thread_max=%.0f thread_stddev=%.1f ",
	       mean, r->thread_min, r->thread_max, r->thread_stddev);
	if (mtype->counts_syscalls)
		printf("lock_syscalls_per_kop=%.3f unlock_syscalls_per_kop=%.3f ",
		       per_kop(r->lock_syscalls, r->ops), per_kop(r->unlock_syscalls, r->ops));
	printf("vcsw_per_kop=%.3f ivcsw_per_kop=%.3f exclusion=%s\n",
	       per_kop(r->nvcsw, r->ops), per_kop(r->nivcsw, r->ops),
	       r->broken_locks || r->overlaps ? "broken" : "ok");
}

int bench_futex_mutex(int argc, const char **argv)
{
	struct sigaction act;
	struct perf_cpu_map *cpu;
	struct results res;
	unsigned int i;
	int ret;

	argc = parse_options(argc, argv, options, bench_futex_mutex_usage, 0);
	if (argc)
		goto err;

	for (i = 0; i < ARRAY_SIZE(mutex_types); i++)
		if (!strcmp(mutex_name, mutex_types[i].name))
			mtype = &mutex_types[i];
	if (!mtype || !params.nfutexes || !params.runtime) {
		fprintf(stderr, "futex-mutex: bad lock type, number of locks or runtime\n");
		goto err;
	}

	if (!params.fshared)
		futex_flag = FUTEX_PRIVATE_FLAG;

	if (!mutex_supported()) {
		const char *why = strerror(errno);

		if (json)
			printf("{\"mutex\": \"%s\", \"error\": \"%s\"}\n", mtype->name, why);
		fprintf(stderr, "futex-mutex: this kernel lacks lock type '%s': %s\n",
			mtype->name, why);
		return EXIT_UNSUPPORTED;
	}

	if (cpu_list)
		pin = true;
	cpu = perf_cpu_map__new(cpu_list);
	if (!cpu)
		errx(EXIT_FAILURE, "bad CPU list");

	memset(&act, 0, sizeof(act));
	sigfillset(&act.sa_mask);
	act.sa_sigaction = toggle_done;
	sigaction(SIGINT, &act, NULL);

	if (params.mlockall) {
		if (mlockall(MCL_CURRENT | MCL_FUTURE))
			err(EXIT_FAILURE, "mlockall");
	}

	if (!params.nthreads)
		params.nthreads = perf_cpu_map__nr(cpu);

	if (posix_memalign((void **)&worker, MUTEX_ALIGN, params.nthreads * sizeof(*worker)))
		err(EXIT_FAILURE, "posix_memalign");
	memset(worker, 0, params.nthreads * sizeof(*worker));
	init_locks();

	if (!json) {
		printf("Run summary [PID %d]: %u threads on %u %s '%s' lock(s), ",
		       getpid(), params.nthreads, params.nfutexes,
		       params.fshared ? "shared" : "private", mtype->name);
		printf("load %u, wait %u, for %u secs.\n\n", load, wait_pauses, params.runtime);
	}

	mutex_init(&thread_lock);
	cond_init(&thread_parent);
	cond_init(&thread_worker);

	threads_starting = params.nthreads;
	create_threads(cpu);

	mutex_lock(&thread_lock);
	while (threads_starting)
		cond_wait(&thread_parent, &thread_lock);
	started = true;
	gettimeofday(&bench__start, NULL);
	cond_broadcast(&thread_worker);
	mutex_unlock(&thread_lock);

	sleep(params.runtime);
	toggle_done(0, NULL, NULL);

	for (i = 0; i < params.nthreads; i++) {
		ret = pthread_join(worker[i].thread, NULL);
		if (ret)
			errx(EXIT_FAILURE, "pthread_join: %s", strerror(ret));
	}

	/* cleanup & report results */
	cond_destroy(&thread_parent);
	cond_destroy(&thread_worker);
	mutex_destroy(&thread_lock);

	collect(&res);
	if (json)
		print_json(&res);
	else
		print_summary(&res);

	ret = 0;
	if (res.broken_locks || res.overlaps) {
		fprintf(stderr, "futex-mutex: '%s' broke mutual exclusion\n", mtype->name);
		ret = EXIT_FAILURE;
	}

	if (mtype->pthread_type >= 0)
		for (i = 0; i < params.nfutexes; i++)
			pthread_mutex_destroy(&locks[i].pmutex);
	munmap(locks, locks_size);
	free(worker);
	perf_cpu_map__put(cpu);
	return ret;
err:
	usage_with_options(bench_futex_mutex_usage, options);
	exit(EXIT_FAILURE);
}
