// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: the harness. It starts the worker processes and starts
 * them again when they die, SIGKILLs and SIGSTOPs them, runs the watchdog
 * and the liveness check, and ends the run.
 */
#include "futex_spin_fuzz.h"

/* ------------------------------------------------------------------ */
/* The harness                                                         */

struct harness X;

static void spawn_proc(int p)
{
	struct proc_rec *pr = &H->procs[p];
	pid_t pid;

	ADD(&pr->gen, 1);
	pr->crash_sig = 0;
	pr->stop_since = 0;
	STORE(&pr->doomed, 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		harness_bail("fork");
	if (pid == 0)
		worker_proc(p, false);
	pr->pid = pid;
}

static int proc_of_pid(pid_t pid)
{
	unsigned int p;

	for (p = 0; p < H->cfg.nprocs; p++)
		if (H->procs[p].pid == pid)
			return p;
	return -1;
}

static void reap(void)
{
	pid_t pid;
	int st, p;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		struct proc_rec *pr;
		unsigned int t;

		p = proc_of_pid(pid);
		if (p < 0)
			continue;	/* an orphaned fork child */
		pr = &H->procs[p];
		if (!X.killed[p] && !(X.stopping && WIFEXITED(st) &&
				      !WEXITSTATUS(st)))
			failf(NULL, CK_RUN,
			      "worker process %d (pid %d, gen %u) died unexpectedly: %s %d%s (crash signal %d at %#llx, ip segv_handler%+lld)",
			      p, pid, pr->gen,
			      WIFSIGNALED(st) ? "signal" : "exit status",
			      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
			      WCOREDUMP(st) ? ", core dumped" : "",
			      pr->crash_sig, pr->crash_addr, pr->crash_ip);
		for (t = 0; t < MAX_THREADS; t++)
			dead_push(pr->tids[t]);
		pr->pid = 0;
		X.killed[p] = 0;
		X.kill_reported[p] = 0;
		X.doom_reported[p] = 0;
		if (!X.stopping)
			spawn_proc(p);
	}
}

static bool procs_alive(void)
{
	unsigned int p;

	for (p = 0; p < H->cfg.nprocs; p++)
		if (H->procs[p].pid)
			return true;
	return false;
}

static void harness_kill(int p, unsigned long long now)
{
	struct proc_rec *pr = &H->procs[p];

	if (!pr->pid || X.killed[p] || !cas32(&pr->doomed, 0, 1, NULL))
		return;
	pr->doomed_at = now;
	X.killed[p] = 1;
	X.kill_sent[p] = now;
	kill(pr->pid, SIGKILL);
	account(&X.hw, OP_PROC_KILL, EB_OK, -1, 0, 0, pr->pid, 0, 0);
}

static void cont_proc(struct proc_rec *pr, unsigned long long now)
{
	if (!pr->stop_since)
		return;
	if (pr->pid)
		kill(pr->pid, SIGCONT);
	pr->stopped_total += now - pr->stop_since;
	pr->stop_since = 0;
}

static void chaos(unsigned long long now)
{
	unsigned long long *r = &X.hw.rng;
	unsigned int p, km = H->cfg.kill_ms;

	for (p = 0; p < H->cfg.nprocs; p++) {
		struct proc_rec *pr = &H->procs[p];

		if (pr->stop_since && now >= pr->stop_until)
			cont_proc(pr, now);
	}
	if (km && group_on(G_KILL) && now >= X.next_kill) {
		harness_kill(rnd(r, H->cfg.nprocs), now);
		X.next_kill = now + (km / 2 + rnd(r, km)) * MSEC;
	}
	if (group_on(G_STOP) && now >= X.next_stop) {
		struct proc_rec *pr = &H->procs[rnd(r, H->cfg.nprocs)];

		if (pr->pid && !pr->stop_since && !LOAD(&pr->doomed)) {
			pr->stop_until = now + (1 + rnd(r, 30)) * MSEC;
			pr->stop_since = now;
			kill(pr->pid, SIGSTOP);
			account(&X.hw, OP_PROC_STOP, EB_OK, -1, 0, 0, pr->pid, 0, 0);
		}
		X.next_stop = now + (500 + rnd(r, 3000)) * MSEC;
	}
}

