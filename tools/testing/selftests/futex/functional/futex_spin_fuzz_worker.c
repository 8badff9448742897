// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: the worker threads and processes. Each thread picks its
 * operations at random with weights of its own, from the seed.
 */
#include "futex_spin_fuzz.h"

/* ------------------------------------------------------------------ */
/* Choosing operations                                                 */

static const unsigned short base_weights[NR_OPS] = {
	[OP_H_TRYLOCK]		= 500,
	[OP_H_LOCK]		= 1600,
	[OP_H_LOCK_PAST]	= 250,
	[OP_H_LOCK_FOREVER]	= 40,
	[OP_H_RELOCK]		= 100,
	[OP_H_FOREIGN_UNLOCK]	= 200,
	[OP_H_BADARGS]		= 150,
	[OP_A_LOCK]		= 1000,
	[OP_A_UNLOCK]		= 600,
	[OP_A_FAST_LOCK]	= 250,
	[OP_A_FAST_UNLOCK]	= 250,
	[OP_A_GARBAGE]		= 600,
	[OP_A_BADADDR]		= 200,
	[OP_A_BADARGS]		= 200,
	[OP_WAIT]		= 250,
	[OP_WAIT_BITSET]	= 120,
	[OP_WAKE]		= 300,
	[OP_WAKE_OP]		= 80,
	[OP_REQUEUE]		= 50,
	[OP_CMP_REQUEUE]	= 120,
	[OP_LOCK_PI]		= 120,
	[OP_LOCK_PI2]		= 80,
	[OP_TRYLOCK_PI]		= 120,
	[OP_UNLOCK_PI]		= 160,
	[OP_WAIT_REQUEUE_PI]	= 60,
	[OP_CMP_REQUEUE_PI]	= 60,
	[OP_WAITV]		= 120,
	[OP_F2_WAIT]		= 60,
	[OP_F2_WAKE]		= 60,
	[OP_MUNMAP]		= 150,	/* all page operations */
	[OP_SIGNAL]		= 120,
	[OP_ROBUST_SET]		= 60,
	[OP_HASH_RESIZE]	= 20,
	[OP_FORK]		= 6,
	[OP_EXEC]		= 2,
	[OP_THREAD_EXIT]	= 5,
	[OP_H_KILL_WAITER]	= 5,
};

static int op_group(int op)
{
	if (op <= OP_H_BADARGS)
		return G_HONEST;
	if (op <= OP_A_BADARGS)
		return G_ABUSE;
	if (op <= OP_F2_WAKE)
		return G_OTHER;
	if (op <= OP_DONTNEED)
		return G_PAGES;
	switch (op) {
	case OP_SIGNAL:		return G_SIGNAL;
	case OP_ROBUST_SET:	return G_ROBUST;
	case OP_HASH_RESIZE:	return G_HASH;
	case OP_FORK:		return G_FORK;
	case OP_EXEC:		return G_EXEC;
	case OP_THREAD_EXIT:	return G_EXIT;
	case OP_H_KILL_WAITER:	return G_FORK;
	}
	return G_KILL;
}

/*
 * Each thread incarnation gets a personality: more or fewer honest and
 * abusive operations, so that the mix differs between threads and runs.
 * An "abuser" keeps a garbage robust list and never takes honest locks.
 */
void set_weights(struct worker *w)
{
	unsigned int mh = 1U << rnd(&w->rng, 3), ma = 1U << rnd(&w->rng, 3);
	int op;

	w->wsum = 0;
	for (op = 0; op < NR_OPS; op++) {
		unsigned int wt = base_weights[op];
		int g = op_group(op);

		if (!group_on(g))
			wt = 0;
		if (g == G_HONEST)
			wt = w->abuser ? 0 : wt * mh / 2;
		else if (g == G_ABUSE || g == G_OTHER)
			wt = wt * ma / 2;
		if (op == OP_ROBUST_SET && !w->abuser)
			wt = 0;
		if (w->child && (op == OP_FORK || op == OP_EXEC ||
				 op == OP_THREAD_EXIT || op == OP_H_KILL_WAITER))
			wt = 0;
		w->weights[op] = wt;
		w->wsum += wt;
	}
}

