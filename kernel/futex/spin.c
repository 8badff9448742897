// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK: an exclusive lock kept in a futex word.
 * Waiters spin while the lock owner runs on a CPU and sleep, in priority
 * order, while it does not. See Documentation/locking/spinning-futex.rst.
 *
 * The futex word has the layout of a PI futex:
 *
 *   0                           free
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
 *   - set WAITERS before a waiter goes to sleep (queue head lock held);
 *   - release the word on unlock: 0, or the TID of a sleeper that waited
 *     longer than the starvation bound, plus WAITERS if others still sleep
 *     (queue head lock held);
 *   - mark OWNER_DIED when the owner exits with the word on its robust list
 *     (done by the robust list walk, which then calls futex_spin_owner_died()).
 *
 * The invariant that keeps sleepers from being forgotten, under the queue
 * head lock: if the sleeper tree is not empty, then WAITERS is set in the
 * word, or exactly one sleeper has been woken and has not yet looked at the
 * word again (head->woken). That sleeper takes over the duty: it takes the
 * word (setting WAITERS if others remain), sets WAITERS before sleeping
 * again, or passes the wakeup on when it gives up.
 *
 * Kernel state: one queue head per futex key, found through the futex hash
 * bucket. The bucket lock is held only to find, create or drop a head; the
 * sleepers are protected by the head's own lock. A head lives exactly as
 * long as some task is inside FUTEX_SPIN_LOCK or FUTEX_SPIN_UNLOCK for its
 * key, so nothing user space does can make the kernel keep or leak it.
 *
 * Lock order: none. hb->lock and head->lock are never held together; the
 * OSQ and RCU are taken with neither held.
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/osq_lock.h>
#include <linux/percpu.h>
#include <linux/rbtree.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/wake_q.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "futex.h"

#define CREATE_TRACE_POINTS
#include <trace/events/futex_spin.h>

/*
 * The starvation bound. A waiter that has waited longer than this gets the
 * lock handed to it by the next unlock instead of competing with spinners
 * and fast-path lockers, if it is spinning at that moment: the handoff then
 * costs nothing, the new owner runs. A waiter asleep is only woken, to spin
 * with WAITERS set so that the following unlock hands it the lock; after
 * twice the bound it gets the lock even asleep. Handing a lock to a task
 * that is not running leaves it idle for a wakeup, and under contention
 * every unlock would do so: the lock convoys. 5 ms, as the 2016
 * throughput-optimized futex: long enough that few waiters reach it.
 */
#define FUTEX_SPIN_HANDOFF_NS	(5 * NSEC_PER_MSEC)

struct futex_spin_head {
	struct hlist_node	hb_node;
	union futex_key		key;
	unsigned int		refs;		/* hb->lock */

	spinlock_t		lock;		/* protects the sleepers */
	struct rb_root_cached	sleepers;	/* lock */
	struct futex_spin_waiter *woken;	/* lock */
	u64			arrivals;	/* lock */

	struct optimistic_spin_queue osq;
	atomic_t		spinners;
	/*
	 * Handoffs whose waiter has not returned yet: the word is reserved,
	 * and its new owner may be a spinner queued on the OSQ behind the
	 * one polling, which would otherwise spin on it for ever.
	 */
	unsigned int		handing_off;	/* lock */
};

struct futex_spin_waiter {
	struct rb_node		node;
	struct task_struct	*task;
	u32			tid;
	int			prio;
	u64			seq;
	u64			since;
	bool			queued;
	bool			handed;
	bool			spinning;	/* written by the waiter only */
};

enum futex_spin_stat {
	FS_LOCK_CALLS,
	FS_UNLOCK_CALLS,
	FS_CONTENDED,
	FS_SLEEPS,
	FS_WAKES,
	FS_HANDOFFS,
	FS_TIMEOUTS,
	FS_OWNER_DIED,
	FS_SPIN_ACQUIRED,
	FS_SPIN_ABORTED_OWNER,
	FS_SPIN_ABORTED_RESCHED,
	FS_SPIN_ABORTED_FAULT,
	FS_SPIN_ABORTED_CAP,
	FS_SPIN_ABORTED_BOUND,
	FS_RESPINS,
	FS_NR_STATS
};

