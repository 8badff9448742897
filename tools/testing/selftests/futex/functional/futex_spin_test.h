/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK selftests.
 * Include after kselftest_harness.h.
 */
#ifndef _FUTEX_SPIN_TEST_H
#define _FUTEX_SPIN_TEST_H

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <sys/utsname.h>

#include "futex_spin.h"

#ifndef DEBUGFS_MAGIC
#define DEBUGFS_MAGIC		0x64626720
#endif

/* A TID no task can have: above PID_MAX_LIMIT (4M), inside FUTEX_TID_MASK */
#define FS_NO_SUCH_TID		0x3ffffff0

/*
 * Bounds for what must happen: far above what a slow, instrumented guest
 * needs, far below the harness timeout, so a hang is reported as a failure
 * of the step that hung.
 */
#define FS_MUST_MS		3000

/* Real-time throttling: "-1" turns it off, for a livelock to stay one */
#define FS_RT_RUNTIME		"/proc/sys/kernel/sched_rt_runtime_us"

static inline long long fs_ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static inline long long fs_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return fs_ts_ns(&ts);
}

static inline long long fs_ms_since(long long start_ns)
{
	return (fs_now_ns(CLOCK_MONOTONIC) - start_ns) / 1000000;
}

static inline struct timespec fs_ns_ts(long long ns)
{
	struct timespec ts = {
		.tv_sec = ns / 1000000000,
		.tv_nsec = ns % 1000000000,
	};

	return ts;
}

/* An absolute deadline @ms milliseconds from now on @clock */
static inline struct timespec fs_deadline(clockid_t clock, long long ms)
{
	return fs_ns_ts(fs_now_ns(clock) + ms * 1000000);
}

/* Keep the CPU busy until CLOCK_MONOTONIC reaches @ns */
static inline void fs_busy_until(long long ns)
{
	while (fs_now_ns(CLOCK_MONOTONIC) < ns)
		;
}

/* Pin the calling thread to @cpu (-1: leave it be); 0 or an errno */
static inline int fs_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? errno : 0;
}

static inline pid_t fs_gettid(void)
{
	return syscall(SYS_gettid);
}