/*
 * -l, a test of the liveness check itself: sleep as a lost wakeup would,
 * published as FUTEX_SPIN_LOCK on an honest lock past the private ones,
 * whose word (on our stack) nobody ever takes. Must fail CK_LIVE.
 */
static void live_fake_wait(struct worker *w)
{
	unsigned long long end = mono_ns() + 3 * NSEC, now;
	unsigned int word = 0;
	struct timespec ts;

	RSTORE(&w->sl->hlock, nr_honest(w) + 1);
	w->sl->fop = FUTEX_WAIT_PRIVATE;
	wd_begin(w, OP_H_LOCK, &word, end);
	/* a signal restarts FUTEX_SPIN_LOCK within the same call: so here */
	while ((now = mono_ns()) < end) {
		ns_to_ts(end - now, &ts);
		sys_futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	}
	wd_end(w);
}

void step(struct worker *w)
{
	unsigned int r;
	int op;

	if (H->cfg.live_selftest && !w->child && !w->nheld &&
	    !rnd(&w->rng, 20000)) {
		live_fake_wait(w);
		return;
	}

	if (w->nheld && w->held[w->nheld - 1].left-- <= 0) {
		honest_unlock(w);
		return;
	}
	if (!w->wsum)
		return;
	r = rnd(&w->rng, w->wsum);
	for (op = 0; op < NR_OPS - 1; op++) {
		if (r < w->weights[op])
			break;
		r -= w->weights[op];
	}
	switch (op) {
	case OP_H_TRYLOCK:
	case OP_H_LOCK:
	case OP_H_LOCK_PAST:
	case OP_H_LOCK_FOREVER:
		honest_lock(w, op);
		break;
	case OP_H_RELOCK:
		honest_relock(w);
		break;
	case OP_H_FOREIGN_UNLOCK:
		honest_foreign_unlock(w);
		break;
	case OP_H_BADARGS:
		honest_badargs(w);
		break;
	case OP_A_LOCK:
		abuse_lock(w);
		break;
	case OP_A_UNLOCK:
		abuse_unlock(w);
		break;
	case OP_A_FAST_LOCK:
	case OP_A_FAST_UNLOCK:
	case OP_A_GARBAGE:
		abuse_fast(w, op);
		break;
	case OP_A_BADADDR:
		abuse_badaddr(w);
		break;
	case OP_A_BADARGS:
		abuse_badargs(w);
		break;
	case OP_MUNMAP:
		page_op(w);
		break;
	case OP_SIGNAL:
		signal_op(w);
		break;
	case OP_ROBUST_SET:
		robust_garbage(w, 1);
		break;
	case OP_HASH_RESIZE:
		hash_resize(w);
		break;
	case OP_FORK:
		fork_op(w);
		break;
	case OP_EXEC:
		exec_op(w);
		break;
	case OP_THREAD_EXIT:
		thread_exit_op(w);
		break;
	case OP_H_KILL_WAITER:
		kill_waiter_op(w);
		break;
	default:
		other_op(w, op);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Worker processes                                                    */

static unsigned long long slot_budget;

static void worker_setup(struct worker *w, int tslot)
{
	memset(w, 0, sizeof(*w));
	w->tslot = tslot;
	w->sidx = P.slot * MAX_THREADS + tslot;
	w->sl = &H->slots[w->sidx];
	w->pr = &H->procs[P.slot];
	w->tid = gettid_raw();
	w->gid = ts_register(w->tid, 0, 0);
	w->rng = mix64(H->cfg.seed ^ mix64(((unsigned long long)w->sidx << 40) ^
					   ((unsigned long long)P.gen << 20) ^
					   w->sl->incarn));
	w->abuser = group_on(G_ROBUST) && H->cfg.nthreads > 2 &&
		    rnd(&w->rng, 6) == 0;
	w->sl->tid = w->tid;
	w->sl->gid = w->gid;
	RSTORE(&w->pr->tids[tslot], w->tid);
	set_weights(w);
	robust_register(w);
	if (H->cfg.rt && tslot == 0) {
		struct sched_param sp = { .sched_priority = 1 + rnd(&w->rng, 5) };

		sched_setscheduler(0, SCHED_FIFO, &sp);
	}
}

static void *thread_main(void *arg)
{
	int tslot = (long)arg;
	struct worker w;

	worker_setup(&w, tslot);
	while (!LOAD(&H->stop) &&
	       !(slot_budget && RLOAD(&w.sl->ops) >= slot_budget))
		step(&w);
	release_all(&w);
	ts_set(w.gid, TS_EXITING);
	STORE(&P.exited[tslot], 1);
	return NULL;
}

/* What the process and the system have left, when a thread cannot start. */
static void resource_report(int err)
{
	char maps[64], mem[64], status[2048], *vm, *th;
	FILE *f = fopen("/proc/self/maps", "r");
	int c, lines = 0;

	if (f) {
		while ((c = fgetc(f)) != EOF)
			lines += c == '\n';
		fclose(f);
	}
	read_file("/proc/self/status", status, sizeof(status));
	vm = strstr(status, "VmSize:");
	th = strstr(status, "Threads:");
	read_file("/proc/meminfo", mem, sizeof(mem));
	snprintf(maps, sizeof(maps), "%d", lines);
	failf(NULL, CK_RUN,
	      "proc %d: pthread_create: %s; %s mappings, %.24s, %.16s, %.60s",
	      P.slot, strerror(err), maps, vm ? vm : "?", th ? th : "?", mem);
}

static bool spawn_thread(int t)
{
	static unsigned long long failing_since;
	static bool reported;
	pthread_attr_t a;
	int err;

	H->slots[P.slot * MAX_THREADS + t].incarn++;
	STORE(&P.exited[t], 0);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 << 10);
	err = pthread_create(&P.threads[t], &a, thread_main, (void *)(long)t);
	pthread_attr_destroy(&a);
	if (err) {
		/*
		 * clone() fails with EAGAIN while another thread of ours is in
		 * execve() (fs->in_exec): try again later, and report only a
		 * failure that lasts.
		 */
		if (!failing_since)
			failing_since = mono_ns();
		if (!reported && mono_ns() - failing_since > 5 * NSEC) {
			resource_report(err);
			reported = true;
		}
		STORE(&P.exited[t], 3);
		return false;
	}
	failing_since = 0;
	P.started[t] = 1;
	return true;
}

__noreturn void worker_proc(int slot, bool via_exec)
{
	struct proc_rec *pr = &H->procs[slot];
	unsigned int t, n = H->cfg.nthreads;

	setup_process(slot);
	slot_budget = H->cfg.ops_budget;
	for (t = 0; t < MAX_THREADS; t++) {
		struct slot *sl = &H->slots[slot * MAX_THREADS + t];
		struct slot *cs = &H->slots[NR_WSLOTS + slot * MAX_THREADS + t];

		/* records of threads that died with the old image */
		if (sl->seq & 1)
			STORE(&sl->seq, sl->seq + 1);
		if (cs->seq & 1)
			STORE(&cs->seq, cs->seq + 1);
		if (via_exec)
			dead_push(pr->tids[t]);
		RSTORE(&pr->tids[t], 0);
	}
	pr->pid = getpid();
	if (via_exec)
		H->slots[slot * MAX_THREADS].cnt[OP_EXEC][EB_OK]++;
	STORE(&pr->doomed, 0);
	for (t = 0; t < n; t++)
		spawn_thread(t);
	while (!LOAD(&H->stop)) {
		sleep_ns(5 * MSEC);
		for (t = 0; t < n; t++) {
			struct slot *sl = &H->slots[slot * MAX_THREADS + t];

			if (LOAD(&P.exited[t]) == 3) {
				spawn_thread(t);
				continue;
			}
			if (LOAD(&P.exited[t]) != 1)
				continue;
			pthread_join(P.threads[t], NULL);
			if (LOAD(&sl->seq) & 1)
				STORE(&sl->seq, sl->seq + 1);
			P.started[t] = 0;
			STORE(&P.exited[t], 2);
			ts_set(sl->gid, TS_DEAD);
			dead_push(sl->tid);
			if (!LOAD(&H->stop) &&
			    !(slot_budget && RLOAD(&sl->ops) >= slot_budget))
				spawn_thread(t);
		}
	}
	for (t = 0; t < n; t++)
		if (P.started[t])
			pthread_join(P.threads[t], NULL);
	_exit(0);
}
