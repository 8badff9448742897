// SPDX-License-Identifier: GPL-2.0
/*
 * FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK: queue head lifetimes under stress.
 *
 * The kernel keeps one queue head per futex key while tasks use it. Each
 * scenario here makes heads be created and dropped by racing tasks:
 * lockers and unlockers over 64 shared words in one MAP_SHARED page and 64
 * private words (128 keys in a hash table of 256 buckets per CPU: some
 * share a bucket, most do not), lockers whose short deadlines expire (a
 * timed out waiter leaves FUTEX_WAITERS set, so a later unlock may find no
 * head), owners of robust locks that die by exit or SIGKILL while others
 * wait, threads that exit right after a lock operation, and processes
 * that use locks and then exec.
 *
 * Each scenario runs in a forked child, in a process group of its own; the
 * test process never uses the opcodes. It checks that the lock excluded
 * (a counter incremented non-atomically under each lock), that no lock
 * call with a long deadline timed out and nothing outlived its bound, and,
 * once every task of the scenario is gone, that no queue head is left.
 *
 * FUTEX_SPIN_HEADS_SECONDS sets the time per scenario (default 2).
 * FUTEX_SPIN_HEADS_BESIDE=1 says that other programs use the opcodes
 * meanwhile (make stress runs the robust scenarios beside the fuzzer, to
 * load their deaths as the fuzzer does): their heads count in live_heads,
 * so that check alone is left out.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "futex_spin_test.h"

#define PAGE			4096
#define NR_SHARED		64	/* mutexes in one MAP_SHARED page */
#define NR_PRIVATE		64
#define HEADS_SECONDS		2
#define HEADS_MAX_SECONDS	600
/* After the scenario's time is up: finishing, joining, reaping */
#define HEADS_SLACK_S		30
/* One heartbeat thread per CPU, up to HEARTBEAT_CPUS, beating this often */
#define HEARTBEAT_CPUS		64
#define HEARTBEAT_MS		10
/* What the exec scenario's children run: exit at once */
#define HEADS_EXEC_ARG		"--futex-spin-heads-exit"

/* A lock's protected state: only its owner touches it */
struct slot {
	int inside;
	unsigned long count;
};

/* What the tasks of a scenario found, for the test process to judge */
struct result {
	unsigned long ops;		/* lock/unlock pairs */
	unsigned long shared_claimed;	/* increments done on shared slots */
	unsigned long errors;
	unsigned long violations;
	unsigned long timeouts;		/* ETIMEDOUT at a short deadline */
	unsigned long owner_died;	/* EOWNERDEAD */
	unsigned long deaths;		/* children that died holding a lock */
	unsigned long thread_exits;	/* threads that exited after one op */
	unsigned long execs;
	long long longest_lock_ns;	/* the longest lock call that got it */
	int failed;
	char msg[160];
};

/*
 * A CPU's heartbeat: the longest time between two beats, and when it
 * ended. The beat is a SCHED_FIFO thread pinned to the CPU, which every
 * task of a scenario yields to at once, so a long gap is a CPU that ran
 * nothing preemptible: a vCPU the host did not run, or the kernel with
 * preemption off there. A task kept waiting by the guest's scheduler
 * leaves no gap.
 */
struct heartbeat {
	long long gap_ns;
	long long at_ns;	/* CLOCK_MONOTONIC */
};

enum heads_doomed_step { DOOMED_FORKED, DOOMED_LOCKING, DOOMED_HOLDING,
			 DOOMED_EXITING };

struct heads_shm {
	struct futex_spin_mutex m[NR_SHARED];	/* page aligned: one page */
	struct slot slot[NR_SHARED];
	struct result res;
	long long end_ns;	/* CLOCK_MONOTONIC: the scenario's time is up */
	int held;		/* a doomed child holds its lock */
	int doomed_lock;	/* the shared lock the doomed child took */
	int doomed_step;	/* how far the doomed child got: enum above */
	long long doomed_ns[DOOMED_EXITING + 1];	/* CLOCK_MONOTONIC, per step */
	struct heartbeat beat[HEARTBEAT_CPUS];
	int beats;		/* CPUs with a heartbeat */
	int beats_stop;
};

/* What a scenario does */
struct mix {
	int procs;		/* worker processes */
	int threads;		/* long-lived threads in each */
	int short_threads;	/* threads in each that exit after short_ops */
	int short_ops;
	int hot;		/* locks in use at one time */
	int timeout_pct;	/* ops with a deadline of -1..2 ms */
	int hold_pct;		/* ops holding the lock across a sleep */
	int hold_us;
	bool private_keys;
	bool deaths;		/* children die holding robust locks ... */
	bool sigkill;		/* ... by SIGKILL rather than exit */
	bool execs;		/* children use locks, then exec */
};