static inline __u32 fs_load(__u32 *word)
{
	return __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

static inline void fs_store(__u32 *word, __u32 val)
{
	__atomic_store_n(word, val, __ATOMIC_SEQ_CST);
}

/* Raw calls: 0 or -errno */
static inline int fs_lock(__u32 *word, int op, const struct timespec *to)
{
	return futex_spin_syscall(word, op, 0, to, NULL, 0) ? -errno : 0;
}

/* Number of tasks woken, or -errno */
static inline long fs_unlock(__u32 *word, int op)
{
	long ret = futex_spin_syscall(word, op, 0, NULL, NULL, 0);

	return ret < 0 ? -errno : ret;
}

/*
 * The fields of /proc/@pid/task/@tid/stat after the command, read into
 * @buf, starting with the state; NULL if it cannot be read.
 */
static inline char *fs_task_stat(pid_t pid, pid_t tid, char *buf, int len)
{
	char path[96], *p = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (fgets(buf, len, f))
		p = strrchr(buf, ')');
	fclose(f);
	return p && p[1] == ' ' ? p + 2 : NULL;
}

/*
 * The line of /proc/@pid/task/@tid/syscall, read into @buf: the system
 * call's number and arguments, "running", or NULL if it cannot be read.
 */
static inline char *fs_task_syscall(pid_t pid, pid_t tid, char *buf, int len)
{
	char path[96], *got;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	got = fgets(buf, len, f);
	fclose(f);
	return got;
}

/*
 * Is task @tid of process @pid asleep in futex(2) or futex_waitv(2)? The
 * tests use it to know that a waiter has queued before they go on; state
 * and system call come from procfs, so nothing in the test races with it.
 */
static inline bool fs_task_blocked(pid_t pid, pid_t tid)
{
	char buf[512], *state;
	long nr;

	state = fs_task_stat(pid, tid, buf, sizeof(buf));
	if (!state || (*state != 'S' && *state != 'D'))
		return false;
	if (!fs_task_syscall(pid, tid, buf, sizeof(buf)) ||
	    sscanf(buf, "%ld", &nr) != 1)
		return false;
	return nr == SYS_futex || nr == __NR_futex_waitv;
}

/* Wait up to FS_MUST_MS for fs_task_blocked(); true once it is */
static inline bool fs_wait_blocked(pid_t pid, pid_t tid)
{
	long long start = fs_now_ns(CLOCK_MONOTONIC);

	do {
		/* Twice in a row: a single sample may catch a passing sleep. */
		if (fs_task_blocked(pid, tid)) {
			usleep(2000);
			if (fs_task_blocked(pid, tid))
				return true;
		}
		usleep(1000);
	} while (fs_ms_since(start) < FS_MUST_MS);
	return false;
}

/* A PREEMPT_RT kernel, where FUTEX_SPIN_LOCK waiters do not spin */
static inline bool fs_preempt_rt(void)
{
	struct utsname u;

	/* The version string names the preemption model: "... PREEMPT_RT ..." */
	return !uname(&u) && strstr(u.version, "PREEMPT_RT");
}

/* Join @t within @ms: 0, or ETIMEDOUT if it is still running */
static inline int fs_join_ms(pthread_t t, void **ret, long long ms)
{
	struct timespec to = fs_deadline(CLOCK_REALTIME, ms);

	return pthread_timedjoin_np(t, ret, &to);
}

/* Join @t within FS_MUST_MS */
static inline int fs_join(pthread_t t, void **ret)
{
	return fs_join_ms(t, ret, FS_MUST_MS);
}

/* Reap @pid within FS_MUST_MS; its wait status or -1 */
static inline int fs_reap(pid_t pid)
{
	long long start = fs_now_ns(CLOCK_MONOTONIC);
	int status;
	pid_t ret;

	do {
		ret = waitpid(pid, &status, WNOHANG);
		if (ret == pid)
			return status;
		if (ret < 0)
			return -1;
		usleep(1000);
	} while (fs_ms_since(start) < FS_MUST_MS);
	return -1;
}

/* A thread taking the lock with a raw FUTEX_SPIN_LOCK, and what it saw */
struct waiter {
	__u32 *word;
	int op;
	long long timeout_ms;	/* relative to the start, may be negative */
	bool forever;		/* no timeout at all */
	/* set once the lock holder has let go: taking it before is a bug */
	int *released;
	long long hold_ms;	/* once taken, hold it that long */
	bool unlock;		/* then let go */
	/* if set, the started waiter waits for it before its clocks and lock call */
	int *go;
	pthread_t thread;
	int started;
	int done;
	pid_t tid;
	int ret;
	__u32 seen;
	bool early;
	bool past_deadline;
	long long ms;
	long long taken_ns;	/* CLOCK_MONOTONIC when the lock call returned */
	long unlock_ret;
};

static inline int fs_unlock_op(int lock_op)
{
	return FUTEX_SPIN_UNLOCK | (lock_op & FUTEX_PRIVATE_FLAG);
}

static inline void *waiter_fn(void *arg)
{
	struct waiter *w = arg;
	clockid_t clock = w->op & FUTEX_CLOCK_REALTIME ?
			  CLOCK_REALTIME : CLOCK_MONOTONIC;
	struct timespec to;
	long long start;

	w->tid = fs_gettid();
	__atomic_store_n(&w->started, 1, __ATOMIC_SEQ_CST);
	while (w->go && !__atomic_load_n(w->go, __ATOMIC_SEQ_CST))
		sched_yield();
	to = fs_deadline(clock, w->timeout_ms);
	start = fs_now_ns(CLOCK_MONOTONIC);
	w->ret = fs_lock(w->word, w->op, w->forever ? NULL : &to);
	w->seen = fs_load(w->word);
	w->early = w->released && !__atomic_load_n(w->released, __ATOMIC_SEQ_CST);
	w->past_deadline = fs_now_ns(clock) >= fs_ts_ns(&to);
	w->ms = fs_ms_since(start);
	w->taken_ns = fs_now_ns(CLOCK_MONOTONIC);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	if (w->ret)
		return NULL;
	if (w->hold_ms)
		usleep(w->hold_ms * 1000);
	if (w->unlock)
		w->unlock_ret = fs_unlock(w->word, fs_unlock_op(w->op));
	return NULL;
}

static inline int waiter_start(struct waiter *w)
{
	int err = pthread_create(&w->thread, NULL, waiter_fn, w);

	if (err)
		return err;
	while (!__atomic_load_n(&w->started, __ATOMIC_SEQ_CST))
		usleep(100);
	return 0;
}

/* Start @w and wait until it sleeps in the kernel; false if it does not */
static inline bool waiter_queue(struct waiter *w)
{
	return !waiter_start(w) && fs_wait_blocked(getpid(), w->tid);
}

/* Sleep, off the CPU, until fs_set_flag() sets *@flag */
static inline void fs_sleep_until_flag(int *flag)
{
	while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, flag, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static inline void fs_set_flag(int *flag)
{
	__atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, flag, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wait up to @ms for *@flag to be set; true once it is */
static inline bool fs_wait_flag_ms(int *flag, long long ms)
{
	long long start = fs_now_ns(CLOCK_MONOTONIC);

	while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST)) {
		if (fs_ms_since(start) > ms)
			return false;
		usleep(1000);
	}
	return true;
}

static inline bool fs_wait_flag(int *flag)
{
	return fs_wait_flag_ms(flag, FS_MUST_MS);
}

static inline bool wait_done(struct waiter *w)
{
	return fs_wait_flag(&w->done);
}

/*
 * Holds a lock, asleep in FUTEX_WAIT until released: an owner that ran
 * while the waiters queue (the test's thread, creating them) would let
 * them spin past their due times and ask, and the lock would go to the
 * first that asked, not to the first in line; and stay with it while it
 * cannot run, as the rst says of a task that asked and then stops running.
 */
struct holder {
	__u32 *word;
	int op;			/* FUTEX_SPIN_LOCK[_PRIVATE] */
	pid_t tid;
	int locked;
	int release;
	long long unlocked;	/* CLOCK_MONOTONIC ns */
	long ret;
};

static inline void *holder_fn(void *arg)
{
	struct holder *h = arg;

	h->tid = fs_gettid();
	h->ret = fs_lock(h->word, h->op, NULL);
	__atomic_store_n(&h->locked, 1, __ATOMIC_SEQ_CST);
	if (h->ret)
		return NULL;
	fs_sleep_until_flag(&h->release);
	h->unlocked = fs_now_ns(CLOCK_MONOTONIC);
	h->ret = fs_unlock(h->word, fs_unlock_op(h->op));
	return NULL;
}

static inline long holder_release(struct holder *h, pthread_t t)
{
	fs_set_flag(&h->release);
	if (fs_join(t, NULL))
		return -ETIMEDOUT;
	return h->ret;
}

/*
 * Create a thread running @fn(@arg) under @policy at @prio (not
 * SCHED_OTHER), on CPU @cpu only (-1: anywhere)
 */
static inline int fs_thread_create_on(pthread_t *t, int cpu, int policy,
				      int prio, void *(*fn)(void *), void *arg)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	pthread_attr_init(&attr);
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	if (policy != SCHED_OTHER) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, policy);
		pthread_attr_setschedparam(&attr, &sp);
	}
	err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

