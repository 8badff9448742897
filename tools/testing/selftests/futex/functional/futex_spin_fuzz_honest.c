// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: the honest locks, touched only by well-behaved code:
 * exclusive, naming their owner, released within the handoff bound, and
 * left alone by the calls the ABI refuses.
 */
#include "futex_spin_fuzz.h"

/* ------------------------------------------------------------------ */
/* Honest locks                                                        */

static int honest_cls(struct worker *w)
{
	unsigned int r = rnd(&w->rng, 100);
	int cls;

	if (r < 30)
		cls = T_NEAR;
	else if (r < 65)
		cls = T_SHORT;
	else if (r < 85)
		cls = T_MED;
	else if (r < 93)
		cls = T_LONG;
	else
		cls = T_FAR;
	/* A holder waits only briefly: others may be waiting for it. */
	if (w->nheld && cls > T_SHORT)
		cls = T_SHORT;
	return cls;
}

int nr_honest(struct worker *w)
{
	/* Fork children share only the shared locks with anybody. */
	return H->cfg.nhs + (w->child ? 0 : NR_HP);
}

/* A lock above every one we hold: ordered locking cannot deadlock. */
static int pick_honest(struct worker *w)
{
	int lo = w->nheld ? w->held[w->nheld - 1].li + 1 : 0;
	int n = nr_honest(w);

	if (lo >= n || w->nheld >= MAX_HELD)
		return -1;
	return lo + rnd(&w->rng, n - lo);
}

int hl_wid(int li)
{
	int nhs = H->cfg.nhs;

	return li < nhs ? WK_HS * 1000 + li : WK_HP * 1000 + li - nhs;
}

static void crit_enter(struct worker *w, struct hlock *l, int li, int op)
{
	unsigned int word = LOAD(&l->word), old, seen;
	bool od = word & FUTEX_OWNER_DIED;

	if ((word & FUTEX_TID_MASK) != w->tid)
		failf(w, CK_EXCL, "hs/hp lock %d taken by %s but the word is %#x, not our TID %u",
		      li, op_names[op], word, w->tid);
	old = XCHG(&l->holder, w->gid);
	if (old) {
		struct tstate *t = &H->ts[old % TS_SIZE];

		if (!od || !gid_dead(old))
			failf(w, CK_EXCL,
			      "lock %d taken by %s (word %#x) while gid %u (tid %u, proc %u gen %u, state %u, %s) is inside it: %s",
			      li, op_names[op], word, old, t->tid, t->proc,
			      t->pgen, t->state, gid_dead(old) ? "dead" : "alive",
			      od ? "OWNER_DIED set though the holder lives"
				 : "not exclusive, or the holder died without OWNER_DIED");
		else
			ADD(&H->owner_died_seen, 1);
	} else if (od) {
		ADD(&H->owner_died_seen, 1);
	}
	/* We own it now: make it consistent again, as a robust mutex would. */
	while (word & FUTEX_OWNER_DIED) {
		if (cas32(&l->word, word, word & ~FUTEX_OWNER_DIED, &seen))
			break;
		word = seen;
		if ((word & FUTEX_TID_MASK) != w->tid) {
			failf(w, CK_EXCL, "lock %d: word became %#x while we own it",
			      li, word);
			break;
		}
	}
	RSTORE(&l->canary, RLOAD(&l->canary) + 1);
}

