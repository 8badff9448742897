// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: where the words are, what abused words are set to,
 * the robust lists of honest locks, the timeouts, and the calls of
 * FUTEX_SPIN_LOCK and FUTEX_SPIN_UNLOCK.
 */
#include "futex_spin_fuzz.h"

/* ------------------------------------------------------------------ */
/* Words                                                               */

static char *view_base(int kind)
{
	switch (kind) {
	case WK_ALIAS:	return P.alias;
	case WK_COW:	return P.cow;
	case WK_RO:	return P.ro;
	}
	return P.shm + VIEW_OFF;
}

struct hlock *hl_addr(int li, bool alias)
{
	unsigned int nhs = H->cfg.nhs;

	if (li < (int)nhs)
		return (struct hlock *)(view_base(alias ? WK_ALIAS : WK_HS) +
					(OFF_HS - VIEW_OFF)) + li;
	return (struct hlock *)P.priv + (li - nhs);
}

/* Private honest locks with an even index use private keys, odd shared. */
int hl_fop(int li)
{
	if (li < (int)H->cfg.nhs)
		return 0;
	return (li & 1) ? 0 : FUTEX_PRIVATE_FLAG;
}

struct aword *aw_addr(int kind, int i)
{
	switch (kind) {
	case WK_AP:
		return (struct aword *)(P.priv + PAGE) + i;
	case WK_AV:
		return (struct aword *)P.vp[i / WPV].addr + i % WPV;
	}
	return (struct aword *)(view_base(kind) + (OFF_AS - VIEW_OFF)) + i;
}

/* An abused word: mostly shared ones, so that processes collide. */
struct aword *pick_aword(struct worker *w, int *kind, int *wid)
{
	unsigned int r = rnd(&w->rng, 100);
	int k, i;

	if (r < 38)
		k = WK_AS;
	else if (r < 48)
		k = WK_ALIAS;
	else if (r < 53)
		k = WK_COW;
	else if (r < 57)
		k = WK_RO;
	else if (r < 80)
		k = WK_AP;
	else
		k = WK_AV;
	if (k == WK_AP)
		i = rnd(&w->rng, NR_AP);
	else if (k == WK_AV)
		i = rnd(&w->rng, NR_VPAGES * WPV);
	else
		i = rnd(&w->rng, NR_AS);
	*kind = k;
	*wid = k * 1000 + i;
	return aw_addr(k, i);
}

/* A value for an abused word: TIDs of all kinds, flags, garbage. */
unsigned int forge(struct worker *w)
{
	unsigned int v;

	switch (rnd(&w->rng, 10)) {
	case 0:
		return 0;
	case 1:
		return (unsigned int)rng_next(&w->rng);
	case 2:
		v = w->tid;
		break;
	case 3:
	case 4:
		v = some_live_tid(&w->rng);
		break;
	case 5:
		v = some_dead_tid(&w->rng);
		break;
	case 6:
		return FUTEX_OWNER_DIED | (chance(&w->rng, 50) ? FUTEX_WAITERS : 0);
	case 7:
		return FUTEX_WAITERS;
	case 8:
		v = FUTEX_TID_MASK;
		break;
	default:
		v = 1;
		break;
	}
	if (chance(&w->rng, 30))
		v |= FUTEX_WAITERS;
	if (chance(&w->rng, 10))
		v |= FUTEX_OWNER_DIED;
	return v;
}

static struct robust_list *node_entry(struct robust_list *n)
{
	/* In PI emulation the robust list must say so, bit 0 of the entry. */
	return (struct robust_list *)((unsigned long)n | !!H->cfg.emulate);
}

static struct robust_list *entry_node(struct robust_list *e)
{
	return (struct robust_list *)((unsigned long)e & ~1UL);
}

void robust_register(struct worker *w)
{
	w->rl.head.list.next = &w->rl.head.list;
	w->rl.head.futex_offset = HL_OFFSET;
	w->rl.head.list_op_pending = NULL;
	syscall(SYS_set_robust_list, &w->rl.head, sizeof(w->rl.head));
}

