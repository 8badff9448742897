// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: what every task records. The name of each operation
 * and result, the accounting and the watchdog record of each call, who
 * is alive for the OWNER_DIED check, and the failure records the harness
 * prints.
 */
#include "futex_spin_fuzz.h"

/* ------------------------------------------------------------------ */
/* Operations and result buckets                                      */

const char * const op_names[NR_OPS] = {
	[OP_H_TRYLOCK]		= "h_trylock",
	[OP_H_LOCK]		= "h_lock",
	[OP_H_LOCK_PAST]	= "h_lock_past",
	[OP_H_LOCK_FOREVER]	= "h_lock_forever",
	[OP_H_UNLOCK_FAST]	= "h_unlock_fast",
	[OP_H_UNLOCK]		= "h_unlock",
	[OP_H_RELOCK]		= "h_relock",
	[OP_H_FOREIGN_UNLOCK]	= "h_foreign_unlock",
	[OP_H_BADARGS]		= "h_badargs",
	[OP_A_LOCK]		= "a_lock",
	[OP_A_UNLOCK]		= "a_unlock",
	[OP_A_FAST_LOCK]	= "a_fast_lock",
	[OP_A_FAST_UNLOCK]	= "a_fast_unlock",
	[OP_A_GARBAGE]		= "a_garbage",
	[OP_A_BADADDR]		= "a_badaddr",
	[OP_A_BADARGS]		= "a_badargs",
	[OP_WAIT]		= "wait",
	[OP_WAIT_BITSET]	= "wait_bitset",
	[OP_WAKE]		= "wake",
	[OP_WAKE_OP]		= "wake_op",
	[OP_REQUEUE]		= "requeue",
	[OP_CMP_REQUEUE]	= "cmp_requeue",
	[OP_LOCK_PI]		= "lock_pi",
	[OP_LOCK_PI2]		= "lock_pi2",
	[OP_TRYLOCK_PI]		= "trylock_pi",
	[OP_UNLOCK_PI]		= "unlock_pi",
	[OP_WAIT_REQUEUE_PI]	= "wait_requeue_pi",
	[OP_CMP_REQUEUE_PI]	= "cmp_requeue_pi",
	[OP_WAITV]		= "waitv",
	[OP_F2_WAIT]		= "futex2_wait",
	[OP_F2_WAKE]		= "futex2_wake",
	[OP_MUNMAP]		= "munmap",
	[OP_MMAP]		= "mmap",
	[OP_MPROTECT_RO]	= "mprotect_ro",
	[OP_MPROTECT_RW]	= "mprotect_rw",
	[OP_DONTNEED]		= "madv_dontneed",
	[OP_SIGNAL]		= "signal",
	[OP_ROBUST_SET]		= "robust_garbage",
	[OP_HASH_RESIZE]	= "hash_resize",
	[OP_FORK]		= "fork",
	[OP_EXEC]		= "exec",
	[OP_THREAD_EXIT]	= "thread_exit",
	[OP_H_KILL_WAITER]	= "h_kill_waiter",
	[OP_CHILD_KILL]		= "child_kill",
	[OP_PROC_KILL]		= "proc_sigkill",
	[OP_PROC_STOP]		= "proc_sigstop",
};

static int bucket_of(int err)
{
	switch (err) {
	case 0:			return EB_OK;
	case EPERM:		return EB_EPERM;
	case ESRCH:		return EB_ESRCH;
	case EINTR:		return EB_EINTR;
	case EAGAIN:		return EB_EAGAIN;
	case ENOMEM:		return EB_ENOMEM;
	case EFAULT:		return EB_EFAULT;
	case EINVAL:		return EB_EINVAL;
	case EDEADLK:		return EB_EDEADLK;
	case ETIMEDOUT:		return EB_ETIMEDOUT;
	case EEXIST:		return EB_EEXIST;
	case EOWNERDEAD:	return EB_EOWNERDEAD;
	}
	return err == nosys_errno ? EB_NOSYS : EB_OTHER;
}

