// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stall injection for FUTEX_SPIN_LOCK / FUTEX_SPIN_UNLOCK.
 *
 * Some races of the two operations open for a few instructions only, and
 * a test cannot hit them in reasonable time by itself. These knobs hold one
 * chosen task at a named point, so that a test can order the other tasks
 * around it. In debugfs, futex_spin/inject/:
 *
 *   tid        the one task (TID in the initial PID namespace) that the
 *              stall applies to; 0 for none
 *   stall      a point of enum futex_spin_stall_point: the task waits
 *              there, uninterruptibly, until stall is written again, but
 *              never longer than FUTEX_SPIN_STALL_MAX
 *
 * A cmpxchg of the word that fails as an LL/SC helper's may is fail_futex's
 * (CONFIG_FAIL_FUTEX): the fault injection framework cannot hold a task.
 */

#include <linux/debugfs.h>
#include <linux/sched.h>
#include <linux/wait.h>

#include "futex.h"

/* A test that dies mid-way must not leave a task stuck for good. */
#define FUTEX_SPIN_STALL_MAX	(10 * HZ)

static u32 futex_spin_inject_tid;
static u32 futex_spin_stall_at;
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

void futex_spin_inject_init(struct dentry *parent)
{
	struct dentry *dir = debugfs_create_dir("inject", parent);

	debugfs_create_u32("tid", 0600, dir, &futex_spin_inject_tid);
	debugfs_create_file_unsafe("stall", 0600, dir, NULL,
				   &futex_spin_stall_fops);
}