static const char * const futex_spin_stat_names[FS_NR_STATS] = {
	[FS_LOCK_CALLS]			= "lock_calls",
	[FS_UNLOCK_CALLS]		= "unlock_calls",
	[FS_CONTENDED]			= "contended",
	[FS_SLEEPS]			= "sleeps",
	[FS_WAKES]			= "wakes",
	[FS_HANDOFFS]			= "handoffs",
	[FS_TIMEOUTS]			= "timeouts",
	[FS_OWNER_DIED]			= "owner_died",
	[FS_SPIN_ACQUIRED]		= "spin_acquired",
	[FS_SPIN_ABORTED_OWNER]		= "spin_aborted_owner",
	[FS_SPIN_ABORTED_RESCHED]	= "spin_aborted_resched",
	[FS_SPIN_ABORTED_FAULT]		= "spin_aborted_fault",
	[FS_SPIN_ABORTED_CAP]		= "spin_aborted_cap",
	[FS_SPIN_ABORTED_BOUND]		= "spin_aborted_bound",
	[FS_RESPINS]			= "respins",
};

/* Per CPU, so that counting does not add a shared cache line to the hot path. */
static DEFINE_PER_CPU(unsigned long, futex_spin_stats[FS_NR_STATS]);
static atomic_t futex_spin_live_heads = ATOMIC_INIT(0);
static struct kmem_cache *futex_spin_head_cache;

static void futex_spin_count(enum futex_spin_stat stat)
{
	this_cpu_inc(futex_spin_stats[stat]);
}

/*
 * Queue heads. Allocation happens only when the first task of a key enters
 * the kernel; later arrivals find the head. Allocating before taking the
 * bucket lock (and dropping the spare if another task won the race) keeps
 * GFP_KERNEL allocations out of the bucket lock, which other futex
 * operations on unrelated keys share.
 */
static struct futex_spin_head *head_find(struct futex_hash_bucket *hb,
					 union futex_key *key)
{
	struct futex_spin_head *head;

	hlist_for_each_entry(head, &hb->spin_heads, hb_node) {
		if (futex_match(&head->key, key))
			return head;
	}
	return NULL;
}

static struct futex_spin_head *head_alloc(union futex_key *key)
{
	struct futex_spin_head *head;

	head = kmem_cache_zalloc(futex_spin_head_cache, GFP_KERNEL);
	if (!head)
		return NULL;
	head->key = *key;
	spin_lock_init(&head->lock);
	head->sleepers = RB_ROOT_CACHED;
	osq_lock_init(&head->osq);
	return head;
}

/* Returns a referenced head, NULL if none exists and !@create. */
static struct futex_spin_head *head_get(union futex_key *key, bool create)
{
	struct futex_hash_bucket *hb = futex_hash(key);
	struct futex_spin_head *head, *spare = NULL;

	spin_lock(&hb->lock);
	head = head_find(hb, key);
	if (!head && create) {
		spin_unlock(&hb->lock);
		spare = head_alloc(key);
		if (!spare)
			return ERR_PTR(-ENOMEM);
		spin_lock(&hb->lock);
		head = head_find(hb, key);
		if (!head) {
			head = spare;
			spare = NULL;
			hlist_add_head(&head->hb_node, &hb->spin_heads);
			atomic_inc(&futex_spin_live_heads);
		}
	}
	if (head)
		head->refs++;
	spin_unlock(&hb->lock);

	if (spare)
		kmem_cache_free(futex_spin_head_cache, spare);
	return head;
}

static void head_put(struct futex_spin_head *head)
{
	struct futex_hash_bucket *hb = futex_hash(&head->key);
	bool last;

	spin_lock(&hb->lock);
	last = !--head->refs;
	if (last)
		hlist_del(&head->hb_node);
	spin_unlock(&hb->lock);

	if (!last)
		return;
	WARN_ON_ONCE(!RB_EMPTY_ROOT(&head->sleepers.rb_root) || head->woken);
	atomic_dec(&futex_spin_live_heads);
	kmem_cache_free(futex_spin_head_cache, head);
}

/*
 * Sleepers: real-time tasks first, by priority; everybody else in arrival
 * order. Nice levels do not order lock waiters: they share CPU time, and
 * FIFO among normal tasks is what bounds their wait.
 */
