// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: the abused words. FUTEX_SPIN_LOCK and FUTEX_SPIN_UNLOCK
 * on forged and garbage values, the user space fast paths, bad addresses
 * and arguments, and every other futex operation on the same words.
 */
#include "futex_spin_fuzz.h"

/* ------------------------------------------------------------------ */
/* Spinning futex calls on abused words                                */

static int abuse_cls(struct worker *w)
{
	unsigned int r = rnd(&w->rng, 100);

	if (r < 15)
		return T_PAST;
	if (r < 20)
		return T_ZERO;
	if (r < 65)
		return T_NEAR;
	if (r < 90 || w->nheld)
		return T_SHORT;
	if (r < 99)
		return T_MED;
	return T_LONG;
}

/*
 * What the ABI allows for a call with valid arguments on an abused word:
 * any outcome of the race, but only documented errnos. Read-only views
 * and pages that come and go may also fault.
 */
static bool abuse_ok(bool lock, int kind, long ret, int err, bool timed)
{
	bool may_fault = kind == WK_RO || kind == WK_AV;

	if (ret >= 0)
		return ret == 0;
	if (err == EFAULT)
		return may_fault;
	if (lock)
		return err == EDEADLK || (err == ETIMEDOUT && timed);
	return err == EPERM;
}

static void owned_add(struct worker *w, unsigned int *word)
{
	if (w->nowned < MAX_OWNED)
		w->owned[w->nowned++] = word;
	else
		w->owned[rnd(&w->rng, MAX_OWNED)] = word;
}

void abuse_lock(struct worker *w)
{
	int kind, wid, fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0, err;
	struct aword *aw = pick_aword(w, &kind, &wid);
	unsigned int before, after;
	struct tmo t;
	long ret;

	mk_abs(w, abuse_cls(w), chance(&w->rng, 50), &t);
	if (t.rt)
		fop |= FUTEX_CLOCK_REALTIME;
	before = peek(&aw->word);
	ret = spin_call(w, OP_A_LOCK, &aw->word, spin_lock_op(fop), 0, &t.ts,
			NULL, 0, t.deadline, &err);
	after = peek(&aw->word);
	account_sys(w, OP_A_LOCK, wid, fop, before, after, ret, err);
	if (ret == 0)
		owned_add(w, &aw->word);
	if (H->cfg.emulate)
		return;
	if (!abuse_ok(true, kind, ret, err, true))
		failf(w, CK_ABI,
		      "FUTEX_SPIN_LOCK (op %#x) on abused word %s%d (word %#x -> %#x): ret %ld %s",
		      fop, wkind_names[kind], wid % 1000, before, after, ret,
		      errname(err));
	if (ret < 0 && err == ETIMEDOUT)
		check_early(w, &t, OP_A_LOCK, wid);
}

void abuse_unlock(struct worker *w)
{
	int kind, wid, fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0, err;
	struct aword *aw = pick_aword(w, &kind, &wid);
	unsigned int *word = &aw->word, before;
	long ret;

	/* Mostly words we got, which may be ours still, or forged by now. */
	if (w->nowned && chance(&w->rng, 60)) {
		int i = rnd(&w->rng, w->nowned);

		word = w->owned[i];
		w->owned[i] = w->owned[--w->nowned];
		kind = WK_AV;	/* we do not remember which: allow faults */
		wid = -1;
	}
	before = peek(word);
	ret = spin_call(w, OP_A_UNLOCK, word, spin_unlock_op(fop), 0, NULL,
			NULL, 0, 0, &err);
	account_sys(w, OP_A_UNLOCK, wid, fop, before, peek(word), ret, err);
	if (!H->cfg.emulate && !abuse_ok(false, kind, ret, err, false))
		failf(w, CK_ABI,
		      "FUTEX_SPIN_UNLOCK (op %#x) on abused word (kind %s, word %#x): ret %ld %s",
		      fop, wkind_names[kind], before, ret, errname(err));
}

