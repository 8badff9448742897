// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stall and failure injection for FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK.
 *
 * Some races of the two operations open for a few instructions only, and
 * a test cannot hit them in reasonable time by itself. These knobs hold one
 * chosen task at a named point, or make its cmpxchg of the futex word fail
 * the way the futex helpers of LL/SC architectures may, so that a test can
 * order the other tasks around it. In debugfs, futex_spin/inject/:
 *
 *   tid        the one task (TID in the initial PID namespace) that the
 *              injections apply to; 0 for none
 *   stall      a point of enum futex_spin_stall_point: the task waits
 *              there, uninterruptibly, until stall is written again, but
 *              never longer than FUTEX_SPIN_STALL_MAX
 *   eagain_ms  for this many milliseconds from the write, every cmpxchg
 *              of a futex word by the task fails with -EAGAIN
 */

#include <linux/debugfs.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>

#include "futex.h"

/* A test that dies mid-way must not leave a task stuck for good. */
#define FUTEX_SPIN_STALL_MAX	(10 * HZ)

static u32 futex_spin_inject_tid;
static u32 futex_spin_stall_at;
static u64 futex_spin_eagain_until;
static DECLARE_WAIT_QUEUE_HEAD(futex_spin_stall_wq);

static bool futex_spin_inject_target(void)
{
	u32 tid = READ_ONCE(futex_spin_inject_tid);

	return tid && tid == task_pid_nr(current);
}

void futex_spin_stall(enum futex_spin_stall_point point)
{
	if (READ_ONCE(futex_spin_stall_at) != point || !futex_spin_inject_target())
		return;
	wait_event_timeout(futex_spin_stall_wq,
			   READ_ONCE(futex_spin_stall_at) != point,
			   FUTEX_SPIN_STALL_MAX);
}

bool futex_spin_inject_eagain(void)
{
	return futex_spin_inject_target() &&
	       ktime_get_ns() < READ_ONCE(futex_spin_eagain_until);
}

static int futex_spin_stall_get(void *data, u64 *val)
{
	*val = READ_ONCE(futex_spin_stall_at);
	return 0;
}

static int futex_spin_stall_set(void *data, u64 val)
{
	WRITE_ONCE(futex_spin_stall_at, val);
	wake_up_all(&futex_spin_stall_wq);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(futex_spin_stall_fops, futex_spin_stall_get,
			 futex_spin_stall_set, "%llu\n");

static int futex_spin_eagain_set(void *data, u64 ms)
{
	WRITE_ONCE(futex_spin_eagain_until, ktime_get_ns() + ms * NSEC_PER_MSEC);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(futex_spin_eagain_fops, NULL, futex_spin_eagain_set,
			 "%llu\n");

void futex_spin_inject_init(struct dentry *parent)
{
	struct dentry *dir = debugfs_create_dir("inject", parent);

	debugfs_create_u32("tid", 0600, dir, &futex_spin_inject_tid);
	debugfs_create_file_unsafe("stall", 0600, dir, NULL,
				   &futex_spin_stall_fops);
	debugfs_create_file_unsafe("eagain_ms", 0200, dir, NULL,
				   &futex_spin_eagain_fops);
}
