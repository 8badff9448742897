// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK: an exclusive lock kept in a futex word.
 * Waiters spin while the lock owner runs on a CPU and sleep, in priority
 * order, while it does not. See Documentation/locking/spinning-futex.rst.
 *
 * The futex word has the layout of a PI futex:
 *
 *   0                           free
 *   WAITERS                     free, the next locker must enter the kernel
 *   TID                         owned by TID, nobody sleeps in the kernel
 *   TID | WAITERS               owned, the unlock must enter the kernel
 *   OWNER_DIED [| WAITERS]      free, the last owner died holding it
 *   TID | OWNER_DIED [| ...]    owned by TID, inherited from a dead owner
 *
 * User space takes a free word with cmpxchg(0 -> TID) and releases it with
 * cmpxchg(TID -> 0); anything else enters the kernel. The kernel changes
 * the word only with cmpxchg and only to:
 *
 *   - take a free word: the caller's TID is or'ed in, WAITERS and
 *     OWNER_DIED are kept (a spinner does this without any lock);
 *   - set WAITERS on an owned word: before a waiter goes to sleep (queue
 *     head lock held), or while a queued waiter past the starvation bound
 *     spins (no lock: a WAITERS bit too many only sends the next unlock
 *     into the kernel); or on a free word, by a sleeper that woke by its
 *     own timer and is not next in line (queue head lock held), so that
 *     the next locker and its unlock enter the kernel;
 *   - release the word on unlock: 0, or the TID of a sleeper that waited
 *     longer than the starvation bound, plus WAITERS if others still sleep.
 *     The queue head lock is held, or, when the key has no queue head, the
 *     hash bucket lock under which a locker would create one. A waiter
 *     killed before it could use the word it took releases it the same
 *     way, keeping OWNER_DIED;
 *   - mark OWNER_DIED when the owner exits with the word on its robust list
 *     (done by the robust list walk, which then calls futex_spin_owner_died()).
 *
 * The invariant that keeps sleepers from being forgotten, under the queue
 * head lock: if the sleeper tree is not empty, then WAITERS is set in the
 * word, or a sleeper has been woken and has not yet looked at the word
 * again (its w->woken). Each such sleeper answers for the others: it
 * takes the word (setting WAITERS if others remain), sets WAITERS before
 * sleeping again, or passes the wakeup on when it gives up.
 *
 * Kernel state: one queue head per futex key, linked into the futex hash
 * bucket (of the process's private hash for a private key, moved with the
 * waiters when that hash is resized) and looked up there under RCU. Each
 * task keeps a reference to the head it used last, so it finds it again
 * without a lookup, and a lock in steady use keeps its head. The reference
 * goes when the task uses another key, execs or exits: there is at most
 * one head per task, and user space can make the kernel keep no more. The
 * bucket lock is held only to link a head, to unlink one whose last
 * reference goes, and to release a word whose key has no head; the
 * sleepers are protected by the head's own lock.
 *
 * Lock order: none. hb->lock and head->lock are never held together; the
 * OSQ and RCU are taken with neither held. A failed cmpxchg of the word is
 * retried only after dropping every lock, as the architecture's futex
 * helpers require.
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/osq_lock.h>
#include <linux/percpu.h>
#include <linux/rbtree_augmented.h>
#include <linux/rculist.h>
#include <linux/refcount.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/wake_q.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "futex.h"

/*
 * The starvation bound. A waiter that has waited longer than this gets the
 * lock handed to it by the next unlock instead of competing with spinners
 * and fast-path lockers, if it is spinning at that moment: the handoff then
 * costs nothing, the new owner runs. A waiter asleep is only woken, to spin
 * with WAITERS set so that the following unlock hands it the lock; after
 * twice the bound it gets the lock even asleep, but a lock is handed to a
 * sleeping task at most once per bound. Handing a lock to a task that is
 * not running leaves it idle for a wakeup; when waiters outnumber CPUs
 * that wakeup takes milliseconds, every waiter past the bound is asleep,
 * and handing to each in turn makes the lock convoy. 5 ms, as the 2016
 * throughput-optimized futex: long enough that few waiters reach it.
 */
#define FUTEX_SPIN_HANDOFF_NS	(5 * NSEC_PER_MSEC)

/*
 * While many tasks sleep on the lock, a waiter that spins is owed the lock
 * sooner: the bound shrinks so that the sleepers get their turns about once
 * per FUTEX_SPIN_TURNOVER_NS, but not below FUTEX_SPIN_SPIN_BOUND_MIN_NS.
 * A task that has not slept yet then queues behind them after as long.
 * Otherwise, when waiters outnumber CPUs, the task that last lost the lock
 * spins while the others sleep, takes the word back at each release, and
 * the lock turns among a few tasks while the sleepers wait their turn.
 * Handing the lock to a spinning task leaves it idle for no wakeup, so
 * this costs sleeps of tasks that would have spun, not throughput; the
 * handoff to a sleeping task keeps its limit of one per bound.
 */
#define FUTEX_SPIN_TURNOVER_NS		(20 * NSEC_PER_MSEC)
#define FUTEX_SPIN_SPIN_BOUND_MIN_NS	(250 * NSEC_PER_USEC)

/*
 * The most one call spins, with preemption off, in all. User space sets
 * the length of the critical section, and a spin ends otherwise only when
 * the owner leaves its CPU or ours is wanted: a long critical section, or
 * two tasks spinning on each other's lock (ABBA), would keep CPUs busy in
 * the kernel for as long. A waiter first in line is handed the lock at the
 * first unlock past its starvation bound (at most 5 ms), so a waiter that
 * has spun for twice that is spinning on an owner that kept the lock for a
 * whole bound: sleeping is right. It still takes a free word when woken.
 */
#define FUTEX_SPIN_SPIN_MAX_NS		(2 * FUTEX_SPIN_HANDOFF_NS)

struct futex_spin_head {
	struct hlist_node	hb_node;
	union futex_key		key;
	/* One per task keeping the head, see futex_spin_head_get() */
	refcount_t		refs;
	struct rcu_head		rcu;

	spinlock_t		lock;		/* protects the sleepers */
	struct rb_root_cached	sleepers;	/* lock */
	u64			arrivals;	/* lock */
	u64			asleep_handoff;	/* lock: when one was last made */
	/* When an unlock last entered the kernel; sleepers' timers read it */
	atomic64_t		served;
	unsigned int		nr_sleepers;	/* lock; spinners read it without */

	struct optimistic_spin_queue osq;
	atomic_t		spinners;
	/*
	 * Handoffs whose waiter has not returned yet: the word is reserved,
	 * and its new owner may be a spinner queued on the OSQ behind the
	 * one polling, which would otherwise spin on it for ever. Written
	 * under lock, read by spinners without it.
	 */
	unsigned int		handing_off;
};

struct futex_spin_waiter {
	struct rb_node		node;
	struct task_struct	*task;
	struct futex_spin_head	*head;
	u32			tid;
	int			prio;		/* head->lock */
	u64			seq;		/* head->lock */
	u64			since;
	u64			spun_ns;	/* in this call, in all */
	/*
	 * Written under head->lock. The waiter reads them without it while
	 * it spins or after a wakeup, and decides under the lock.
	 */
	bool			queued;
	bool			handed;
	bool			spinning;	/* written by the waiter only */
	bool			woken;		/* head->lock; only while queued */
	/* head->lock: a sleeper in this subtree has not been woken */
	bool			unwoken_below;
	/* Wakes the waiter once it is owed a handoff, see futex_spin_due_arm() */
	struct hrtimer		due;
	bool			due_fired;
	enum {
		FUTEX_SPIN_DUE_NONE,
		FUTEX_SPIN_DUE_ARMED,
		FUTEX_SPIN_DUE_FIRED,
	}			due_state;
};

