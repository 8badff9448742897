// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: waiters SIGKILLed right before or after the unlock
 * that may hand them the lock (h_kill_waiter).
 */
#include "futex_spin_fuzz.h"

/*
 * SIGKILL for a waiter that is being handed the lock. A kill lock's owner
 * forks waiters that block in FUTEX_SPIN_LOCK on it, one after the other,
 * then SIGKILLs one of them right before or right after its
 * FUTEX_SPIN_UNLOCK, after a pause that takes the first sleeper past the
 * handoff bound or not. The kill lands while the kernel wakes the victim,
 * hands it the lock, or lets it take the free word on its way out. A task
 * with a fatal signal pending must never return from FUTEX_SPIN_LOCK
 * owning the word: the lock is not robust, so a victim that dies owning it
 * blocks every other waiter until its deadline.
 *
 * Killed before the unlock, the victim cannot have got the lock before
 * the kill: we held it. If its TID is in the word once it is reaped, it
 * was given the lock with SIGKILL pending: a failure. Killed after the
 * unlock, it may have returned owning the lock and died in user space,
 * an ordinary owner death; and it may die between the kernel's last look
 * at its signals and the return to user space, which no kernel can
 * prevent and no flag set in user space can tell from a bug. Those are
 * only counted (returned owning: KC_OWNED set; undecided: not set).
 */
static __noreturn void kill_child(struct worker *w, struct klock *k, int ki,
				  int i, pid_t parent)
{
	unsigned int *state = &w->sl->kc_state[i], tid, word, old;
	struct timespec ts;
	long ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	tid = gettid_raw();
	ns_to_ts(mono_ns() + 3 * NSEC, &ts);
	STORE(state, KC_INSIDE);
	ret = sys_futex(&k->word, spin_lock_op(0), 0, &ts, NULL, 0);
	if (ret) {
		STORE(&w->sl->kc_err[i], ret < 0 ? errno : (int)ret);
		STORE(state, KC_FAILED);
		_exit(0);
	}
	/* first thing: the check must know that we returned owning it */
	STORE(state, KC_OWNED);
	word = LOAD(&k->word);
	if ((word & FUTEX_TID_MASK) != tid)
		failf(NULL, CK_EXCL,
		      "kill lock %d: FUTEX_SPIN_LOCK returned 0 to tid %u but the word is %#x",
		      ki, tid, word);
	old = XCHG(&k->holder, tid);
	if (old)
		failf(NULL, CK_EXCL,
		      "kill lock %d: tid %u got it (word %#x) while tid %u is inside",
		      ki, tid, word, old);
	sched_yield();
	XCHG(&k->holder, 0);
	ret = sys_futex(&k->word, spin_unlock_op(0), 0, NULL, NULL, 0);
	if (ret)
		failf(NULL, CK_ABI,
		      "FUTEX_SPIN_UNLOCK of kill lock %d by its owner tid %u: ret %ld %s, expected 0",
		      ki, tid, ret, ret < 0 ? errname(errno) : "");
	STORE(state, KC_DONE);
	_exit(0);
}

/*
 * Nobody unlocks a non-robust lock whose owner died holding it (a waiter
 * killed after it got the lock, a worker the harness killed while it held
 * one): user space takes it over, as an application would, keeping
 * WAITERS so that our unlock wakes its sleepers.
 */
static bool kl_take_over(struct worker *w, struct klock *k, unsigned int word)
{
	unsigned int owner = word & FUTEX_TID_MASK;

	if (!owner || owner == w->tid || !kill(owner, 0) || errno != ESRCH)
		return false;
	if (!cas32(&k->word, word, w->tid | (word & FUTEX_WAITERS), NULL))
		return false;
	ADD(&H->kill_repairs, 1);
	STORE(&k->holder, 0);
	return true;
}

static bool kl_lock(struct worker *w, struct klock *k, int ki)
{
	unsigned int before, after;
	struct tmo t;
	int err, fop;
	long ret;

	mk_abs(w, T_LONG, chance(&w->rng, 50), &t);
	fop = t.rt ? FUTEX_CLOCK_REALTIME : 0;
	before = LOAD(&k->word);
	ret = spin_call(w, OP_H_KILL_WAITER, &k->word, spin_lock_op(fop), 0,
			&t.ts, NULL, 0, t.deadline, &err);
	after = LOAD(&k->word);
	account_sys(w, OP_H_KILL_WAITER, WK_KL * 1000 + ki, fop, before, after,
		    ret, err);
	if (!ret)
		return true;
	if (ret > 0 || err != ETIMEDOUT)
		failf(w, CK_ABI, "FUTEX_SPIN_LOCK on kill lock %d: ret %ld %s",
		      ki, ret, errname(err));
	else
		check_early(w, &t, OP_H_KILL_WAITER, WK_KL * 1000 + ki);
	return kl_take_over(w, k, after);
}

static void kl_unlock(struct worker *w, struct klock *k, int ki)
{
	unsigned int before = LOAD(&k->word), word;
	int err;
	long ret;

	ret = sys_futex(&k->word, spin_unlock_op(0), 0, NULL, NULL, 0);
	err = ret < 0 ? errno : 0;
	account_sys(w, OP_H_KILL_WAITER, WK_KL * 1000 + ki, 0, before,
		    LOAD(&k->word), ret, err);
	if (ret) {
		failf(w, CK_ABI,
		      "FUTEX_SPIN_UNLOCK of our kill lock %d (word %#x): ret %ld %s, expected 0",
		      ki, before, ret, errname(err));
		word = LOAD(&k->word);
		if ((word & FUTEX_TID_MASK) == w->tid)
			cas32(&k->word, word, 0, NULL);
	}
}

