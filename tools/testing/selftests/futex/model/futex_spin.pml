/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A Promela model of FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK: the futex word,
 * user space's fast paths, the kernel's lock, unlock and owner death, and
 * the starvation rule of Documentation/locking/spinning-futex.rst:
 *
 *   A queued waiter that has waited past its due time asks for the lock
 *   each time it finds it taken while it spins or after a wakeup, and the
 *   next unlock hands the lock to the first waiter in line that has asked.
 *   An unlock also wakes the first waiter not yet woken, if it hands the
 *   lock over, or if no wakeup is outstanding; one that goes unanswered
 *   for T is passed over by the pass-over timer, which wakes the next
 *   sleeper to look in its place. A handoff not taken for T is passed over by
 *   the next waiter that looks at the word; a waiter that goes to sleep
 *   while a handoff is out looks again when it is T old.
 *
 * and the invariant that keeps sleepers from being forgotten: while a
 * sleeper that nobody woke is queued, WAITERS is set, so that the next
 * unlock enters the kernel; or a wakeup is out, and the first such
 * sleeper's pass-over timer is armed, to wake it to look in the place of
 * the one woken. An unlock that wakes a waiter frees the word with
 * WAITERS clear.
 *
 * Checked by run.sh with Spin: mutual exclusion and the bypass bound are
 * assertions, "no lost wakeup" and "WAITERS while a waiter not woken is
 * queued" are safety LTL formulas, and "every waiter gets the lock" is
 * one of liveness, under weak fairness, over runs where at most one owner
 * dies (MAXDEATHS), or none. -D options put known bugs back, each of
 * which must fail a check (run.sh expects that too):
 *
 *   NOPASSTIMER  a wakeup arms no pass-over timer: while the woken waiter
 *                does not run, the lock changes hands in user space and
 *                the sleepers behind it wait (v3 without its kthread)
 *   HAND_UNASKED the unlock hands the lock to the first waiter not woken,
 *                whether or not it asked (asleep and never shown to run)
 *   ROBUST_NOWAKE the robust list walk wakes no FUTEX_SPIN_LOCK sleeper
 *   ASK_NOMARK   asking does not set WAITERS
 *   NOAHEAD      a handoff does not wake a sleeper ahead of the one it
 *                goes to
 *   NOWATCH      nor one behind it, to watch it (v3's rule)
 *   NOPASSHAND   a handoff not taken is never passed over: the lock waits
 *                for the waiter handed it, however long it does not run
 *
 * and probes, each an assertion that a step the code takes never happens,
 * which must fail: that shows the model reaches the step, and that no
 * guard of the model keeps it from being explored:
 *
 *   PROBE_HANDOFF3  a handoff while three tasks are alive
 *   PROBE_AHEAD3    a handoff that wakes a sleeper ahead, three alive
 *   PROBE_TIMER3    a pass-over timer that wakes its sleeper, three alive
 *   PROBE_PASSHAND3 a waiter that passes over a handoff, three alive
 *
 * What it abstracts away, and why that is sound for these properties:
 * - Time. A waiter's "waited T" and "due", "the last wakeup has gone
 *   unanswered for T" and "the handoff has not been taken for T" (T
 *   there is the code's answer period, S + T) are
 *   flags that clock processes set at any moment after the waiter wants
 *   the lock (after it queued, for due; after the wakeup or the handoff,
 *   for the others), and eventually: the bound's formula is in the rst,
 *   the model proves the order of events that the formula counts. A
 *   sleeper's timer for a handoff fires at any moment after it slept,
 *   and a pass-over timer at any moment after it was armed.
 * - Each section under the queue head lock is one atomic step: sections
 *   exclude each other, and each touches the word once, with a cmpxchg
 *   that the code retries after dropping the lock when it fails, which
 *   changes nothing. Lockless read-and-cmpxchg pairs (fast paths, the
 *   spinner's take) are atomic steps too: a failed cmpxchg is a retry.
 * - Spinning: whether the owner runs, need_resched(), the spin limit and
 *   the cap on spinners are one nondeterministic choice to stop spinning
 *   at every poll. The OSQ only orders spinners, and is left out.
 * - All tasks have normal priority (FIFO order); priorities, timeouts,
 *   signals, faults and EDEADLK are left out. At most one owner dies
 *   (MAXDEATHS).
 * - The scheduler: any task may be kept from running at any point, and
 *   tasks 2 and 3 may stop running for good wherever they wait: spinning
 *   or asleep, woken or not, after they asked, after they were handed the
 *   lock. Which ones may is fixed at the start (canstop), not by what the
 *   protocol did. Weak fairness holds for everything else. live1 watches
 *   task 1, which always runs; the tasks are alike, so it stands for any
 *   task that runs. Its premise is the rst's: a woken waiter that never
 *   runs again is passed over by an unlock, so task 1 gets the lock
 *   unless every other task has stopped for good with a wakeup still
 *   unanswered, which leaves nobody to unlock; and, for liveness only, a
 *   task that runs takes a handoff within T (see HANDOFF_LATE).
 */

#define N	3

/* Owner deaths in a run: -DMAXDEATHS=0 for none. */
#ifndef MAXDEATHS
#define MAXDEATHS	1
#endif

/* The futex word: TID (0 free), WAITERS, OWNER_DIED. */
byte tid;
bool waiters;
bool died;

/* Kernel state, under the queue head lock. */
bool queued[N + 1];
byte rank[N + 1];	/* place in line, 1 first; FIFO among equals */
byte nq;		/* queued waiters */
bool woken[N + 1];	/* woken, has not looked at the word since */
bool asleep[N + 1];	/* in schedule(), until woken */
bool timed[N + 1];	/* asleep until a handoff is T old, or woken */
bool asked[N + 1];	/* past its due time, asked while running */
bool handed[N + 1];	/* the word was handed to it */
bool duty;		/* a wakeup nobody answered yet (head->woke_at) */
bool hlate;		/* a handoff has not been taken for T */
byte passer;		/* whose pass-over timer the wakeup armed, 0 none */
bool rung[N + 1];	/* its pass-over timer woke it, it has not looked */

/* The clock (see above) and what the checks observe. */
bool want[N + 1];	/* in a lock call, does not own the word */
bool waited[N + 1];	/* waited T in this call */
bool due[N + 1];	/* queued, and past its due time */
bool gone[N + 1];	/* stopped running for good */
bool canstop[N + 1];	/* may stop: every task but the one live1 watches */
bool robust_owed;	/* an owner died, the robust walk has not woken */
byte incs;		/* tasks in the critical section */
byte passed[N + 1];	/* acquisitions by others while it was first asker */
byte deaths;

#define SLEEPER(i)	(queued[i] && asleep[i] && !woken[i])
#define SLEEPER_ANY	(SLEEPER(1) || SLEEPER(2) || SLEEPER(3))
/* The code's w->asleep: it chose to sleep at its last look */
#define CHOSE_SLEEP(i)	(asleep[i] || rung[i])
#define PASS_ARMED	(duty && passer != 0 && queued[passer] && \
			 !woken[passer] && CHOSE_SLEEP(passer))
#define HANDED_ANY	(handed[1] || handed[2] || handed[3])
/*
 * A handoff to a task that stopped for good: a spinner that polls the word
 * then stops at once (head->handing_off), and one queued on the OSQ polls
 * within a segment; so the model's spinner stops too, instead of spinning
 * on for ever. While the one handed runs, a spinner may spin on past the
 * handoff, as in the code one queued on the OSQ does.
 */
#define HANDED_STUCK	((handed[1] && gone[1]) || (handed[2] && gone[2]) || \
			 (handed[3] && gone[3]))
