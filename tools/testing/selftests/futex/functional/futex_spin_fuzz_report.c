// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: the report. The failure records, the checks at the end
 * of the run (queue heads, kernel log), the kernel's counters and the
 * counts of operations and results.
 */
#include "futex_spin_fuzz.h"

const char * const check_names[NR_CHECKS] = {
	[CK_RUN]	= "workers ran without crashing or harness errors",
	[CK_HANG]	=
		"no task stuck in the kernel past its deadline + slack, killed tasks exit",
	[CK_EXCL]	= "honest locks stay exclusive and name their owner",
	[CK_STARVE]	= "honest sleepers are not starved past the handoff bound (lost wakeups)",
	[CK_ABI]	= "FUTEX_SPIN_LOCK/UNLOCK results and errnos as documented",
	[CK_LIVE]	=
		"no task stays asleep in FUTEX_SPIN_LOCK on a free honest lock (lost wakeups)",
	[CK_KILLED]	=
		"a waiter SIGKILLed before the unlock that hands it the lock does not die owning it",
	[CK_HEADS]	= "no live futex_spin queue heads after the run",
	[CK_KLOG]	= "kernel log has no splat from the run",
};

void print_fails(bool final)
{
	while (X.fails_printed < MAX_FAILS &&
	       X.fails_printed < LOAD(&H->fail_next)) {
		struct fail_rec *r = &H->fails[X.fails_printed];
		char *line, *save = NULL;

		if (!LOAD(&r->len) && !final)
			break;
		ksft_print_msg("FAILURE [%s]:\n", check_names[r->check % NR_CHECKS]);
		for (line = strtok_r(r->text, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			ksft_print_msg("  %s\n", line);
		X.fails_printed++;
	}
}

/* ------------------------------------------------------------------ */
/* End of run checks and report                                        */

bool debugfs_ready(void)
{
	struct stat st;

	if (!stat(FS_DIR, &st))
		return true;
	mount("none", "/sys/kernel/debug", "debugfs", 0, NULL);
	return !stat(FS_DIR, &st);
}

/*
 * Each task keeps the queue head it used last, and the kernel unlinks a
 * head when the last task keeping it exits: once every worker is gone
 * (this process uses no lock), none may be left. Allow a moment for tasks
 * that were still on their way out.
 */
int check_live_heads(char *msg, size_t len)
{
	char buf[64] = "";
	unsigned long long t0 = mono_ns();

	if (H->cfg.emulate) {
		snprintf(msg, len, "PI emulation, no queue heads");
		return KSFT_SKIP;
	}
	if (!debugfs_ready()) {
		snprintf(msg, len, "%s/live_heads not available", FS_DIR);
		return KSFT_SKIP;
	}
	do {
		read_file(FS_DIR "/live_heads", buf, sizeof(buf));
		if (atoi(buf) == 0 && buf[0] == '0')
			break;
		sleep_ns(100 * MSEC);
	} while (mono_ns() - t0 < 5 * NSEC);
	buf[strcspn(buf, "\n")] = 0;
	snprintf(msg, len, "live_heads = %s", buf);
	return buf[0] == '0' && atoi(buf) == 0 ? KSFT_PASS : KSFT_FAIL;
}

static const char * const splats[] = {
	"WARNING:", "BUG:", "BUG ", "KASAN", "UBSAN", "general protection",
	"Oops", "Kernel panic", "possible recursive locking",
	"possible circular locking", "inconsistent lock state",
	"lockdep", "DEBUG_LOCKS_WARN_ON", "unreferenced object",
	"soft lockup", "hard LOCKUP", "INFO: task", "list_add corruption",
	"list_del corruption", "ODEBUG", "rcu_sched detected stall",
	"rcu: INFO",
};

/* The kernel log from our start on, through /dev/kmsg. */
int check_klog(char *msg, size_t len)
{
	char rec[2048];
	int hits = 0;
	unsigned int i;

	if (X.kmsg < 0) {
		snprintf(msg, len, "/dev/kmsg not readable");
		return KSFT_SKIP;
	}
	for (;;) {
		ssize_t n = read(X.kmsg, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: read on */
		if (n <= 0)
			break;
		rec[n] = 0;
		for (i = 0; i < ARRAY_SIZE(splats); i++) {
			if (!strstr(rec, splats[i]))
				continue;
			if (hits++ < 20) {
				rec[strcspn(rec, "\n")] = 0;
				ksft_print_msg("kernel log: %s\n",
					       strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
			}
			break;
		}
	}
	snprintf(msg, len, "%d splat line(s) in the kernel log", hits);
	return hits ? KSFT_FAIL : KSFT_PASS;
}

void print_kstats(void)
{
	char now[2048], *line, *save = NULL;

	if (H->cfg.emulate || !debugfs_ready())
		return;
	read_file(FS_DIR "/stats", now, sizeof(now));
	ksft_print_msg("kernel futex_spin stats during the run:\n");
	for (line = strtok_r(now, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64], *p;
		unsigned long long v, v0 = 0;

		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		p = strstr(X.stats0, name);
		if (p)
			sscanf(p + strlen(name), "%llu", &v0);
		ksft_print_msg("  %-22s %llu\n", name, v - v0);
	}
}

void print_counts(double secs)
{
	unsigned long long per_op[NR_OPS][NR_EB] = {}, per_b[NR_EB] = {}, total = 0;
	unsigned int s, op, b;
	int other = 0;

	for (s = 0; s < NR_SLOTS; s++) {
		for (op = 0; op < NR_OPS; op++)
			for (b = 0; b < NR_EB; b++)
				per_op[op][b] += H->slots[s].cnt[op][b];
		if (H->slots[s].last_other)
			other = H->slots[s].last_other;
	}
	for (op = 0; op < NR_OPS; op++)
		for (b = 0; b < NR_EB; b++) {
			per_b[b] += per_op[op][b];
			total += per_op[op][b];
		}

	ksft_print_msg("operations: %llu in %.1f s (%.0f/s), seed %llu\n",
		       total, secs, total / secs, H->cfg.seed);
	ksft_print_msg("per operation: count, then results:\n");
	for (op = 0; op < NR_OPS; op++) {
		unsigned long long n = 0;
		char line[512];
		int len = 0;

		for (b = 0; b < NR_EB; b++)
			n += per_op[op][b];
		if (!n)
			continue;
		for (b = 0; b < NR_EB; b++)
			if (per_op[op][b])
				len += snprintf(line + len, sizeof(line) - len,
						" %s=%llu", bucket_name(b),
						per_op[op][b]);
		ksft_print_msg("  %-18s %10llu %s\n", op_names[op], n, line);
	}
	ksft_print_msg("errno histogram (all operations):\n");
	for (b = 0; b < NR_EB; b++)
		if (per_b[b])
			ksft_print_msg("  %-12s %llu%s\n", bucket_name(b), per_b[b],
				       b == EB_OTHER ? " (last: see below)" : "");
	if (per_b[EB_OTHER])
		ksft_print_msg("  last other errno: %s\n", errname(other));
	ksft_print_msg("owner-died takeovers %llu, honest waits >= 1 s %llu\n",
		       H->owner_died_seen, H->lock_waits_1s);
	ksft_print_msg("honest timeouts after >= 1 s checked against the handoff bound: %llu\n",
		       H->starve_checked);
	ksft_print_msg("longest an honest ETIMEDOUT came past its deadline: %.3f ms\n",
		       (double)H->late_max_ns / 1000000);
	ksft_print_msg("waiters SIGKILLed at an unlock: %llu before it, %llu after it\n",
		       H->kill_ops[0], H->kill_ops[1]);
	ksft_print_msg("  died owning it: %llu after returning, %llu undecided; taken over %llu\n",
		       H->kill_late, H->kill_undecided, H->kill_repairs);
	ksft_print_msg("liveness (-L %u ms): %llu samples of a free word under a waiter\n",
		       H->cfg.live_ms, X.live_samples);
	ksft_print_msg("  %llu waits saw it free for a whole window, %llu samples deferred\n",
		       X.live_windows, X.live_deferred);
}