/* How a spin on the owner ended; FUTEX_SPIN_POLLING while it goes on. */
enum futex_spin_outcome {
	FUTEX_SPIN_POLLING,
	FUTEX_SPIN_ACQUIRED,
	FUTEX_SPIN_ABORTED_OWNER,	/* owner off CPU, or the word reserved */
	FUTEX_SPIN_ABORTED_RESCHED,	/* need_resched, signal or deadline */
	FUTEX_SPIN_ABORTED_FAULT,
	FUTEX_SPIN_ABORTED_CAP,		/* enough spinners already */
	FUTEX_SPIN_ABORTED_BOUND,	/* starving, must queue first */
	FUTEX_SPIN_ABORTED_LIMIT,	/* FUTEX_SPIN_SPIN_MAX_NS spun */
	FUTEX_SPIN_NR_OUTCOMES
};

enum futex_spin_stat {
	FUTEX_SPIN_STAT_LOCK_CALLS,
	FUTEX_SPIN_STAT_UNLOCK_CALLS,
	FUTEX_SPIN_STAT_CONTENDED,
	FUTEX_SPIN_STAT_SLEEPS,
	FUTEX_SPIN_STAT_WAKES,
	FUTEX_SPIN_STAT_HANDOFFS,
	FUTEX_SPIN_STAT_TIMEOUTS,
	FUTEX_SPIN_STAT_OWNER_DIED,
	FUTEX_SPIN_STAT_RESPINS,
	FUTEX_SPIN_STAT_SELF_WAKES,
	FUTEX_SPIN_STAT_HEADS_CREATED,
	FUTEX_SPIN_STAT_HEADS_FREED,
	FUTEX_SPIN_STAT_HEADS_MOVED,
	FUTEX_SPIN_NR_STATS
};

static const char * const futex_spin_stat_names[FUTEX_SPIN_NR_STATS] = {
	[FUTEX_SPIN_STAT_LOCK_CALLS]	= "lock_calls",
	[FUTEX_SPIN_STAT_UNLOCK_CALLS]	= "unlock_calls",
	[FUTEX_SPIN_STAT_CONTENDED]	= "contended",
	[FUTEX_SPIN_STAT_SLEEPS]	= "sleeps",
	[FUTEX_SPIN_STAT_WAKES]		= "wakes",
	[FUTEX_SPIN_STAT_HANDOFFS]	= "handoffs",
	[FUTEX_SPIN_STAT_TIMEOUTS]	= "timeouts",
	[FUTEX_SPIN_STAT_OWNER_DIED]	= "owner_died",
	[FUTEX_SPIN_STAT_RESPINS]	= "respins",
	[FUTEX_SPIN_STAT_SELF_WAKES]	= "self_wakes",
	[FUTEX_SPIN_STAT_HEADS_CREATED]	= "heads_created",
	[FUTEX_SPIN_STAT_HEADS_FREED]	= "heads_freed",
	[FUTEX_SPIN_STAT_HEADS_MOVED]	= "heads_moved",
};

static const char * const futex_spin_outcome_names[FUTEX_SPIN_NR_OUTCOMES] = {
	[FUTEX_SPIN_ACQUIRED]		= "spin_acquired",
	[FUTEX_SPIN_ABORTED_OWNER]	= "spin_aborted_owner",
	[FUTEX_SPIN_ABORTED_RESCHED]	= "spin_aborted_resched",
	[FUTEX_SPIN_ABORTED_FAULT]	= "spin_aborted_fault",
	[FUTEX_SPIN_ABORTED_CAP]	= "spin_aborted_cap",
	[FUTEX_SPIN_ABORTED_BOUND]	= "spin_aborted_bound",
	[FUTEX_SPIN_ABORTED_LIMIT]	= "spin_aborted_limit",
};

/* Per CPU, so that counting does not add a shared cache line to the hot path. */
static DEFINE_PER_CPU(unsigned long, futex_spin_stats[FUTEX_SPIN_NR_STATS]);
static DEFINE_PER_CPU(unsigned long, futex_spin_outcomes[FUTEX_SPIN_NR_OUTCOMES]);
static struct kmem_cache *futex_spin_head_cache;

static void futex_spin_count(enum futex_spin_stat stat)
{
	this_cpu_inc(futex_spin_stats[stat]);
}

/* After the enums: the spin_aborted event prints the outcome by name. */
#define CREATE_TRACE_POINTS
#include <trace/events/futex_spin.h>

/*
 * Queue heads. A task keeps a reference to the head it used last, in
 * current->futex.spin_head, like the spare pi_state it keeps: the next
 * operation on the same futex finds it there with no lookup and no atomic
 * operation, and a lock in steady use keeps its head rather than creating
 * and freeing one per contended burst. The reference goes when the task
 * uses another futex, execs or exits (futex_spin_cleanup()).
 *
 * Other tasks find a head under RCU, taking a reference only while it has
 * one. Its last reference goes under the bucket lock, which unlinks it in
 * the same critical section, so under that lock every linked head is live.
 * Allocating before taking the bucket lock keeps GFP_KERNEL allocations
 * out of it: other futex operations on unrelated keys share it.
 *
 * A head lives in the bucket its key hashes to, in the process's private
 * hash for a private key. Every lookup, link and unlink holds a reference
 * on that hash (CLASS(hbr)), so the hash is not replaced meanwhile, and a
 * replacement moves the heads with the waiters (futex_spin_rehash()). A
 * head holds no reference on the hash: a task keeping one would otherwise
 * stall every resize until it used another futex.
 */
static struct futex_spin_head *futex_spin_head_find(struct futex_hash_bucket *hb,
						    union futex_key *key)
{
	struct futex_spin_head *head;

	hlist_for_each_entry_rcu(head, &hb->spin_heads, hb_node,
				 lockdep_is_held(&hb->lock)) {
		if (futex_match(&head->key, key) && refcount_inc_not_zero(&head->refs))
			return head;
	}
	return NULL;
}

static struct futex_spin_head *futex_spin_head_lookup(union futex_key *key)
{
	CLASS(hbr, hbr)(key);

	guard(rcu)();
	return futex_spin_head_find(hbr.hb, key);
}

/*
 * A process gets its private hash when it first shares its mm (clone with
 * CLONE_VM), and the first one is not rehashed from the global hash: the
 * process was alone, nobody could wait. A head would be, so a private key
 * gets its head only once the process has its private hash, as io_uring
 * does for its futexes.
 */
static int futex_spin_private_hash(union futex_key *key)
{
	if (!futex_key_is_private(key))
		return 0;
	return futex_hash_allocate_default();
}

static struct futex_spin_head *futex_spin_head_alloc(union futex_key *key)
{
	struct futex_spin_head *head;

	head = kmem_cache_zalloc(futex_spin_head_cache, GFP_KERNEL);
	if (!head)
		return NULL;
	head->key = *key;
	refcount_set(&head->refs, 1);
	spin_lock_init(&head->lock);
	head->sleepers = RB_ROOT_CACHED;
	osq_lock_init(&head->osq);
	return head;
}

/* Link a new head for @key, unless another task linked one meanwhile. */
static struct futex_spin_head *futex_spin_head_create(union futex_key *key)
{
	struct futex_spin_head *head, *spare;
	struct futex_hash_bucket *hb;
	int ret;

