// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz - seeded stress and fuzz test for FUTEX_SPIN_LOCK and
 * FUTEX_SPIN_UNLOCK.
 *
 * Several worker processes, each with several threads, run random
 * sequences of operations on futex words until a time limit (-t) or an
 * operation budget (-n) is reached:
 *
 *  - "honest" locks are touched only by well-behaved code: the user space
 *    fast paths, FUTEX_SPIN_LOCK with valid timeouts on both clocks, and
 *    FUTEX_SPIN_UNLOCK by the owner, with the owner registered in its
 *    robust list. Every critical section checks that it is alone (a holder
 *    field exchanged on entry and exit, a canary) and that the word names
 *    its owner. Probes whose result the ABI fixes (relock: EDEADLK, foreign
 *    unlock: EPERM, bad arguments: EINVAL) may touch them too, because a
 *    correct kernel leaves the lock alone. Some unlocks have the kernel
 *    clear the robust list's pending op (FUTEX_ROBUST_UNLOCK).
 *  - the process's private futex hash is replaced under all of this
 *    (PR_FUTEX_HASH_SET_SLOTS), which moves every queue head of its
 *    private locks, now and then to the global hash for good.
 *  - "abused" words get everything else: forged and garbage values, other
 *    tasks' TIDs, unlocks by non-owners, FUTEX_WAIT/WAKE/LOCK_PI/UNLOCK_PI/
 *    requeue/waitv/futex2 calls, bad addresses and arguments, pages that
 *    are unmapped, made read-only or MADV_DONTNEED'ed concurrently, and
 *    garbage robust lists.
 *  - tasks come and go: threads exit while holding locks, the harness
 *    SIGKILLs and SIGSTOPs whole processes, threads fork while holding
 *    locks and kill their children inside FUTEX_SPIN_LOCK, and a thread
 *    execs the program again while other processes wait for locks its
 *    siblings hold (de_thread() kills the siblings, their robust lists
 *    hand the locks on).
 *  - the owner of a non-robust "kill lock" SIGKILLs a forked waiter right
 *    before or after the unlock that may hand the lock to it: a waiter
 *    killed before the unlock must not die owning the lock.
 *
 * Every wait in the kernel has a deadline (a NULL timeout on an honest lock
 * an implicit one, FOREVER_BOUND), or its task is killed, so a lost wakeup
 * shows as a watchdog report, not as a hung test. Kernel bugs (a broken
 * honest lock, a task stuck past its deadline, a waiter left asleep on a
 * free honest lock (sampled by the harness), a lock granted together
 * with an error, a sleeper starved past the handoff bound, an undocumented
 * result, live queue heads after the run, a splat in the kernel log) are
 * TAP failures, each reported with the last operations of the thread that
 * saw it; the errors the abuse provokes are only counted. The end of the
 * output has the number of operations, the count and results of each
 * operation, an errno histogram and the kernel's futex_spin counters.
 *
 * The seed fixes every thread's sequence of choices; the interleaving of
 * the threads is not reproducible. Run with -s SEED (and the same -p, -T,
 * -H, -k, -d options, printed as a "replay:" line) to replay the choices.
 * -e runs the same program on FUTEX_LOCK_PI2/FUTEX_UNLOCK_PI instead, to
 * test the harness itself on a kernel without the new operations.
 */
#include "futex_spin_fuzz.h"

/* The memfd every process maps, and this process's own state. */
struct shm_hdr *H;
struct pctx P;

/*
 * The errno of a syscall number the kernel does not know, read once at
 * start: the futex syscall returns the same one for an unknown command,
 * which is how a kernel without the feature answers.
 */
int nosys_errno;

static const char * const group_names[NR_GROUPS] = {
	"honest", "abuse", "other", "pages", "robust", "signals", "fork",
	"exec", "exit", "kill", "stop", "hash",
};