static int waiter_prio(struct task_struct *p)
{
	return p->prio < MAX_RT_PRIO ? p->prio : MAX_RT_PRIO;
}

static bool waiter_less(struct rb_node *a, const struct rb_node *b)
{
	struct futex_spin_waiter *wa = rb_entry(a, struct futex_spin_waiter, node);
	struct futex_spin_waiter *wb = rb_entry(b, struct futex_spin_waiter, node);

	if (wa->prio != wb->prio)
		return wa->prio < wb->prio;
	return wa->seq < wb->seq;
}

static struct futex_spin_waiter *first_sleeper(struct futex_spin_head *head)
{
	struct rb_node *node = rb_first_cached(&head->sleepers);

	return node ? rb_entry(node, struct futex_spin_waiter, node) : NULL;
}

static void sleeper_add(struct futex_spin_head *head, struct futex_spin_waiter *w)
{
	w->prio = waiter_prio(current);
	w->seq = head->arrivals++;
	w->queued = true;
	rb_add_cached(&w->node, &head->sleepers, waiter_less);
}

static void sleeper_del(struct futex_spin_head *head, struct futex_spin_waiter *w)
{
	if (w->queued) {
		rb_erase_cached(&w->node, &head->sleepers);
		w->queued = false;
	}
	if (head->woken == w)
		head->woken = NULL;
}

static bool has_sleepers_besides(struct futex_spin_head *head,
				 struct futex_spin_waiter *w)
{
	struct rb_node *first = rb_first_cached(&head->sleepers);

	if (!first)
		return false;
	return !w->queued || first != &w->node || rb_next(first);
}

/* Wake the first sleeper, which then answers for the WAITERS bit. */
static bool wake_first(struct futex_spin_head *head, struct wake_q_head *wake_q)
{
	struct futex_spin_waiter *w = first_sleeper(head);

	if (!w || head->woken)
		return false;
	head->woken = w;
	wake_q_add(wake_q, w->task);
	futex_spin_count(FS_WAKES);
	trace_futex_spin_wake(&head->key, w->tid);
	return true;
}

/*
 * @w stops waiting without the lock. If it was the woken sleeper, the
 * duty of looking at the word passes to the next one.
 */
static void waiter_leave(struct futex_spin_head *head, struct futex_spin_waiter *w,
			 struct wake_q_head *wake_q)
{
	bool was_woken = head->woken == w;

	sleeper_del(head, w);
	if (was_woken)
		wake_first(head, wake_q);
}

/*
 * Change the word from *@uval to @nval. Returns 0 when it did, -EAGAIN with
 * *@uval updated when the word held something else (or the architecture
 * asked for a retry), -EFAULT on a fault. Page faults are disabled.
 */
static int word_cmpxchg(u32 __user *uaddr, u32 *uval, u32 nval)
{
	u32 curval;
	int ret;

	if (futex_spin_inject_eagain())
		return futex_get_value_locked(uval, uaddr) ?: -EAGAIN;
	ret = futex_cmpxchg_value_locked(&curval, uaddr, *uval, nval);
	if (ret == -EAGAIN)
		return futex_get_value_locked(uval, uaddr) ?: -EAGAIN;
	if (ret)
		return ret;
	if (curval == *uval)
		return 0;
	*uval = curval;
	return -EAGAIN;
}

/*
 * Take the word if it is free, else make sure WAITERS is set so that the
 * owner's unlock enters the kernel. Called with head->lock held.
 * Returns 1 when the caller now owns the word, 0 when it may sleep, or
 * -EFAULT / -EDEADLK.
 */
static int take_or_mark(struct futex_spin_head *head, struct futex_spin_waiter *w,
			u32 __user *uaddr)
{
	u32 uval, nval;
	int ret;

	ret = futex_get_value_locked(&uval, uaddr);
	while (!ret || ret == -EAGAIN) {
		if ((uval & FUTEX_TID_MASK) == w->tid)
			return -EDEADLK;
		if ((uval & FUTEX_TID_MASK) && (uval & FUTEX_WAITERS))
			return 0;

		if (!(uval & FUTEX_TID_MASK)) {
			nval = uval | w->tid;
			if (has_sleepers_besides(head, w))
				nval |= FUTEX_WAITERS;
		} else {
			nval = uval | FUTEX_WAITERS;
		}

		ret = word_cmpxchg(uaddr, &uval, nval);
		if (!ret)
			return !(uval & FUTEX_TID_MASK);
	}
	return ret;
}

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
static bool spin_allowed(struct futex_spin_head *head)
{
	return atomic_inc_return(&head->spinners) < num_online_cpus();
}