	ret = futex_spin_private_hash(key);
	if (ret)
		return ERR_PTR(ret);
	spare = futex_spin_head_alloc(key);
	if (!spare)
		return ERR_PTR(-ENOMEM);

	CLASS(hbr, hbr)(key);
	hb = hbr.hb;
	spin_lock(&hb->lock);
	head = futex_spin_head_find(hb, key);
	if (!head) {
		head = spare;
		spare = NULL;
		hlist_add_head_rcu(&head->hb_node, &hb->spin_heads);
		futex_spin_count(FUTEX_SPIN_STAT_HEADS_CREATED);
	}
	spin_unlock(&hb->lock);

	if (spare)
		kmem_cache_free(futex_spin_head_cache, spare);
	return head;
}

static void futex_spin_head_free(struct rcu_head *rcu)
{
	kmem_cache_free(futex_spin_head_cache,
			container_of(rcu, struct futex_spin_head, rcu));
}

static void futex_spin_head_put(struct futex_spin_head *head)
{
	CLASS(hbr, hbr)(&head->key);

	if (!refcount_dec_and_lock(&head->refs, &hbr.hb->lock))
		return;
	hlist_del_rcu(&head->hb_node);
	spin_unlock(&hbr.hb->lock);
	futex_spin_count(FUTEX_SPIN_STAT_HEADS_FREED);

	WARN_ON_ONCE(!RB_EMPTY_ROOT(&head->sleepers.rb_root));
	call_rcu(&head->rcu, futex_spin_head_free);
}

#ifdef CONFIG_FUTEX_PRIVATE_HASH
/*
 * The private hash is being replaced, futex_rehash_private() holds the
 * lock of its bucket @old: move the heads linked there to the buckets of
 * @new. Nobody holds a reference on the old hash any more, so no lookup
 * walks @old, and @new is not published yet; when @new is the global hash
 * (no slots), lookups of other processes walk its buckets under RCU.
 */
void futex_spin_rehash(struct futex_hash_bucket *old,
		       struct futex_private_hash *new)
{
	struct futex_spin_head *head;
	struct hlist_node *tmp;

	lockdep_assert_held(&old->lock);
	hlist_for_each_entry_safe(head, tmp, &old->spin_heads, hb_node) {
		struct futex_hash_bucket *hb = futex_rehash_bucket(&head->key, new);

		hlist_del_rcu(&head->hb_node);
		spin_lock_nested(&hb->lock, SINGLE_DEPTH_NESTING);
		hlist_add_head_rcu(&head->hb_node, &hb->spin_heads);
		spin_unlock(&hb->lock);
		futex_spin_count(FUTEX_SPIN_STAT_HEADS_MOVED);
	}
}
#endif

/* @head, referenced, becomes the one current keeps. */
static void futex_spin_head_keep(struct futex_spin_head *head)
{
	struct futex_spin_head *old = current->futex.spin_head;

	current->futex.spin_head = head;
	if (old)
		futex_spin_head_put(old);
}

/*
 * The head of @key, kept by current from now on; NULL if there is none
 * and !@create. The caller needs no reference of its own: only current
 * drops the one it keeps.
 */
static struct futex_spin_head *futex_spin_head_get(union futex_key *key, bool create)
{
	struct futex_spin_head *head = current->futex.spin_head;

	if (head && futex_match(&head->key, key))
		return head;

	head = futex_spin_head_lookup(key);
	if (!head && create)
		head = futex_spin_head_create(key);
	if (!IS_ERR_OR_NULL(head))
		futex_spin_head_keep(head);
	return head;
}

/* @tsk exits or execs: it keeps no head any more. */
void futex_spin_cleanup(struct task_struct *tsk)
{
	struct futex_spin_head *head = tsk->futex.spin_head;

	if (!head)
		return;
	tsk->futex.spin_head = NULL;
	futex_spin_head_put(head);
}

/*
 * Sleepers: real-time tasks first, by priority; everybody else in arrival
 * order. Nice levels do not order lock waiters: they share CPU time, and
 * FIFO among normal tasks is what bounds their wait. The priority is the
 * one the waiter had when it last went to sleep: nothing tells a lock
 * without priority inheritance that a sleeping task's priority changed.
 */
static int futex_spin_prio(struct task_struct *p)
{
	return p->prio < MAX_RT_PRIO ? p->prio : MAX_RT_PRIO;
}

static bool futex_spin_waiter_less(struct rb_node *a, const struct rb_node *b)
{
	struct futex_spin_waiter *wa = rb_entry(a, struct futex_spin_waiter, node);
	struct futex_spin_waiter *wb = rb_entry(b, struct futex_spin_waiter, node);

	if (wa->prio != wb->prio)
		return wa->prio < wb->prio;
	return wa->seq < wb->seq;
}

static struct futex_spin_waiter *futex_spin_waiter_of(struct rb_node *node)
{
	return rb_entry_safe(node, struct futex_spin_waiter, node);
}

static struct futex_spin_waiter *futex_spin_first_sleeper(struct futex_spin_head *head)
{
	return futex_spin_waiter_of(rb_first_cached(&head->sleepers));
}

/*
 * Woken sleepers pile up when waiters outnumber CPUs, and a task that
 * cannot run (a throttled cgroup) stays woken for as long as it likes: the
 * tree keeps, per subtree, whether it holds a sleeper not woken yet, so
 * that finding the first one does not walk past the others.
 */
static bool futex_spin_unwoken(struct futex_spin_waiter *w)
{
	return !w->woken;
}

RB_DECLARE_CALLBACKS_MAX(static, futex_spin_unwoken_cb, struct futex_spin_waiter,
			 node, bool, unwoken_below, futex_spin_unwoken);

/* The first sleeper that nobody woke since it last went to sleep. */
static struct futex_spin_waiter *futex_spin_first_unwoken(struct futex_spin_head *head)
{
	struct futex_spin_waiter *w = futex_spin_waiter_of(head->sleepers.rb_root.rb_node);

	if (!w || !w->unwoken_below)
		return NULL;
	/* Each step stays in a subtree that holds one. */
	for (;;) {
		struct futex_spin_waiter *left = futex_spin_waiter_of(w->node.rb_left);

		if (left && left->unwoken_below)
			w = left;
		else if (!w->woken)
			return w;
		else
			w = futex_spin_waiter_of(w->node.rb_right);
	}
}

static void futex_spin_set_woken(struct futex_spin_waiter *w, bool woken)
{
	w->woken = woken;
	if (w->queued)
		futex_spin_unwoken_cb.propagate(&w->node, NULL);
}

/*
 * Queue @w, or move it if its priority changed since it last slept. It
 * keeps its arrival number, and with it its place among equals.
 */
static void futex_spin_sleeper_add(struct futex_spin_head *head,
				   struct futex_spin_waiter *w)
{
	int prio = futex_spin_prio(current);

	if (w->queued) {
		if (w->prio == prio)
			return;
		rb_erase_augmented_cached(&w->node, &head->sleepers,
					  &futex_spin_unwoken_cb);
	} else {
		w->seq = head->arrivals++;
		WRITE_ONCE(head->nr_sleepers, head->nr_sleepers + 1);
		WRITE_ONCE(w->queued, true);
		futex_spin_count(FUTEX_SPIN_STAT_CONTENDED);
		trace_futex_spin_contended(&head->key, w->tid);
	}
	w->prio = prio;
	w->unwoken_below = futex_spin_unwoken(w);
	rb_add_augmented_cached(&w->node, &head->sleepers, futex_spin_waiter_less,
				&futex_spin_unwoken_cb);
}