static struct heads_shm *shm;

/* Per process: private keys are those of one mm */
static struct futex_spin_mutex priv_m[NR_PRIVATE];
static struct slot priv_slot[NR_PRIVATE];
static unsigned long priv_claimed;

static void doomed_step(enum heads_doomed_step step)
{
	__atomic_store_n(&shm->doomed_ns[step], fs_now_ns(CLOCK_MONOTONIC),
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&shm->doomed_step, step, __ATOMIC_SEQ_CST);
}

static void fail(const char *fmt, ...)
{
	struct result *res = &shm->res;
	va_list ap;

	__atomic_fetch_add(&res->errors, 1, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&res->failed, 1, __ATOMIC_SEQ_CST))
		return;
	va_start(ap, fmt);
	vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
	va_end(ap);
}

static void count(unsigned long *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static bool time_up(void)
{
	return fs_now_ns(CLOCK_MONOTONIC) >= shm->end_ns;
}

/* Seconds left in the scenario, plus the slack: an alarm for a process */
static unsigned int alarm_s(void)
{
	long long left = shm->end_ns - fs_now_ns(CLOCK_MONOTONIC);

	return (left > 0 ? left / 1000000000 : 0) + HEADS_SLACK_S - 5;
}

/* A child dies with the process that forked it, whatever happens */
static pid_t heads_fork(void)
{
	pid_t pid = fork();

	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(alarm_s());
	}
	return pid;
}

static void priv_reset(void)
{
	int i;

	/* A fork child's copy may name its parent's threads: start afresh */
	for (i = 0; i < NR_PRIVATE; i++) {
		futex_spin_mutex_init(&priv_m[i], 0);
		priv_slot[i] = (struct slot){ 0 };
	}
	priv_claimed = 0;
}

static void priv_check(void)
{
	unsigned long sum = 0;
	int i;

	for (i = 0; i < NR_PRIVATE; i++) {
		sum += priv_slot[i].count;
		if (fs_load(&priv_m[i].word))
			fail("private lock %d left as %#x", i,
			     fs_load(&priv_m[i].word));
	}
	if (sum != priv_claimed)
		fail("private locks: %lu increments, %lu counted", priv_claimed,
		     sum);
}

struct worker {
	const struct mix *mix;
	struct futex_spin_thread self;
	unsigned int rng;
	int ops;		/* then exit; 0: until the time is up */
	pthread_t thread;
};

/* A lock of the hot window, which moves every 20 ms, or any lock */
static int pick(struct worker *w, int nr)
{
	unsigned int r = rand_r(&w->rng);
	long long window = fs_now_ns(CLOCK_MONOTONIC) / 20000000;

	if (!(r % 8))
		return (r / 8) % nr;
	return (window + (r / 8) % w->mix->hot) % nr;
}

