// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: the checks the harness runs while the workers run. The
 * watchdog for tasks stuck in the kernel past their deadline, and the
 * liveness check for waiters asleep on a free honest lock.
 */
#include "futex_spin_fuzz.h"

/* Who a TID in a futex word is, or was, as far as our records go. */
static int tid_info(unsigned int tid, char *buf, size_t len)
{
	unsigned int i, best = 0;
	struct tstate *t;

	tid &= FUTEX_TID_MASK;
	if (!tid)
		return snprintf(buf, len, "no owner");
	for (i = 0; i < TS_SIZE; i++)
		if (H->ts[i].gid && H->ts[i].tid == tid && H->ts[i].gid > best)
			best = H->ts[i].gid;
	if (!best)
		return snprintf(buf, len, "owner TID %u: not one of our threads", tid);
	t = &H->ts[best % TS_SIZE];
	return snprintf(buf, len,
			"owner TID %u: gid %u, proc %u gen %u (now gen %u%s), %s%s",
			tid, best, t->proc, t->pgen, H->procs[t->proc].gen,
			H->procs[t->proc].doomed ? ", doomed" : "",
			t->child ? "fork child, " : "",
			t->state == TS_ALIVE ? (gid_dead(best) ? "dying" : "alive") :
			t->state == TS_EXITING ? "exiting" : "dead");
}

/* Everything we know about a task that overstayed in the kernel. */
static void hang_report(int s, struct slot *sl, pid_t pid, unsigned int tid,
			unsigned long long now, unsigned long long over)
{
	char stack[1536], wchan[64], path[96], who[160] = "", *text;
	bool have_word = false;
	unsigned int word = 0;
	size_t n, len = FAIL_TEXT;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/stack", pid, tid);
	read_file(path, stack, sizeof(stack));
	snprintf(path, sizeof(path), "/proc/%d/task/%u/wchan", pid, tid);
	read_file(path, wchan, sizeof(wchan));
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		have_word = pread(fd, &word, sizeof(word), sl->uaddr) == sizeof(word);
		close(fd);
	}
	if (have_word)
		tid_info(word, who, sizeof(who));

	text = malloc(len);
	if (!text)
		return;
	n = snprintf(text, len,
		     "tid %u (pid %d, slot %d%s) still in %s (futex op %#x) %.3f s after its deadline (%.3f s after it started, slack %llu s); word at %#llx: %s%#x (%s); wchan %s; kernel stack:\n%s",
		     tid, pid, s, s >= NR_WSLOTS ? ", fork child" : "",
		     op_names[sl->op % NR_OPS], sl->fop, (double)over / NSEC,
		     (double)(now - sl->start) / NSEC, H->cfg.slack / NSEC,
		     sl->uaddr, have_word ? "" : "unreadable ", word, who,
		     wchan, stack);
	if (n < len - 1)
		ring_format(sl, text + n, len - n);
	failf(NULL, CK_HANG, "%s", text);
	free(text);
}