static void futex_spin_sleeper_del(struct futex_spin_head *head,
				   struct futex_spin_waiter *w)
{
	if (w->queued) {
		rb_erase_augmented_cached(&w->node, &head->sleepers,
					  &futex_spin_unwoken_cb);
		WRITE_ONCE(head->nr_sleepers, head->nr_sleepers - 1);
		WRITE_ONCE(w->queued, false);
	}
	w->woken = false;
}

static bool futex_spin_has_sleepers_besides(struct futex_spin_head *head,
					    struct futex_spin_waiter *w)
{
	struct rb_node *first = rb_first_cached(&head->sleepers);

	if (!first)
		return false;
	return !w->queued || first != &w->node || rb_next(first);
}

/*
 * The sleeper next in line for the lock: the first, unless it was woken
 * and has not come back to the word (it is not spinning). Such a task may
 * not get a CPU for long, and the lock would stay idle as long as it does
 * not run: it is passed over for the first sleeper not woken. Once it
 * spins, it is first in line again.
 */
static struct futex_spin_waiter *futex_spin_next_in_line(struct futex_spin_head *head)
{
	struct futex_spin_waiter *w = futex_spin_first_sleeper(head);

	if (w && w->woken && !READ_ONCE(w->spinning))
		w = futex_spin_first_unwoken(head);
	return w;
}

/*
 * May @w take a free word now? A newcomer competes with everybody, and a
 * sleeper woken by an unlock holds the duty of looking at the word. A
 * sleeper that woke by itself (see futex_spin_due_arm()) only marks the
 * word for the kernel, unless it is next in line: taking it would jump
 * the queue of sleepers woken in order.
 */
static bool futex_spin_may_take(struct futex_spin_head *head,
				struct futex_spin_waiter *w)
{
	return !w->queued || w->woken || futex_spin_next_in_line(head) == w;
}

/*
 * Wake the first sleeper not woken yet, which then answers for the WAITERS
 * bit. Sleepers woken earlier that have not run yet do not hold back the
 * others: when waiters outnumber CPUs a woken task can wait for a CPU
 * longer than the lock is held many times over, and a queue that is served
 * one wakeup at a time falls behind the tasks that take the word in user
 * space and never sleep, which then get nearly all of it. An unlock enters
 * the kernel only when WAITERS is set, that is once per sleep or per
 * acquisition by a sleeper with others behind it, so the sleepers are
 * woken as fast as they queue, and no faster. A higher priority sleeper
 * that queued since is first in the tree and so the next one woken.
 */
static bool futex_spin_wake_first(struct futex_spin_head *head,
				  struct wake_q_head *wake_q)
{
	struct futex_spin_waiter *w = futex_spin_first_unwoken(head);

	if (!w)
		return false;
	futex_spin_set_woken(w, true);
	wake_q_add(wake_q, w->task);
	futex_spin_count(FUTEX_SPIN_STAT_WAKES);
	trace_futex_spin_wake(&head->key, w->tid);
	return true;
}

/*
 * @w stops waiting without the lock. If it was woken, the duty of looking
 * at the word passes to the next sleeper.
 */
static void futex_spin_waiter_leave(struct futex_spin_head *head,
				    struct futex_spin_waiter *w,
				    struct wake_q_head *wake_q)
{
	bool was_woken = w->woken;

	futex_spin_sleeper_del(head, w);
	if (was_woken)
		futex_spin_wake_first(head, wake_q);
}

/*
 * Change the word from @uval to @nval, once. Returns 0 when it did,
 * -EAGAIN when the word held something else or the architecture asks for
 * a retry, -EFAULT on a fault. Page faults are disabled. A caller holding
 * a spinlock drops it before trying again: on LL/SC architectures the
 * helper gives up after a bounded number of attempts precisely so that
 * nobody loops with a lock held while another CPU keeps writing the word.
 */
static int futex_spin_cmpxchg(u32 __user *uaddr, u32 uval, u32 nval)
{
	u32 curval;
	int ret;

	if (futex_spin_inject_eagain())
		return -EAGAIN;
	ret = futex_cmpxchg_value_locked(&curval, uaddr, uval, nval);
	if (ret)
		return ret;
	return curval == uval ? 0 : -EAGAIN;
}

/*
 * Take the word if it is free and @may_take, else make sure WAITERS is set
 * so that the owner's unlock, or the next locker of a free word, enters
 * the kernel. Called with head->lock held. Returns 1 when the caller now
 * owns the word, 0 when it may sleep, or -EAGAIN / -EFAULT / -EDEADLK.
 */
static int futex_spin_take_or_mark(struct futex_spin_head *head,
				   struct futex_spin_waiter *w, u32 __user *uaddr,
				   bool may_take)
{
	u32 uval, nval;
	bool taking;
	int ret;

	ret = futex_get_value_locked(&uval, uaddr);
	if (ret)
		return ret;
	if ((uval & FUTEX_TID_MASK) == w->tid)
		return -EDEADLK;

	taking = !(uval & FUTEX_TID_MASK) && may_take;
	if (taking) {
		nval = uval | w->tid;
		if (futex_spin_has_sleepers_besides(head, w))
			nval |= FUTEX_WAITERS;
	} else {
		if (uval & FUTEX_WAITERS)
			return 0;
		nval = uval | FUTEX_WAITERS;
	}

	ret = futex_spin_cmpxchg(uaddr, uval, nval);
	if (ret)
		return ret;
	return taking;
}

/* The starvation bound of a spinning waiter, see FUTEX_SPIN_TURNOVER_NS. */
static u64 futex_spin_spinning_bound(struct futex_spin_head *head)
{
	unsigned int sleepers = READ_ONCE(head->nr_sleepers);
	u64 bound = FUTEX_SPIN_TURNOVER_NS / max(sleepers, 1U);

	return clamp_t(u64, bound, FUTEX_SPIN_SPIN_BOUND_MIN_NS,
		       FUTEX_SPIN_HANDOFF_NS);
}

/*
 * PREEMPT_RT: waiters do not spin. The spin runs with preemption off for
 * as long as user space keeps the lock, up to FUTEX_SPIN_SPIN_MAX_NS, and
 * an RT kernel bounds its non-preemptible sections by what the kernel
 * does, not by what a user program does; its own sleeping locks spin
 * preemptibly, on the rtmutex. Sleeping is the whole contract, spinning
 * only a guess, so the operations stay the same.
 */
#if defined(CONFIG_LOCK_SPIN_ON_OWNER) && !defined(CONFIG_PREEMPT_RT)
/*
 * Optimistic spinning: while the owner runs on a CPU its critical section is
 * likely short, and polling the word is cheaper than a sleep and a wakeup.
 * The OSQ lets only one task poll the word and try the cmpxchg; the others
 * spin on their own per-CPU node. Spinning is only a guess about the
 * future: when it is wrong, the task sleeps and nothing else depends on it.
 *
 * At most one task less than there are CPUs spins per lock: the owner needs
 * a CPU to finish, and a spinner beyond that only burns time.
 */
static bool futex_spin_allowed(struct futex_spin_head *head)
{
	return atomic_inc_return(&head->spinners) < num_online_cpus();
}

static bool futex_spin_should_stop(struct hrtimer_sleeper *to)
{
	return need_resched() || signal_pending(current) || (to && !to->task);
}