/* Raise *@longest to @ns if below, among processes */
static void heads_longest(long long *longest, long long ns)
{
	long long cur = __atomic_load_n(longest, __ATOMIC_RELAXED);

	/* A failed exchange reloads cur */
	while (cur < ns) {
		if (__atomic_compare_exchange_n(longest, &cur, ns, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			break;
	}
}

/*
 * Lock @m, check that it excludes, count, and (unless @keep) unlock.
 * Returns true if the caller still holds @m.
 */
static bool heads_op(struct worker *w, struct futex_spin_mutex *m,
		     struct slot *s, unsigned long *claimed, bool keep)
{
	struct result *res = &shm->res;
	unsigned int r = rand_r(&w->rng);
	bool short_deadline = (int)(r % 100) < w->mix->timeout_pct;
	long long ms = short_deadline ? (int)((r / 100) % 4) - 1 : FS_MUST_MS;
	struct timespec to = fs_deadline(CLOCK_MONOTONIC, ms);
	__u32 tid = w->self.tid;
	long long start;
	int ret;

	start = fs_now_ns(CLOCK_MONOTONIC);
	ret = futex_spin_timedlock(m, &w->self, CLOCK_MONOTONIC, &to);
	if (!ret || ret == -EOWNERDEAD)
		heads_longest(&res->longest_lock_ns,
			      fs_now_ns(CLOCK_MONOTONIC) - start);
	if (ret == -ETIMEDOUT) {
		if ((fs_load(&m->word) & FUTEX_TID_MASK) == tid)
			fail("ETIMEDOUT, but the word %#x is the caller's",
			     fs_load(&m->word));
		else if (!short_deadline)
			fail("no lock within %d ms: word %#x", FS_MUST_MS,
			     fs_load(&m->word));
		else
			count(&res->timeouts);
		return false;
	}
	if (ret == -EOWNERDEAD) {
		count(&res->owner_died);
		/* The dead owner finished with the slot before it died */
		futex_spin_consistent(m);
	} else if (ret) {
		fail("lock: %s", strerror(-ret));
		return false;
	}
	if (__atomic_exchange_n(&s->inside, 1, __ATOMIC_SEQ_CST) ||
	    (fs_load(&m->word) & FUTEX_TID_MASK) != tid) {
		count(&res->violations);
		fail("two owners: word %#x, caller %d", fs_load(&m->word), tid);
	}
	/* Not atomic on purpose: a lock that does not exclude loses some */
	s->count++;
	__atomic_fetch_add(claimed, 1, __ATOMIC_SEQ_CST);
	/* Hold it across a sleep now and then: the others enter the kernel */
	r = rand_r(&w->rng);
	if ((int)(r % 100) < w->mix->hold_pct) {
		if ((r / 100) % 2)
			sched_yield();
		else
			usleep((r / 200) % w->mix->hold_us + 1);
	}
	__atomic_store_n(&s->inside, 0, __ATOMIC_SEQ_CST);
	if (keep)
		return true;
	ret = futex_spin_unlock(m, &w->self);
	if (ret)
		fail("unlock: %s", strerror(-ret));
	count(&res->ops);
	return false;
}

/* One op on a shared or a private lock of the hot window */
static void heads_op_any(struct worker *w)
{
	int i;

	if (w->mix->private_keys && rand_r(&w->rng) % 2) {
		i = pick(w, NR_PRIVATE);
		heads_op(w, &priv_m[i], &priv_slot[i], &priv_claimed, false);
	} else {
		i = pick(w, NR_SHARED);
		heads_op(w, &shm->m[i], &shm->slot[i],
			 &shm->res.shared_claimed, false);
	}
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	int n = 0;

	if (futex_spin_thread_init(&w->self, true))
		fail("set_robust_list: %s", strerror(errno));
	w->rng ^= w->self.tid;
	while (!time_up() && (!w->ops || n++ < w->ops))
		heads_op_any(w);
	/* Returning ends the thread: its queue head goes now */
	return NULL;
}

/* Starts threads that each do w->ops ops and exit, one after the other */
static void *spawner_fn(void *arg)
{
	struct worker *tmpl = arg, w;
	int err;

	while (!time_up()) {
		w = *tmpl;
		w.rng = rand_r(&tmpl->rng);
		err = pthread_create(&w.thread, NULL, worker_fn, &w);
		if (err) {
			fail("pthread_create: %s", strerror(err));
			break;
		}
		err = pthread_join(w.thread, NULL);
		if (err) {
			fail("pthread_join: %s", strerror(err));
			break;
		}
		count(&shm->res.thread_exits);
	}
	return NULL;
}

/* The threads of one worker process, until the time is up */
static void worker_proc(const struct mix *mix, unsigned int seed)
{
	int nr = mix->threads + mix->short_threads;
	struct worker w[8];
	int i, err;

	priv_reset();
	for (i = 0; i < nr && i < 8; i++) {
		w[i] = (struct worker){
			.mix = mix, .rng = seed + i,
			.ops = i < mix->threads ? 0 : mix->short_ops,
		};
		err = pthread_create(&w[i].thread, NULL,
				     i < mix->threads ? worker_fn : spawner_fn,
				     &w[i]);
		if (err) {
			fail("pthread_create: %s", strerror(err));
			nr = i;
			break;
		}
	}
	for (i = 0; i < nr; i++)
		pthread_join(w[i].thread, NULL);
	priv_check();
}

/* A child takes a robust lock, uses it, and dies holding it */
static void doomed_child(const struct mix *mix, unsigned int seed)
{
	struct worker w = { .mix = mix, .rng = seed };
	int i;

	if (futex_spin_thread_init(&w.self, true)) {
		fail("set_robust_list: %s", strerror(errno));
		_exit(1);
	}
	i = pick(&w, NR_SHARED);
	__atomic_store_n(&shm->doomed_lock, i, __ATOMIC_SEQ_CST);
	doomed_step(DOOMED_LOCKING);
	if (!heads_op(&w, &shm->m[i], &shm->slot[i], &shm->res.shared_claimed,
		      true))
		_exit(0);
	doomed_step(DOOMED_HOLDING);
	count(&shm->res.deaths);
	/*
	 * Die once another task sleeps on the lock, or after 100 ms anyway:
	 * of time, not of 1 ms sleeps, which a loaded guest stretches.
	 */
	while (!(fs_load(&shm->m[i].word) & FUTEX_WAITERS) &&
	       fs_ms_since(shm->doomed_ns[DOOMED_HOLDING]) < 100)
		usleep(1000);
	doomed_step(DOOMED_EXITING);
	if (!mix->sigkill)
		_exit(0);
	__atomic_store_n(&shm->held, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
}

struct gate {
	__u32 word;
	pid_t tid;
};

static void *gate_fn(void *arg)
{
	struct timespec to = fs_deadline(CLOCK_MONOTONIC, FS_MUST_MS);
	struct gate *g = arg;

	__atomic_store_n(&g->tid, fs_gettid(), __ATOMIC_SEQ_CST);
	/* Killed by the exec while it waits: it must not get the gate */
	fs_lock(&g->word, FUTEX_SPIN_LOCK_PRIVATE, &to);
	return NULL;
}

/*
 * A child uses shared and private locks, then execs while a second thread
 * waits in FUTEX_SPIN_LOCK on a private word that the first holds.
 */
static void exec_child(const struct mix *mix, unsigned int seed, int n)
{
	struct worker w = { .mix = mix, .rng = seed };
	const char *path = "/proc/self/exe";
	static struct gate g;
	pthread_t t;
	int i;

	priv_reset();
	futex_spin_thread_init(&w.self, true);
	for (i = 0; i < 4; i++)
		heads_op_any(&w);
	/*
	 * The gate: owned by this thread, waited on by another. The exec
	 * comes as that one enters the kernel, spins or sleeps there.
	 */
	fs_store(&g.word, w.self.tid);
	if (!pthread_create(&t, NULL, gate_fn, &g)) {
		while (!__atomic_load_n(&g.tid, __ATOMIC_SEQ_CST))
			usleep(100);
		usleep(rand_r(&w.rng) % 5000);
	}
	/* Half the time an unrelated program, if there is one */
	if (n % 4 >= 2 && !access("/bin/true", X_OK))
		path = "/bin/true";
	execl(path, path, HEADS_EXEC_ARG, (char *)NULL);
	fail("exec %s: %s", path, strerror(errno));
	_exit(1);
}

/*
 * Reap @pid within 3 * FS_MUST_MS: a child that execs loads a program
 * and its libraries, which in a loaded debug guest can take over a second.
 */
static int reap_child(pid_t pid)
{
	int status = -1, i;

	for (i = 0; i < 3 && status == -1; i++)
		status = fs_reap(pid);
	return status;
}

/* Field @n of a task's stat, from @fields (field 3); NULL if it has none */
static char *stat_field(char *fields, int n)
{
	char *f = fields;
	int i;

	for (i = 3; f && i < n; i++) {
		f = strchr(f, ' ');
		if (f)
			f++;
	}
	return f;
}

/* The CPU a task last ran on: field 39 of its stat */
static int task_cpu_of(char *fields)
{
	char *f = stat_field(fields, 39);

	return f ? atoi(f) : -1;
}

/*
 * The CPU time a thread used, in user space and in the kernel (fields 14
 * and 15 of its stat): a thread that did not get the CPU used none, one
 * that loops used it all, and where it looped is the larger of the two.
 */
static void heads_dump_times(const char *who, char *fields)
{
	char *f = stat_field(fields, 14);
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long utime, stime;

	if (f && hz > 0 && sscanf(f, "%lu %lu", &utime, &stime) == 2)
		ksft_print_msg("%s: CPU time %lu ms in user space, %lu ms in the kernel\n",
			       who, utime * 1000 / hz, stime * 1000 / hz);
}

/* The kernel's backtrace of every CPU, into the kernel log */
static bool heads_sysrq_backtraces(void)
{
	FILE *f = fopen("/proc/sysrq-trigger", "w");
	bool done;

	if (!f)
		return false;
	done = fputc('l', f) != EOF;
	return !fclose(f) && done;
}

/*
 * Each thread of the child: its state, its own CPU time and the system
 * call it is in ("running" when it runs). A thread that runs in the
 * kernel shows no stack in /proc; the backtraces of all CPUs do, in the
 * kernel log, which make stress and make check keep.
 */
static void heads_dump_threads(pid_t pid)
{
	char path[64], line[256], who[64], call[128], *state;
	bool running = false;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		pid_t tid = atoi(d->d_name);

		state = tid > 0 ? fs_task_stat(pid, tid, line, sizeof(line)) : NULL;
		if (!state)
			continue;
		running |= *state == 'R';
		snprintf(who, sizeof(who), "child %d: thread %d", pid, tid);
		if (!fs_task_syscall(pid, tid, call, sizeof(call)))
			strcpy(call, "?\n");
		ksft_print_msg("%s: state %.1s, system call %s", who, state, call);
		heads_dump_times(who, state);
	}
	if (dir)
		closedir(dir);
	if (running && heads_sysrq_backtraces())
		ksft_print_msg("child %d: runs: the backtraces of all CPUs are in the kernel log\n",
			       pid);
}

/*
 * Whether the child ran and for how long it was runnable without running
 * (CONFIG_SCHED_INFO): a child kept off the CPU by the guest's scheduler
 * has a long run delay on a CPU whose heartbeat went on.
 */
static void heads_dump_schedstat(pid_t pid)
{
	long long ran, delay, slices;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (f && fscanf(f, "%lld %lld %lld", &ran, &delay, &slices) == 3)
		ksft_print_msg("child %d: ran %lld ms, runnable and waiting %lld ms, %lld slices\n",
			       pid, ran / 1000000, delay / 1000000, slices);
	if (f)
		fclose(f);
}

/* Each CPU's longest heartbeat gap, and when it ended after @since */
static void heads_dump_beats(long long since)
{
	int cpu;

	for (cpu = 0; cpu < shm->beats; cpu++) {
		struct heartbeat *b = &shm->beat[cpu];

		ksft_print_msg("CPU %d: longest heartbeat gap %lld ms, to +%lld ms\n",
			       cpu, __atomic_load_n(&b->gap_ns, __ATOMIC_SEQ_CST) / 1000000,
			       (__atomic_load_n(&b->at_ns, __ATOMIC_SEQ_CST) - since) / 1000000);
	}
}

/*
 * A child that did not end: where it is, for the log. Its kernel stack
 * (root only) tells a lock call that never returned from an exit that
 * hangs; the step and the word say what the child had done.
 */
static void heads_dump_child(pid_t pid)
{
	static const char * const steps[] = {
		"before its robust lock (or an exec child)", "in its lock call",
		"holding its lock", "exiting",
	};
	int step = __atomic_load_n(&shm->doomed_step, __ATOMIC_SEQ_CST);
	int i = __atomic_load_n(&shm->doomed_lock, __ATOMIC_SEQ_CST);
	long long *ns = shm->doomed_ns;
	char path[64], line[256], *state;
	FILE *f;
	int s;

	if (step == DOOMED_FORKED)
		ksft_print_msg("child %d: %s\n", pid, steps[step]);
	else
		ksft_print_msg("child %d: %s, lock %d's word %#x\n", pid,
			       steps[step], i, fs_load(&shm->m[i].word));
	/* Which step took the time: a lock call, or a child that did not run */
	ksft_print_msg("child %d: forked %lld ms ago, %lld ms before the end\n",
		       pid, fs_ms_since(ns[DOOMED_FORKED]),
		       (shm->end_ns - ns[DOOMED_FORKED]) / 1000000);
	for (s = DOOMED_LOCKING; s <= step; s++)
		ksft_print_msg("child %d: %s at +%lld ms\n", pid, steps[s],
			       (ns[s] - ns[DOOMED_FORKED]) / 1000000);
	state = fs_task_stat(pid, pid, line, sizeof(line));
	ksft_print_msg("child %d: state %.1s, last on CPU %d\n", pid,
		       state ? state : "?", task_cpu_of(state));
	heads_dump_schedstat(pid);
	heads_dump_threads(pid);
	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		ksft_print_msg("child %d: %s", pid, line);
	if (f)
		fclose(f);
	heads_dump_beats(ns[DOOMED_FORKED]);
}

/*
 * Kills a doomed child once it holds its lock. Its way there is a lock
 * call, which gives up after FS_MUST_MS, and at most 100 ms more: a child
 * not there within twice FS_MUST_MS is a failure. It is killed then too,
 * or it would wait in pause() for ever.
 */
static void heads_kill_holder(pid_t pid)
{
	if (!fs_wait_flag_ms(&shm->held, 2 * FS_MUST_MS)) {
		fail("child %d did not hold its lock within %d ms", pid,
		     2 * FS_MUST_MS);
		heads_dump_child(pid);
	}
	kill(pid, SIGKILL);
}

/* Forks doomed or exec'ing children one after the other */
static void spawner_proc(const struct mix *mix, unsigned int seed)
{
	int status, n;
	pid_t pid;

	/* At least two, however slow the machine */
	for (n = 0; n < 2 || !time_up(); n++) {
		__atomic_store_n(&shm->held, 0, __ATOMIC_SEQ_CST);
		doomed_step(DOOMED_FORKED);
		pid = heads_fork();
		if (pid < 0) {
			fail("fork: %s", strerror(errno));
			return;
		}
		if (!pid) {
			if (mix->execs)
				exec_child(mix, seed + n, n);
			doomed_child(mix, seed + n);
		}
		if (mix->sigkill)
			heads_kill_holder(pid);
		status = reap_child(pid);
		if (status == -1) {
			fail("child %d did not end", pid);
			heads_dump_child(pid);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return;
		}
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
		    mix->sigkill)
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("child %d: wait status %#x", pid, status);
		else if (mix->execs)
			count(&shm->res.execs);
	}
}

/* The scenario, in a child of the test process */
static void scenario(const struct mix *mix)
{
	unsigned int seed = fs_now_ns(CLOCK_MONOTONIC);
	int i, err, status;
	pid_t pid;

	err = futex_spin_probe();
	if (err != -EPERM) {
		fail("FUTEX_SPIN_UNLOCK of a 0 word: %s, want EPERM",
		     err ? strerror(-err) : "success");
		_exit(1);
	}
	for (i = 0; i < mix->procs; i++) {
		pid = heads_fork();
		if (!pid) {
			worker_proc(mix, seed + 1000 * i);
			_exit(0);
		}
		if (pid < 0)
			fail("fork: %s", strerror(errno));
	}
	if (mix->deaths || mix->execs) {
		pid = heads_fork();
		if (!pid) {
			spawner_proc(mix, seed + 1000 * i);
			_exit(0);
		}
		if (pid < 0)
			fail("fork: %s", strerror(errno));
	}
	while ((pid = wait(&status)) > 0) {
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("worker %d: wait status %#x", pid, status);
	}
	_exit(0);
}

static int heads_seconds(void)
{
	const char *env = getenv("FUTEX_SPIN_HEADS_SECONDS");
	int s = env ? atoi(env) : HEADS_SECONDS;

	return s < 1 ? 1 : s > HEADS_MAX_SECONDS ? HEADS_MAX_SECONDS : s;
}

static bool heads_beside(void)
{
	const char *env = getenv("FUTEX_SPIN_HEADS_BESIDE");

	return env && atoi(env);
}

static long long stat_delta(const char *name, long long before)
{
	long long after = futex_spin_stat(name);

	return before < 0 || after < 0 ? -1 : after - before;
}

/* Poll: a head may be freed after an RCU grace period */
static long long live_heads_settled(void)
{
	long long start = fs_now_ns(CLOCK_MONOTONIC), heads;

	do {
		heads = futex_spin_live_heads();
		if (!heads)
			break;
		usleep(10000);
	} while (fs_ms_since(start) < FS_MUST_MS);
	return heads;
}

FIXTURE(heads) {
	int seconds;
};

FIXTURE_SETUP(heads)
{
	int i;

	if (!fs_debugfs_mounted())
		SKIP(return, "no debugfs: %s/live_heads cannot be read",
		     FUTEX_SPIN_DEBUGFS);
	self->seconds = heads_seconds();
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shm);
	for (i = 0; i < NR_SHARED; i++)
		futex_spin_mutex_init(&shm->m[i],
				      FUTEX_SPIN_SHARED | FUTEX_SPIN_ROBUST);
	/* Orphans of the scenario become this process's to reap */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
}