static inline int fs_thread_create(pthread_t *t, int policy, int prio,
				   void *(*fn)(void *), void *arg)
{
	return fs_thread_create_on(t, -1, policy, prio, fn, arg);
}

static inline bool fs_debugfs_mounted(void)
{
	struct statfs sfs;

	return !statfs("/sys/kernel/debug", &sfs) &&
	       sfs.f_type == DEBUGFS_MAGIC;
}

/* A stats counter, or -1 when debugfs is not there to ask */
static inline long long fs_stat(struct __test_metadata *_metadata,
				const char *name)
{
	long long val;

	if (!fs_debugfs_mounted())
		return -1;
	val = futex_spin_stat(name);
	EXPECT_LE(0, val) TH_LOG("no counter \"%s\" in %s/stats", name,
				 FUTEX_SPIN_DEBUGFS);
	return val;
}

/*
 * Whether, since @before (fs_stat() of "unanswered_wakes"), an unlock or a
 * waiter passed over a woken waiter or a handoff that was not answered
 * within S + T (a slow guest): the lock's turns then need not have
 * followed the queue.
 */
static inline bool fs_passed_over(struct __test_metadata *_metadata,
				  long long before)
{
	return before >= 0 && fs_stat(_metadata, "unanswered_wakes") > before;
}