void abuse_fast(struct worker *w, int op)
{
	int kind, wid;
	struct aword *aw = pick_aword(w, &kind, &wid);
	unsigned int old = 0, new = w->tid, seen = 0;
	bool ok;

	if (op == OP_A_FAST_UNLOCK) {
		old = w->tid;
		new = 0;
	} else if (op == OP_A_GARBAGE) {
		new = forge(w);
		seen = peek(&aw->word);
		ok = g_store(&aw->word, new);
		account(w, op, ok ? EB_OK : EB_SEGV, wid, 0, seen, new, 0, 0);
		return;
	}
	ok = g_cas(&aw->word, old, new, &seen);
	account(w, op, !ok ? EB_SEGV : seen == old ? EB_OK : EB_BUSY, wid, 0,
		seen, new, 0, 0);
	if (ok && seen == old && op == OP_A_FAST_LOCK)
		owned_add(w, &aw->word);
}

/* Addresses no futex may use: exact errnos. */
void abuse_badaddr(struct worker *w)
{
	int v = rnd(&w->rng, 7), kind, wid, err, fop;
	bool lock = chance(&w->rng, 60), ro = false;
	unsigned int *uaddr, expect = EFAULT;
	struct aword *aw;
	struct tmo t;
	long ret;

	switch (v) {
	case 0:
		uaddr = NULL;
		break;
	case 1:
		aw = pick_aword(w, &kind, &wid);
		uaddr = (unsigned int *)((char *)&aw->word + 1 + rnd(&w->rng, 3));
		expect = EINVAL;
		break;
	case 2:
		uaddr = (unsigned int *)(1UL << 47);
		break;
	case 3:
		uaddr = (unsigned int *)0xffffffffff600000UL;
		break;
	case 4:
		uaddr = (unsigned int *)P.none_page + 4 * rnd(&w->rng, 4);
		break;
	case 5:
		uaddr = (unsigned int *)P.ro_page + 4 * rnd(&w->rng, 4);
		ro = true;
		break;
	default:
		uaddr = &aw_addr(WK_RO, rnd(&w->rng, NR_AS))->word;
		ro = true;
		break;
	}
	fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0;
	mk_abs(w, chance(&w->rng, 50) ? T_PAST : T_NEAR, chance(&w->rng, 50), &t);
	if (lock && t.rt)
		fop |= FUTEX_CLOCK_REALTIME;
	ret = spin_call(w, OP_A_BADADDR, uaddr,
			lock ? spin_lock_op(fop) : spin_unlock_op(fop), 0,
			lock ? &t.ts : NULL, NULL, 0, t.deadline, &err);
	account_sys(w, OP_A_BADADDR, WK_BAD * 1000 + v, fop, 0, 0, ret, err);
	if (H->cfg.emulate)
		return;
	if (ro) {
		/* read-only: it may be read, never written */
		if (ret == -1 && (err == EFAULT ||
				  (lock && (err == ETIMEDOUT || err == EDEADLK)) ||
				  (!lock && err == EPERM)))
			return;
	} else if (ret == -1 && (unsigned int)err == expect) {
		return;
	}
	failf(w, CK_ABI,
	      "FUTEX_SPIN_%s (op %#x) at bad address %p (variant %d): ret %ld %s, expected %s",
	      lock ? "LOCK" : "UNLOCK", fop, uaddr, v, ret, errname(err),
	      ro ? "EFAULT/EPERM/ETIMEDOUT/EDEADLK" : errname(expect));
}