static bool spin_stop(struct hrtimer_sleeper *to)
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
static bool waited_too_long(struct futex_spin_waiter *w)
{
	return ktime_get_ns() - w->since > FUTEX_SPIN_HANDOFF_NS;
}

/* Returns true when the word was taken. */
static bool spin_on_owner(struct futex_spin_head *head, struct futex_spin_waiter *w,
			  u32 __user *uaddr, struct hrtimer_sleeper *to)
{
	enum futex_spin_stat why = FS_SPIN_ABORTED_RESCHED;
	struct task_struct *owner = NULL;
	u32 uval, owner_tid = 0;
	unsigned int loops = 0;
	bool taken = false, starving;
	int ret;

	starving = waited_too_long(w);
	if (starving && !w->queued) {
		why = FS_SPIN_ABORTED_BOUND;
		goto out_uncounted;
	}
	if (!spin_allowed(head)) {
		why = FS_SPIN_ABORTED_CAP;
		goto out;
	}

	preempt_disable();
	if (!osq_lock(&head->osq))
		goto out_preempt;

	WRITE_ONCE(w->spinning, true);
	rcu_read_lock();
	while (!spin_stop(to)) {
		if (READ_ONCE(head->handing_off)) {
			why = FS_SPIN_ABORTED_OWNER;
			break;
		}
		if (futex_get_value_locked(&uval, uaddr)) {
			why = FS_SPIN_ABORTED_FAULT;
			break;
		}
		if (!(uval & FUTEX_TID_MASK)) {
			ret = word_cmpxchg(uaddr, &uval, uval | w->tid);
			if (ret == -EFAULT) {
				why = FS_SPIN_ABORTED_FAULT;
				break;
			}
			if (!ret) {
				taken = true;
				break;
			}
			continue;
		}
		/* Handed over to us, or a forged word: the locked path decides. */
		if ((uval & FUTEX_TID_MASK) == w->tid) {
			why = FS_SPIN_ABORTED_OWNER;
			break;
		}
		if ((uval & FUTEX_TID_MASK) != owner_tid) {
			owner_tid = uval & FUTEX_TID_MASK;
			owner = find_task_by_vpid(owner_tid);
		}
		if (!owner || !owner_on_cpu(owner)) {
			why = FS_SPIN_ABORTED_OWNER;
			break;
		}
		/* Reading the clock costs more than a poll of the word. */
		if (!starving && !(++loops % 64))
			starving = waited_too_long(w);
		if (starving && !(uval & FUTEX_WAITERS)) {
			if (!w->queued) {
				why = FS_SPIN_ABORTED_BOUND;
				break;
			}
			if (word_cmpxchg(uaddr, &uval,
					 uval | FUTEX_WAITERS) == -EFAULT) {
				why = FS_SPIN_ABORTED_FAULT;
				break;
			}
			continue;
		}
		cpu_relax();
	}
	rcu_read_unlock();
	WRITE_ONCE(w->spinning, false);
	osq_unlock(&head->osq);
out_preempt:
	preempt_enable();
out:
	atomic_dec(&head->spinners);
out_uncounted:
	if (taken) {
		futex_spin_count(FS_SPIN_ACQUIRED);
		trace_futex_spin_spin_acquired(&head->key, w->tid);
	} else {
		futex_spin_count(why);
		trace_futex_spin_spin_aborted(&head->key, why);
	}
	return taken;
}

/*
 * A woken sleeper took the word by spinning: it leaves the tree and, if
 * others still sleep there, sets WAITERS for them, a duty it held as the
 * woken sleeper. The word is ours, so only WAITERS can change under us.
 */