void honest_lock(struct worker *w, int op)
{
	int li = pick_honest(w), fop, err = 0, wid;
	unsigned long long rel0 = 0, t0 = 0;
	unsigned int before, after, sigs0;
	bool got = false, alias;
	struct hlock *l;
	struct tmo t;
	const void *tp;
	long ret;

	if (li < 0)
		return;
	alias = li < (int)H->cfg.nhs && chance(&w->rng, 50);
	l = hl_addr(li, alias);
	fop = hl_fop(li);
	wid = hl_wid(li);
	robust_pending(w, &l->node);

	if (op == OP_H_TRYLOCK || (op == OP_H_LOCK && chance(&w->rng, 50))) {
		got = cas32(&l->word, 0, w->tid, &before);
		account(w, OP_H_TRYLOCK, got ? EB_OK : EB_BUSY, wid, 0, before,
			got ? w->tid : before, got ? 0 : -1, 0);
		if (got || op == OP_H_TRYLOCK)
			goto out;
	}

	if (op == OP_H_LOCK_FOREVER && w->nheld)
		op = OP_H_LOCK;
	switch (op) {
	case OP_H_LOCK_PAST:
		mk_abs(w, chance(&w->rng, 80) ? T_PAST : T_ZERO,
		       chance(&w->rng, 50), &t);
		tp = &t.ts;
		break;
	case OP_H_LOCK_FOREVER:
		mk_abs(w, T_HUGE, chance(&w->rng, 50), &t);
		tp = chance(&w->rng, 50) ? &t.ts : NULL;
		break;
	default:
		mk_abs(w, honest_cls(w), chance(&w->rng, 50), &t);
		tp = &t.ts;
		break;
	}
	if (t.rt)
		fop |= FUTEX_CLOCK_REALTIME;
	rel0 = RLOAD(&l->releases);
	sigs0 = RLOAD(&tls_sigs);
	before = RLOAD(&l->word);
	t0 = mono_ns();
	RSTORE(&w->sl->hlock, li + 1);
	ret = spin_call(w, op, &l->word, spin_lock_op(fop), 0, tp, NULL, 0,
			t.deadline, &err);
	after = RLOAD(&l->word);
	account_sys(w, op, wid, fop, before, after, ret, err);

	if (ret == 0) {
		got = true;
	} else if (ret > 0) {
		failf(w, CK_ABI, "FUTEX_SPIN_LOCK on lock %d returned %ld", li, ret);
	} else if (err == ETIMEDOUT && tp) {
		unsigned long long waited = mono_ns() - t0;

		check_early(w, &t, op, wid);
		note_late(&t);
		if (waited >= STARVE_MIN_WAIT && !H->cfg.rt) {
			/*
			 * Sleepers are woken in arrival order, and one past its
			 * due time (1 ms per waiter ahead) that runs asks and is
			 * handed the lock: we are first after the others that can
			 * reach this lock got it once, plus a few fast path cycles
			 * before we ask. A signal restarts the call at the end of
			 * the queue.
			 */
			unsigned int nt = li < (int)H->cfg.nhs ?
				H->cfg.nprocs * H->cfg.nthreads + 4 : H->cfg.nthreads + 2;
			unsigned long long rel = RLOAD(&l->releases) - rel0;
			unsigned int sigs = RLOAD(&tls_sigs) - sigs0;
			unsigned long long bound = 3ULL * nt + 16 + sigs * nt;

			ADD(&H->starve_checked, 1);
			if (rel > bound)
				failf(w, CK_STARVE,
				      "lock %d: waited %.3f s and timed out while it was released %llu times by others (bound %llu, %u signals); word now %#x",
				      li, (double)waited / NSEC, rel, bound,
				      sigs, after);
		}
	} else if (!H->cfg.emulate) {
		/* PI emulation may also say EDEADLK for a PI chain deadlock */
		failf(w, CK_ABI, "FUTEX_SPIN_LOCK on honest lock %d: %s (op %#x)",
		      li, errname(err), fop);
	}
	if (mono_ns() - t0 >= NSEC)
		ADD(&H->lock_waits_1s, 1);

	/* An error must not leave the lock to us: nobody else names us. */
	if (!got && (LOAD(&l->word) & FUTEX_TID_MASK) == w->tid) {
		failf(w, CK_EXCL,
		      "FUTEX_SPIN_LOCK on lock %d failed with %s but the word names us (%#x)",
		      li, errname(err), LOAD(&l->word));
		got = true;	/* take it, so that it gets released */
	}
out:
	if (got) {
		struct held *h = &w->held[w->nheld++];
		unsigned int r = rnd(&w->rng, 100);

		robust_link(w, &l->node);
		robust_pending(w, NULL);
		h->l = l;
		h->li = li;
		h->fop = hl_fop(li);
		h->left = r < 60 ? 0 : r < 90 ? 1 + rnd(&w->rng, 3) : 4 + rnd(&w->rng, 7);
		crit_enter(w, l, li, op);
	} else {
		robust_pending(w, NULL);
	}
}

/* Stay in the critical section a little: spinners see a running owner. */
static void crit_work(struct worker *w)
{
	unsigned int r = rnd(&w->rng, 1000), i, n;

	if (r < 20) {
		sched_yield();
	} else if (r < 30) {
		sleep_ns(20 * USEC + rnd(&w->rng, 200 * USEC));
	} else {
		n = rnd(&w->rng, 2000);
		for (i = 0; i < n; i++)
			__asm__ __volatile__("pause" ::: "memory");
	}
}