void robust_pending(struct worker *w, struct robust_list *n)
{
	RSTORE(&w->rl.head.list_op_pending, n ? node_entry(n) : NULL);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void robust_link(struct worker *w, struct robust_list *n)
{
	n->next = w->rl.head.list.next;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	RSTORE(&w->rl.head.list.next, node_entry(n));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Honest lists hold only our own nodes: the walk is short and safe. */
void robust_unlink(struct worker *w, struct robust_list *n)
{
	struct robust_list *p = &w->rl.head.list;
	int i;

	for (i = 0; i <= MAX_HELD + 1; i++) {
		struct robust_list *next = entry_node(p->next);

		if (next == n) {
			RSTORE(&p->next, n->next);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			return;
		}
		if (next == &w->rl.head.list)
			break;
		p = next;
	}
	failf(w, CK_RUN, "harness bug: robust node %p not on our list", n);
}

/* ------------------------------------------------------------------ */
/* Timeouts                                                            */

/* An absolute timeout of class @cls on CLOCK_REALTIME or CLOCK_MONOTONIC. */
void mk_abs(struct worker *w, int cls, bool rt, struct tmo *t)
{
	unsigned long long now = clock_ns(rt ? CLOCK_REALTIME : CLOCK_MONOTONIC);
	unsigned long long mnow = rt ? mono_ns() : now, d = 0;

	t->rt = rt;
	t->cls = cls;
	switch (cls) {
	case T_PAST:
		t->target = now - rnd(&w->rng, 10 * MSEC) - 1;
		break;
	case T_ZERO:
		t->target = 0;
		break;
	case T_NEAR:
		d = rnd(&w->rng, 500 * USEC);
		break;
	case T_SHORT:
		d = 500 * USEC + rnd(&w->rng, 4500 * USEC);
		break;
	case T_MED:
		d = 5 * MSEC + rnd(&w->rng, 45 * MSEC);
		break;
	case T_LONG:
		d = 100 * MSEC + rnd(&w->rng, 200 * MSEC);
		break;
	case T_FAR:
		d = 2 * NSEC + rnd(&w->rng, 2 * NSEC);
		break;
	}
	if (cls >= T_NEAR && cls <= T_FAR)
		t->target = now + d;
	ns_to_ts(t->target, &t->ts);
	t->deadline = mnow + d;
	if (cls == T_HUGE) {
		/* beyond any run: a day ahead, or so far that it saturates */
		switch (rnd(&w->rng, 3)) {
		case 0:
			t->ts.tv_sec = now / NSEC + 86400;
			break;
		case 1:
			t->ts.tv_sec = LONG_MAX;
			break;
		default:
			t->ts.tv_sec = LONG_MAX / 2 + rnd(&w->rng, 1000);
			break;
		}
		t->ts.tv_nsec = rnd(&w->rng, NSEC);
		t->target = ULLONG_MAX;
		t->deadline = mnow + FOREVER_BOUND;
	}
}

/* ETIMEDOUT before the deadline is an ABI violation. */
void check_early(struct worker *w, struct tmo *t, int op, int wid)
{
	unsigned long long now = clock_ns(t->rt ? CLOCK_REALTIME : CLOCK_MONOTONIC);
	char ws[24];

	if (now >= t->target || H->cfg.emulate)
		return;
	fmt_wid(ws, sizeof(ws), wid);
	failf(w, CK_ABI, "%s on %s: ETIMEDOUT %llu ns before the %s deadline (class %d)",
	      op_names[op], ws, t->target - now, t->rt ? "realtime" : "monotonic",
	      t->cls);
}

/*
 * Keep the longest an ETIMEDOUT came after its deadline, on its clock;
 * a deadline already past at the call is no measure of that.
 */
void note_late(struct tmo *t)
{
	unsigned long long now, late, old;

	if (t->cls < T_NEAR)
		return;
	now = clock_ns(t->rt ? CLOCK_REALTIME : CLOCK_MONOTONIC);
	late = now > t->target ? now - t->target : 0;
	old = RLOAD(&H->late_max_ns);
	while (late > old &&
	       !__atomic_compare_exchange_n(&H->late_max_ns, &old, late, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* ------------------------------------------------------------------ */
/* Spinning futex calls                                                */

int spin_lock_op(int flags)
{
	return (H->cfg.emulate ? FUTEX_LOCK_PI2 : FUTEX_SPIN_LOCK) | flags;
}

int spin_unlock_op(int flags)
{
	return (H->cfg.emulate ? FUTEX_UNLOCK_PI : FUTEX_SPIN_UNLOCK) | flags;
}

long spin_call(struct worker *w, int op, void *uaddr, int fop,
	       unsigned int val, const void *tmo, void *uaddr2,
	       unsigned int val3, unsigned long long deadline, int *err)
{
	long ret;

	w->sl->fop = fop;
	wd_begin(w, op, uaddr, deadline);
	ret = sys_futex(uaddr, fop, val, tmo, uaddr2, val3);
	*err = ret < 0 ? errno : 0;
	wd_end(w);
	return ret;
}