#define ALIVE		(deaths == 0 && !gone[1] && !gone[2] && !gone[3])
#define LOOKER(i)	(queued[i] && (woken[i] || !asleep[i]))
#define NOLOST		(!(tid == 0 && !robust_owed && \
			   (SLEEPER(1) || SLEEPER(2) || SLEEPER(3)) && \
			   !(LOOKER(1) || LOOKER(2) || LOOKER(3))))

/* The first queued waiter in line with @cond, 0 for none. */
#define FIRST(res, k, cond)						\
	res = 0;							\
	k = 1;								\
	do								\
	:: k <= N ->							\
		if							\
		:: queued[k] && (cond) &&				\
		   (res == 0 || rank[k] < rank[res]) -> res = k		\
		:: else -> skip						\
		fi;							\
		k++							\
	:: else -> break						\
	od

#define FIRST_UNWOKEN(res, k)	FIRST(res, k, !woken[k])
#define FIRST_ASKER(res, k)	FIRST(res, k, asked[k])

/*
 * A spinner that has waited T queues, and one past its due time asks: the
 * code checks at every poll, so the model gives it no other choice but to
 * stop spinning.
 */
#define MUST_ASK(me)	((queued[me] && due[me] && !asked[me]) || \
			 (!queued[me] && waited[me]))