/* Reap a child, or report it and kill it when it does not exit in time. */
static void kc_reap(struct worker *w, pid_t pid, unsigned long long dl)
{
	char stack[1024], path[64];
	int st;

	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (mono_ns() > dl) {
			snprintf(path, sizeof(path), "/proc/%d/stack", pid);
			read_file(path, stack, sizeof(stack));
			failf(w, CK_HANG,
			      "h_kill_waiter child %d still there %.1f s after its deadline; kernel stack:\n%s",
			      pid, (double)H->cfg.slack / NSEC, stack);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		sleep_ns(200 * USEC);
	}
	dead_push(pid);
}

void kill_waiter_op(struct worker *w)
{
	int ki = rnd(&w->rng, NR_KL), n, i, victim = -1;
	struct klock *k = &H->klocks[ki];
	unsigned int *kc = w->sl->kc_state, word, old;
	pid_t pids[NR_KC], parent = getpid();
	bool kill_first = chance(&w->rng, 50);
	unsigned long long dl;

	/* PI emulation: a dying FUTEX_LOCK_PI waiter may get the lock */
	if (H->cfg.emulate || w->child || w->nheld || !kl_lock(w, k, ki))
		return;
	old = XCHG(&k->holder, w->tid);
	if (old)
		failf(w, CK_EXCL, "kill lock %d: we got it (word %#x) while tid %u is inside",
		      ki, LOAD(&k->word), old);

	wd_begin(w, OP_H_KILL_WAITER, &k->word, mono_ns() + 6 * NSEC);
	n = 1 + rnd(&w->rng, NR_KC);
	for (i = 0; i < n; i++) {
		STORE(&kc[i], KC_NONE);
		pids[i] = fork();
		if (!pids[i])
			kill_child(w, k, ki, i, parent);
		if (pids[i] < 0)
			break;
		/* one at a time: the first child is the first sleeper */
		dl = mono_ns() + NSEC;
		while (LOAD(&kc[i]) == KC_NONE && mono_ns() < dl)
			sleep_ns(100 * USEC);
		sleep_ns(rnd(&w->rng, 2 * MSEC));
	}
	n = i;
	if (n) {
		victim = chance(&w->rng, 60) ? 0 : rnd(&w->rng, n);
		/* published as inside FUTEX_SPIN_LOCK on the lock we hold */
		if (LOAD(&kc[victim]) != KC_INSIDE)
			victim = -1;
	}
	/* past its due time an asking waiter is handed the lock by the unlock */
	sleep_ns(rnd(&w->rng, 15 * MSEC));

	if (victim >= 0 && kill_first)
		kill(pids[victim], SIGKILL);
	old = XCHG(&k->holder, 0);
	if (old != w->tid)
		failf(w, CK_EXCL,
		      "kill lock %d: holder changed to tid %u while we (tid %u) held it",
		      ki, old, w->tid);
	kl_unlock(w, k, ki);
	if (victim >= 0 && !kill_first)
		kill(pids[victim], SIGKILL);
	if (victim >= 0) {
		ADD(&H->kill_ops[!kill_first], 1);
		account(w, OP_CHILD_KILL, EB_OK, WK_KL * 1000 + ki, kill_first,
			0, pids[victim], 0, 0);
	}

	if (victim >= 0) {
		kc_reap(w, pids[victim], mono_ns() + H->cfg.slack);
		word = LOAD(&k->word);
		if ((word & FUTEX_TID_MASK) == (unsigned int)pids[victim]) {
			unsigned int st = LOAD(&kc[victim]);

			if (kill_first)
				failf(w, CK_KILLED,
				      "kill lock %d: waiter pid %d (state %u: %s) got SIGKILL before our FUTEX_SPIN_UNLOCK and died owning the lock: word %#x after it was reaped",
				      ki, pids[victim], st,
				      st == KC_OWNED ? "returned owning it" :
				      "inside FUTEX_SPIN_LOCK", word);
			else if (st == KC_OWNED)
				ADD(&H->kill_late, 1);
			else
				ADD(&H->kill_undecided, 1);
			/* unblock the other children, as a robust mutex would */
			if (kl_take_over(w, k, word))
				kl_unlock(w, k, ki);
		}
	}

	/* the others get the lock in turn, or time out after 3 s */
	for (i = 0; i < n; i++) {
		unsigned int st;

		if (i == victim)
			continue;
		kc_reap(w, pids[i], mono_ns() + 3 * NSEC + H->cfg.slack);
		st = LOAD(&kc[i]);
		if (st == KC_FAILED && LOAD(&w->sl->kc_err[i]) != ETIMEDOUT)
			failf(w, CK_ABI, "FUTEX_SPIN_LOCK on kill lock %d in child %d: %s",
			      ki, pids[i], errname(LOAD(&w->sl->kc_err[i])));
		word = LOAD(&k->word);
		if ((word & FUTEX_TID_MASK) == (unsigned int)pids[i]) {
			failf(w, CK_EXCL,
			      "kill lock %d: child %d (state %u) exited and the word still names it: %#x",
			      ki, pids[i], st, word);
			if (kl_take_over(w, k, word))
				kl_unlock(w, k, ki);
		}
	}
	wd_end(w);
}