void honest_unlock(struct worker *w)
{
	struct held *h = &w->held[w->nheld - 1];
	struct hlock *l = h->l;
	unsigned long long canary = RLOAD(&l->canary);
	unsigned int word, old, before;
	int wid = hl_wid(h->li), err = 0;
	long ret;

	crit_work(w);
	if (RLOAD(&l->canary) != canary)
		failf(w, CK_EXCL, "lock %d: canary changed under us", h->li);
	word = LOAD(&l->word);
	if ((word & FUTEX_TID_MASK) != w->tid || (word & FUTEX_OWNER_DIED))
		failf(w, CK_EXCL, "lock %d: word changed to %#x while we (TID %u) held it",
		      h->li, word, w->tid);
	ADD(&l->releases, 1);
	old = XCHG(&l->holder, 0);
	if (old != w->gid)
		failf(w, CK_EXCL, "lock %d: holder changed to gid %u while we (gid %u) held it",
		      h->li, old, w->gid);

	robust_pending(w, &l->node);
	robust_unlink(w, &l->node);
	if (chance(&w->rng, 50) && cas32(&l->word, w->tid, 0, &before)) {
		account(w, OP_H_UNLOCK_FAST, EB_OK, wid, 0, before, 0, 0, 0);
	} else {
		/*
		 * Now and then the kernel clears the robust list's pending op
		 * for us, as FUTEX_ROBUST_UNLOCK asks.
		 */
		bool robust = chance(&w->rng, 25);
		int fop = spin_unlock_op(h->fop) | (robust ? FUTEX_ROBUST_UNLOCK : 0);

		before = LOAD(&l->word);
		RSTORE(&w->sl->hlock, h->li + 1);
		ret = spin_call(w, OP_H_UNLOCK, &l->word, fop, 0, NULL,
				robust ? (void *)&w->rl.head.list_op_pending : NULL,
				0, 0, &err);
		account_sys(w, OP_H_UNLOCK, wid, h->fop, before,
			    RLOAD(&l->word), ret, err);
		if (!ret && robust && RLOAD(&w->rl.head.list_op_pending))
			failf(w, CK_ABI,
			      "FUTEX_SPIN_UNLOCK | FUTEX_ROBUST_UNLOCK of lock %d left the pending op",
			      h->li);
		if (ret) {
			failf(w, CK_ABI,
			      "FUTEX_SPIN_UNLOCK of our lock %d (word %#x): ret %ld %s, expected 0",
			      h->li, before, ret, ret < 0 ? errname(err) : "");
			/* leave it free anyway, or everybody else starves */
			word = LOAD(&l->word);
			if ((word & FUTEX_TID_MASK) == w->tid)
				cas32(&l->word, word, 0, NULL);
		}
	}
	robust_pending(w, NULL);
	w->nheld--;
}

void release_all(struct worker *w)
{
	while (w->nheld)
		honest_unlock(w);
}

/* FUTEX_SPIN_LOCK on a lock we hold: EDEADLK, and we keep it. */
void honest_relock(struct worker *w)
{
	struct held *h;
	unsigned int before, after;
	struct tmo t;
	int err, fop;
	long ret;

	if (!w->nheld) {
		honest_lock(w, OP_H_LOCK);
		return;
	}
	h = &w->held[rnd(&w->rng, w->nheld)];
	mk_abs(w, T_NEAR, chance(&w->rng, 50), &t);
	fop = h->fop | (t.rt ? FUTEX_CLOCK_REALTIME : 0);
	before = LOAD(&h->l->word);
	ret = spin_call(w, OP_H_RELOCK, &h->l->word, spin_lock_op(fop), 0,
			&t.ts, NULL, 0, t.deadline, &err);
	after = LOAD(&h->l->word);
	account_sys(w, OP_H_RELOCK, hl_wid(h->li), fop, before, after, ret, err);
	if (ret != -1 || err != EDEADLK)
		failf(w, CK_ABI,
		      "FUTEX_SPIN_LOCK on lock %d we own (word %#x): ret %ld %s, expected EDEADLK",
		      h->li, before, ret, errname(err));
	if ((after & FUTEX_TID_MASK) != w->tid)
		failf(w, CK_EXCL, "lock %d: word %#x after our relock, not our TID %u",
		      h->li, after, w->tid);
}

static bool holding(struct worker *w, int li)
{
	int i;

	for (i = 0; i < w->nheld; i++)
		if (w->held[i].li == li)
			return true;
	return false;
}

/* FUTEX_SPIN_UNLOCK on a lock we do not hold: EPERM, and no harm done. */
void honest_foreign_unlock(struct worker *w)
{
	int li = rnd(&w->rng, nr_honest(w)), err;
	struct hlock *l = hl_addr(li, chance(&w->rng, 50));
	unsigned int before;
	long ret;

	if (holding(w, li))
		return;
	before = RLOAD(&l->word);
	ret = spin_call(w, OP_H_FOREIGN_UNLOCK, &l->word,
			spin_unlock_op(hl_fop(li)), 0, NULL, NULL, 0, 0, &err);
	account_sys(w, OP_H_FOREIGN_UNLOCK, hl_wid(li), hl_fop(li), before,
		    RLOAD(&l->word), ret, err);
	if (ret != -1 || err != EPERM)
		failf(w, CK_ABI,
		      "FUTEX_SPIN_UNLOCK on lock %d owned by another (word %#x): ret %ld %s, expected EPERM",
		      li, before, ret, errname(err));
}