const char *bucket_name(int b)
{
	static const int errs[NR_EB] = {
		[EB_EPERM] = EPERM, [EB_ESRCH] = ESRCH, [EB_EINTR] = EINTR,
		[EB_EAGAIN] = EAGAIN, [EB_ENOMEM] = ENOMEM,
		[EB_EFAULT] = EFAULT, [EB_EINVAL] = EINVAL,
		[EB_EDEADLK] = EDEADLK, [EB_ETIMEDOUT] = ETIMEDOUT,
		[EB_EEXIST] = EEXIST, [EB_EOWNERDEAD] = EOWNERDEAD,
	};

	switch (b) {
	case EB_OK:	return "ok";
	case EB_BUSY:	return "busy";
	case EB_SEGV:	return "SIGSEGV";
	case EB_OTHER:	return "other";
	case EB_NOSYS:	return strerrorname_np(nosys_errno);
	}
	return strerrorname_np(errs[b]);
}

const char *errname(int err)
{
	const char *s = err ? strerrorname_np(err) : "0";

	return s ? s : "?";
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */

void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY), n = 0;

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = 0;
}

/* ------------------------------------------------------------------ */
/* Failure records, written by any process, printed by the harness     */

const char * const wkind_names[] = {
	"hs", "hp", "as", "as@alias", "as@cow", "as@ro", "ap", "av", "bad",
	"kl",
};

int fmt_wid(char *b, size_t n, int wid)
{
	if (wid < 0)
		return snprintf(b, n, "-");
	return snprintf(b, n, "%s%d", wkind_names[wid / 1000 % ARRAY_SIZE(wkind_names)],
			wid % 1000);
}

size_t ring_format(struct slot *sl, char *buf, size_t len)
{
	unsigned int pos = RLOAD(&sl->ring_pos), i;
	size_t n = 0;

	n += snprintf(buf + n, len - n, "last operations of tid %u (oldest first):\n",
		      sl->tid);
	for (i = 0; i < RING && n < len - 1; i++) {
		struct ring_ent *e = &sl->ring[(pos + i) % RING];
		char w[24];

		if (!e->t)
			continue;
		fmt_wid(w, sizeof(w), e->wid);
		n += snprintf(buf + n, len - n,
			      "  %9.6f %-16s %-10s op=%#x word %#x -> %#x ret=%d %s\n",
			      (double)(e->t - H->t0) / NSEC,
			      e->op < NR_OPS ? op_names[e->op] : "?", w, e->fop,
			      e->before, e->after, e->ret,
			      e->ret < 0 ? errname(e->err) : "");
	}
	return n < len ? n : len - 1;
}

void failf(struct worker *w, int ck, const char *fmt, ...)
{
	struct fail_rec *rec;
	unsigned int idx;
	va_list ap;
	size_t n;

	ADD(&H->fail_cnt[ck], 1);
	if (ADD(&H->fail_stored[ck], 1) > FAILS_PER_CHECK)
		return;
	idx = ADD(&H->fail_next, 1) - 1;
	if (idx >= MAX_FAILS)
		return;
	rec = &H->fails[idx];
	rec->check = ck;
	va_start(ap, fmt);
	n = vsnprintf(rec->text, FAIL_TEXT, fmt, ap);
	va_end(ap);
	if (n >= FAIL_TEXT)
		n = FAIL_TEXT - 1;
	if (w) {
		n += snprintf(rec->text + n, FAIL_TEXT - n,
			      "\nat %.6f s, proc %d gen %u, slot %d%s, tid %u gid %u\n",
			      (double)(mono_ns() - H->t0) / NSEC, P.slot, P.gen,
			      w->sidx, w->child ? " (fork child)" : "", w->tid,
			      w->gid);
		if (n < FAIL_TEXT - 1)
			n += ring_format(w->sl, rec->text + n, FAIL_TEXT - n);
	}
	if (n >= FAIL_TEXT)
		n = FAIL_TEXT - 1;
	STORE(&rec->len, n ? n : 1);
}