/*
 * The lockdep class of the futex hash-bucket locks: futex_hash_bucket_init()
 * initialises every one of them, of the global hash and of the processes'
 * private hashes alike.
 */
#define FS_HB_LOCK_CLASS	"&fhb->lock"

/*
 * Acquisitions of the futex hash-bucket locks since boot, from
 * /proc/lock_stat: 0 before any (lockdep lists a class once it is used),
 * -1 without CONFIG_LOCK_STAT or for a line that cannot be read.
 */
static inline long long fs_hb_lock_acquisitions(void)
{
	size_t len = strlen(FS_HB_LOCK_CLASS);
	long long acq = 0;
	char line[512];
	FILE *f;

	f = fopen("/proc/lock_stat", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *name = line + strspn(line, " ");
		double v[8];

		/*
		 * The class line is its name, a colon and the numbers; the
		 * lines of its call sites that follow have no colon.
		 */
		if (strncmp(name, FS_HB_LOCK_CLASS, len) || name[len] != ':')
			continue;
		if (sscanf(name + len + 1, "%lf %lf %lf %lf %lf %lf %lf %lf",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
			acq = (long long)v[7];
		else
			acq = -1;
		break;
	}
	fclose(f);
	return acq;
}

/* Queue heads, or -1 when debugfs is not there to ask */
static inline long long fs_live_heads(struct __test_metadata *_metadata)
{
	long long heads;

	if (!fs_debugfs_mounted())
		return -1;
	heads = futex_spin_live_heads();
	EXPECT_LE(0, heads) TH_LOG("%s/live_heads: %s", FUTEX_SPIN_DEBUGFS,
				   strerror(errno));
	return heads;
}

/*
 * The knobs of CONFIG_FUTEX_SPIN_INJECT (see kernel/futex/spin_inject.c);
 * without them fs_inject() fails with -ENOENT, and the tests that use them
 * skip when fs_inject_present() says so.
 */
#define FS_INJECT		FUTEX_SPIN_DEBUGFS "/inject/"

/* The kernel creates the knobs together: one stands for all. */
static inline bool fs_inject_present(void)
{
	return !access(FS_INJECT "tid", W_OK);
}

/* A /proc, /sys or debugfs setting now, into @buf; false if unreadable */
static inline bool fs_knob_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

/* 0, or the -errno of the open or of a short write */
static inline int fs_knob_write(const char *path, const char *val)
{
	ssize_t len = strlen(val);
	int fd, ret = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, len) != len)
		ret = errno ? -errno : -EIO;
	close(fd);
	return ret;
}

static inline int fs_inject(const char *knob, long long val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), FS_INJECT "%s", knob);
	snprintf(buf, sizeof(buf), "%lld\n", val);
	return fs_knob_write(path, buf);
}

/*
 * fail_futex (CONFIG_FAIL_FUTEX, Documentation/fault-injection/) makes the
 * FUTEX_SPIN cmpxchg of the word fail with -EAGAIN, as the helper of an
 * LL/SC architecture may, for the tasks whose make-it-fail is set. With
 * ignore-private, the key lookups of private words do not fail with it;
 * those of shared words do, so a task must not exit through a shared
 * futex wake (a thread's, for pthread_join()) with make-it-fail set.
 */
#define FS_FAIL_FUTEX		"/sys/kernel/debug/fail_futex/"

static inline bool fs_fail_futex_present(void)
{
	return !access(FS_FAIL_FUTEX "probability", W_OK);
}

static inline int fs_fail_futex(const char *knob, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), FS_FAIL_FUTEX "%s", knob);
	return fs_knob_write(path, val);
}

/*
 * Fail the cmpxchg of task @tid @times times (-1: until called again with
 * 0), every time it tries; 0 ends it. Returns 0 or a -errno. Ending it for
 * a task that died meanwhile is no error.
 */