static int spin_taken_fixup(struct futex_spin_head *head, struct futex_spin_waiter *w,
			    u32 __user *uaddr)
{
	bool others;
	u32 uval;
	int ret;

retry:
	spin_lock(&head->lock);
	sleeper_del(head, w);
	others = has_sleepers_besides(head, w);
	ret = futex_get_value_locked(&uval, uaddr);
	if (!ret && others && !(uval & FUTEX_WAITERS)) {
		do {
			ret = word_cmpxchg(uaddr, &uval, uval | FUTEX_WAITERS);
		} while (ret == -EAGAIN && !(uval & FUTEX_WAITERS));
	}
	spin_unlock(&head->lock);

	/*
	 * The owner cannot lose the word to a fault: if the page is gone for
	 * good, nobody can unlock it and the sleepers leave by their timeouts.
	 */
	if (ret == -EFAULT && !fault_in_user_writeable(uaddr))
		goto retry;
	return 0;
}

int futex_spin_lock(u32 __user *uaddr, unsigned int flags, u32 val,
		    ktime_t *time, u32 __user *uaddr2, u32 val3)
{
	struct futex_spin_waiter w = { .task = current };
	union futex_key key = FUTEX_KEY_INIT;
	struct hrtimer_sleeper timeout, *to;
	struct futex_spin_head *head;
	bool spin = true;
	int ret;

	if (val || uaddr2 || val3)
		return -EINVAL;

	futex_spin_count(FS_LOCK_CALLS);
	ret = get_futex_key(uaddr, flags, &key, FUTEX_WRITE);
	if (ret)
		return ret;

	head = head_get(&key, true);
	if (IS_ERR(head))
		return PTR_ERR(head);

	w.tid = task_pid_vnr(current);
	w.since = ktime_get_ns();
	to = futex_setup_timer(time, &timeout, flags, current->timer_slack_ns);
	if (to)
		hrtimer_sleeper_start_expires(to, HRTIMER_MODE_ABS);

	for (;;) {
		DEFINE_WAKE_Q(wake_q);

		if (spin && spin_on_owner(head, &w, uaddr, to)) {
			ret = w.queued ? spin_taken_fixup(head, &w, uaddr) : 0;
			break;
		}

		spin_lock(&head->lock);
		if (w.handed) {
			WRITE_ONCE(head->handing_off, head->handing_off - 1);
			spin_unlock(&head->lock);
			ret = 0;
			break;
		}
		ret = take_or_mark(head, &w, uaddr);
		if (ret == 1) {
			sleeper_del(head, &w);
			spin_unlock(&head->lock);
			ret = 0;
			break;
		}
		if (!ret && to && !to->task) {
			ret = -ETIMEDOUT;
			futex_spin_count(FS_TIMEOUTS);
			trace_futex_spin_timeout(&head->key, w.tid);
		} else if (!ret && signal_pending(current)) {
			/* Run the handler, then restart with the same deadline. */
			ret = -ERESTARTNOINTR;
		}
		if (ret) {
			waiter_leave(head, &w, &wake_q);
			spin_unlock(&head->lock);
			wake_up_q(&wake_q);
			if (ret != -EFAULT)
				break;
			ret = fault_in_user_writeable(uaddr);
			if (ret)
				break;
			continue;
		}

		if (!w.queued) {
			sleeper_add(head, &w);
			futex_spin_count(FS_CONTENDED);
			trace_futex_spin_contended(&head->key, w.tid);
		}
		if (head->woken == &w)
			head->woken = NULL;
		set_current_state(TASK_INTERRUPTIBLE);
		spin_unlock(&head->lock);

		futex_spin_count(FS_SLEEPS);
		trace_futex_spin_sleep(&head->key, w.tid);
		/*
		 * The timer may have fired since the check above, while we were
		 * still running: look again now that our state is set, or its
		 * wakeup is lost. A signal needs no such care, schedule()
		 * returns at once for a pending one.
		 */
		if (!to || to->task)
			schedule();
		__set_current_state(TASK_RUNNING);
		futex_spin_stall(FUTEX_SPIN_STALL_WOKEN);

		/*
		 * Woken: spin again if the owner runs. The sleeper keeps its
		 * place in the tree meanwhile, so neither its priority order
		 * nor its starvation bound is lost.
		 */
		spin = !w.handed;
		if (spin) {
			futex_spin_count(FS_RESPINS);
			trace_futex_spin_respin(&head->key, w.tid);
		}
	}

	if (to) {
		hrtimer_cancel(&to->timer);
		destroy_hrtimer_on_stack(&to->timer);
	}
	head_put(head);
	return ret;
}