/* Whether the scheduler may stop @me for good now, see above. */
#define MAY_STOP(me)	canstop[me]

/* Others than @me are queued. */
#define OTHERS(me)	(nq > (queued[me] -> 1 : 0))

/* The bypass bound: K = 1, a pass only after an owner death. */
#define K	1

/* The call returns owning the word. */
inline done(me)
{
	want[me] = false;
	waited[me] = false;
	due[me] = false
}

/*
 * @me took the word itself: that passes over the first asker, if any,
 * which only an owner's death can let happen (the word was handed over
 * otherwise), and then only once.
 */
inline acquired(me, k, a)
{
	FIRST_ASKER(a, k);
	if
	:: a != 0 && a != me ->
		passed[a]++;
		assert(died && passed[a] <= K)
	:: else -> skip
	fi;
	done(me)
}

inline mark_asked(me)
{
	if
	:: due[me] && !asked[me] ->
		asked[me] = true;
		passed[me] = 0
	:: else -> skip
	fi
}

inline enqueue(me)
{
	if
	:: !queued[me] ->
		queued[me] = true;
		nq++;
		rank[me] = nq;
		woken[me] = false;
		asked[me] = false
	:: else -> skip
	fi
}

inline dequeue(me, k)
{
	if
	:: queued[me] ->
		k = 1;
		do
		:: k <= N ->
			if
			:: queued[k] && rank[k] > rank[me] -> rank[k]--
			:: else -> skip
			fi;
			k++
		:: else -> break
		od;
		queued[me] = false;
		rank[me] = 0;
		nq--
	:: else -> skip
	fi;
	woken[me] = false;
	asked[me] = false;
	passed[me] = 0;
	if
	:: passer == me -> passer = 0
	:: else -> skip
	fi
}

/* futex_spin_answered(): nobody owes a look, the timer is disarmed. */
inline answered()
{
	duty = false;
	passer = 0
}

/*
 * futex_spin_pass_arm(): the first sleeper not woken gets the timer.
 * It only wakes the task; the head is left as it is.
 */
inline arm_pass(k)
{
#ifdef NOPASSTIMER
	passer = 0
#else
	FIRST(passer, k, !woken[k] && CHOSE_SLEEP(k))
#endif
}

/* futex_spin_wake(): @t owes a look, and the clocks on it start. */
inline wake(t, k)
{
	woken[t] = true;
	asleep[t] = false;
	timed[t] = false;
	duty = true;
	arm_pass(k)
}

/*
 * futex_spin_wake_first(): the first asker not woken (only an owner's
 * death wakes nobody who asked), else the first waiter not woken; it owes
 * a look at the word.
 */
inline wake_next(k, t)
{
	FIRST(t, k, asked[k] && !woken[k]);
	if
	:: t == 0 -> FIRST_UNWOKEN(t, k)
	:: else -> skip
	fi;
	if
	:: t != 0 -> wake(t, k)
	:: else -> answered()
	fi
}

/*
 * Take the free word (keeping its bits, WAITERS added for the others) or
 * make sure WAITERS is set; either way nobody owes a look any more.
 */
inline take_or_mark(me, k, a, took)
{
	if
	:: tid == 0 ->
		tid = me;
		waiters = waiters || OTHERS(me);
		took = true;
		acquired(me, k, a);
		dequeue(me, k)
	:: else ->
		waiters = true;
		took = false
	fi;
	answered()
}

#ifdef NOAHEAD
#define AHEAD(a, t)	false
#else
#define AHEAD(a, t)	(a != 0 && rank[a] < rank[t])
#endif
#ifdef NOWATCH
#define WATCH(a, t)	false
#else
#define WATCH(a, t)	(a != 0 && rank[a] > rank[t])
#endif

