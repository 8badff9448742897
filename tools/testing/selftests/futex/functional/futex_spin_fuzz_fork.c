// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: tasks that come and go. Fork children that run for a
 * while or are killed inside FUTEX_SPIN_LOCK, exec while other processes
 * wait for locks this one holds, threads that exit holding locks.
 */
#include "futex_spin_fuzz.h"

/* ------------------------------------------------------------------ */
/* Fork, exec, thread exit                                             */

static const char *self_exe = "/proc/self/exe";

static __noreturn void child_exit(struct worker *w)
{
	ts_set(w->gid, TS_EXITING);
	_exit(0);
}

/* A fork child that blocks forever in FUTEX_SPIN_LOCK until it is killed. */
static __noreturn void child_doomed(struct worker *w, unsigned int forker)
{
	int kind, wid, err, fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0;
	struct aword *aw;
	unsigned int v;
	long ret;

	if (group_on(G_HONEST) && !w->abuser && chance(&w->rng, 30)) {
		/* maybe killed while waiting, maybe while holding */
		honest_lock(w, OP_H_LOCK_FOREVER);
	} else {
		aw = pick_aword(w, &kind, &wid);
		switch (rnd(&w->rng, 3)) {
		case 0:
			v = forker;
			break;
		case 1:
			v = some_dead_tid(&w->rng);
			break;
		default:
			v = 1;
			break;
		}
		g_store(&aw->word, v | (chance(&w->rng, 50) ? FUTEX_WAITERS : 0));
		ret = spin_call(w, OP_A_LOCK, &aw->word, spin_lock_op(fop), 0,
				NULL, NULL, 0, mono_ns() + 2 * NSEC, &err);
		account_sys(w, OP_A_LOCK, wid, fop, v, peek(&aw->word), ret, err);
	}
	for (;;)
		sleep_ns(10 * MSEC);
}

static __noreturn void child_main(struct worker *w, unsigned int cgen,
				  bool doomed, pid_t parent)
{
	unsigned int forker = w->tid;
	int n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	w->child = true;
	w->sidx += NR_WSLOTS;
	w->sl = &H->slots[w->sidx];
	w->tid = gettid_raw();
	w->nheld = 0;
	w->nowned = 0;
	w->rng = mix64(w->rng ^ cgen);
	w->gid = ts_register(w->tid, cgen, w->sidx);
	w->sl->tid = w->tid;
	STORE(&w->sl->gid, w->gid);
	robust_register(w);
	set_weights(w);
	if (doomed)
		child_doomed(w, forker);
	for (n = 5 + rnd(&w->rng, 45); n > 0 && !LOAD(&H->stop); n--)
		step(w);
	/* exit holding honest locks half of the time: robust cleanup */
	if (chance(&w->rng, 50))
		release_all(w);
	child_exit(w);
}

void fork_op(struct worker *w)
{
	struct slot *cs = &H->slots[NR_WSLOTS + w->sidx];
	bool doomed = chance(&w->rng, 35);
	unsigned long long dl;
	unsigned int cgen;
	pid_t pid, parent = getpid();
	int st, err;

	cgen = cs->incarn + 1;
	cs->incarn = cgen;
	STORE(&cs->gid, 0);
	STORE(&cs->doom, 0);
	wd_begin(w, OP_FORK, NULL, mono_ns() + 5 * NSEC);
	pid = fork();
	if (pid == 0)
		child_main(w, cgen, doomed, parent);
	if (pid < 0) {
		err = errno;
		wd_end(w);
		account_sys(w, OP_FORK, -1, 0, 0, 0, -1, err);
		return;
	}
	dl = mono_ns() + (doomed ? rnd(&w->rng, 20 * MSEC) : 2 * NSEC);
	while (mono_ns() < dl) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			goto reaped;
		sleep_ns(doomed ? 200 * USEC : MSEC);
	}
	/* Tell the OWNER_DIED check first: it may be holding honest locks. */
	STORE(&cs->doom, cgen);
	kill(pid, SIGKILL);
	account(w, OP_CHILD_KILL, EB_OK, -1, 0, 0, pid, 0, 0);
	dl = mono_ns() + H->cfg.slack;
	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (mono_ns() > dl) {
			char stack[1024], path[64];

			snprintf(path, sizeof(path), "/proc/%d/stack", pid);
			read_file(path, stack, sizeof(stack));
			failf(w, CK_HANG,
			      "fork child %d did not exit within %llu s of SIGKILL (last op %s); kernel stack:\n%s",
			      pid, H->cfg.slack / NSEC,
			      op_names[cs->op % NR_OPS], stack);
			waitpid(pid, &st, 0);
			break;
		}
		sleep_ns(MSEC);
	}