/*
 * A spinner only wins the word in the gap between the owner's unlock and
 * its next lock, and an owner that relocks at once keeps that gap tiny;
 * while waiters spin, WAITERS is clear and unlocks stay in user space. So
 * past the starvation bound a spinner sets WAITERS, for the next unlock to
 * enter the kernel and hand it the lock. Only a sleeper can be handed the
 * lock: a waiter not yet in the tree goes there first.
 */
static bool futex_spin_waited_too_long(struct futex_spin_head *head,
				       struct futex_spin_waiter *w, u64 now)
{
	return now - w->since > futex_spin_spinning_bound(head);
}

struct futex_spin_poll {
	struct task_struct	*owner;
	u32			owner_tid;
	unsigned int		loops;
	bool			starving;
	u64			start;
};

/* One look at the word by the task at the head of the OSQ. */
static enum futex_spin_outcome futex_spin_poll_word(struct futex_spin_head *head,
						    struct futex_spin_waiter *w,
						    u32 __user *uaddr,
						    struct futex_spin_poll *p)
{
	u32 uval;
	int ret;

	if (READ_ONCE(head->handing_off))
		return FUTEX_SPIN_ABORTED_OWNER;
	if (futex_get_value_locked(&uval, uaddr))
		return FUTEX_SPIN_ABORTED_FAULT;

	if (!(uval & FUTEX_TID_MASK)) {
		ret = futex_spin_cmpxchg(uaddr, uval, uval | w->tid);
		if (ret == -EFAULT)
			return FUTEX_SPIN_ABORTED_FAULT;
		return ret ? FUTEX_SPIN_POLLING : FUTEX_SPIN_ACQUIRED;
	}
	/* Handed over to us, or a forged word: the locked path decides. */
	if ((uval & FUTEX_TID_MASK) == w->tid)
		return FUTEX_SPIN_ABORTED_OWNER;

	if ((uval & FUTEX_TID_MASK) != p->owner_tid) {
		p->owner_tid = uval & FUTEX_TID_MASK;
		p->owner = find_task_by_vpid(p->owner_tid);
	}
	if (!p->owner || !owner_on_cpu(p->owner))
		return FUTEX_SPIN_ABORTED_OWNER;

	/* Reading the clock costs more than a poll of the word. */
	if (!(++p->loops % 64)) {
		u64 now = ktime_get_ns();

		if (w->spun_ns + now - p->start > FUTEX_SPIN_SPIN_MAX_NS)
			return FUTEX_SPIN_ABORTED_LIMIT;
		if (!p->starving)
			p->starving = futex_spin_waited_too_long(head, w, now);
	}
	if (p->starving) {
		if (!READ_ONCE(w->queued))
			return FUTEX_SPIN_ABORTED_BOUND;
		if (!(uval & FUTEX_WAITERS)) {
			ret = futex_spin_cmpxchg(uaddr, uval, uval | FUTEX_WAITERS);
			if (ret == -EFAULT)
				return FUTEX_SPIN_ABORTED_FAULT;
		}
	}
	cpu_relax();
	return FUTEX_SPIN_POLLING;
}

/* Poll the word from the head of the OSQ until it is taken or not worth it. */
static enum futex_spin_outcome futex_spin_osq(struct futex_spin_head *head,
					      struct futex_spin_waiter *w,
					      u32 __user *uaddr,
					      struct hrtimer_sleeper *to,
					      bool starving, u64 start)
{
	enum futex_spin_outcome why = FUTEX_SPIN_ABORTED_RESCHED;
	struct futex_spin_poll poll = { .starving = starving, .start = start };

	if (!osq_lock(&head->osq))
		return why;

	WRITE_ONCE(w->spinning, true);
	rcu_read_lock();
	while (!futex_spin_should_stop(to)) {
		why = futex_spin_poll_word(head, w, uaddr, &poll);
		if (why != FUTEX_SPIN_POLLING)
			break;
		why = FUTEX_SPIN_ABORTED_RESCHED;
	}
	rcu_read_unlock();
	WRITE_ONCE(w->spinning, false);
	osq_unlock(&head->osq);
	return why;
}

static enum futex_spin_outcome futex_spin_try_spin(struct futex_spin_head *head,
						   struct futex_spin_waiter *w,
						   u32 __user *uaddr,
						   struct hrtimer_sleeper *to)
{
	u64 start = ktime_get_ns();
	bool starving = futex_spin_waited_too_long(head, w, start);
	enum futex_spin_outcome why = FUTEX_SPIN_ABORTED_CAP;

	if (w->spun_ns >= FUTEX_SPIN_SPIN_MAX_NS)
		return FUTEX_SPIN_ABORTED_LIMIT;
	if (starving && !READ_ONCE(w->queued))
		return FUTEX_SPIN_ABORTED_BOUND;
	/*
	 * Counted as a spinner only while preemption is off: a task preempted
	 * in between would keep its place while it does not run, and the
	 * task that preempted it would sleep instead of spinning.
	 */
	preempt_disable();
	if (futex_spin_allowed(head))
		why = futex_spin_osq(head, w, uaddr, to, starving, start);
	atomic_dec(&head->spinners);
	preempt_enable();
	w->spun_ns += ktime_get_ns() - start;
	return why;
}

static enum futex_spin_outcome futex_spin_on_owner(struct futex_spin_head *head,
						   struct futex_spin_waiter *w,
						   u32 __user *uaddr,
						   struct hrtimer_sleeper *to)
{
	enum futex_spin_outcome why = futex_spin_try_spin(head, w, uaddr, to);

	this_cpu_inc(futex_spin_outcomes[why]);
	if (why == FUTEX_SPIN_ACQUIRED)
		trace_futex_spin_spin_acquired(&head->key, w->tid);
	else
		trace_futex_spin_spin_aborted(&head->key, why);
	return why;
}
#else
/*
 * Without a CPU for the owner to run on meanwhile, spinning cannot pay;
 * on PREEMPT_RT, see above.
 */
static enum futex_spin_outcome futex_spin_on_owner(struct futex_spin_head *head,
						   struct futex_spin_waiter *w,
						   u32 __user *uaddr,
						   struct hrtimer_sleeper *to)
{
	return FUTEX_SPIN_ABORTED_CAP;
}
#endif /* CONFIG_LOCK_SPIN_ON_OWNER && !CONFIG_PREEMPT_RT */

/*
 * A woken sleeper took the word by spinning: it leaves the tree and, if
 * others still sleep there, sets WAITERS for them, a duty it held as the
 * woken sleeper. The word is ours, so only WAITERS can change under us.
 */
static void futex_spin_taken_fixup(struct futex_spin_head *head,
				   struct futex_spin_waiter *w, u32 __user *uaddr)
{
	DEFINE_WAKE_Q(wake_q);
	u32 uval;
	int ret;

	for (;;) {
		spin_lock(&head->lock);
		ret = futex_get_value_locked(&uval, uaddr);
		if (!ret && !(uval & FUTEX_WAITERS) &&
		    futex_spin_has_sleepers_besides(head, w))
			ret = futex_spin_cmpxchg(uaddr, uval, uval | FUTEX_WAITERS);
		/* Until WAITERS is set, our wakeup answers for the others. */
		if (!ret)
			futex_spin_sleeper_del(head, w);
		spin_unlock(&head->lock);

		if (ret == -EAGAIN)
			cond_resched();
		else if (ret != -EFAULT || fault_in_user_writeable(uaddr))
			break;
	}
	if (!ret)
		return;
	/*
	 * The page is gone for good: the word stays ours, nobody can unlock
	 * it, and the sleepers leave by their deadlines, each passing the
	 * wakeup on as we do.
	 */
	spin_lock(&head->lock);
	futex_spin_waiter_leave(head, w, &wake_q);
	spin_unlock(&head->lock);
	wake_up_q(&wake_q);
}