static inline int fs_fail_cmpxchg(pid_t tid, int times)
{
	char path[64], buf[16];
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/make-it-fail", tid);
	if (!times) {
		fs_fail_futex("probability", "0\n");
		ret = fs_knob_write(path, "0\n");
		return ret == -ENOENT || ret == -ESRCH ? 0 : ret;
	}
	snprintf(buf, sizeof(buf), "%d\n", times);
	ret = fs_fail_futex("ignore-private", "Y\n") ?:
	      fs_fail_futex("task-filter", "Y\n") ?:
	      fs_fail_futex("verbose", "0\n") ?:
	      fs_fail_futex("interval", "1\n") ?:
	      fs_fail_futex("times", buf) ?:
	      fs_knob_write(path, "1\n");
	return ret ?: fs_fail_futex("probability", "100\n");
}

/* How many of the failures fs_fail_cmpxchg() asked for are left; -1: unknown */
static inline int fs_fail_cmpxchg_left(void)
{
	char buf[32];

	if (!fs_knob_read(FS_FAIL_FUTEX "times", buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

/*
 * A cmpxchg failing for a time: a thread of its own ends it after @ms, or
 * when fs_fail_window_end() comes first. It runs as SCHED_OTHER on any
 * CPU, whatever its creator's policy and pinning, so that a task spinning
 * on a failing cmpxchg cannot keep it from its CPU.
 */
struct fs_fail_window {
	pthread_t thread;
	pid_t tid;
	int ms;
	int end[2];		/* a pipe: fs_fail_window_end() writes to it */
};

static inline void *fs_fail_window_fn(void *arg)
{
	struct fs_fail_window *w = arg;
	struct pollfd pfd = { .fd = w->end[0], .events = POLLIN };

	poll(&pfd, 1, w->ms);
	return (void *)(long)fs_fail_cmpxchg(w->tid, 0);
}

static inline int fs_fail_window_start(struct fs_fail_window *w, pid_t tid,
				       int ms)
{
	struct sched_param sp = { .sched_priority = 0 };
	pthread_attr_t attr;
	cpu_set_t all;
	int cpu, ret;

	w->tid = tid;
	w->ms = ms;
	if (pipe(w->end))
		return -errno;
	ret = fs_fail_cmpxchg(tid, -1);
	if (ret)
		goto close;
	CPU_ZERO(&all);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &all);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(all), &all);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	ret = -pthread_create(&w->thread, &attr, fs_fail_window_fn, w);
	pthread_attr_destroy(&attr);
	if (!ret)
		return 0;
	fs_fail_cmpxchg(tid, 0);
close:
	close(w->end[0]);
	close(w->end[1]);
	return ret;
}

/* End the window now if it is still open; 0 or a -errno */
static inline int fs_fail_window_end(struct fs_fail_window *w)
{
	void *ret = NULL;
	int err;

	err = fs_fail_cmpxchg(w->tid, 0);
	if (write(w->end[1], "", 1) != 1 && !err)
		err = -errno;
	if (pthread_join(w->thread, &ret) && !err)
		err = -ESRCH;
	close(w->end[0]);
	close(w->end[1]);
	return err ?: (int)(long)ret;
}

/* 0 is "no stall point" */
static inline void fs_inject_off(void)
{
	fs_inject("stall", 0);
	fs_inject("tid", 0);
	fs_fail_futex("probability", "0\n");
}

/*
 * Every test starts by probing: a kernel without the opcodes fails it
 * rather than skipping it, a missing feature being what the tests are for.
 * By then every task of the tests before has exited, and each queue head
 * goes with the last task that keeps it: none may be left.
 */
static inline void fs_setup(struct __test_metadata *_metadata)
{
	int err = futex_spin_probe();

	ASSERT_EQ(-EPERM, err) TH_LOG("FUTEX_SPIN_UNLOCK of a 0 word: %s, want EPERM",
				      err ? strerror(-err) : "success");
	EXPECT_GE(0, fs_live_heads(_metadata))
		TH_LOG("queue heads left by the tests before: leaked");
}

/*
 * And ends, its other threads and processes gone, with at most the one
 * head the test's own thread keeps: the last one it used.
 */
static inline void fs_teardown(struct __test_metadata *_metadata)
{
	EXPECT_GE(1, fs_live_heads(_metadata)) TH_LOG("leak");
}

#endif /* _FUTEX_SPIN_TEST_H */