unsigned long long total_ops(void)
{
	unsigned long long n = 0;
	unsigned int s, op, b;

	for (s = 0; s < NR_SLOTS; s++)
		for (op = 0; op < NR_OPS; op++)
			for (b = 0; b < NR_EB; b++)
				n += RLOAD(&H->slots[s].cnt[op][b]);
	return n;
}

static bool budget_done(void)
{
	unsigned int p, t;

	if (!H->cfg.ops_budget)
		return false;
	for (p = 0; p < H->cfg.nprocs; p++)
		for (t = 0; t < H->cfg.nthreads; t++)
			if (RLOAD(&H->slots[p * MAX_THREADS + t].ops) < H->cfg.ops_budget)
				return false;
	return true;
}

void run_harness(unsigned long long duration)
{
	unsigned long long now = mono_ns(), wait_max;
	char why[80];
	unsigned int p;

	X.start = now;
	X.end = duration ? now + duration : ULLONG_MAX;
	X.next_kill = now + H->cfg.kill_ms * MSEC;
	X.next_stop = now + 700 * MSEC;
	X.next_progress = now + 10 * NSEC;
	for (p = 0; p < H->cfg.nprocs; p++)
		spawn_proc(p);

	/* the longest wait a worker may be in when told to stop */
	wait_max = FOREVER_BOUND + H->cfg.slack + 5 * NSEC;
	for (;;) {
		now = mono_ns();
		reap();
		watchdog(now);
		live_check(now);
		print_fails(false);
		if (!X.stopping) {
			chaos(now);
			if (now >= X.end || budget_done()) {
				X.stopping = true;
				X.stop_at = now;
				STORE(&H->stop, 1);
				for (p = 0; p < H->cfg.nprocs; p++)
					cont_proc(&H->procs[p], now);
			}
		} else if (!procs_alive()) {
			break;
		} else if (!X.stragglers_killed && now - X.stop_at > wait_max) {
			for (p = 0; p < H->cfg.nprocs; p++) {
				struct proc_rec *pr = &H->procs[p];

				if (!pr->pid || X.killed[p])
					continue;
				snprintf(why, sizeof(why),
					 "did not stop within %llu s of the end of the run",
					 wait_max / NSEC);
				dump_proc(p, why);
				STORE(&pr->doomed, 1);
				X.killed[p] = 1;
				X.kill_sent[p] = now;
				kill(pr->pid, SIGKILL);
			}
			X.stragglers_killed = true;
		} else if (X.stragglers_killed &&
			   now - X.stop_at > wait_max + 2 * H->cfg.slack) {
			failf(NULL, CK_HANG,
			      "worker processes still there after SIGKILL; giving up on them");
			break;
		}
		if (now >= X.next_progress) {
			unsigned long long ops = total_ops();

			ksft_print_msg("progress: %.0f s, %llu ops (%.0f/s), %u failure(s)\n",
				       (double)(now - X.start) / NSEC, ops,
				       ops / ((double)(now - X.start) / NSEC),
				       LOAD(&H->fail_next));
			X.next_progress = now + 10 * NSEC;
		}
		/* often enough for the liveness samples */
		sleep_ns(5 * MSEC);
	}

	/* Orphaned fork children come to us (child subreaper): reap them. */
	now = mono_ns();
	while (mono_ns() - now < H->cfg.slack) {
		pid_t pid = waitpid(-1, NULL, WNOHANG);

		if (pid < 0)
			break;
		if (!pid)
			sleep_ns(10 * MSEC);
	}
	if (waitpid(-1, NULL, WNOHANG) == 0)
		failf(NULL, CK_HANG, "fork children still alive %llu s after their parents died",
		      H->cfg.slack / NSEC);
}
