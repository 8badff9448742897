/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small mutex on FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK.
 *
 * Only syscall(2) and compiler atomics are used, never a libc lock, so that
 * the selftests and the benchmark exercise the kernel path and nothing else.
 *
 * The futex word has the PI layout: the owner's TID in FUTEX_TID_MASK,
 * FUTEX_WAITERS and FUTEX_OWNER_DIED. User space only ever does the two
 * fast paths (0 -> TID to lock, TID -> 0 to unlock); every other transition
 * belongs to the kernel.
 *
 * Each thread that locks keeps a struct futex_spin_thread: it caches the
 * TID (which a fork() child must not inherit, so a child initialises its
 * own) and holds the robust list head of that thread.
 */
#ifndef _FUTEX_SPIN_H
#define _FUTEX_SPIN_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <linux/types.h>

#ifndef FUTEX_SPIN_LOCK
#define FUTEX_SPIN_LOCK			14
#endif
#ifndef FUTEX_SPIN_UNLOCK
#define FUTEX_SPIN_UNLOCK		15
#endif
#ifndef FUTEX_SPIN_LOCK_PRIVATE
#define FUTEX_SPIN_LOCK_PRIVATE		(FUTEX_SPIN_LOCK | FUTEX_PRIVATE_FLAG)
#endif
#ifndef FUTEX_SPIN_UNLOCK_PRIVATE
#define FUTEX_SPIN_UNLOCK_PRIVATE	(FUTEX_SPIN_UNLOCK | FUTEX_PRIVATE_FLAG)
#endif
#ifndef FUTEX_ROBUST_UNLOCK
#define FUTEX_ROBUST_UNLOCK		512
#endif
#ifndef FUTEX_ROBUST_LIST32
#define FUTEX_ROBUST_LIST32		1024
#endif

#define FUTEX_SPIN_DEBUGFS		"/sys/kernel/debug/futex_spin"

/* Mutex attributes, for futex_spin_mutex_init() */
#define FUTEX_SPIN_SHARED	0x1	/* used by more than one process */
#define FUTEX_SPIN_ROBUST	0x2	/* recovered when its owner dies */

struct futex_spin_mutex {
	__u32 word;
	__u32 attr;
	/* Entry in the owner's robust list while a robust mutex is held */
	struct robust_list node;
};

struct futex_spin_thread {
	struct robust_list_head robust;
	pid_t tid;
};

/*
 * The kernel finds the word of a robust list entry at this offset from the
 * entry. Bit 0 of the entry pointers stays clear: these are not PI futexes.
 */
#define FUTEX_SPIN_ROBUST_OFFSET					\
	((long)offsetof(struct futex_spin_mutex, word) -		\
	 (long)offsetof(struct futex_spin_mutex, node))

static inline long futex_spin_syscall(__u32 *uaddr, int op, __u32 val,
				      const struct timespec *timeout,
				      __u32 *uaddr2, __u32 val3)
{
	return syscall(SYS_futex, uaddr, op, val, timeout, uaddr2, val3);
}

static inline void futex_spin_mutex_init(struct futex_spin_mutex *m,
					 __u32 attr)
{
	memset(m, 0, sizeof(*m));
	m->attr = attr;
}

static inline int futex_spin_op(const struct futex_spin_mutex *m, int cmd)
{
	return (m->attr & FUTEX_SPIN_SHARED) ? cmd : cmd | FUTEX_PRIVATE_FLAG;
}

/*
 * Set up the calling thread's state. With @robust, the thread's robust list
 * is registered with the kernel: this replaces the list libc registered, so
 * libc's own robust mutexes lose owner-death recovery in this thread, and
 * @self must stay valid until the thread has exited. Returns 0 or -errno.
 */
static inline int futex_spin_thread_init(struct futex_spin_thread *self,
					 bool robust)
{
	self->tid = syscall(SYS_gettid);
	self->robust.list.next = &self->robust.list;
	self->robust.futex_offset = FUTEX_SPIN_ROBUST_OFFSET;
	self->robust.list_op_pending = NULL;
	if (robust &&
	    syscall(SYS_set_robust_list, &self->robust, sizeof(self->robust)))
		return -errno;
	return 0;
}

/*
 * The kernel reads the robust list when the thread dies, which may happen
 * between any two instructions: keep the compiler from reordering the list
 * updates around the lock word operations.
 */
static inline void futex_spin_robust_begin(struct futex_spin_mutex *m,
					   struct futex_spin_thread *self)
{
	if (!(m->attr & FUTEX_SPIN_ROBUST))
		return;
	self->robust.list_op_pending = &m->node;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void futex_spin_robust_end(struct futex_spin_mutex *m,
					 struct futex_spin_thread *self)
{
	if (!(m->attr & FUTEX_SPIN_ROBUST))
		return;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	self->robust.list_op_pending = NULL;
}

static inline void futex_spin_robust_link(struct futex_spin_mutex *m,
					  struct futex_spin_thread *self)
{
	if (!(m->attr & FUTEX_SPIN_ROBUST))
		return;
	m->node.next = self->robust.list.next;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	self->robust.list.next = &m->node;
}

static inline void futex_spin_robust_unlink(struct futex_spin_mutex *m,
					    struct futex_spin_thread *self)
{
	struct robust_list **pp = &self->robust.list.next;