reaped:
	wd_end(w);
	ts_set(LOAD(&cs->gid), TS_DEAD);
	dead_push(pid);
	/* a child killed inside a syscall leaves its record odd */
	if (LOAD(&cs->seq) & 1)
		STORE(&cs->seq, cs->seq + 1);
	account(w, OP_FORK, EB_OK, -1, doomed, 0, pid, 0, 0);
}

void exec_op(struct worker *w)
{
	struct proc_rec *pr = w->pr;
	unsigned long long now = mono_ns();
	char fdb[16], slotb[16];
	char *argv[5];
	int err;

	if (w->child || now - RLOAD(&pr->last_exec) < 8 * NSEC)
		return;
	/*
	 * Not across execve(): de_thread() gives this thread the leader's
	 * PID before the robust list is walked, so a lock held here would
	 * keep naming a TID that no longer exists (upstream behaviour, for
	 * every robust futex). The siblings that de_thread() kills keep
	 * their TIDs: locks they hold get OWNER_DIED as on any exit.
	 */
	release_all(w);
	/*
	 * One exec at a time, and not while the harness kills us. The stamp
	 * goes first: the watchdog times the exec from doomed_at as soon as
	 * it sees doomed, and would find a zero or an earlier exec's time
	 * there if the cas published doomed before it. A sibling that loses
	 * the cas may overwrite the stamp with its own, as recent, time.
	 */
	pr->doomed_at = now;
	if (!cas32(&pr->doomed, 0, 1, NULL))
		return;
	pr->last_exec = now;
	snprintf(fdb, sizeof(fdb), "%d", H->cfg.memfd);
	snprintf(slotb, sizeof(slotb), "%d", P.slot);
	argv[0] = (char *)self_exe;
	argv[1] = "--exec-worker";
	argv[2] = fdb;
	argv[3] = slotb;
	argv[4] = NULL;
	/*
	 * Handlers do not survive execve(), ignored signals do: ignore the
	 * waiter signals until the new image has its handlers again.
	 */
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	wd_begin(w, OP_EXEC, NULL, now + 30 * NSEC);
	execve(self_exe, argv, environ);
	err = errno;
	wd_end(w);
	set_handlers();
	STORE(&pr->doomed, 0);
	account_sys(w, OP_EXEC, -1, 0, 0, 0, -1, err);
	failf(w, CK_RUN, "execve(%s): %s", self_exe, strerror(err));
}

void thread_exit_op(struct worker *w)
{
	if (w->child)
		return;
	/* Without honest locks, die with a garbage robust list instead. */
	if (!w->nheld && group_on(G_ROBUST) &&
	    (w->abuser || chance(&w->rng, 50)))
		robust_garbage(w, 1 + rnd(&w->rng, 6));
	account(w, OP_THREAD_EXIT, EB_OK, -1, w->nheld, 0, 0, 0, 0);
	ts_set(w->gid, TS_EXITING);
	/*
	 * Watched until the manager has joined us: the exit path runs the
	 * robust list and the futex state cleanup in the kernel.
	 */
	wd_begin(w, OP_THREAD_EXIT, NULL, 0);
	STORE(&P.exited[w->tslot], 1);
	syscall(SYS_exit, 0);
}