/* ------------------------------------------------------------------ */
/* Accounting, watchdog records                                        */

void account(struct worker *w, int op, int b, int wid, unsigned int fop,
	     unsigned int before, unsigned int after, int ret, int err)
{
	struct slot *sl = w->sl;
	struct ring_ent *e = &sl->ring[sl->ring_pos % RING];

	sl->cnt[op][b]++;
	if (b == EB_OTHER)
		sl->last_other = err;
	e->t = mono_ns();
	e->op = op;
	e->wid = wid;
	e->fop = fop;
	e->before = before;
	e->after = after;
	e->ret = ret;
	e->err = err;
	RSTORE(&sl->ring_pos, sl->ring_pos + 1);
	RSTORE(&sl->ops, sl->ops + 1);
}

/* Account a syscall result: ret < 0 means failed with err. */
void account_sys(struct worker *w, int op, int wid, unsigned int fop,
		 unsigned int before, unsigned int after, long ret,
		 int err)
{
	account(w, op, ret < 0 ? bucket_of(err) : EB_OK, wid, fop, before,
		after, (int)ret, ret < 0 ? err : 0);
}

void wd_begin(struct worker *w, int op, void *uaddr,
	      unsigned long long deadline)
{
	struct slot *sl = w->sl;

	if (op >= OP_MUNMAP)
		sl->fop = 0;	/* not a futex call */
	sl->op = op;
	sl->start = mono_ns();
	sl->deadline = deadline ? deadline : sl->start;
	sl->uaddr = (unsigned long)uaddr;
	sl->stopped0 = RLOAD(&w->pr->stopped_total);
	STORE(&sl->seq, sl->seq + 1);
}

void wd_end(struct worker *w)
{
	RSTORE(&w->sl->hlock, 0);
	STORE(&w->sl->seq, w->sl->seq + 1);
}

/* ------------------------------------------------------------------ */
/* Thread identities: who is alive, for the OWNER_DIED check           */

unsigned int ts_register(unsigned int tid, unsigned int child,
			 unsigned int cslot)
{
	unsigned int gid = ADD(&H->next_gid, 1);
	struct tstate *t = &H->ts[gid % TS_SIZE];

	STORE(&t->gid, 0);
	t->tid = tid;
	t->proc = P.slot;
	t->pgen = P.gen;
	t->child = child;
	t->cslot = cslot;
	STORE(&t->state, TS_ALIVE);
	STORE(&t->gid, gid);
	return gid;
}

void ts_set(unsigned int gid, unsigned int state)
{
	struct tstate *t = &H->ts[gid % TS_SIZE];

	if (gid && LOAD(&t->gid) == gid)
		STORE(&t->state, state);
}

/*
 * True when the thread @gid is dead or about to die: it said so itself,
 * or the harness or an exec doomed its process, or its forker doomed it.
 * A stale table entry counts as dead: that only weakens the check.
 */
bool gid_dead(unsigned int gid)
{
	struct tstate *t = &H->ts[gid % TS_SIZE];
	struct proc_rec *pr;

	if (LOAD(&t->gid) != gid || LOAD(&t->state) != TS_ALIVE)
		return true;
	pr = &H->procs[t->proc];
	if (t->pgen != LOAD(&pr->gen) || LOAD(&pr->doomed))
		return true;
	/* doomed fork children are flagged in their slot */
	return t->child && LOAD(&H->slots[t->cslot].doom) == t->child;
}

void dead_push(unsigned int tid)
{
	if (tid)
		RSTORE(&H->dead_tids[ADD(&H->dead_pos, 1) % DEAD_RING], tid);
}

unsigned int some_live_tid(unsigned long long *r)
{
	struct proc_rec *pr = &H->procs[rnd(r, H->cfg.nprocs)];

	return RLOAD(&pr->tids[rnd(r, H->cfg.nthreads)]);
}

unsigned int some_dead_tid(unsigned long long *r)
{
	return RLOAD(&H->dead_tids[rnd(r, DEAD_RING)]);
}