/* Invalid arguments on good words: exact errnos, whatever the word. */
void abuse_badargs(struct worker *w)
{
	int v = rnd(&w->rng, 12), err, fop, wid;
	int kind = chance(&w->rng, 50) ? WK_AS : WK_AP;
	unsigned int i = rnd(&w->rng, kind == WK_AP ? NR_AP : NR_AS);
	unsigned int *uaddr = &aw_addr(kind, i)->word, val = 0, val3 = 0;
	bool lock = v < 5 || v == 8 || v == 10, any = false;
	unsigned int expect = EINVAL;
	void *uaddr2 = NULL;
	const void *tp = NULL;
	struct tmo t;
	long ret;

	if (H->cfg.emulate)
		return;
	wid = kind * 1000 + i;
	fop = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0;
	mk_abs(w, T_NEAR, chance(&w->rng, 50), &t);
	if (lock) {
		tp = &t.ts;
		if (t.rt)
			fop |= FUTEX_CLOCK_REALTIME;
	}
	switch (v) {
	case 0:
	case 5:
		val = 1 + (unsigned int)rng_next(&w->rng) % UINT_MAX;
		break;
	case 1:
	case 6:
		uaddr2 = uaddr;
		break;
	case 2:
		val3 = 1 + (unsigned int)rng_next(&w->rng) % UINT_MAX;
		break;
	case 3:
		t.ts.tv_nsec = chance(&w->rng, 50) ? (long)NSEC : -1 - (long)rnd(&w->rng, 5);
		if (chance(&w->rng, 30))
			t.ts.tv_sec = -1;
		break;
	case 4:
		tp = (void *)(1UL << 47);
		expect = EFAULT;
		break;
	case 7:
		/* unlock has no timeout, so no clock: as for FUTEX_WAKE */
		fop |= FUTEX_CLOCK_REALTIME;
		expect = nosys_errno;
		break;
	case 8:
		/* a flag nobody defined, past FUTEX_ROBUST_LIST32 */
		fop |= 1 << (11 + rnd(&w->rng, 20));
		any = true;
		break;
	case 9:
		/* unlock has no timeout: valid, invalid or unreadable, unread */
		tp = &t.ts;
		if (chance(&w->rng, 30))
			t.ts.tv_nsec = -1;
		else if (chance(&w->rng, 40))
			tp = (void *)(1UL << 47);
		break;
	case 10:
		/* FUTEX_ROBUST_UNLOCK on an operation that unlocks nothing */
		fop |= FUTEX_ROBUST_UNLOCK;
		expect = nosys_errno;
		break;
	case 11:
		/* the pointer size of a pending op, without one to clear */
		fop |= FUTEX_ROBUST_LIST32;
		break;
	}
	ret = spin_call(w, OP_A_BADARGS, uaddr,
			lock ? spin_lock_op(fop) : spin_unlock_op(fop), val, tp,
			uaddr2, val3, t.deadline, &err);
	account_sys(w, OP_A_BADARGS, wid, fop, 0, 0, ret, err);
	if (ret == -1 && ((unsigned int)err == expect ||
			  (any && err == nosys_errno)))
		return;
	failf(w, CK_ABI,
	      "FUTEX_SPIN_%s variant %d (op %#x val %u uaddr2 %p val3 %u) on %s%u: ret %ld %s, expected %s",
	      lock ? "LOCK" : "UNLOCK", v, fop, val, uaddr2, val3,
	      wkind_names[kind], i, ret, errname(err), errname(expect));
}

/* ------------------------------------------------------------------ */
/* Other futex operations on abused words                              */

/* A relative timeout for FUTEX_WAIT, up to a few ms. */
static unsigned long long mk_rel(struct worker *w, struct timespec *ts)
{
	unsigned long long d = rnd(&w->rng, 3) ? rnd(&w->rng, 2 * MSEC) : 0;

	ns_to_ts(d, ts);
	return mono_ns() + d;
}

static unsigned int wait_val(struct worker *w, unsigned int *word)
{
	/* mostly the current value, so that the waits really sleep */
	return chance(&w->rng, 80) ? peek(word) : (unsigned int)rng_next(&w->rng);
}

/* Mostly valid FUTEX_WAKE_OP encodings, sometimes anything. */
static unsigned int wake_op_arg(struct worker *w)
{
	unsigned int r = (unsigned int)rng_next(&w->rng);

	if (chance(&w->rng, 10))
		return r;
	return (rnd(&w->rng, 5) << 28) | (rnd(&w->rng, 6) << 24) |
	       (r & 0x00ffffff) | (chance(&w->rng, 20) ? 1U << 31 : 0);
}