/* The state letter of a task in /proc/.../stat, '?' when it is gone. */
static char task_state(pid_t pid, unsigned int tid)
{
	char path[64], stat[256], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", pid, tid);
	read_file(path, stat, sizeof(stat));
	p = strrchr(stat, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* A record is only worth a report while its task exists and is no zombie. */
static bool task_alive(pid_t pid, unsigned int tid)
{
	char st = task_state(pid, tid);

	return st != '?' && st != 'Z' && st != 'X';
}

/*
 * A task inside a syscall past its deadline + slack is hung. Time its
 * process spent SIGSTOP'ed by us does not count; doomed processes (being
 * killed or exec'ing) are watched by their own checks.
 */
void watchdog(unsigned long long now)
{
	unsigned int s, p;

	for (s = 0; s < 2 * NR_WSLOTS; s++) {
		struct slot *sl = &H->slots[s];
		unsigned long long start, deadline, stopped0, stopped;
		unsigned int seq = LOAD(&sl->seq), tid;
		struct proc_rec *pr;
		pid_t pid;

		if (!(seq & 1) || sl->reported == seq)
			continue;
		p = (s % NR_WSLOTS) / MAX_THREADS;
		pr = &H->procs[p];
		start = sl->start;
		deadline = sl->deadline;
		stopped0 = sl->stopped0;
		tid = sl->tid;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LOAD(&sl->seq) != seq || !pr->pid || LOAD(&pr->doomed))
			continue;
		if (s >= NR_WSLOTS && LOAD(&sl->doom) == sl->incarn)
			continue;
		stopped = pr->stopped_total - stopped0;
		if (pr->stop_since)
			stopped += now - pr->stop_since;
		if (now <= deadline + H->cfg.slack + stopped || start > now)
			continue;
		sl->reported = seq;
		pid = s >= NR_WSLOTS ? (pid_t)tid : pr->pid;
		if (task_alive(pid, tid))
			hang_report(s, sl, pid, tid, now, now - deadline - stopped);
	}

	for (p = 0; p < H->cfg.nprocs; p++) {
		struct proc_rec *pr = &H->procs[p];

		if (X.killed[p] && !X.kill_reported[p] &&
		    now - X.kill_sent[p] > H->cfg.slack) {
			char stack[1536], path[64];

			X.kill_reported[p] = 1;
			snprintf(path, sizeof(path), "/proc/%d/stack", pr->pid);
			read_file(path, stack, sizeof(stack));
			failf(NULL, CK_HANG,
			      "worker process %d (pid %d) still there %llu s after SIGKILL; kernel stack of its main thread:\n%s",
			      p, pr->pid, H->cfg.slack / NSEC, stack);
		}
		/* signed: the worker stamps doomed_at with its own clock read */
		if (pr->pid && !X.killed[p] && LOAD(&pr->doomed) &&
		    !X.doom_reported[p] &&
		    (long long)(now - pr->doomed_at) > (long long)(30 * NSEC + 2 * H->cfg.slack)) {
			X.doom_reported[p] = 1;
			failf(NULL, CK_HANG,
			      "worker process %d (pid %d) started an exec %.1f s ago and did not come back",
			      p, pr->pid, (double)(now - pr->doomed_at) / NSEC);
		}
	}
}

/*
 * Liveness: a task must not stay asleep in FUTEX_SPIN_LOCK while the word
 * has no owner. The kernel's invariant says a sleeper is only ever left
 * behind a free word while somebody is about to look at it again: the
 * sleeper an unlock or a robust list walk woke (runnable until it has
 * looked), an unlocker between its cmpxchg and its wakeup (inside
 * FUTEX_SPIN_UNLOCK), a dying owner between marking OWNER_DIED and the
 * wakeup (an exiting thread or a process being killed). A lost wakeup
 * leaves the waiter asleep until its deadline instead, which may be
 * seconds or never for a NULL timeout, and the deadline watchdog cannot
 * tell that from a waiter behind a busy lock.
 *
 * The harness samples the words of the honest locks that tasks wait for
 * (a shared one in our own mapping, a private one with process_vm_readv()
 * from the waiter's process). A waiter is reported when every sample over
 * the window (-L) saw the word without a TID, its call is still the same,
 * its process was neither stopped nor dying meanwhile, it is asleep (S),
 * and nothing of the above that could still wake it exists right now. A
 * gap in the sampling (the harness did not run) starts the run again:
 * what was not looked at cannot count as free.
 */
/* The operations that publish the honest lock they wait for. */
static bool op_waits_honest(unsigned int op)
{
	return op == OP_H_LOCK || op == OP_H_LOCK_PAST || op == OP_H_LOCK_FOREVER;
}

static bool live_word(int li, pid_t pid, unsigned long long uaddr,
		      unsigned int *word)
{
	struct iovec local = { word, sizeof(*word) };
	struct iovec remote = { (void *)(unsigned long)uaddr, sizeof(*word) };

	if (li < (int)H->cfg.nhs) {
		*word = LOAD(&((struct hlock *)(P.shm + OFF_HS) + li)->word);
		return true;
	}
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof(*word);
}

/* Could anybody still wake a sleeper of honest lock @li (process @p's)? */
static bool live_wake_pending(int li, unsigned int p, unsigned int self)
{
	unsigned int s, q;

	for (q = 0; q < H->cfg.nprocs; q++)
		if (H->procs[q].pid && LOAD(&H->procs[q].doomed))
			return true;
	for (s = 0; s < 2 * NR_WSLOTS; s++) {
		struct slot *sl = &H->slots[s];
		unsigned int seq = LOAD(&sl->seq), op = RLOAD(&sl->op);
		unsigned int sp = (s % NR_WSLOTS) / MAX_THREADS;
		char st;

		if (!(seq & 1) || s == self)
			continue;
		/* dying owners: their robust list walk wakes a sleeper */
		if (op == OP_THREAD_EXIT)
			return true;
		if (op == OP_FORK && gid_dead(LOAD(&H->slots[NR_WSLOTS + s].gid)))
			return true;
		if (RLOAD(&sl->hlock) != (unsigned int)li + 1 ||
		    (li >= (int)H->cfg.nhs && sp != p))
			continue;
		if (op == OP_H_UNLOCK)
			return true;
		if (!op_waits_honest(op))
			continue;
		st = task_state(s >= NR_WSLOTS ? (pid_t)sl->tid : H->procs[sp].pid,
				sl->tid);
		/* runnable: maybe the woken sleeper that has not looked yet */
		if (st != 'S' && st != 'T' && st != '?')
			return true;
	}
	return false;
}

static void live_report(unsigned int s, struct slot *sl, pid_t pid, int li,
			struct live_run *lr, unsigned long long now)
{
	char stack[1536], wchan[64], path[96], ws[24], *text;
	size_t n, len = FAIL_TEXT;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/stack", pid, sl->tid);
	read_file(path, stack, sizeof(stack));
	snprintf(path, sizeof(path), "/proc/%d/task/%u/wchan", pid, sl->tid);
	read_file(path, wchan, sizeof(wchan));
	fmt_wid(ws, sizeof(ws), hl_wid(li));
	text = malloc(len);
	if (!text)
		return;
	n = snprintf(text, len,
		     "honest lock %s: tid %u (pid %d, slot %d%s) asleep in %s (futex op %#x) %.3f s after it started, while the word had no owner (last seen %#x) in all %u samples over the last %.3f s, with no unlocker, runnable waiter or dying owner left to wake it; wchan %s; kernel stack:\n%s",
		     ws, sl->tid, pid, s, s >= NR_WSLOTS ? ", fork child" : "",
		     op_names[sl->op % NR_OPS], sl->fop,
		     (double)(now - sl->start) / NSEC, lr->word, lr->samples,
		     (double)(now - lr->since) / NSEC, wchan, stack);
	if (n < len - 1)
		ring_format(sl, text + n, len - n);
	failf(NULL, CK_LIVE, "%s", text);
	free(text);
}

void live_check(unsigned long long now)
{
	unsigned long long win = H->cfg.live_ms * MSEC;
	unsigned int s;

	if (!win)
		return;
	for (s = 0; s < 2 * NR_WSLOTS; s++) {
		struct slot *sl = &H->slots[s];
		struct live_run *lr = &X.live[s];
		unsigned int seq = LOAD(&sl->seq), p, word, tid, hl, op;
		unsigned long long uaddr;
		struct proc_rec *pr;
		pid_t pid;

		hl = RLOAD(&sl->hlock);
		op = RLOAD(&sl->op);
		tid = sl->tid;
		uaddr = sl->uaddr;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		p = (s % NR_WSLOTS) / MAX_THREADS;
		pr = &H->procs[p];
		pid = s >= NR_WSLOTS ? (pid_t)tid : pr->pid;
		if (!(seq & 1) || !hl || !op_waits_honest(op) ||
		    LOAD(&sl->seq) != seq || !pr->pid || LOAD(&pr->doomed) ||
		    pr->stop_since ||
		    (s >= NR_WSLOTS && LOAD(&sl->doom) == sl->incarn) ||
		    !live_word(hl - 1, pid, uaddr, &word) ||
		    LOAD(&sl->seq) != seq || (word & FUTEX_TID_MASK)) {
			lr->since = 0;
			continue;
		}
		X.live_samples++;
		if (lr->seq != seq || (lr->since && now - lr->last > win / 4))
			lr->since = 0;
		if (!lr->since) {
			lr->seq = seq;
			lr->since = now;
			lr->samples = 0;
		}
		lr->last = now;
		lr->samples++;
		lr->word = word;
		if (now - lr->since < win || lr->samples < win / (20 * MSEC) ||
		    lr->reported == seq)
			continue;
		if (lr->windowed != seq)
			X.live_windows++;
		lr->windowed = seq;
		if (task_state(pid, tid) != 'S' ||
		    live_wake_pending(hl - 1, p, s)) {
			X.live_deferred++;
			continue;
		}
		lr->reported = seq;
		live_report(s, sl, pid, hl - 1, lr, now);
	}
}

/* Every task of a process that does not go away: state, wchan, stack. */
void dump_proc(int p, const char *why)
{
	struct proc_rec *pr = &H->procs[p];
	unsigned long long now = mono_ns();
	size_t n = 0, len = 4 * FAIL_TEXT;
	char path[96], buf[1536], *text;
	unsigned int t;

	text = malloc(len);
	if (!text)
		return;
	n += snprintf(text + n, len - n, "worker process %d (pid %d) %s\n", p,
		      pr->pid, why);
	for (t = 0; t < H->cfg.nthreads && n < len; t++) {
		struct slot *sl = &H->slots[p * MAX_THREADS + t];
		unsigned int tid = RLOAD(&pr->tids[t]), word = 0;
		char *state, who[160] = "";
		int fd;

		if (!tid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/mem", pr->pid);
		fd = open(path, O_RDONLY);
		if (fd >= 0 && sl->uaddr &&
		    pread(fd, &word, sizeof(word), sl->uaddr) == sizeof(word))
			tid_info(word, who, sizeof(who));
		if (fd >= 0)
			close(fd);
		snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", pr->pid, tid);
		read_file(path, buf, sizeof(buf));
		state = strrchr(buf, ')');
		n += snprintf(text + n, len - n,
			      "thread %u tid %u: state %.1s, %s %s for %.3f s (futex op %#x, word at %#llx = %#x, %s)\n",
			      t, tid, state ? state + 2 : "?",
			      LOAD(&sl->seq) & 1 ? "in" : "last",
			      op_names[sl->op % NR_OPS],
			      (double)(now - sl->start) / NSEC, sl->fop, sl->uaddr,
			      word, who);
		snprintf(path, sizeof(path), "/proc/%d/task/%u/stack", pr->pid, tid);
		read_file(path, buf, sizeof(buf));
		if (n < len)
			n += snprintf(text + n, len - n, "%s", buf);
	}
	snprintf(path, sizeof(path), "/proc/%d/stack", pr->pid);
	read_file(path, buf, sizeof(buf));
	if (n < len)
		n += snprintf(text + n, len - n, "main thread %d:\n%s", pr->pid, buf);
	failf(NULL, CK_HANG, "%s", text);
	free(text);
}
