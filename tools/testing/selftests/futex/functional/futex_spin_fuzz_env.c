// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: what changes under the words. Their pages, the
 * signals their waiters get, the robust lists the kernel walks, and the
 * private futex hash their queue heads live in.
 */
#include "futex_spin_fuzz.h"

/* ------------------------------------------------------------------ */
/* Pages that come and go under the words                              */

void page_op(struct worker *w)
{
	struct vpage *vp = &P.vp[rnd(&w->rng, NR_VPAGES)];
	int op, err = 0, r = rnd(&w->rng, 3);
	long ret = 0;
	void *p;

	if (pthread_mutex_trylock(&vp->mu))
		return;
	switch (vp->state) {
	case VS_RW:
		op = r == 0 ? OP_MUNMAP : r == 1 ? OP_MPROTECT_RO : OP_DONTNEED;
		break;
	case VS_RO:
		op = r == 0 ? OP_MPROTECT_RW : r == 1 ? OP_MUNMAP : OP_DONTNEED;
		break;
	case VS_UNMAPPED:
		op = OP_MMAP;
		break;
	default:
		pthread_mutex_unlock(&vp->mu);
		return;
	}
	wd_begin(w, op, vp->addr, 0);
	switch (op) {
	case OP_MUNMAP:
		ret = munmap(vp->addr, PAGE);
		if (!ret)
			vp->state = VS_UNMAPPED;
		break;
	case OP_MPROTECT_RO:
	case OP_MPROTECT_RW:
		ret = mprotect(vp->addr, PAGE, op == OP_MPROTECT_RO ?
			       PROT_READ : PROT_READ | PROT_WRITE);
		if (!ret)
			vp->state = op == OP_MPROTECT_RO ? VS_RO : VS_RW;
		break;
	case OP_DONTNEED:
		ret = madvise(vp->addr, PAGE, MADV_DONTNEED);
		break;
	case OP_MMAP:
		if (vp->shared)
			p = mmap(vp->addr, PAGE, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED_NOREPLACE,
				 H->cfg.memfd, vp->off);
		else
			p = mmap(vp->addr, PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_FIXED_NOREPLACE, -1, 0);
		if (p == vp->addr) {
			vp->state = VS_RW;
		} else {
			/* somebody else got the hole: never touch it again */
			ret = -1;
			if (p != MAP_FAILED) {
				munmap(p, PAGE);
				errno = EEXIST;
			}
			vp->state = VS_LOST;
		}
		break;
	}
	err = ret < 0 ? errno : 0;
	wd_end(w);
	pthread_mutex_unlock(&vp->mu);
	account_sys(w, op, -1, 0, 0, 0, ret, err);
}

/* ------------------------------------------------------------------ */
/* Signals and robust list garbage                                     */

void signal_op(struct worker *w)
{
	int sig = chance(&w->rng, 50) ? SIGUSR1 : SIGUSR2, p, t, i, err;
	unsigned int tid = 0;
	pid_t pid = 0;
	long ret;

	/*
	 * Prefer a thread that is inside a syscall right now: a waiter.
	 * Only tgkill(): a stale pid and tid pair cannot hit a stranger.
	 */
	for (i = 0; i < 4; i++) {
		struct slot *sl;

		p = rnd(&w->rng, H->cfg.nprocs);
		t = rnd(&w->rng, H->cfg.nthreads);
		sl = &H->slots[p * MAX_THREADS + t];
		pid = RLOAD(&H->procs[p].pid);
		tid = RLOAD(&H->procs[p].tids[t]);
		if (tid && (RLOAD(&sl->seq) & 1))
			break;
	}
	if (!tid || pid <= 0)
		return;
	if (chance(&w->rng, 10))
		tid = pid;	/* the manager thread */
	wd_begin(w, OP_SIGNAL, NULL, 0);
	ret = syscall(SYS_tgkill, pid, tid, sig);
	err = ret < 0 ? errno : 0;
	wd_end(w);
	account_sys(w, OP_SIGNAL, -1, sig, 0, tid, ret, err);
}

static struct robust_list *garbage_ptr(struct worker *w)
{
	switch (rnd(&w->rng, 5)) {
	case 0:
		return NULL;
	case 1:
		return (struct robust_list *)(1UL << 47);
	case 2:
		return (struct robust_list *)P.none_page;
	case 3:
		return (struct robust_list *)((char *)&w->rl.head.list + 1);
	}
	return (struct robust_list *)P.ro_page;
}

/*
 * Turn our robust list into garbage made of abused words: loops, foreign
 * and unmapped pointers, PI and non-PI entries, odd offsets. Only threads
 * without honest locks do this: the kernel walks it when they die.
 */
void robust_garbage(struct worker *w, int n)
{
	int kind, wid, i, err;
	long ret = 0;

	for (i = 0; i < n; i++) {
		struct aword *aw = pick_aword(w, &kind, &wid);
		struct robust_list *e = &aw->node;

		switch (rnd(&w->rng, 8)) {
		case 0:
			RSTORE(&w->rl.head.list.next, &w->rl.head.list);
			break;
		case 1:
			RSTORE(&w->rl.head.list_op_pending,
			       chance(&w->rng, 50) ? e : garbage_ptr(w));
			break;
		case 2:
			w->rl.head.futex_offset = chance(&w->rng, 70) ? HL_OFFSET :
				(long)rnd(&w->rng, 64) - 32;
			break;
		case 3:
			g_store_ptr(&e->next, e);
			RSTORE(&w->rl.head.list.next, e);
			break;
		case 4:
			g_store_ptr(&e->next, garbage_ptr(w));
			RSTORE(&w->rl.head.list.next, e);
			break;
		case 5:
			/* a bad length must be refused, then register again */
			ret = syscall(SYS_set_robust_list, &w->rl.head,
				      sizeof(w->rl.head) + 1 + rnd(&w->rng, 8));
			err = ret < 0 ? errno : 0;
			account_sys(w, OP_ROBUST_SET, wid, 0, 0, 0, ret, err);
			syscall(SYS_set_robust_list, &w->rl.head,
				sizeof(w->rl.head));
			break;
		default:
			/* prepend, possibly with the PI bit */
			if (g_store_ptr(&e->next, w->rl.head.list.next))
				RSTORE(&w->rl.head.list.next,
				       (struct robust_list *)((unsigned long)e |
							      rnd(&w->rng, 2)));
			/* and make it look like ours, sometimes with waiters */
			if (chance(&w->rng, 50))
				g_store(&aw->word, w->tid |
					(chance(&w->rng, 50) ? FUTEX_WAITERS : 0));
			break;
		}
	}
	account(w, OP_ROBUST_SET, EB_OK, -1, 0, 0, 0, 0, 0);
}

/*
 * Replace the process's private futex hash under everybody's feet, which
 * moves every queue head of its private locks: 2 to 256 slots, and once in
 * a while 0, the global hash for good, after which every other size is
 * refused with EBUSY. Without the private hash (or PR_FUTEX_HASH) EINVAL.
 */
void hash_resize(struct worker *w)
{
	unsigned int slots = chance(&w->rng, 2) ? 0 : 2U << rnd(&w->rng, 8);
	long ret;
	int err;

	ret = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, slots, 0, 0);
	err = ret < 0 ? errno : 0;
	account_sys(w, OP_HASH_RESIZE, -1, slots, 0, 0, ret, err);
	if (ret < 0 && err != EBUSY && err != EINVAL && err != ENOMEM)
		failf(w, CK_RUN, "PR_FUTEX_HASH_SET_SLOTS %u: %s", slots, errname(err));
}