FIXTURE_TEARDOWN(heads)
{
	if (shm && shm != MAP_FAILED)
		munmap(shm, sizeof(*shm));
}

static void *heartbeat_fn(void *arg)
{
	struct heartbeat *b = arg;
	long long last = fs_now_ns(CLOCK_MONOTONIC), now, gap;

	while (!__atomic_load_n(&shm->beats_stop, __ATOMIC_SEQ_CST)) {
		usleep(HEARTBEAT_MS * 1000);
		now = fs_now_ns(CLOCK_MONOTONIC);
		/* Beyond the sleep asked for */
		gap = now - last - HEARTBEAT_MS * 1000000LL;
		if (gap > b->gap_ns) {
			__atomic_store_n(&b->at_ns, now, __ATOMIC_SEQ_CST);
			__atomic_store_n(&b->gap_ns, gap, __ATOMIC_SEQ_CST);
		}
		last = now;
	}
	return NULL;
}

/* A heartbeat on each CPU, or on none (no SCHED_FIFO): how many started */
static int heartbeats_start(pthread_t *t)
{
	int cpu, nr = sysconf(_SC_NPROCESSORS_ONLN);

	memset(shm->beat, 0, sizeof(shm->beat));
	shm->beats_stop = 0;
	for (cpu = 0; cpu < nr && cpu < HEARTBEAT_CPUS; cpu++) {
		if (fs_thread_create_on(&t[cpu], cpu, SCHED_FIFO, 10, heartbeat_fn,
					&shm->beat[cpu]))
			break;
	}
	shm->beats = cpu;
	return cpu;
}

