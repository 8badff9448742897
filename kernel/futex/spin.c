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
 *   - set WAITERS on an owned word, with the queue head lock held: before
 *     a waiter goes to sleep, or when a running waiter asks for the lock
 *     (below);
 *   - release the word on unlock: 0, or the TID of the first waiter that
 *     asked for the lock, plus WAITERS if anyone else is queued. The queue
 *     head lock is held, or, when the key has no queue head, the hash
 *     bucket lock under which a locker would create one. A waiter killed
 *     before it could use the word it took releases it the same way,
 *     keeping OWNER_DIED;
 *   - mark OWNER_DIED when the owner exits with the word on its robust list
 *     (done by the robust list walk, which then calls futex_spin_wake_robust()).
 *
 * The invariant that keeps sleepers from being forgotten, under the queue
 * head lock: if the tree holds a sleeper that nobody woke since it last
 * looked at the word, WAITERS is set in the word, so that the next unlock
 * enters the kernel; or a wakeup is out, and the pass-over timer of the
 * first such sleeper expires one answer period after it. A woken waiter
 * answers for the others until it looks at the word: it takes the word
 * (setting WAITERS if others remain), sets WAITERS before sleeping again,
 * or passes the wakeup on when it gives up. So an unlock that wakes a
 * waiter frees the word with WAITERS clear, and the lock is taken and
 * released in user space until that waiter looks; if it does not look in
 * time, the timer wakes the next sleeper to look in its place.
 *
 * The starvation rule: a queued waiter that has waited past its due time
 * asks for the lock each time it finds it taken while it spins or after a
 * wakeup, and the next unlock hands the lock to the first waiter in line
 * that has asked. An unlock also wakes the first waiter not yet woken, if
 * it hands the lock over, or if no wakeup is outstanding. A wakeup that
 * goes unanswered for its answer period is passed over by the pass-over
 * timer, which wakes the next sleeper to look in the place of the one
 * woken. A handoff not taken within its answer period is passed over by
 * the next waiter that looks at the word.
 * tools/testing/selftests/futex/model/ checks this protocol with Spin.
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
 * Lock order: none of the futex code's own. hb->lock and head->lock are
 * never held together; under head->lock only the hrtimer base lock of a
 * pass-over timer is taken, and the wakeups go out after it is dropped.
 * The OSQ and RCU are taken with neither held. A failed cmpxchg of the
 * word is retried only after dropping every lock, as the architecture's
 * futex helpers require.
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
 * The lock's one time quantum, T. A queued waiter is due once it has waited
 * T for each waiter that was queued when it queued, and one T more; past
 * that it asks for the lock (the starvation rule above). A task that has
 * spun T without queueing queues, a segment of spinning ends after T,
 * and a woken waiter that has not looked at the word within T of getting
 * a CPU is passed over. 1 ms, the threshold of Go's sync.Mutex starvation
 * mode (src/sync/mutex.go, starvationThresholdNs), a lock whose waiters
 * also spin first and then sleep: it is tens of times a context switch
 * and a wakeup, so handing the lock to a waiter once per T costs little
 * throughput, and an owner that ran T in one critical section is not worth
 * spinning on.
 */
#define FUTEX_SPIN_TURN_NS	NSEC_PER_MSEC

struct futex_spin_head {
	struct hlist_node	hb_node;
	union futex_key		key;
	/* One per task keeping the head, see futex_spin_head_get() */
	refcount_t		refs;
	struct rcu_head		rcu;

	spinlock_t		lock;		/* protects the sleepers */
	struct rb_root_cached	sleepers;	/* lock */
	struct rb_root_cached	askers;		/* lock: those that asked */
	u64			arrivals;	/* lock */
	unsigned int		nr_sleepers;	/* lock */
	/* lock: when the last wakeup is passed over, 0 once a look answered it */
	u64			answer_by;
	/* lock: the sleeper whose pass-over timer that wakeup armed */
	struct futex_spin_waiter *passer;

	struct optimistic_spin_queue osq;
	atomic_t		spinners;
	/*
	 * Handoffs whose waiter has not returned yet: the word is reserved,
	 * and its new owner may be a spinner queued on the OSQ behind the
	 * one polling, which would otherwise spin on it for ever. Written
	 * under lock, read by spinners without it.
	 */
	unsigned int		handing_off;
	/* lock: the waiter last handed the word, until it takes it */
	struct futex_spin_waiter *handed;
	u64			handed_by;	/* lock: when it is passed over */
};

struct futex_spin_waiter {
	struct rb_node		node;
	struct rb_node		ask_node;	/* head->lock, while asked */
	struct task_struct	*task;
	u32			tid;
	int			prio;		/* head->lock */
	u64			seq;		/* head->lock */
	u64			since;
	u64			due;		/* head->lock, once queued */
	u64			look_at;	/* head->lock: wake by then, or 0 */
	/* Armed under head->lock by others, see futex_spin_pass_arm() */
	struct hrtimer		pass;
	/*
	 * Written under head->lock. The waiter reads them without it while
	 * it spins or after a wakeup, and decides under the lock.
	 */
	bool			queued;
	bool			asked;
	bool			handed;
	bool			spinning;	/* written by the waiter only */
	bool			woken;		/* head->lock; only while queued */
	bool			asleep;		/* head->lock: it chose to sleep */
	/* head->lock: the most futex_spin_unwoken() of this subtree */
	u8			unwoken_below;
};

/* How a spin on the owner ended; FUTEX_SPIN_POLLING while it goes on. */
enum futex_spin_outcome {
	FUTEX_SPIN_POLLING,
	FUTEX_SPIN_ACQUIRED,
	FUTEX_SPIN_ABORTED_OWNER,	/* owner off CPU, or the word reserved */
	FUTEX_SPIN_ABORTED_RESCHED,	/* need_resched, signal or deadline */
	FUTEX_SPIN_ABORTED_FAULT,
	FUTEX_SPIN_ABORTED_CAP,		/* enough spinners already */
	FUTEX_SPIN_ABORTED_BOUND,	/* must queue, or ask, first */
	FUTEX_SPIN_ABORTED_LIMIT,	/* FUTEX_SPIN_TURN_NS on one owner */
	FUTEX_SPIN_NR_OUTCOMES
};