/*
 * A waiter that cannot take the word now sleeps, unless its deadline has
 * passed or a signal is pending.
 */
static int futex_spin_may_sleep(struct futex_spin_head *head,
				struct futex_spin_waiter *w,
				struct hrtimer_sleeper *to)
{
	if (to && !to->task) {
		futex_spin_count(FUTEX_SPIN_STAT_TIMEOUTS);
		trace_futex_spin_timeout(&head->key, w->tid);
		return -ETIMEDOUT;
	}
	/* Run the handler, then restart with the same deadline. */
	if (signal_pending(current))
		return -ERESTARTNOINTR;
	return 0;
}

/*
 * A handoff made the word ours: the reservation it made ends here.
 * Called with head->lock held.
 */
static bool futex_spin_take_handed(struct futex_spin_head *head,
				   struct futex_spin_waiter *w)
{
	if (!w->handed)
		return false;
	WRITE_ONCE(head->handing_off, head->handing_off - 1);
	return true;
}

/*
 * One decision under the head lock: does the caller own the word, must it
 * sleep, or does it leave? Returns 1 when it owns the word, 0 when it is
 * queued with its task state set to sleep, -EAGAIN when it must look again
 * after dropping the lock, -EFAULT when it must fault the page in first,
 * or the error with which it left the queue. Across -EAGAIN and -EFAULT a
 * queued waiter stays queued: a fault in user space's page tables must
 * not cost it its place in line.
 *
 * A task being killed takes nothing: it would die owning the word.
 */
static int futex_spin_lock_locked(struct futex_spin_head *head,
				  struct futex_spin_waiter *w,
				  u32 __user *uaddr, struct hrtimer_sleeper *to,
				  bool gave_way)
{
	DEFINE_WAKE_Q(wake_q);
	int ret;

	spin_lock(&head->lock);
	if (futex_spin_take_handed(head, w)) {
		ret = 1;
	} else if (fatal_signal_pending(current)) {
		ret = -EINTR;
	} else {
		ret = futex_spin_take_or_mark(head, w, uaddr,
					      futex_spin_may_take(head, w));
		/*
		 * Not taken: past the deadline or with a signal pending the
		 * waiter leaves, also when another task keeps changing the
		 * word under its cmpxchg.
		 */
		if (!ret || ret == -EAGAIN)
			ret = futex_spin_may_sleep(head, w, to) ?: ret;
	}

	if (ret == 1) {
		futex_spin_sleeper_del(head, w);
	} else if (!ret) {
		/*
		 * Giving way, it was not queued yet, so the first sleeper is
		 * another task: woken now, it spins in our place instead of
		 * our CPU idling while the owner runs. Whatever else may be
		 * runnable here says nothing about that; a kthread runs for
		 * a moment and the CPU idles all the same.
		 */
		if (gave_way)
			futex_spin_wake_first(head, &wake_q);
		futex_spin_sleeper_add(head, w);
		/* Looking at the word again was the duty of its wakeup. */
		futex_spin_set_woken(w, false);
		set_current_state(TASK_INTERRUPTIBLE);
	} else if (ret != -EAGAIN && ret != -EFAULT) {
		futex_spin_waiter_leave(head, w, &wake_q);
	}
	spin_unlock(&head->lock);
	wake_up_q(&wake_q);
	return ret;
}

/*
 * The word's page cannot be faulted in: @w leaves the queue it kept across
 * the fault, unless an unlock handed it the lock meanwhile. Returns 0 when
 * the word is ours, else @err.
 */
static int futex_spin_fault_leave(struct futex_spin_head *head,
				  struct futex_spin_waiter *w, int err)
{
	DEFINE_WAKE_Q(wake_q);

	spin_lock(&head->lock);
	if (futex_spin_take_handed(head, w))
		err = 0;
	else
		futex_spin_waiter_leave(head, w, &wake_q);
	spin_unlock(&head->lock);
	wake_up_q(&wake_q);
	return err;
}

static bool futex_spin_timer_fired(struct hrtimer_sleeper *t)
{
	return t && !t->task;
}

/*
 * The first sleeper is handed the lock asleep by an unlock that enters the
 * kernel, and an unlock enters the kernel only while WAITERS is set. The
 * unlock that wakes a sleeper clears it, and the woken sleeper sets it
 * again when it looks at the word: until then every other lock and unlock
 * may stay in user space. If that sleeper does not get a CPU (SCHED_IDLE
 * beside a busy task, a throttled cgroup), nothing would enter the kernel
 * to serve the sleepers behind it. So a sleeper whose wait reaches the
 * asleep handoff's bound wakes itself, once, to set WAITERS or take the
 * word. One timer per waiter that sleeps at all, started only when it
 * first goes to sleep before that bound.
 *
 * While unlocks do enter the kernel they serve the sleepers in order, and
 * waking would only cost the sleeper a context switch and the next locker
 * and unlocker a system call each. When waiters outnumber CPUs that is
 * most sleepers, for most of them wait that long. So the timer wakes the
 * sleeper only once no unlock has entered the kernel for a whole bound,
 * and otherwise moves on to a bound after the last one.
 */
static enum hrtimer_restart futex_spin_due_expired(struct hrtimer *t)
{
	struct futex_spin_waiter *w = container_of(t, struct futex_spin_waiter, due);
	u64 next = atomic64_read(&w->head->served) + 2 * FUTEX_SPIN_HANDOFF_NS;

	if (next > ktime_to_ns(hrtimer_cb_get_time(t))) {
		hrtimer_set_expires(t, ns_to_ktime(next));
		return HRTIMER_RESTART;
	}
	WRITE_ONCE(w->due_fired, true);
	wake_up_process(w->task);
	return HRTIMER_NORESTART;
}

static void futex_spin_due_arm(struct futex_spin_head *head,
			       struct futex_spin_waiter *w)
{
	u64 due = w->since + 2 * FUTEX_SPIN_HANDOFF_NS;

	if (w->due_state != FUTEX_SPIN_DUE_NONE || due <= ktime_get_ns())
		return;
	w->head = head;
	w->due_fired = false;
	hrtimer_setup_on_stack(&w->due, futex_spin_due_expired, CLOCK_MONOTONIC,
			       HRTIMER_MODE_ABS_HARD);
	hrtimer_start(&w->due, ns_to_ktime(due), HRTIMER_MODE_ABS_HARD);
	w->due_state = FUTEX_SPIN_DUE_ARMED;
}

static void futex_spin_due_cancel(struct futex_spin_waiter *w)
{
	if (w->due_state == FUTEX_SPIN_DUE_NONE)
		return;
	hrtimer_cancel(&w->due);
	destroy_hrtimer_on_stack(&w->due);
}

static bool futex_spin_due_fired(struct futex_spin_waiter *w)
{
	return w->due_state == FUTEX_SPIN_DUE_ARMED && READ_ONCE(w->due_fired);
}

/* Returns true when the waiter woke by its own timer, not by an unlock. */
static bool futex_spin_sleep(struct futex_spin_head *head,
			     struct futex_spin_waiter *w,
			     struct hrtimer_sleeper *to)
{
	bool due;