/* Stop the heartbeats; the longest gap of all, for the log */
static long long heartbeats_stop(pthread_t *t, int *gap_cpu)
{
	long long gap = 0;
	int cpu;

	__atomic_store_n(&shm->beats_stop, 1, __ATOMIC_SEQ_CST);
	for (cpu = 0; cpu < shm->beats; cpu++) {
		pthread_join(t[cpu], NULL);
		if (shm->beat[cpu].gap_ns >= gap) {
			gap = shm->beat[cpu].gap_ns;
			*gap_cpu = cpu;
		}
	}
	return gap;
}

/*
 * Run @mix in a child and wait for it and every task it made; then judge.
 * Only then, with no task of the scenario alive, no head may be left.
 */
static void run_scenario(struct __test_metadata *_metadata, int seconds,
			 const struct mix *mix)
{
	long long start = fs_now_ns(CLOCK_MONOTONIC);
	long long locks = futex_spin_stat("lock_calls");
	long long created = futex_spin_stat("heads_created");
	long long owner_died = futex_spin_stat("owner_died");
	struct result *res = &shm->res;
	bool killed = false, leader_ok = false;
	pthread_t beat[HEARTBEAT_CPUS];
	long long heads, n, gap;
	int status, i, gap_cpu = -1;
	pid_t pid, ret;

	shm->end_ns = start + seconds * 1000000000LL;
	if (!heartbeats_start(beat))
		TH_LOG("no heartbeat threads (SCHED_FIFO): a stalled CPU will not show");
	pid = heads_fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		setpgid(0, 0);
		scenario(mix);
	}
	setpgid(pid, pid);
	/* Reap all, orphans included, within the bound */
	for (;;) {
		ret = waitpid(-1, &status, WNOHANG);
		if (ret < 0)
			break;
		if (ret == pid)
			leader_ok = WIFEXITED(status) && !WEXITSTATUS(status);
		if (ret)
			continue;
		if (!killed && fs_ms_since(start) >
		    (seconds + HEADS_SLACK_S) * 1000LL) {
			kill(-pid, SIGKILL);
			killed = true;
		}
		usleep(10000);
	}
	gap = heartbeats_stop(beat, &gap_cpu);
	if (shm->beats)
		TH_LOG("longest heartbeat gap: %lld ms, on CPU %d", gap / 1000000,
		       gap_cpu);
	EXPECT_FALSE(killed) TH_LOG("scenario still running %d s after its end",
				    HEADS_SLACK_S);
	EXPECT_TRUE(leader_ok);
	EXPECT_EQ(0, res->errors) TH_LOG("%lu errors, first: %s", res->errors,
					 res->msg);
	EXPECT_EQ(0, res->violations);
	for (i = 0, n = 0; i < NR_SHARED; i++) {
		n += shm->slot[i].count;
		if (!killed)
			EXPECT_EQ(0, fs_load(&shm->m[i].word) & ~FUTEX_OWNER_DIED)
				TH_LOG("shared lock %d left as %#x", i,
				       fs_load(&shm->m[i].word));
	}
	EXPECT_EQ(res->shared_claimed, n) TH_LOG("increments lost");
	EXPECT_LT(0, res->ops);

	heads = live_heads_settled();
	if (heads_beside()) {
		TH_LOG("%lld live heads, other programs' among them: not checked", heads);
	} else {
		/* Braced: the message is a statement of its own after the check */
		EXPECT_EQ(0, heads) TH_LOG("%s/live_heads: %lld with no task left",
					   FUTEX_SPIN_DEBUGFS, heads);
	}

	/* The scenario did go through the kernel and make heads */
	EXPECT_LT(0, stat_delta("lock_calls", locks));
	TH_LOG("%lu ops, %lld kernel lock calls in %lld ms", res->ops,
	       stat_delta("lock_calls", locks), fs_ms_since(start));
	n = stat_delta("heads_created", created);
	if (created >= 0) {
		EXPECT_LT(0, n);
		TH_LOG("%lld heads created", n);
	}
	TH_LOG("longest lock call that took the lock: %lld ms",
	       res->longest_lock_ns / 1000000);
	TH_LOG("%lu timeouts, %lu deaths holding, %lu EOWNERDEAD, %lu thread exits, %lu execs",
	       res->timeouts, res->deaths, res->owner_died, res->thread_exits,
	       res->execs);
	if (mix->timeout_pct)
		EXPECT_LT(0, res->timeouts);
	if (mix->deaths) {
		EXPECT_LT(0, res->deaths);
		EXPECT_LT(0, res->owner_died);
		EXPECT_LT(0, stat_delta("owner_died", owner_died));
	}
	if (mix->short_threads && mix->short_ops == 1)
		EXPECT_LT(0, res->thread_exits);
	if (mix->execs)
		EXPECT_LT(0, res->execs);
}