void other_op(struct worker *w, int op)
{
	int k1, k2, wid, err = 0, prv = chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0;
	struct aword *a1 = pick_aword(w, &k1, &wid);
	struct aword *a2 = pick_aword(w, &k2, &k2);
	unsigned int *u1 = &a1->word, *u2 = &a2->word, before = peek(u1);
	unsigned long long dl = 0;
	struct futex_waitv wv[4];
	struct timespec rel;
	struct tmo t;
	long ret;
	int i, n;

	mk_abs(w, abuse_cls(w), chance(&w->rng, 50), &t);
	w->sl->fop = prv;
	switch (op) {
	case OP_WAIT:
		dl = mk_rel(w, &rel);
		wd_begin(w, op, u1, dl);
		ret = sys_futex(u1, FUTEX_WAIT | prv, wait_val(w, u1), &rel, NULL, 0);
		break;
	case OP_WAIT_BITSET:
		wd_begin(w, op, u1, t.deadline);
		ret = sys_futex(u1, FUTEX_WAIT_BITSET | prv |
				(t.rt ? FUTEX_CLOCK_REALTIME : 0),
				wait_val(w, u1), &t.ts, NULL,
				chance(&w->rng, 5) ? 0 : (unsigned int)rng_next(&w->rng) | 1);
		break;
	case OP_WAKE:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_WAKE | prv,
				chance(&w->rng, 10) ? INT_MAX : rnd(&w->rng, 3),
				NULL, NULL, 0);
		break;
	case OP_WAKE_OP:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_WAKE_OP | prv, rnd(&w->rng, 3),
				(void *)(unsigned long)rnd(&w->rng, 3), u2,
				wake_op_arg(w));
		break;
	case OP_REQUEUE:
	case OP_CMP_REQUEUE:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, (op == OP_REQUEUE ? FUTEX_REQUEUE : FUTEX_CMP_REQUEUE) | prv,
				rnd(&w->rng, 3),
				(void *)(unsigned long)rnd(&w->rng, 4), u2,
				wait_val(w, u1));
		break;
	case OP_LOCK_PI:
		/* FUTEX_LOCK_PI always measures against CLOCK_REALTIME */
		mk_abs(w, abuse_cls(w), true, &t);
		wd_begin(w, op, u1, t.deadline);
		ret = sys_futex(u1, FUTEX_LOCK_PI | prv, 0, &t.ts, NULL, 0);
		break;
	case OP_LOCK_PI2:
		wd_begin(w, op, u1, t.deadline);
		ret = sys_futex(u1, FUTEX_LOCK_PI2 | prv |
				(t.rt ? FUTEX_CLOCK_REALTIME : 0), 0, &t.ts,
				NULL, 0);
		break;
	case OP_TRYLOCK_PI:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_TRYLOCK_PI | prv, 0, NULL, NULL, 0);
		break;
	case OP_UNLOCK_PI:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_UNLOCK_PI | prv, 0, NULL, NULL, 0);
		break;
	case OP_WAIT_REQUEUE_PI:
		wd_begin(w, op, u1, t.deadline);
		ret = sys_futex(u1, FUTEX_WAIT_REQUEUE_PI | prv |
				(t.rt ? FUTEX_CLOCK_REALTIME : 0),
				wait_val(w, u1), &t.ts, u2, 0);
		break;
	case OP_CMP_REQUEUE_PI:
		wd_begin(w, op, u1, 0);
		ret = sys_futex(u1, FUTEX_CMP_REQUEUE_PI | prv, 1,
				(void *)(unsigned long)rnd(&w->rng, 3), u2,
				wait_val(w, u1));
		break;
	case OP_WAITV:
		n = 1 + rnd(&w->rng, 4);
		memset(wv, 0, sizeof(wv));
		for (i = 0; i < n; i++) {
			struct aword *a = i ? pick_aword(w, &k2, &k2) : a1;

			wv[i].uaddr = (unsigned long)&a->word;
			wv[i].val = wait_val(w, &a->word);
			wv[i].flags = FUTEX_32 | (chance(&w->rng, 50) ? FUTEX_PRIVATE_FLAG : 0);
		}
		wd_begin(w, op, u1, t.deadline);
		ret = syscall(__NR_futex_waitv, wv, n, 0, &t.ts,
			      t.rt ? CLOCK_REALTIME : CLOCK_MONOTONIC);
		break;
	case OP_F2_WAIT:
		wd_begin(w, op, u1, t.deadline);
		/* a U32 futex takes a 32 bit mask */
		ret = syscall(__NR_futex_wait, u1, (unsigned long)wait_val(w, u1),
			      (unsigned long)FUTEX_BITSET_MATCH_ANY,
			      FUTEX2_SIZE_U32 | prv, &t.ts,
			      t.rt ? CLOCK_REALTIME : CLOCK_MONOTONIC);
		break;
	default:
		wd_begin(w, op, u1, 0);
		ret = syscall(__NR_futex_wake, u1,
			      (unsigned long)FUTEX_BITSET_MATCH_ANY,
			      rnd(&w->rng, 3), FUTEX2_SIZE_U32 | prv);
		break;
	}
	err = ret < 0 ? errno : 0;
	wd_end(w);
	account_sys(w, op, wid, prv, before, peek(u1), ret, err);
}