/*
 * Invalid arguments on honest locks: EINVAL (EFAULT for an unreadable
 * timeout of the lock; ENOSYS for a clock on the unlock, which takes no
 * timeout and reads no pointer there), and
 * neither a lock nor an unlock may happen.
 */
void honest_badargs(struct worker *w)
{
	unsigned int before, after, dummy = 0;
	int v = rnd(&w->rng, 6), err, li, fop, expect = EINVAL;
	unsigned int val = 0, val3 = 0;
	void *uaddr2 = NULL;
	const void *tp;
	struct hlock *l;
	struct tmo t;
	long ret;

	if (H->cfg.emulate)
		return;
	switch (v) {
	case 0:
		val = 1 + rnd(&w->rng, 1000);
		break;
	case 1:
		uaddr2 = &dummy;
		break;
	case 2:
		val3 = 1 + rnd(&w->rng, 1000);
		break;
	}
	if (w->nheld && chance(&w->rng, 50)) {
		struct held *h = &w->held[rnd(&w->rng, w->nheld)];
		struct timespec uts = { .tv_sec = 1 };
		const void *utp = NULL;

		fop = h->fop;
		switch (v) {
		case 3:
			/* no timeout, so no clock: ENOSYS, as for every such op */
			fop |= FUTEX_CLOCK_REALTIME;
			expect = nosys_errno;
			break;
		case 4:
			/* no timeout at all, valid or not */
			utp = &uts;
			if (chance(&w->rng, 50))
				uts.tv_nsec = -1;
			break;
		case 5:
			/* refused unread, like any other pointer there */
			utp = chance(&w->rng, 50) ? (void *)16 : (void *)P.none_page;
			break;
		}
		before = LOAD(&h->l->word);
		ret = spin_call(w, OP_H_BADARGS, &h->l->word,
				spin_unlock_op(fop), val, utp, uaddr2, val3,
				0, &err);
		after = LOAD(&h->l->word);
		account_sys(w, OP_H_BADARGS, hl_wid(h->li), fop, before,
			    after, ret, err);
		if (ret != -1 || err != expect)
			failf(w, CK_ABI,
			      "FUTEX_SPIN_UNLOCK(val %u, timeout %p, uaddr2 %p, val3 %u, op %#x) on our lock %d: ret %ld %s, expected %s",
			      val, utp, uaddr2, val3, fop, h->li, ret,
			      errname(err), errname(expect));
		if ((after & FUTEX_TID_MASK) != w->tid)
			failf(w, CK_EXCL,
			      "lock %d: an invalid FUTEX_SPIN_UNLOCK released it (word %#x)",
			      h->li, after);
		return;
	}

	li = rnd(&w->rng, nr_honest(w));
	if (holding(w, li))
		return;
	l = hl_addr(li, false);
	fop = hl_fop(li);
	mk_abs(w, T_NEAR, chance(&w->rng, 50), &t);
	tp = &t.ts;
	switch (v) {
	case 3:
		t.ts.tv_nsec = chance(&w->rng, 50) ? (long)NSEC + rnd(&w->rng, 1000) : -1;
		break;
	case 4:
		t.ts.tv_sec = -1 - (long)rnd(&w->rng, 1000);
		break;
	case 5:
		tp = chance(&w->rng, 50) ? (void *)16 : (void *)P.none_page;
		expect = EFAULT;
		break;
	}
	if (t.rt)
		fop |= FUTEX_CLOCK_REALTIME;
	before = LOAD(&l->word);
	ret = spin_call(w, OP_H_BADARGS, &l->word, spin_lock_op(fop), val, tp,
			uaddr2, val3, t.deadline, &err);
	after = LOAD(&l->word);
	account_sys(w, OP_H_BADARGS, hl_wid(li), fop, before, after, ret, err);
	if (ret != -1 || err != expect)
		failf(w, CK_ABI,
		      "FUTEX_SPIN_LOCK variant %d (val %u, uaddr2 %p, val3 %u) on lock %d: ret %ld %s, expected %s",
		      v, val, uaddr2, val3, li, ret, errname(err),
		      errname(expect));
	if ((after & FUTEX_TID_MASK) == w->tid) {
		failf(w, CK_EXCL,
		      "lock %d: an invalid FUTEX_SPIN_LOCK (variant %d, %s) made us the owner (word %#x)",
		      li, v, errname(err), after);
		cas32(&l->word, after, 0, NULL);
	}
}