static void usage(const char *prog)
{
	unsigned int g;

	printf("Usage: %s [-s SEED] [-t SECONDS | -n OPS] [-p PROCS] [-T THREADS]\n"
	       "          [-H LOCKS] [-S SLACK] [-k KILL_MS] [-L LIVE_MS] [-d GROUP,...]\n"
	       "          [-e] [-r] [-l]\n"
	       "  -s  seed (printed at start; replays the same choices)\n"
	       "  -t  run time in seconds (default 60)\n"
	       "  -n  stop after about this many operations\n"
	       "  -p  worker processes (1-%d, default 3)\n"
	       "  -T  threads per process (1-%d, default 6)\n"
	       "  -H  shared honest locks (1-%d, default 4)\n"
	       "  -S  watchdog slack in seconds (default 10)\n"
	       "  -k  mean interval between harness SIGKILLs in ms (0: none, default 3000)\n"
	       "  -L  liveness window in ms: a waiter asleep on a free honest lock\n"
	       "      that long fails (0: off, default 1000)\n"
	       "  -l  test the liveness check: fake lost wakeups, which must fail it\n"
	       "  -d  disable groups of operations:",
	       prog, MAX_PROCS, MAX_THREADS, MAX_HS);
	for (g = 0; g < NR_GROUPS; g++)
		printf(" %s", group_names[g]);
	printf("\n  -e  emulate with FUTEX_LOCK_PI2/UNLOCK_PI (harness self-test)\n"
	       "  -r  one SCHED_FIFO thread per process\n");
}

static unsigned int parse_groups(char *arg)
{
	unsigned int mask = 0, g;
	char *tok, *save = NULL;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (g = 0; g < NR_GROUPS; g++)
			if (!strcmp(tok, group_names[g]))
				break;
		if (g == NR_GROUPS) {
			fprintf(stderr, "unknown group %s\n", tok);
			exit(KSFT_FAIL);
		}
		mask |= 1U << g;
	}
	return mask;
}

static __noreturn void exec_worker(int fd, int slot)
{
	void *shm = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);

	if (shm == MAP_FAILED || slot < 0 || slot >= MAX_PROCS)
		_exit(3);
	H = shm;
	P.slot = slot;
	ADD(&H->procs[slot].gen, 1);
	worker_proc(slot, true);
}

/*
 * kselftest.h keeps the test plan and the counts in static variables, one
 * copy per file: a bail out prints them, so it has to come from here.
 */
__noreturn void harness_bail(const char *what)
{
	ksft_exit_fail_msg("%s: %s\n", what, strerror(errno));
}

