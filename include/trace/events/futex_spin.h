/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM futex_spin

#if !defined(_TRACE_FUTEX_SPIN_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_FUTEX_SPIN_H

#include <linux/futex.h>
#include <linux/tracepoint.h>

/*
 * Every event names the futex by its key (address and offset within the
 * mapping or page, never a kernel pointer) and carries one value: the TID
 * of the waiter concerned; spin_aborted carries the reason instead.
 */
DECLARE_EVENT_CLASS(futex_spin_event,
		    TP_PROTO(union futex_key *key, u32 val),
		    TP_ARGS(key, val),
		    TP_STRUCT__entry(__field(unsigned long, word)
				     __field(unsigned int, offset)
				     __field(u32, val)),
		    TP_fast_assign(__entry->word = key->both.word;
				   __entry->offset = key->both.offset;
				   __entry->val = val;),
		    TP_printk("key=%lx:%x val=%u", __entry->word,
			      __entry->offset, __entry->val)
);

/* A locker found the word taken and queued as a sleeper for the first time. */
DEFINE_EVENT(futex_spin_event, futex_spin_contended,
	     TP_PROTO(union futex_key *key, u32 tid),
	     TP_ARGS(key, tid));

/* A waiter goes to sleep. */
DEFINE_EVENT(futex_spin_event, futex_spin_sleep,
	     TP_PROTO(union futex_key *key, u32 tid),
	     TP_ARGS(key, tid));

/* The first sleeper is woken to compete for the released word. */
DEFINE_EVENT(futex_spin_event, futex_spin_wake,
	     TP_PROTO(union futex_key *key, u32 tid),
	     TP_ARGS(key, tid));

/* The unlocker gave the word directly to a sleeper past the starvation bound. */
DEFINE_EVENT(futex_spin_event, futex_spin_handoff,
	     TP_PROTO(union futex_key *key, u32 tid),
	     TP_ARGS(key, tid));

/* A waiter's deadline passed before it got the word. */
DEFINE_EVENT(futex_spin_event, futex_spin_timeout,
	     TP_PROTO(union futex_key *key, u32 tid),
	     TP_ARGS(key, tid));

/* The owner died with the word on its robust list; a sleeper was woken. */
DEFINE_EVENT(futex_spin_event, futex_spin_owner_died,
	     TP_PROTO(union futex_key *key, u32 tid),
	     TP_ARGS(key, tid));

/* A spinner took the word while its owner ran. */
DEFINE_EVENT(futex_spin_event, futex_spin_spin_acquired,
	     TP_PROTO(union futex_key *key, u32 tid),
	     TP_ARGS(key, tid));

TRACE_DEFINE_ENUM(FUTEX_SPIN_ABORTED_OWNER);
TRACE_DEFINE_ENUM(FUTEX_SPIN_ABORTED_RESCHED);
TRACE_DEFINE_ENUM(FUTEX_SPIN_ABORTED_FAULT);
TRACE_DEFINE_ENUM(FUTEX_SPIN_ABORTED_CAP);
TRACE_DEFINE_ENUM(FUTEX_SPIN_ABORTED_BOUND);
TRACE_DEFINE_ENUM(FUTEX_SPIN_ABORTED_LIMIT);

/*
 * A spinner gave up: owner off CPU (or the word reserved by a handoff),
 * need_resched, a signal or the deadline, a fault, the spinner cap, the
 * need to queue or to ask for the lock first (it then spins on), or T on
 * one owner. The reasons are the values of enum futex_spin_outcome in
 * kernel/futex/spin.c, the only includer.
 */
TRACE_EVENT(futex_spin_spin_aborted,
	    TP_PROTO(union futex_key *key, u32 reason),
	    TP_ARGS(key, reason),
	    TP_STRUCT__entry(__field(unsigned long, word)
			     __field(unsigned int, offset)
			     __field(u32, reason)),
	    TP_fast_assign(__entry->word = key->both.word;
			   __entry->offset = key->both.offset;
			   __entry->reason = reason;),
	    TP_printk("key=%lx:%x reason=%s", __entry->word, __entry->offset,
		      __print_symbolic(__entry->reason,
				       { FUTEX_SPIN_ABORTED_OWNER, "owner" },
				       { FUTEX_SPIN_ABORTED_RESCHED, "resched" },
				       { FUTEX_SPIN_ABORTED_FAULT, "fault" },
				       { FUTEX_SPIN_ABORTED_CAP, "cap" },
				       { FUTEX_SPIN_ABORTED_BOUND, "bound" },
				       { FUTEX_SPIN_ABORTED_LIMIT, "limit" }))
);

/* A woken sleeper goes back to spinning. */
DEFINE_EVENT(futex_spin_event, futex_spin_respin,
	     TP_PROTO(union futex_key *key, u32 tid),
	     TP_ARGS(key, tid));

#endif /* _TRACE_FUTEX_SPIN_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