enum futex_spin_stat {
	FUTEX_SPIN_STAT_LOCK_CALLS,
	FUTEX_SPIN_STAT_UNLOCK_CALLS,
	FUTEX_SPIN_STAT_CONTENDED,
	FUTEX_SPIN_STAT_SLEEPS,
	FUTEX_SPIN_STAT_WAKES,
	FUTEX_SPIN_STAT_HANDOFFS,
	FUTEX_SPIN_STAT_HANDOFFS_ASLEEP,
	FUTEX_SPIN_STAT_TIMEOUTS,
	FUTEX_SPIN_STAT_OWNER_DIED,
	FUTEX_SPIN_STAT_UNANSWERED,
	FUTEX_SPIN_STAT_HEADS_CREATED,
	FUTEX_SPIN_STAT_HEADS_FREED,
	FUTEX_SPIN_STAT_HEADS_MOVED,
	FUTEX_SPIN_STAT_SPIN_QUEUED,
	FUTEX_SPIN_STAT_SPIN_AHEAD,
	FUTEX_SPIN_NR_STATS
};

static const char * const futex_spin_stat_names[FUTEX_SPIN_NR_STATS] = {
	[FUTEX_SPIN_STAT_LOCK_CALLS]	= "lock_calls",
	[FUTEX_SPIN_STAT_UNLOCK_CALLS]	= "unlock_calls",
	[FUTEX_SPIN_STAT_CONTENDED]	= "contended",
	[FUTEX_SPIN_STAT_SLEEPS]	= "sleeps",
	[FUTEX_SPIN_STAT_WAKES]		= "wakes",
	[FUTEX_SPIN_STAT_HANDOFFS]	= "handoffs",
	[FUTEX_SPIN_STAT_HANDOFFS_ASLEEP] = "handoffs_asleep",
	[FUTEX_SPIN_STAT_TIMEOUTS]	= "timeouts",
	[FUTEX_SPIN_STAT_OWNER_DIED]	= "owner_died",
	[FUTEX_SPIN_STAT_UNANSWERED]	= "unanswered_wakes",
	[FUTEX_SPIN_STAT_HEADS_CREATED]	= "heads_created",
	[FUTEX_SPIN_STAT_HEADS_FREED]	= "heads_freed",
	[FUTEX_SPIN_STAT_HEADS_MOVED]	= "heads_moved",
	[FUTEX_SPIN_STAT_SPIN_QUEUED]	= "spin_queued",
	[FUTEX_SPIN_STAT_SPIN_AHEAD]	= "spin_ahead",
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

/*
 * The most spinners seen on one lock at once, the longest wait of a
 * spinner in the OSQ before it polled or gave up, and the longest poll of
 * the word from the head of the OSQ, since the last write to debugfs
 * spin_max: what many spinners do is counted, not timed, on a machine
 * whose CPUs are too few to time it. The two times add up to the longest
 * stretch a spinner spent with preemption off.
 */
struct futex_spin_max {
	unsigned long		spinners;
	u64			queued_ns;
	u64			segment_ns;
};

static DEFINE_PER_CPU(struct futex_spin_max, futex_spin_max);
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
 * gets its head only once the process has a private hash, as io_uring
 * does for its futexes. Only the first: resizing one is for clone() and
 * PR_FUTEX_HASH, not for a lock that is contended. -EBUSY means that the
 * process chose the global hash meanwhile, which is a private hash too.
 */
static int futex_spin_private_hash(union futex_key *key)
{
	int ret;

	if (!futex_key_is_private(key))
		return 0;
	scoped_guard(rcu) {
		if (rcu_access_pointer(current->mm->futex.phash.hash))
			return 0;
	}
	ret = futex_hash_allocate_default();
	return ret == -EBUSY ? 0 : ret;
}

static struct futex_spin_head *futex_spin_head_alloc(union futex_key *key)
{
	struct futex_spin_head *head;

	head = kmem_cache_zalloc(futex_spin_head_cache, GFP_KERNEL_ACCOUNT);
	if (!head)
		return NULL;
	head->key = *key;
	refcount_set(&head->refs, 1);
	spin_lock_init(&head->lock);
	head->sleepers = RB_ROOT_CACHED;
	head->askers = RB_ROOT_CACHED;
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

static bool futex_spin_before(const struct futex_spin_waiter *wa,
			      const struct futex_spin_waiter *wb)
{
	if (wa->prio != wb->prio)
		return wa->prio < wb->prio;
	return wa->seq < wb->seq;
}

static bool futex_spin_waiter_less(struct rb_node *a, const struct rb_node *b)
{
	return futex_spin_before(rb_entry(a, struct futex_spin_waiter, node),
				 rb_entry(b, struct futex_spin_waiter, node));
}

static bool futex_spin_asker_less(struct rb_node *a, const struct rb_node *b)
{
	return futex_spin_before(rb_entry(a, struct futex_spin_waiter, ask_node),
				 rb_entry(b, struct futex_spin_waiter, ask_node));
}

static struct futex_spin_waiter *futex_spin_waiter_of(struct rb_node *node)
{
	return rb_entry_safe(node, struct futex_spin_waiter, node);
}

/* The first waiter in line that asked for the lock. */
static struct futex_spin_waiter *futex_spin_first_asker(struct futex_spin_head *head)
{
	return rb_entry_safe(rb_first_cached(&head->askers),
			     struct futex_spin_waiter, ask_node);
}

/*
 * What a queued waiter is owed, in increasing order: nothing once woken;
 * a wakeup, if nobody woke it since it last looked at the word; and a
 * wakeup that it needs, if it also sleeps (a queued spinner runs, and
 * looks at the word again by itself).
 */
enum futex_spin_owed {
	FUTEX_SPIN_OWED_NOTHING,
	FUTEX_SPIN_OWED_WAKEUP,
	FUTEX_SPIN_OWED_WAKEUP_ASLEEP,
};

static u8 futex_spin_unwoken(struct futex_spin_waiter *w)
{
	if (w->woken)
		return FUTEX_SPIN_OWED_NOTHING;
	return w->asleep ? FUTEX_SPIN_OWED_WAKEUP_ASLEEP : FUTEX_SPIN_OWED_WAKEUP;
}

/*
 * Woken sleepers pile up when waiters outnumber CPUs, and a task that
 * cannot run (a throttled cgroup) stays woken for as long as it likes: the
 * tree keeps, per subtree, the most that one of its waiters is owed, so
 * that finding the first one owed a wakeup does not walk past the others.
 */
RB_DECLARE_CALLBACKS_MAX(static, futex_spin_unwoken_cb, struct futex_spin_waiter,
			 node, u8, unwoken_below, futex_spin_unwoken);

/* The first waiter in line owed at least @owed. */
static struct futex_spin_waiter *futex_spin_first_owed(struct futex_spin_head *head,
						       enum futex_spin_owed owed)
{
	struct futex_spin_waiter *w = futex_spin_waiter_of(head->sleepers.rb_root.rb_node);

	if (!w || w->unwoken_below < owed)
		return NULL;
	/* Each step stays in a subtree that holds one. */
	for (;;) {
		struct futex_spin_waiter *left = futex_spin_waiter_of(w->node.rb_left);

		if (left && left->unwoken_below >= owed) {
			w = left;
			continue;
		}
		if (futex_spin_unwoken(w) >= owed)
			return w;
		w = futex_spin_waiter_of(w->node.rb_right);
	}
}

/* The first waiter that nobody woke since it last looked at the word. */
static struct futex_spin_waiter *futex_spin_first_unwoken(struct futex_spin_head *head)
{
	return futex_spin_first_owed(head, FUTEX_SPIN_OWED_WAKEUP);
}

static void futex_spin_propagate(struct futex_spin_waiter *w)
{
	if (w->queued)
		futex_spin_unwoken_cb.propagate(&w->node, NULL);
}

static void futex_spin_set_woken(struct futex_spin_waiter *w, bool woken)
{
	WRITE_ONCE(w->woken, woken);
	futex_spin_propagate(w);
}

/*
 * The answer period: when a waiter woken now, or handed the lock now, is
 * passed over if it has not looked at the word by then, T after it could
 * first have run. A task of normal priority woken on a busy CPU waits for
 * the quantum that EEVDF protects for the task there (RUN_TO_PARITY), a
 * slice, or for its own slice when that is shorter (PREEMPT_SHORT):
 * sysctl_sched_base_slice, 0.7 ms times 1 + ilog2(CPUs) for up to 8 CPUs,
 * 1.4 to 2.8 ms on SMP, unless set through sched_attr. So the woken task's
 * slice is added to T. With T alone, a waiter woken into a busy run queue
 * was passed over before its turn at a CPU, a third of all wakeups at 32
 * runnable tasks per CPU, and the sleeper woken in its place waited behind
 * the same run queues.
 */
static u64 futex_spin_answer_by(struct futex_spin_waiter *w)
{
	return ktime_get_ns() + READ_ONCE(w->task->se.slice) + FUTEX_SPIN_TURN_NS;
}

/*
 * The pass-over timer. An unlock that wakes a waiter leaves WAITERS clear,
 * so that the lock goes on being taken and released in user space until
 * the woken waiter looks at the word. One that does not run (SCHED_IDLE
 * beside a busy task, a throttled cgroup) would then hold back every
 * sleeper behind it, and no unlock would enter the kernel to pass it
 * over. So each wakeup arms the timer of the first sleeper not woken, to
 * expire at the answer period's end, and the look that answers the
 * wakeup disarms it. On expiry that sleeper wakes up and looks at the
 * word in the place of the one woken, as the unlock that passed the
 * wakeup over would have woken it; its look sets WAITERS again.
 *
 * The timer is the sleeper's own, on its stack, and soft, as the timeout
 * of a futex wait is. Its expiry takes no lock of the futex code: it
 * only wakes the task, and only from an interruptible sleep, the one of
 * futex_spin_sleep(); a task running, or sleeping on a page fault,
 * comes back to the word by itself.
 */
static enum hrtimer_restart futex_spin_pass_expired(struct hrtimer *timer)
{
	struct futex_spin_waiter *w = container_of(timer, struct futex_spin_waiter,
						   pass);

	futex_spin_count(FUTEX_SPIN_STAT_UNANSWERED);
	wake_up_state(w->task, TASK_INTERRUPTIBLE);
	return HRTIMER_NORESTART;
}

/* Expiring meanwhile is harmless: it only wakes a sleeper to look. */
static void futex_spin_pass_disarm(struct futex_spin_head *head)
{
	hrtimer_try_to_cancel(&head->passer->pass);
	head->passer = NULL;
}

/* The wakeup out is passed over at head->answer_by. */
static void futex_spin_pass_arm(struct futex_spin_head *head)
{
	struct futex_spin_waiter *w;

	w = futex_spin_first_owed(head, FUTEX_SPIN_OWED_WAKEUP_ASLEEP);
	if (head->passer && head->passer != w)
		futex_spin_pass_disarm(head);
	if (!w)
		return;
	head->passer = w;
	hrtimer_start(&w->pass, ns_to_ktime(head->answer_by), HRTIMER_MODE_ABS_SOFT);
}

/*
 * Queue @w, or move it if its priority changed since it last slept. It
 * keeps its arrival number, and with it its place among equals, and its
 * due time: one FUTEX_SPIN_TURN_NS for each waiter queued before it, one
 * more for itself, counted from its call's start. A real-time waiter is
 * due at once: it goes before every normal waiter in line, so they are
 * not its turns to wait out, and among the askers it goes first by its
 * priority; were it not due, the normal askers would be handed the lock
 * before it, turn by turn, until it was.
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
		if (w->asked)
			rb_erase_cached(&w->ask_node, &head->askers);
	} else {
		w->seq = head->arrivals++;
		w->due = w->since;
		if (prio == MAX_RT_PRIO)
			w->due += (head->nr_sleepers + 1ULL) * FUTEX_SPIN_TURN_NS;
		head->nr_sleepers++;
		WRITE_ONCE(w->queued, true);
		futex_spin_count(FUTEX_SPIN_STAT_CONTENDED);
		trace_futex_spin_contended(&head->key, w->tid);
	}
	w->prio = prio;
	w->unwoken_below = futex_spin_unwoken(w);
	rb_add_augmented_cached(&w->node, &head->sleepers, futex_spin_waiter_less,
				&futex_spin_unwoken_cb);
	if (w->asked)
		rb_add_cached(&w->ask_node, &head->askers, futex_spin_asker_less);
}

static void futex_spin_sleeper_del(struct futex_spin_head *head,
				   struct futex_spin_waiter *w)
{
	if (w->queued) {
		rb_erase_augmented_cached(&w->node, &head->sleepers,
					  &futex_spin_unwoken_cb);
		head->nr_sleepers--;
		WRITE_ONCE(w->queued, false);
	}
	if (head->passer == w)
		futex_spin_pass_disarm(head);
	if (w->asked) {
		rb_erase_cached(&w->ask_node, &head->askers);
		WRITE_ONCE(w->asked, false);
	}
	WRITE_ONCE(w->woken, false);
}

/*
 * @w runs and finds the lock taken: past its due time it asks for the lock,
 * and keeps asking until it gets it. It has just shown that it runs, which
 * is what a handoff to it, asleep or not, counts on.
 */
static void futex_spin_ask(struct futex_spin_head *head,
			   struct futex_spin_waiter *w, u64 now)
{
	if (w->asked || now < w->due)
		return;
	WRITE_ONCE(w->asked, true);
	rb_add_cached(&w->ask_node, &head->askers, futex_spin_asker_less);
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
 * A look at the word under the lock left WAITERS set, or took the word:
 * the next unlock enters the kernel, nobody owes a look any more, and that
 * unlock may wake the next sleeper.
 */
static void futex_spin_answered(struct futex_spin_head *head)
{
	head->answer_by = 0;
	if (head->passer)
		futex_spin_pass_disarm(head);
}

/*
 * Wake @w, which answers for the sleepers behind it until it looks at the
 * word. A higher priority sleeper that queued since is first in the tree
 * and so the next one woken.
 */
static void futex_spin_wake(struct futex_spin_head *head,
			    struct futex_spin_waiter *w,
			    struct wake_q_head *wake_q)
{
	futex_spin_set_woken(w, true);
	wake_q_add(wake_q, w->task);
	futex_spin_count(FUTEX_SPIN_STAT_WAKES);
	trace_futex_spin_wake(&head->key, w->tid);

	head->answer_by = futex_spin_answer_by(w);
	futex_spin_pass_arm(head);
}

/*
 * Wake the next waiter at once, for an owner's death or for a woken waiter
 * that leaves: the first that asked for the lock if an owner's death woke
 * nobody who did, else the first not woken yet.
 */
static bool futex_spin_wake_first(struct futex_spin_head *head,
				  struct wake_q_head *wake_q)
{
	struct futex_spin_waiter *w = futex_spin_first_asker(head);

	if (!w || w->woken)
		w = futex_spin_first_unwoken(head);
	if (!w) {
		futex_spin_answered(head);
		return false;
	}
	futex_spin_wake(head, w, wake_q);
	return true;
}

/*
 * Whom an unlock that hands the lock to nobody wakes: the first waiter
 * not woken, unless a wakeup already out serves the sleepers. It serves
 * until a look answers it, or until its pass-over timer wakes the next
 * sleeper at the answer period's end: the timer passes a woken waiter
 * over, whether or not an unlock enters the kernel meanwhile.
 */
static struct futex_spin_waiter *futex_spin_to_wake(struct futex_spin_head *head)
{
	if (head->answer_by)
		return NULL;
	return futex_spin_first_unwoken(head);
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
	else if (head->answer_by && !head->passer)
		futex_spin_pass_arm(head);	/* it may have been ours */
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

	/* fail_futex gives up as an LL/SC helper may, on any architecture */
	if (should_fail_futex(true))
		return -EAGAIN;
	ret = futex_cmpxchg_value_locked(&curval, uaddr, uval, nval);
	if (ret)
		return ret;
	return curval == uval ? 0 : -EAGAIN;
}

/*
 * Take the word if it is free, else make sure WAITERS is set so that the
 * owner's unlock, or the next locker of a free word, enters the kernel.
 * Either answers a wakeup that left WAITERS clear. Called with head->lock
 * held. Returns 1 when the caller now owns the word, 0 when it may sleep,
 * or -EAGAIN / -EFAULT / -EDEADLK.
 */
static int futex_spin_take_or_mark(struct futex_spin_head *head,
				   struct futex_spin_waiter *w, u32 __user *uaddr)
{
	u32 uval, nval;
	bool taking;
	int ret;

	ret = futex_get_value_locked(&uval, uaddr);
	if (ret)
		return ret;
	if ((uval & FUTEX_TID_MASK) == w->tid)
		return -EDEADLK;

	taking = !(uval & FUTEX_TID_MASK);
	if (taking) {
		nval = uval | w->tid;
		if (futex_spin_has_sleepers_besides(head, w))
			nval |= FUTEX_WAITERS;
	} else if (uval & FUTEX_WAITERS) {
		nval = uval;
	} else {
		nval = uval | FUTEX_WAITERS;
	}

	if (nval != uval) {
		ret = futex_spin_cmpxchg(uaddr, uval, nval);
		if (ret)
			return ret;
	}
	futex_spin_answered(head);
	return taking;
}

/*
 * PREEMPT_RT: waiters do not spin. The spin runs with preemption off for
 * as long as user space keeps the lock, and an RT kernel bounds its
 * non-preemptible sections by what the kernel does, not by what a user
 * program does; its own sleeping locks spin preemptibly, on the rtmutex.
 * Sleeping is the whole contract, spinning only a guess, so the operations
 * stay the same.
 */
#if defined(CONFIG_LOCK_SPIN_ON_OWNER) && !defined(CONFIG_PREEMPT_RT)
/*
 * Optimistic spinning: while the owner runs on a CPU its critical section is
 * likely short, and polling the word is cheaper than a sleep and a wakeup.
 * The OSQ lets only one task poll the word and try the cmpxchg; the others
 * spin on their own per-CPU node. Spinning is only a guess about the
 * future: when it is wrong, the task sleeps and nothing else depends on it.
 *
 * A spin runs with preemption off and, unlike a kernel mutex's, on a
 * critical section that user space makes as long as it likes; so it is cut
 * into segments of at most FUTEX_SPIN_TURN_NS of polling each, with the
 * scheduler, signals and the deadline looked at in between.
 *
 * At most FUTEX_SPIN_MAX_SPINNERS tasks spin per lock, and one less than
 * there are CPUs: the owner needs a CPU to finish. A released word goes to
 * one spinner, the one polling; the one behind it in the OSQ polls next and
 * is there for the next release. A third would wait out two segments in
 * the OSQ, where nothing but need_resched() ends its wait: with two, a
 * task waits at most one segment there, and spends at most two with
 * preemption off, deadline and fatal signal unchecked for that long only.
 * The kernel mutex needs no such bound: its owners run kernel code, whose
 * critical sections are short by the kernel's own rules.
 */
#define FUTEX_SPIN_MAX_SPINNERS	2

/* @ahead is set to the spinners already there. */
static bool futex_spin_allowed(struct futex_spin_head *head, int *ahead)
{
	int spinners = atomic_inc_return(&head->spinners);

	*ahead = spinners - 1;
	if (spinners > FUTEX_SPIN_MAX_SPINNERS || spinners >= num_online_cpus())
		return false;
	if (spinners > 1) {
		futex_spin_count(FUTEX_SPIN_STAT_SPIN_QUEUED);
		this_cpu_add(futex_spin_stats[FUTEX_SPIN_STAT_SPIN_AHEAD], spinners - 1);
	}
	if (spinners > __this_cpu_read(futex_spin_max.spinners))
		__this_cpu_write(futex_spin_max.spinners, spinners);
	return true;
}

/* Called with preemption off, as the OSQ is used. */
static void futex_spin_queued_for(u64 start)
{
	u64 queued = ktime_get_ns() - start;

	if (queued > __this_cpu_read(futex_spin_max.queued_ns))
		__this_cpu_write(futex_spin_max.queued_ns, queued);
}

static bool futex_spin_should_stop(struct hrtimer_sleeper *to)
{
	return need_resched() || signal_pending(current) || (to && !to->task);
}

/*
 * Must the spinner stop to queue, or to ask for the lock? A task that has
 * spun FUTEX_SPIN_TURN_NS without queueing takes its place in line, and a
 * queued one past its due time asks. Both need the head lock; the spinner
 * then spins on. Only @w writes the fields read here, or a handoff, which
 * the spinner sees in the word.
 */
static bool futex_spin_must_stop(struct futex_spin_waiter *w, u64 now)
{
	if (!READ_ONCE(w->queued))
		return now - w->since > FUTEX_SPIN_TURN_NS;
	return !READ_ONCE(w->asked) && now >= w->due;
}

/* One segment of polling: the owner last seen, and the segment's clock */
struct futex_spin_poll {
	struct task_struct	*owner;
	u32			owner_tid;
	unsigned int		loops;
	u64			start;		/* 0 until the clock is read */
	u64			now;
};

/*
 * The spinner's clock, read every 64 polls (reading the clock costs more
 * than a poll of the word): the need to queue or ask stops the segment,
 * and so does FUTEX_SPIN_TURN_NS of it, however often the word changed
 * owner meanwhile. Neither a new owner nor a new ask restarts the clock:
 * a word whose owner alternates between running tasks, or that user space
 * rewrites, must not keep a task here with preemption off.
 */
static enum futex_spin_outcome futex_spin_poll_clock(struct futex_spin_waiter *w,
						     struct futex_spin_poll *p)
{
	if (++p->loops % 64)
		return FUTEX_SPIN_POLLING;
	p->now = ktime_get_ns();
	if (!p->start)
		p->start = p->now;
	if (futex_spin_must_stop(w, p->now))
		return FUTEX_SPIN_ABORTED_BOUND;
	if (p->now - p->start > FUTEX_SPIN_TURN_NS)
		return FUTEX_SPIN_ABORTED_LIMIT;
	return FUTEX_SPIN_POLLING;
}

/* Called with preemption off, at the end of a segment. */
static void futex_spin_segment_end(struct futex_spin_poll *p)
{
	u64 polled = p->now - p->start;

	if (polled > __this_cpu_read(futex_spin_max.segment_ns))
		__this_cpu_write(futex_spin_max.segment_ns, polled);
}

/* One look at the owned word: spin on only while its owner runs. */
static bool futex_spin_owner_runs(struct futex_spin_poll *p, u32 owner_tid)
{
	if (owner_tid != p->owner_tid) {
		p->owner_tid = owner_tid;
		p->owner = find_task_by_vpid(owner_tid);
	}
	return p->owner && owner_on_cpu(p->owner);
}

/*
 * One look at the word by the task at the head of the OSQ. A cmpxchg that
 * fails is a poll like any other, counted and paced the same way: a word
 * that keeps changing under it must not keep it here past its clocks.
 */
static enum futex_spin_outcome futex_spin_poll_word(struct futex_spin_head *head,
						    struct futex_spin_waiter *w,
						    u32 __user *uaddr,
						    struct futex_spin_poll *p)
{
	enum futex_spin_outcome why;
	u32 uval, owner;
	int ret;

	if (READ_ONCE(head->handing_off))
		return FUTEX_SPIN_ABORTED_OWNER;
	if (futex_get_value_locked(&uval, uaddr))
		return FUTEX_SPIN_ABORTED_FAULT;

	owner = uval & FUTEX_TID_MASK;
	if (!owner) {
		ret = futex_spin_cmpxchg(uaddr, uval, uval | w->tid);
		if (!ret)
			return FUTEX_SPIN_ACQUIRED;
		if (ret == -EFAULT)
			return FUTEX_SPIN_ABORTED_FAULT;
	} else if (owner == w->tid || !futex_spin_owner_runs(p, owner)) {
		/* Handed over to us, or a forged word: the locked path decides. */
		return FUTEX_SPIN_ABORTED_OWNER;
	}

	why = futex_spin_poll_clock(w, p);
	if (why == FUTEX_SPIN_POLLING)
		cpu_relax();
	return why;
}

/*
 * Poll the word from the head of the OSQ until it is taken or not worth it.
 * The wait in the OSQ is timed only behind other spinners: alone, the
 * spinner is at its head at once, and the clock is not worth reading.
 */
static enum futex_spin_outcome futex_spin_osq(struct futex_spin_head *head,
					      struct futex_spin_waiter *w,
					      u32 __user *uaddr,
					      struct hrtimer_sleeper *to,
					      bool behind)
{
	enum futex_spin_outcome why = FUTEX_SPIN_ABORTED_RESCHED;
	struct futex_spin_poll poll = { };
	u64 start = behind ? ktime_get_ns() : 0;
	bool polls;

	/* In the OSQ too: an unlock that hands it the word needs no wakeup */
	WRITE_ONCE(w->spinning, true);
	polls = osq_lock(&head->osq);
	if (behind)
		futex_spin_queued_for(start);
	if (!polls) {
		WRITE_ONCE(w->spinning, false);
		return why;
	}

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
	futex_spin_segment_end(&poll);
	return why;
}

static enum futex_spin_outcome futex_spin_try_spin(struct futex_spin_head *head,
						   struct futex_spin_waiter *w,
						   u32 __user *uaddr,
						   struct hrtimer_sleeper *to)
{
	enum futex_spin_outcome why = FUTEX_SPIN_ABORTED_CAP;
	int ahead;

	if (futex_spin_must_stop(w, ktime_get_ns()))
		return FUTEX_SPIN_ABORTED_BOUND;
	/*
	 * Counted as a spinner only while preemption is off: a task preempted
	 * in between would keep its place while it does not run, and the
	 * task that preempted it would sleep instead of spinning.
	 */
	preempt_disable();
	if (futex_spin_allowed(head, &ahead))
		why = futex_spin_osq(head, w, uaddr, to, ahead > 0);
	atomic_dec(&head->spinners);
	preempt_enable();
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
 * A task being killed stops retrying: its way out releases the word and
 * serves the next waiter (futex_spin_lock()).
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
		if (!ret) {
			futex_spin_sleeper_del(head, w);
			futex_spin_answered(head);
		}
		spin_unlock(&head->lock);

		if (ret == -EAGAIN && !fatal_signal_pending(current))
			cond_resched();
		else if (ret != -EFAULT || fault_in_user_writeable(uaddr))
			break;
	}
	if (!ret)
		return;
	/*
	 * The page is gone for good, or we are being killed: the word stays
	 * ours until we give it back, and the wakeup goes on to the next.
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
	if (head->handed == w)
		head->handed = NULL;
	return true;
}

static int futex_spin_release_locked(struct futex_spin_head *head,
				     u32 __user *uaddr, u32 tid, u32 keep,
				     struct wake_q_head *wake_q);

/* @w, handed the word, goes back into line, last, woken: it owes a look. */
static void futex_spin_requeue(struct futex_spin_head *head,
			       struct futex_spin_waiter *w)
{
	WRITE_ONCE(w->handed, false);
	WRITE_ONCE(head->handing_off, head->handing_off - 1);
	head->handed = NULL;
	w->seq = head->arrivals++;
	WRITE_ONCE(w->woken, true);
	w->unwoken_below = futex_spin_unwoken(w);
	head->nr_sleepers++;
	WRITE_ONCE(w->queued, true);
	rb_add_augmented_cached(&w->node, &head->sleepers, futex_spin_waiter_less,
				&futex_spin_unwoken_cb);
}

/*
 * A handoff that has not been taken within its answer period is passed
 * over by the next waiter to look at the word, as the timer passes over a
 * wakeup that long unanswered: the word is released as the unlock would
 * have released it without the waiter handed it, which goes back into
 * line and asks again once it runs. A dead owner's mark stays,
 * as on the kill path: that waiter never ran the critical section.
 * Returns 0, or the error of the release, which leaves the handoff as it
 * was.
 */
static int futex_spin_pass_handed(struct futex_spin_head *head,
				  u32 __user *uaddr, struct wake_q_head *wake_q)
{
	struct futex_spin_waiter *w = head->handed;
	int ret;

	if (!w || ktime_get_ns() < head->handed_by)
		return 0;
	futex_spin_requeue(head, w);
	ret = futex_spin_release_locked(head, uaddr, w->tid, FUTEX_OWNER_DIED,
					wake_q);
	/* -EPERM: user space wrote another owner, there is nothing to pass */
	if (!ret || ret == -EPERM) {
		futex_spin_count(FUTEX_SPIN_STAT_UNANSWERED);
		return 0;
	}
	futex_spin_sleeper_del(head, w);
	WRITE_ONCE(w->handed, true);
	WRITE_ONCE(head->handing_off, head->handing_off + 1);
	head->handed = w;
	return ret;
}

/*
 * Look at the word: pass over a stale handoff, which may hand the word to
 * @w, else take the free word or set WAITERS.
 */
static int futex_spin_look(struct futex_spin_head *head,
			   struct futex_spin_waiter *w, u32 __user *uaddr,
			   struct wake_q_head *wake_q)
{
	int ret = futex_spin_pass_handed(head, uaddr, wake_q);

	if (ret)
		return ret;
	if (futex_spin_take_handed(head, w))
		return 1;
	return futex_spin_take_or_mark(head, w, uaddr);
}

/*
 * One decision under the head lock: does the caller own the word, must it
 * wait, or does it leave? Returns 1 when it owns the word, 0 when it is
 * queued (with its task state set to sleep if @sleep; a spinner that had
 * to queue or ask spins on), -EAGAIN when it must look again after
 * dropping the lock, -EFAULT when it must fault the page in first, or the
 * error with which it left the queue. Across -EAGAIN and -EFAULT a queued
 * waiter stays queued: a fault in user space's page tables must not cost
 * it its place in line.
 *
 * A waiter that stays and has shown that it runs, by spinning (@spun, or
 * a spin that goes on) or by coming back to the word after a wakeup, asks
 * for the lock past its due time, however its spin ended. Its first look
 * of the call does not count: a task that sleeps at once and is never
 * woken again may never run again either.
 *
 * A task being killed takes nothing: it would die owning the word.
 */
static int futex_spin_lock_locked(struct futex_spin_head *head,
				  struct futex_spin_waiter *w,
				  u32 __user *uaddr, struct hrtimer_sleeper *to,
				  bool sleep, bool spun)
{
	DEFINE_WAKE_Q(wake_q);
	int ret;

	spin_lock(&head->lock);
	if (futex_spin_take_handed(head, w)) {
		ret = 1;
	} else if (fatal_signal_pending(current)) {
		ret = -EINTR;
	} else {
		ret = futex_spin_look(head, w, uaddr, &wake_q);
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
		/* Shown to run: spinning, or back at the word after a wakeup */
		bool ran = spun || !sleep || w->woken;

		w->asleep = sleep;
		futex_spin_sleeper_add(head, w);
		if (ran)
			futex_spin_ask(head, w, ktime_get_ns());
		/* Looking at the word again was the duty of its wakeup. */
		futex_spin_set_woken(w, false);
		/* A handoff not taken is for a waiter to pass over, in time */
		w->look_at = head->handed ? head->handed_by : 0;
		if (sleep)
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
 * Sleep until woken, or until a handoff outstanding when we queued is past
 * its answer period, to pass it over if it is still not taken. The
 * timer is the waiter's own, on its stack, and soft: what it starts is a
 * look at the word, task work that nothing waits for in interrupt context.
 * It has no slack: the bound counts its period.
 */
static void futex_spin_schedule(struct futex_spin_waiter *w)
{
	ktime_t look_at = ns_to_ktime(w->look_at);

	if (!w->look_at) {
		schedule();
		return;
	}
	schedule_hrtimeout_range(&look_at, 0, HRTIMER_MODE_ABS_SOFT);
}

static void futex_spin_sleep(struct futex_spin_head *head,
			     struct futex_spin_waiter *w,
			     struct hrtimer_sleeper *to)
{
	futex_spin_count(FUTEX_SPIN_STAT_SLEEPS);
	trace_futex_spin_sleep(&head->key, w->tid);
	/*
	 * The deadline may have passed since the check under the lock, while
	 * we were still running: look again now that our state is set, or
	 * its wakeup is lost. A signal needs no such care, schedule() returns
	 * at once for a pending one.
	 */
	if (!futex_spin_timer_fired(to))
		futex_spin_schedule(w);
	__set_current_state(TASK_RUNNING);
	futex_spin_stall(FUTEX_SPIN_STALL_WOKEN);
}

/* Wait for the word. Returns 0 once it is ours, or an error. */
static int futex_spin_wait(struct futex_spin_head *head,
			   struct futex_spin_waiter *w,
			   u32 __user *uaddr, struct hrtimer_sleeper *to)
{
	bool spin = true, look = false, faulted = false;
	bool first = true;
	int ret;

	for (;;) {
		bool stay = look, spun = spin && !first;

		if (spin) {
			enum futex_spin_outcome why;

			why = futex_spin_on_owner(head, w, uaddr, to);
			/*
			 * Only a handoff clears w->queued behind our back,
			 * and only its pass-over sets it again, before it
			 * releases the word we took: reading it here after
			 * our cmpxchg does not race.
			 */
			if (why == FUTEX_SPIN_ACQUIRED) {
				if (READ_ONCE(w->queued))
					futex_spin_taken_fixup(head, w, uaddr);
				return 0;
			}
			/* Queue or ask, then spin on: it is running. */
			stay = why == FUTEX_SPIN_ABORTED_BOUND;
		}

		first = false;
		ret = futex_spin_lock_locked(head, w, uaddr, to, !stay, spun);
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
		look = false;
		if (stay) {
			spin = true;
			continue;
		}

		futex_spin_sleep(head, w, to);
		/*
		 * Woken: look at the word, then spin again if the owner runs.
		 * The look sets WAITERS, as a kernel mutex waiter spins with
		 * MUTEX_FLAG_WAITERS set: the owner's next release enters the
		 * kernel, where the spinner finds the word free. Spinning first
		 * let the owner release and take the word back in user space,
		 * unseen, for all of the spin. The sleeper keeps its place in
		 * the tree meanwhile, so neither its priority order nor its
		 * due time is lost.
		 */
		spin = false;
		look = !READ_ONCE(w->handed);
		if (look)
			trace_futex_spin_respin(&head->key, w->tid);
	}
}

/*
 * Wake the first waiter not woken yet, as the lock was just handed over:
 * if it is ahead of the one handed the lock, so that it gets to ask (a
 * sleeper ahead in line asks only once it runs: were it left asleep while
 * askers behind it are handed the lock turn by turn, critical sections
 * longer than their due times, it would never get to ask); if it is
 * behind, to watch the handoff, which a task that does not run may not
 * take for long (futex_spin_pass_handed()).
 */
static void futex_spin_wake_watcher(struct futex_spin_head *head,
				    struct wake_q_head *wake_q)
{
	struct futex_spin_waiter *w = futex_spin_first_unwoken(head);

	if (w)
		futex_spin_wake(head, w, wake_q);
}

/*
 * The unlock hands the lock over to the first waiter that asked for it.
 * One that is spinning runs at once; one asleep was running when it asked,
 * and the lock waits for its wakeup. Either may not run now: the first
 * waiter not woken is woken with it, to watch.
 */
static void futex_spin_hand_over(struct futex_spin_head *head,
				 struct futex_spin_waiter *w,
				 struct wake_q_head *wake_q)
{
	if (!READ_ONCE(w->spinning))
		futex_spin_count(FUTEX_SPIN_STAT_HANDOFFS_ASLEEP);
	futex_spin_sleeper_del(head, w);
	futex_spin_answered(head);
	WRITE_ONCE(w->handed, true);
	WRITE_ONCE(head->handing_off, head->handing_off + 1);
	head->handed = w;
	head->handed_by = futex_spin_answer_by(w);
	wake_q_add(wake_q, w->task);
	futex_spin_count(FUTEX_SPIN_STAT_HANDOFFS);
	trace_futex_spin_handoff(&head->key, w->tid);
	futex_spin_wake_watcher(head, wake_q);
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

/*
 * Release the word and serve the waiters, with head->lock held: the first
 * that asked is handed the lock, with WAITERS if others wait, or else the
 * word is freed and the next one woken (futex_spin_to_wake()). A freed
 * word has WAITERS clear: a wakeup is out, whose look sets it again, and
 * the pass-over timer stands in for a look that does not come.
 */
static int futex_spin_release_locked(struct futex_spin_head *head,
				     u32 __user *uaddr, u32 tid, u32 keep,
				     struct wake_q_head *wake_q)
{
	struct futex_spin_waiter *w, *next = NULL;
	u32 nval = 0;
	int ret;

	w = futex_spin_first_asker(head);
	if (w) {
		nval = w->tid;
		if (futex_spin_has_sleepers_besides(head, w))
			nval |= FUTEX_WAITERS;
	} else {
		next = futex_spin_to_wake(head);
	}
	ret = futex_spin_word_release(uaddr, tid, nval, keep);
	if (!ret && w)
		futex_spin_hand_over(head, w, wake_q);
	else if (!ret && next)
		futex_spin_wake(head, next, wake_q);
	return ret;
}

static int futex_spin_release_queued(struct futex_spin_head *head,
				     u32 __user *uaddr, u32 tid, u32 keep)
{
	DEFINE_WAKE_Q(wake_q);
	int ret;

	futex_spin_stall(FUTEX_SPIN_STALL_RELEASE);
	spin_lock(&head->lock);
	ret = futex_spin_release_locked(head, uaddr, tid, keep, &wake_q);
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

		/*
		 * Retried until done, as handle_futex_death() and
		 * futex_unlock_pi() do, also for a task being killed: one
		 * that took the word in futex_spin_lock() must not die
		 * owning it, and an LL/SC helper fails its cmpxchg by itself
		 * under false sharing. Only a task that keeps rewriting the
		 * word keeps us here, and it runs to do so.
		 */
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
	hrtimer_setup_on_stack(&w.pass, futex_spin_pass_expired, CLOCK_MONOTONIC,
			       HRTIMER_MODE_ABS_SOFT);
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

	/* Out of the tree now: nobody arms it again. */
	hrtimer_cancel(&w.pass);
	destroy_hrtimer_on_stack(&w.pass);
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
			trace_futex_spin_owner_died(&head->key,
						    task_pid_vnr(current));
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

static int futex_spin_max_show(struct seq_file *m, void *v)
{
	struct futex_spin_max *cpu_max;
	unsigned long spinners = 0;
	u64 queued_ns = 0, segment_ns = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		cpu_max = per_cpu_ptr(&futex_spin_max, cpu);
		spinners = max(spinners, READ_ONCE(cpu_max->spinners));
		queued_ns = max(queued_ns, READ_ONCE(cpu_max->queued_ns));
		segment_ns = max(segment_ns, READ_ONCE(cpu_max->segment_ns));
	}
	seq_printf(m, "spinners %lu\nqueued_ns %llu\nsegment_ns %llu\n",
		   spinners, queued_ns, segment_ns);
	return 0;
}

static int futex_spin_max_open(struct inode *inode, struct file *file)
{
	return single_open(file, futex_spin_max_show, NULL);
}

/* Any write starts a new measurement. */
static ssize_t futex_spin_max_write(struct file *file, const char __user *buf,
				    size_t len, loff_t *ppos)
{
	struct futex_spin_max *cpu_max;
	int cpu;

	for_each_possible_cpu(cpu) {
		cpu_max = per_cpu_ptr(&futex_spin_max, cpu);
		WRITE_ONCE(cpu_max->spinners, 0);
		WRITE_ONCE(cpu_max->queued_ns, 0);
		WRITE_ONCE(cpu_max->segment_ns, 0);
	}
	return len;
}

static const struct file_operations futex_spin_max_fops = {
	.open		= futex_spin_max_open,
	.read		= seq_read,
	.write		= futex_spin_max_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int __init futex_spin_init(void)
{
	struct dentry *dir;

	futex_spin_head_cache = KMEM_CACHE(futex_spin_head, SLAB_PANIC | SLAB_ACCOUNT);
	dir = debugfs_create_dir("futex_spin", NULL);
	debugfs_create_file("live_heads", 0444, dir, NULL, &futex_spin_live_heads_fops);
	debugfs_create_file("stats", 0444, dir, NULL, &futex_spin_stats_fops);
	debugfs_create_file("spin_max", 0644, dir, NULL, &futex_spin_max_fops);
	futex_spin_inject_init(dir);
	return 0;
}
device_initcall(futex_spin_init);