int main(int argc, char **argv)
{
	unsigned long long seed = 0, duration = 0, ops = 0;
	unsigned int nprocs = 3, nthreads = 6, nhs = 4, kill_ms = 3000;
	unsigned int live_ms = 1000, live_selftest = 0;
	unsigned int disabled = 0, emulate = 0, rt = 0;
	unsigned long long slack = 10;
	bool have_seed = false;
	unsigned int z = 0, g;
	int c, memfd, res[NR_CHECKS];
	char msg[NR_CHECKS][256];
	double secs;
	long ret;

	syscall(-1);
	nosys_errno = errno;
	P.slot = -1;

	if (argc == 4 && !strcmp(argv[1], "--exec-worker"))
		exec_worker(atoi(argv[2]), atoi(argv[3]));

	while ((c = getopt(argc, argv, "s:t:n:p:T:H:S:k:L:d:erlch")) != -1) {
		switch (c) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			have_seed = true;
			break;
		case 't':
			duration = strtoull(optarg, NULL, 0) * NSEC;
			break;
		case 'n':
			ops = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			nprocs = atoi(optarg);
			break;
		case 'T':
			nthreads = atoi(optarg);
			break;
		case 'H':
			nhs = atoi(optarg);
			break;
		case 'S':
			slack = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			kill_ms = atoi(optarg);
			break;
		case 'L':
			live_ms = atoi(optarg);
			break;
		case 'd':
			disabled |= parse_groups(optarg);
			break;
		case 'e':
			emulate = 1;
			break;
		case 'r':
			rt = 1;
			break;
		case 'l':
			live_selftest = 1;
			break;
		case 'c':
			break;	/* colour, as run.sh passes it: no colours here */
		default:
			usage(argv[0]);
			exit(c == 'h' ? KSFT_PASS : KSFT_FAIL);
		}
	}
	if (!nprocs || nprocs > MAX_PROCS || !nthreads ||
	    nthreads > MAX_THREADS || !nhs || nhs > MAX_HS || !slack) {
		usage(argv[0]);
		exit(KSFT_FAIL);
	}
	if (!duration && !ops)
		duration = 60 * NSEC;
	if (!have_seed)
		seed = mix64(clock_ns(CLOCK_REALTIME) ^ getpid());

	ksft_print_header();
	ksft_set_plan(NR_CHECKS);
	ksft_print_msg("futex_spin_fuzz: seed %llu\n", seed);
	ksft_print_msg("replay: %s -s %llu -p %u -T %u -H %u -k %u -L %u%s%s%s%s",
		       argv[0], seed, nprocs, nthreads, nhs, kill_ms, live_ms,
		       emulate ? " -e" : "", rt ? " -r" : "",
		       live_selftest ? " -l" : "",
		       disabled ? " -d " : "");
	for (g = 0; g < NR_GROUPS; g++)
		if (disabled & (1U << g))
			printf("%s%s", group_names[g],
			       (disabled >> (g + 1)) ? "," : "");
	if (duration)
		printf(" -t %llu", duration / NSEC);
	if (ops)
		printf(" -n %llu", ops);
	printf("\n");

	/* FUTEX_SPIN_UNLOCK on a free word: EPERM if the kernel has it. */
	ret = sys_futex(&z, FUTEX_SPIN_UNLOCK | FUTEX_PRIVATE_FLAG, 0, NULL,
			NULL, 0);
	if (!emulate && !(ret == -1 && errno == EPERM)) {
		int err = errno;

		for (c = 0; c < NR_CHECKS; c++)
			ksft_test_result_skip("%s: no FUTEX_SPIN_* (probe: %ld %s)\n",
					      check_names[c], ret,
					      ret < 0 ? errname(err) : "");
		ksft_print_cnts();
		exit(KSFT_SKIP);
	}

	memfd = memfd_create("futex_spin_fuzz", 0);
	if (memfd < 0 || ftruncate(memfd, SHM_SIZE))
		ksft_exit_fail_msg("memfd: %s\n", strerror(errno));
	H = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (H == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	H->cfg.seed = seed;
	H->cfg.ops_budget = ops ? (ops + nprocs * nthreads - 1) / (nprocs * nthreads) : 0;
	H->cfg.slack = slack * NSEC;
	H->cfg.nprocs = nprocs;
	H->cfg.nthreads = nthreads;
	H->cfg.nhs = nhs;
	H->cfg.disabled = disabled;
	H->cfg.emulate = emulate;
	H->cfg.rt = rt;
	H->cfg.kill_ms = kill_ms;
	H->cfg.live_ms = live_ms;
	H->cfg.live_selftest = live_selftest;
	H->cfg.memfd = memfd;
	H->t0 = mono_ns();
	P.shm = (char *)H;

	X.hw.sl = &H->slots[HARNESS_SLOT];
	X.hw.pr = &H->procs[0];
	X.hw.rng = mix64(seed ^ 0x4a52);
	X.hw.sidx = HARNESS_SLOT;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	X.kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (X.kmsg >= 0)
		lseek(X.kmsg, 0, SEEK_END);
	if (!emulate && debugfs_ready())
		read_file(FS_DIR "/stats", X.stats0, sizeof(X.stats0));

	ksft_print_msg("%u processes x %u threads, %u+%u honest locks, %s, slack %llu s\n",
		       nprocs, nthreads, nhs, NR_HP,
		       emulate ? "PI emulation" : "FUTEX_SPIN_*", slack);
	run_harness(duration);
	secs = (double)(mono_ns() - X.start) / NSEC;
	print_fails(true);

	res[CK_HEADS] = check_live_heads(msg[CK_HEADS], sizeof(msg[0]));
	res[CK_KLOG] = check_klog(msg[CK_KLOG], sizeof(msg[0]));
	print_kstats();
	print_counts(secs);
	print_fails(true);

	for (c = 0; c < NR_CHECKS; c++) {
		if (c == CK_HEADS || c == CK_KLOG)
			continue;
		res[c] = H->fail_cnt[c] ? KSFT_FAIL : KSFT_PASS;
		snprintf(msg[c], sizeof(msg[0]), "%u failure(s)", H->fail_cnt[c]);
	}
	if (!total_ops()) {
		res[CK_RUN] = KSFT_FAIL;
		snprintf(msg[CK_RUN], sizeof(msg[0]), "no operation ran");
	}
	if (emulate) {
		res[CK_ABI] = KSFT_SKIP;
		snprintf(msg[CK_ABI], sizeof(msg[0]), "PI emulation");
	}
	for (c = 0; c < NR_CHECKS; c++)
		ksft_test_result_code(res[c], check_names[c], "%s", msg[c]);
	ksft_finished();
}