	futex_spin_count(FUTEX_SPIN_STAT_SLEEPS);
	trace_futex_spin_sleep(&head->key, w->tid);
	futex_spin_due_arm(head, w);
	/*
	 * A timer may have fired since the check under the lock, while we
	 * were still running: look again now that our state is set, or its
	 * wakeup is lost. A signal needs no such care, schedule() returns at
	 * once for a pending one.
	 */
	if (!futex_spin_timer_fired(to) && !futex_spin_due_fired(w))
		schedule();
	__set_current_state(TASK_RUNNING);
	due = futex_spin_due_fired(w);
	if (due)
		w->due_state = FUTEX_SPIN_DUE_FIRED;
	futex_spin_stall(FUTEX_SPIN_STALL_WOKEN);
	if (!due || READ_ONCE(w->woken))
		return false;
	futex_spin_count(FUTEX_SPIN_STAT_SELF_WAKES);
	return true;
}

/* Wait for the word. Returns 0 once it is ours, or an error. */
static int futex_spin_wait(struct futex_spin_head *head,
			   struct futex_spin_waiter *w,
			   u32 __user *uaddr, struct hrtimer_sleeper *to)
{
	bool spin = true, gave_way = false, faulted = false, self_woken;
	int ret;

	for (;;) {
		if (spin) {
			enum futex_spin_outcome why;

			why = futex_spin_on_owner(head, w, uaddr, to);
			/*
			 * Only a handoff clears w->queued behind our back,
			 * and a word handed to us is not taken by spinning:
			 * reading it here does not race.
			 */
			if (why == FUTEX_SPIN_ACQUIRED) {
				if (READ_ONCE(w->queued))
					futex_spin_taken_fixup(head, w, uaddr);
				return 0;
			}
			gave_way = why == FUTEX_SPIN_ABORTED_BOUND;
		}

		/*
		 * A waiter that gave way still owes its wakeup when it looks
		 * at the word again after a failed cmpxchg or a fault: it is
		 * not queued until the locked path returns 0.
		 */
		ret = futex_spin_lock_locked(head, w, uaddr, to, gave_way);
		if (ret == 1)
			return 0;
		if (ret == -EAGAIN) {
			cond_resched();
			spin = false;
			faulted = false;
			continue;
		}
		if (ret == -EFAULT) {
			/*
			 * The word is looked at once more after a fault, for
			 * what it says (EDEADLK, a free word) comes before the
			 * deadline; but a page that keeps going away does not
			 * stop the clock.
			 */
			ret = fault_in_user_writeable(uaddr);
			if (!ret && faulted)
				ret = futex_spin_may_sleep(head, w, to);
			if (ret)
				return futex_spin_fault_leave(head, w, ret);
			spin = false;
			faulted = true;
			continue;
		}
		faulted = false;
		if (ret)
			return ret;

		self_woken = futex_spin_sleep(head, w, to);
		gave_way = false;
		/*
		 * Woken: spin again if the owner runs. The sleeper keeps its
		 * place in the tree meanwhile, so neither its priority order
		 * nor its starvation bound is lost. Woken by its own timer, it
		 * only looks at the word, see futex_spin_may_take().
		 */
		spin = !READ_ONCE(w->handed) && !self_woken;
		if (spin) {
			futex_spin_count(FUTEX_SPIN_STAT_RESPINS);
			trace_futex_spin_respin(&head->key, w->tid);
		}
	}
}

/*
 * Past the starvation bound, the first sleeper is handed the lock: at once
 * if it is spinning (past the bound of a spinner, shorter while many
 * sleep); asleep after twice the bound, if no sleeping task was handed
 * this lock within the bound.
 */
static struct futex_spin_waiter *futex_spin_handoff_target(struct futex_spin_head *head,
							   u64 now)
{
	struct futex_spin_waiter *w = futex_spin_next_in_line(head);
	u64 waited;

	if (!w)
		return NULL;
	waited = now - w->since;
	if (waited > futex_spin_spinning_bound(head) && READ_ONCE(w->spinning))
		return w;
	if (waited > 2 * FUTEX_SPIN_HANDOFF_NS &&
	    now - head->asleep_handoff > FUTEX_SPIN_HANDOFF_NS)
		return w;
	return NULL;
}

static void futex_spin_hand_over(struct futex_spin_head *head,
				 struct futex_spin_waiter *w, u64 now,
				 struct wake_q_head *wake_q)
{
	if (!READ_ONCE(w->spinning))
		head->asleep_handoff = now;
	futex_spin_sleeper_del(head, w);
	WRITE_ONCE(w->handed, true);
	WRITE_ONCE(head->handing_off, head->handing_off + 1);
	wake_q_add(wake_q, w->task);
	futex_spin_count(FUTEX_SPIN_STAT_HANDOFFS);
	trace_futex_spin_handoff(&head->key, w->tid);
}

/*
 * The unlock's cmpxchg: from a word owned by @tid to @nval plus the bits of
 * @keep it has, once. Returns -EPERM when @tid does not own it, -EAGAIN
 * when it changed under us.
 */
static int futex_spin_word_release(u32 __user *uaddr, u32 tid, u32 nval,
				   u32 keep)
{
	u32 uval;
	int ret;

	ret = futex_get_value_locked(&uval, uaddr);
	if (ret)
		return ret;
	if ((uval & FUTEX_TID_MASK) != tid)
		return -EPERM;
	return futex_spin_cmpxchg(uaddr, uval, nval | (uval & keep));
}

/* Release the word and serve the sleepers: one handed the lock, or one woken. */
static int futex_spin_release_queued(struct futex_spin_head *head,
				     u32 __user *uaddr, u32 tid, u32 keep)
{
	struct futex_spin_waiter *w;
	DEFINE_WAKE_Q(wake_q);
	u32 nval = 0;
	u64 now;
	int ret;

	futex_spin_stall(FUTEX_SPIN_STALL_RELEASE);
	spin_lock(&head->lock);
	/*
	 * Under the lock: a waiter queued before we got it must not look as
	 * if it arrived after now, or its wait would wrap to an age of
	 * centuries and it would be handed the lock at once.
	 */
	now = ktime_get_ns();
	w = futex_spin_handoff_target(head, now);
	if (w) {
		nval = w->tid;
		if (futex_spin_has_sleepers_besides(head, w))
			nval |= FUTEX_WAITERS;
	}
	ret = futex_spin_word_release(uaddr, tid, nval, keep);
	if (!ret)
		atomic64_set(&head->served, now);
	if (!ret && w)
		futex_spin_hand_over(head, w, now, &wake_q);
	else if (!ret)
		futex_spin_wake_first(head, &wake_q);
	spin_unlock(&head->lock);
	wake_up_q(&wake_q);
	return ret;
}

/*
 * No queue head was found. A locker holds a reference to a linked head
 * before it looks at the word, and links a new one under the bucket lock.
 * So after looking once more under that lock, where every linked head is
 * live, releasing the word there leaves a locker arriving now either
 * finding the word free or queued on a head that we then serve. Returns
 * that head, referenced, when there is one; else the word is released
 * (*@ret == 0) or the error is in *@ret.
 */
static struct futex_spin_head *futex_spin_release_unqueued(union futex_key *key,
							   u32 __user *uaddr,
							   u32 tid, u32 keep,
							   int *ret)
{
	CLASS(hbr, hbr)(key);
	struct futex_spin_head *head;

	spin_lock(&hbr.hb->lock);
	head = futex_spin_head_find(hbr.hb, key);
	if (!head)
		*ret = futex_spin_word_release(uaddr, tid, 0, keep);
	spin_unlock(&hbr.hb->lock);
	return head;
}