	if (!(m->attr & FUTEX_SPIN_ROBUST))
		return;
	/* Locks are mostly released in reverse order: the walk is short. */
	while (*pp != &self->robust.list) {
		if (*pp == &m->node) {
			*pp = m->node.next;
			break;
		}
		pp = &(*pp)->next;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline bool futex_spin_fast_lock(struct futex_spin_mutex *m,
					pid_t tid)
{
	__u32 zero = 0;

	return __atomic_compare_exchange_n(&m->word, &zero, tid, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/*
 * Lock @m, waiting until @abstime (absolute, on @clock: CLOCK_MONOTONIC or
 * CLOCK_REALTIME) or forever when @abstime is NULL.
 *
 * Returns 0, or -EOWNERDEAD when the lock is taken but its previous owner
 * died holding it (call futex_spin_consistent() once the protected state is
 * repaired), or the kernel's error as -errno: -ETIMEDOUT, -EDEADLK,
 * -EFAULT, -EINVAL, -ENOMEM, or -ENOSYS without the feature.
 */
static inline int futex_spin_timedlock(struct futex_spin_mutex *m,
				       struct futex_spin_thread *self,
				       clockid_t clock,
				       const struct timespec *abstime)
{
	int op, ret = 0;

	if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)
		return -EINVAL;

	futex_spin_robust_begin(m, self);
	if (!futex_spin_fast_lock(m, self->tid)) {
		op = futex_spin_op(m, FUTEX_SPIN_LOCK);
		if (clock == CLOCK_REALTIME)
			op |= FUTEX_CLOCK_REALTIME;
		if (futex_spin_syscall(&m->word, op, 0, abstime, NULL, 0))
			ret = -errno;
		else if (__atomic_load_n(&m->word, __ATOMIC_RELAXED) &
			 FUTEX_OWNER_DIED)
			ret = -EOWNERDEAD;
	}
	if (!ret || ret == -EOWNERDEAD)
		futex_spin_robust_link(m, self);
	futex_spin_robust_end(m, self);
	return ret;
}

static inline int futex_spin_lock(struct futex_spin_mutex *m,
				  struct futex_spin_thread *self)
{
	return futex_spin_timedlock(m, self, CLOCK_MONOTONIC, NULL);
}

/*
 * Returns 0 or -EOWNERDEAD when the lock was taken, -EBUSY when it is held
 * (also by the caller), or the kernel's error as -errno.
 */
static inline int futex_spin_trylock(struct futex_spin_mutex *m,
				     struct futex_spin_thread *self)
{
	/* A deadline in the past: the kernel takes a free word or fails. */
	static const struct timespec past = { 0, 0 };
	__u32 word = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
	int ret;

	if (word & FUTEX_TID_MASK)
		return -EBUSY;
	/*
	 * A word without an owner but with other bits set (a dead owner's
	 * FUTEX_OWNER_DIED, a stale FUTEX_WAITERS) is the kernel's to take.
	 */
	ret = futex_spin_timedlock(m, self, CLOCK_MONOTONIC, &past);
	return ret == -ETIMEDOUT ? -EBUSY : ret;
}

/* After -EOWNERDEAD: the protected state is consistent again. */
static inline void futex_spin_consistent(struct futex_spin_mutex *m)
{
	/* Atomic: the kernel may set FUTEX_WAITERS at the same time. */
	__atomic_fetch_and(&m->word, ~FUTEX_OWNER_DIED, __ATOMIC_RELAXED);
}

/* Returns 0, or the kernel's error as -errno (-EPERM when not the owner) */
static inline int futex_spin_unlock(struct futex_spin_mutex *m,
				    struct futex_spin_thread *self)
{
	__u32 tid = self->tid;
	int ret = 0;

	futex_spin_robust_begin(m, self);
	futex_spin_robust_unlink(m, self);
	if (!__atomic_compare_exchange_n(&m->word, &tid, 0, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED) &&
	    futex_spin_syscall(&m->word, futex_spin_op(m, FUTEX_SPIN_UNLOCK),
			       0, NULL, NULL, 0) < 0)
		ret = -errno;
	futex_spin_robust_end(m, self);
	return ret;
}

/*
 * Feature probe: FUTEX_SPIN_UNLOCK on a word holding 0 fails with EPERM on
 * a kernel that has the opcodes, ENOSYS on one that does not. Returns that
 * error as -errno (0 would mean a kernel that broke the contract).
 */
static inline int futex_spin_probe(void)
{
	__u32 word = 0;

	if (!futex_spin_syscall(&word, FUTEX_SPIN_UNLOCK_PRIVATE, 0, NULL,
				NULL, 0))
		return 0;
	return -errno;
}

/*
 * The value on the line of @file (in FUTEX_SPIN_DEBUGFS) that starts with
 * @name, or on its first line for a NULL @name: -1 and errno if none.
 */
static inline long long futex_spin_debugfs_read(const char *file,
						const char *name)
{
	size_t len = name ? strlen(name) : 0;
	char path[128], line[128], *end;
	long long ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", FUTEX_SPIN_DEBUGFS, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	errno = ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (name && (strncmp(line, name, len) || line[len] != ' '))
			continue;
		errno = 0;
		ret = strtoll(line + len, &end, 10);
		if (end == line + len)
			errno = EINVAL;
		if (errno)
			ret = -1;
		break;
	}
	fclose(f);
	return ret;
}

/* A counter of the debugfs "stats" file, e.g. "handoffs" */
static inline long long futex_spin_stat(const char *name)
{
	return futex_spin_debugfs_read("stats", name);
}

/* Queue heads in the kernel: 0 when no task that used the opcodes is alive */
static inline long long futex_spin_live_heads(void)
{
	return futex_spin_debugfs_read("live_heads", NULL);
}

#endif /* _FUTEX_SPIN_H */