/*
 * FUTEX_SPIN_UNLOCK: hand over to the first asker, WAITERS kept if others
 * are queued; or free the word, WAITERS clear, and wake the first not
 * woken unless an outstanding wakeup, not yet T old, serves
 * (futex_spin_to_wake()).
 */
inline release(me, k, t, a)
{
#ifdef HAND_UNASKED
	FIRST_UNWOKEN(t, k);
#else
	FIRST_ASKER(t, k);
#endif
	died = false;
	if
	:: t != 0 ->
#ifdef PROBE_HANDOFF3
		assert(!ALIVE);
#endif
		tid = t;
		waiters = nq > 1;
		answered();
		handed[t] = true;
		hlate = false;
		/*
		 * The first sleeper not woken is woken, once the one handed the
		 * lock left the line: if it is ahead, to ask in its turn; if
		 * behind, to watch the handoff.
		 */
		FIRST(a, k, !woken[k] && k != t);
		if
		:: AHEAD(a, t) || WATCH(a, t) ->
#ifdef PROBE_AHEAD3
			assert(!(AHEAD(a, t) && ALIVE));
#endif
			skip
		:: !(AHEAD(a, t) || WATCH(a, t)) -> a = 0
		fi;
		dequeue(t, k);
		asleep[t] = false;
		timed[t] = false;
		if
		:: a != 0 -> wake(a, k)
		:: else -> skip
		fi
	:: else ->
		tid = 0;
		if
		:: !duty -> FIRST_UNWOKEN(t, k)
		:: else -> skip
		fi;
		if
		:: t != 0 -> wake(t, k)
		:: else -> skip
		fi;
		waiters = false
	fi
}

inline take_handed(me, took)
{
	handed[me] = false;
	hlate = false;
	took = true;
	done(me)
}

/*
 * futex_spin_pass_handed(): a handoff not taken for T is undone, the one
 * handed goes back into line, last and woken, and the word is released as
 * the unlock would have released it without that one.
 */
inline pass_handed(k, t, a)
{
	t = 0;
	k = 1;
	do
	:: k <= N ->
		if
		:: handed[k] -> t = k
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	if
#ifndef NOPASSHAND
	:: t != 0 && hlate ->
#ifdef PROBE_PASSHAND3
		assert(!ALIVE);
#endif
		handed[t] = false;
		hlate = false;
		enqueue(t);
		woken[t] = true;
		release(0, k, t, a)
#endif
	:: else -> skip
	fi;
	t = 0
}

/*
 * futex_spin_lock_locked(): take a handed word, else pass over a stale
 * handoff (which may hand the word to @me), queue, ask if due and @ran
 * (spinning, or back at the word after a wakeup), and take the free word
 * or set WAITERS.
 */
inline locked(me, k, a, t, took, ran)
{
	rung[me] = false;
	if
	:: handed[me] -> take_handed(me, took)
	:: !handed[me] ->
		pass_handed(k, t, a);
		if
		:: handed[me] -> take_handed(me, took)
		:: !handed[me] ->
			enqueue(me);
			if
			:: ran -> mark_asked(me)
			:: !ran -> skip
			fi;
			woken[me] = false;
			take_or_mark(me, k, a, took)
		fi
	fi
}

/*
 * A waiter running past its due time asks (or queues, past T), through
 * futex_spin_lock_locked() as well.
 */
inline ask(me, k, a, t, took)
{
	rung[me] = false;
	pass_handed(k, t, a);
	if
	:: handed[me] -> take_handed(me, took)
	:: !handed[me] ->
		enqueue(me);
		mark_asked(me);
		woken[me] = false;
#ifdef ASK_NOMARK
		if
		:: tid == 0 -> take_or_mark(me, k, a, took)
		:: else -> took = false
		fi
#else
		take_or_mark(me, k, a, took)
#endif
	fi
}

/*
 * k, a, t and took only carry values within one step, and each step that
 * sets them clears them at its end: a dead value left in them would make
 * otherwise equal states differ, and the search space many times larger.
 */