/* Many keys, some held across a sleep so that waiters sleep */
TEST_F_TIMEOUT(heads, churn, HEADS_MAX_SECONDS + 2 * HEADS_SLACK_S)
{
	static const struct mix mix = {
		.procs = 2, .threads = 3, .hot = 3, .hold_pct = 25,
		.hold_us = 200, .private_keys = true,
	};

	run_scenario(_metadata, self->seconds, &mix);
}

/* Half the lockers give up within 2 ms, or at once, and their threads go */
TEST_F_TIMEOUT(heads, timeouts, HEADS_MAX_SECONDS + 2 * HEADS_SLACK_S)
{
	static const struct mix mix = {
		.procs = 2, .threads = 2, .short_threads = 1, .short_ops = 8,
		.hot = 2, .timeout_pct = 50, .hold_pct = 50, .hold_us = 2000,
		.private_keys = true,
	};

	run_scenario(_metadata, self->seconds, &mix);
}

/* Owners of robust shared locks exit holding them while others wait */
TEST_F_TIMEOUT(heads, robust_exit, HEADS_MAX_SECONDS + 2 * HEADS_SLACK_S)
{
	static const struct mix mix = {
		.procs = 2, .threads = 2, .hot = 2, .hold_pct = 25,
		.hold_us = 500, .deaths = true,
	};

	run_scenario(_metadata, self->seconds, &mix);
}