int futex_spin_unlock(u32 __user *uaddr, unsigned int flags, u32 val,
		      u32 __user *uaddr2, u32 val3)
{
	u32 uval, nval, tid = task_pid_vnr(current);
	union futex_key key = FUTEX_KEY_INIT;
	struct futex_spin_waiter *w = NULL;
	struct futex_spin_head *head;
	DEFINE_WAKE_Q(wake_q);
	int ret, woken = 0;
	bool handoff;

	if (val || uaddr2 || val3 || (flags & FLAGS_CLOCKRT))
		return -EINVAL;

	futex_spin_count(FS_UNLOCK_CALLS);
	ret = get_futex_key(uaddr, flags, &key, FUTEX_WRITE);
	if (ret)
		return ret;

	/* No head means nobody is inside FUTEX_SPIN_LOCK: nobody to wake. */
	head = head_get(&key, false);
	futex_spin_stall(FUTEX_SPIN_STALL_UNLOCK);
retry:
	handoff = false;
	if (head) {
		spin_lock(&head->lock);
		w = first_sleeper(head);
		if (w) {
			u64 waited = ktime_get_ns() - w->since;

			handoff = waited > 2 * FUTEX_SPIN_HANDOFF_NS ||
				  (waited > FUTEX_SPIN_HANDOFF_NS &&
				   READ_ONCE(w->spinning));
		}
	}

	nval = 0;
	if (handoff) {
		nval = w->tid;
		if (has_sleepers_besides(head, w))
			nval |= FUTEX_WAITERS;
	}
	ret = futex_get_value_locked(&uval, uaddr);
	while (!ret) {
		if ((uval & FUTEX_TID_MASK) != tid) {
			ret = -EPERM;
			break;
		}
		ret = word_cmpxchg(uaddr, &uval, nval);
		if (ret != -EAGAIN)
			break;
		ret = 0;
	}

	if (!ret && handoff) {
		sleeper_del(head, w);
		w->handed = true;
		WRITE_ONCE(head->handing_off, head->handing_off + 1);
		wake_q_add(&wake_q, w->task);
		woken = 1;
		futex_spin_count(FS_HANDOFFS);
		trace_futex_spin_handoff(&head->key, w->tid);
	} else if (!ret && head) {
		woken = wake_first(head, &wake_q);
	}
	if (head)
		spin_unlock(&head->lock);
	wake_up_q(&wake_q);

	if (ret == -EFAULT && !fault_in_user_writeable(uaddr))
		goto retry;
	if (head)
		head_put(head);
	return ret ? ret : woken;
}

/*
 * The robust list walk found @uaddr owned by an exiting task, marked it
 * OWNER_DIED and cleared the TID. Wake one FUTEX_SPIN_LOCK sleeper to take
 * it over. The walk does not know whether the lock was used with private
 * or shared keys, so both are tried.
 */
void futex_spin_owner_died(u32 __user *uaddr)
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
		head = head_get(&key, false);
		if (!head)
			continue;

		spin_lock(&head->lock);
		if (wake_first(head, &wake_q)) {
			futex_spin_count(FS_OWNER_DIED);
			trace_futex_spin_owner_died(&head->key, 0);
		}
		spin_unlock(&head->lock);
		wake_up_q(&wake_q);
		head_put(head);
	}
}

static int futex_spin_stats_show(struct seq_file *m, void *v)
{
	int i, cpu;

	for (i = 0; i < FS_NR_STATS; i++) {
		unsigned long sum = 0;

		for_each_possible_cpu(cpu)
			sum += per_cpu(futex_spin_stats[i], cpu);
		seq_printf(m, "%s %lu\n", futex_spin_stat_names[i], sum);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(futex_spin_stats);

static int __init futex_spin_init(void)
{
	struct dentry *dir;

	futex_spin_head_cache = KMEM_CACHE(futex_spin_head, SLAB_PANIC);

	dir = debugfs_create_dir("futex_spin", NULL);
	debugfs_create_atomic_t("live_heads", 0444, dir, &futex_spin_live_heads);
	debugfs_create_file("stats", 0444, dir, NULL, &futex_spin_stats_fops);
	futex_spin_inject_init(dir);
	return 0;
}
device_initcall(futex_spin_init);