proctype task(byte me)
{
	byte k, a, t;
	bool took;

idle:
	want[me] = true;
	if
	:: atomic { tid == 0 && !waiters && !died -> tid = me; acquired(me, k, a); k = 0; a = 0 };
		goto cs
	:: true		/* the word was not free when user space looked */
	fi;

spin:
	do
	:: d_step {
		tid == 0 ->
		tid = me;
		acquired(me, k, a);
		if
		:: queued[me] ->	/* futex_spin_taken_fixup() */
			waiters = waiters || OTHERS(me);
			answered();
			dequeue(me, k)
		:: else -> skip
		fi;
		k = 0; a = 0
	   };
		goto cs
	:: tid != 0 && tid != me && MUST_ASK(me) ->
		d_step { ask(me, k, a, t, took); k = 0; a = 0 };
		if
		:: took -> goto cs
		:: else -> skip
		fi
	:: tid != 0 && tid != me && !MUST_ASK(me) && !HANDED_STUCK ->
		skip	/* the owner runs: poll again (see HANDED_STUCK) */
	:: true -> break			/* stop spinning */
	od;

	/* Preempted here for good: it is not in the kernel's way. */
	if
	:: MAY_STOP(me) -> gone[me] = true; false
	:: true
	fi;

	/* futex_spin_lock_locked(), to sleep: timed if a handoff is out */
	d_step {
		locked(me, k, a, t, took, woken[me]);
		if
		:: !took -> asleep[me] = true; timed[me] = HANDED_ANY
		:: else -> skip
		fi;
		k = 0; a = 0
	};
	if
	:: took -> goto cs
	:: else -> skip
	fi;

	/*
	 * futex_spin_sleep(): woken, or its timer fires (at any time: it
	 * may be an earlier handoff's), or its pass-over timer does, or it
	 * never runs again if it may stop
	 */
	if
	:: !asleep[me]
	:: atomic { timed[me] -> asleep[me] = false; timed[me] = false }
	:: atomic { passer == me && asleep[me] ->
#ifdef PROBE_TIMER3
		assert(!ALIVE);
#endif
		asleep[me] = false; rung[me] = true }
	:: MAY_STOP(me) -> gone[me] = true; false
	fi;
	if
	:: MAY_STOP(me) -> gone[me] = true; false
	:: true
	fi;

	/* Back after a wakeup: the look, without sleeping, then spin. */
	d_step { locked(me, k, a, t, took, true); k = 0; a = 0 };
	if
	:: took -> goto cs
	:: else -> goto spin
	fi;

cs:
	took = false;
	incs++;
	assert(incs == 1);
	incs--;
	if
	:: deaths < MAXDEATHS ->	/* dies holding it: the robust list walk */
		atomic { deaths++; tid = 0; died = true; robust_owed = true };
		d_step {
#ifndef ROBUST_NOWAKE
			wake_next(k, t);
#endif
			robust_owed = false;
			k = 0; t = 0
		};
		gone[me] = true;
		goto dead
	:: atomic { tid == me && !waiters && !died -> tid = 0 }
	:: waiters || died -> d_step { release(me, k, t, a); k = 0; t = 0; a = 0 }
	fi;
	goto idle;
dead:
	skip
}

/* Time passes for each waiter: it eventually waited T, then is due. */
proctype clock(byte me)
{
	do
	:: atomic { want[me] && !waited[me] -> waited[me] = true }
	:: atomic { queued[me] && waited[me] && !due[me] -> due[me] = true }
	od
}

/*
 * A handoff not taken eventually goes untaken for T. For liveness, only a handoff to a task
 * that stopped for good: the bound's premise is that a task that runs
 * comes back to the word within T (its latency, counted in the rst), and
 * a task that runs but is passed over every time it is handed the lock
 * is one that does not.
 */
#ifdef LIVENESS
#define HANDOFF_LATE	((handed[2] && gone[2]) || (handed[3] && gone[3]))
#else
#define HANDOFF_LATE	HANDED_ANY
#endif

active proctype answer_clock()
{
	do
	:: atomic { HANDOFF_LATE && !hlate -> hlate = true }
	od
}

init
{
	atomic {
		canstop[2] = true;
		canstop[3] = true;
		run task(1);
		run task(2);
		run task(3);
		run clock(1);
		run clock(2);
		run clock(3)
	}
}

ltl nolost { [] NOLOST }
ltl waitset { [] (SLEEPER_ANY -> (waiters || PASS_ARMED)) }
ltl live1 { [] (want[1] -> <> (!want[1] || (gone[2] && gone[3] && duty))) }