/* The same, killed by SIGKILL */
TEST_F_TIMEOUT(heads, robust_sigkill, HEADS_MAX_SECONDS + 2 * HEADS_SLACK_S)
{
	static const struct mix mix = {
		.procs = 2, .threads = 2, .hot = 2, .hold_pct = 25,
		.hold_us = 500, .deaths = true, .sigkill = true,
	};

	run_scenario(_metadata, self->seconds, &mix);
}

/* Threads that exit right after one lock operation, among others */
TEST_F_TIMEOUT(heads, thread_exit, HEADS_MAX_SECONDS + 2 * HEADS_SLACK_S)
{
	static const struct mix mix = {
		.procs = 2, .threads = 2, .short_threads = 2, .short_ops = 1,
		.hot = 2, .timeout_pct = 10, .hold_pct = 25, .hold_us = 500,
		.private_keys = true,
	};

	run_scenario(_metadata, self->seconds, &mix);
}

/* Processes that use locks, then exec while a thread waits in the kernel */
TEST_F_TIMEOUT(heads, exec, HEADS_MAX_SECONDS + 2 * HEADS_SLACK_S)
{
	static const struct mix mix = {
		.procs = 1, .threads = 3, .hot = 2, .hold_pct = 25,
		.hold_us = 500, .private_keys = true, .execs = true,
	};

	run_scenario(_metadata, self->seconds, &mix);
}

int main(int argc, char **argv)
{
	/* The program the exec scenario's children become */
	if (argc == 2 && !strcmp(argv[1], HEADS_EXEC_ARG))
		return 0;
	return test_harness_run(argc, argv);
}