/*
 * Release the word owned by @tid, keeping the bits of @keep that it has:
 * an unlock keeps none, a waiter killed before it could use the word it
 * took keeps OWNER_DIED, which it has not acted on.
 */
static int futex_spin_release(union futex_key *key, u32 __user *uaddr,
			      u32 tid, u32 keep)
{
	struct futex_spin_head *head;
	int ret;

	/*
	 * A head not found here may be linked by a locker a moment later:
	 * futex_spin_release_unqueued() looks again under the bucket lock.
	 */
	head = futex_spin_head_get(key, false);
	futex_spin_stall(FUTEX_SPIN_STALL_UNLOCK);
	for (;;) {
		if (!head) {
			head = futex_spin_release_unqueued(key, uaddr, tid,
							   keep, &ret);
			if (head)
				futex_spin_head_keep(head);
		}
		if (head)
			ret = futex_spin_release_queued(head, uaddr, tid, keep);

		if (ret == -EAGAIN)
			cond_resched();
		else if (ret != -EFAULT || fault_in_user_writeable(uaddr))
			break;
	}
	return ret;
}

int futex_spin_lock(u32 __user *uaddr, unsigned int flags, u32 val,
		    ktime_t *time, u32 __user *uaddr2, u32 val3)
{
	struct futex_spin_waiter w = { .task = current };
	union futex_key key = FUTEX_KEY_INIT;
	struct hrtimer_sleeper timeout, *to;
	struct futex_spin_head *head;
	int ret;

	if (val || uaddr2 || val3 || (flags & FLAGS_ROBUST_LIST32))
		return -EINVAL;

	futex_spin_count(FUTEX_SPIN_STAT_LOCK_CALLS);
	ret = get_futex_key(uaddr, flags, &key, FUTEX_WRITE);
	if (ret)
		return ret;

	head = futex_spin_head_get(&key, true);
	if (IS_ERR(head))
		return PTR_ERR(head);

	w.tid = task_pid_vnr(current);
	w.since = ktime_get_ns();
	to = futex_setup_timer(time, &timeout, flags, current->timer_slack_ns);
	if (to)
		hrtimer_sleeper_start_expires(to, HRTIMER_MODE_ABS);

	ret = futex_spin_wait(head, &w, uaddr, to);
	futex_spin_stall(FUTEX_SPIN_STALL_TAKEN);
	/*
	 * Killed after the word became ours (handed over, or taken just as
	 * the signal came): give it back, or the lock dies with us. The next
	 * waiter is served as by an unlock. A dead owner's mark stays: we
	 * never ran the critical section that could have made the protected
	 * state consistent again.
	 */
	if (!ret && fatal_signal_pending(current)) {
		futex_spin_release(&key, uaddr, w.tid, FUTEX_OWNER_DIED);
		ret = -EINTR;
	}

	futex_spin_due_cancel(&w);
	if (to) {
		hrtimer_cancel(&to->timer);
		destroy_hrtimer_on_stack(&to->timer);
	}
	return ret;
}

int futex_spin_unlock(u32 __user *uaddr, unsigned int flags, u32 val,
		      u32 __user *uaddr2, u32 val3)
{
	union futex_key key = FUTEX_KEY_INIT;
	u32 tid = task_pid_vnr(current);
	bool robust = flags & FLAGS_ROBUST_UNLOCK;
	u32 uval;
	int ret;

	/* With FUTEX_ROBUST_UNLOCK, @uaddr2 is the robust list's pending op */
	if (val || val3 || (!robust && (uaddr2 || (flags & FLAGS_ROBUST_LIST32))))
		return -EINVAL;

	futex_spin_count(FUTEX_SPIN_STAT_UNLOCK_CALLS);
	ret = get_futex_key(uaddr, flags, &key, FUTEX_WRITE);
	if (ret)
		return ret;
	/*
	 * Only we can make the word ours, so a word that is not stays so:
	 * the EPERM of a misuse or a feature test takes no lock, and no
	 * bucket lock shared with unrelated futexes.
	 */
	if (get_user(uval, uaddr))
		return -EFAULT;
	if ((uval & FUTEX_TID_MASK) != tid)
		return -EPERM;
	ret = futex_spin_release(&key, uaddr, tid, 0);
	if (ret || !robust)
		return ret;
	/*
	 * As FUTEX_UNLOCK_PI: the lock is no longer ours, so the robust list
	 * must not name it as our pending operation when we exit.
	 */
	if (!futex_robust_list_clear_pending(uaddr2, flags))
		return -EFAULT;
	return 0;
}

/*
 * The robust list walk found @uaddr owned by an exiting task, marked it
 * OWNER_DIED and cleared the TID (@owner_died), or found it as the exiting
 * task's pending operation, on a word it did not own. Wake one
 * FUTEX_SPIN_LOCK sleeper to look at it. The walk does not know whether
 * the lock was used with private or shared keys, so both are tried.
 */
void futex_spin_wake_robust(u32 __user *uaddr, bool owner_died)
{
	static const unsigned int key_flags[] = {
		FLAGS_SIZE_32 | FLAGS_SHARED,
		FLAGS_SIZE_32,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(key_flags); i++) {
		union futex_key key = FUTEX_KEY_INIT;
		struct futex_spin_head *head;
		DEFINE_WAKE_Q(wake_q);

		if (get_futex_key(uaddr, key_flags[i], &key, FUTEX_READ))
			continue;
		head = futex_spin_head_get(&key, false);
		if (!head)
			continue;

		spin_lock(&head->lock);
		if (futex_spin_wake_first(head, &wake_q) && owner_died) {
			futex_spin_count(FUTEX_SPIN_STAT_OWNER_DIED);
			trace_futex_spin_owner_died(&head->key, 0);
		}
		spin_unlock(&head->lock);
		wake_up_q(&wake_q);
	}
}

static unsigned long futex_spin_sum(unsigned long __percpu *counter)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(counter, cpu);
	return sum;
}

static int futex_spin_stats_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < FUTEX_SPIN_NR_STATS; i++)
		seq_printf(m, "%s %lu\n", futex_spin_stat_names[i],
			   futex_spin_sum(&futex_spin_stats[i]));
	for (i = FUTEX_SPIN_ACQUIRED; i < FUTEX_SPIN_NR_OUTCOMES; i++)
		seq_printf(m, "%s %lu\n", futex_spin_outcome_names[i],
			   futex_spin_sum(&futex_spin_outcomes[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(futex_spin_stats);

/* Heads linked now: exact once no task creates or drops one meanwhile. */
static int futex_spin_live_heads_show(struct seq_file *m, void *v)
{
	long created = futex_spin_sum(&futex_spin_stats[FUTEX_SPIN_STAT_HEADS_CREATED]);
	long freed = futex_spin_sum(&futex_spin_stats[FUTEX_SPIN_STAT_HEADS_FREED]);

	seq_printf(m, "%ld\n", created - freed);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(futex_spin_live_heads);

static int __init futex_spin_init(void)
{
	struct dentry *dir;

	futex_spin_head_cache = KMEM_CACHE(futex_spin_head, SLAB_PANIC);

	dir = debugfs_create_dir("futex_spin", NULL);
	debugfs_create_file("live_heads", 0444, dir, NULL, &futex_spin_live_heads_fops);
	debugfs_create_file("stats", 0444, dir, NULL, &futex_spin_stats_fops);
	futex_spin_inject_init(dir);
	return 0;
}
device_initcall(futex_spin_init);
