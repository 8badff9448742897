// SPDX-License-Identifier: GPL-2.0
/*
 * futex_spin_fuzz: the setup of a worker process. Its views of the shared
 * words and its own pages, its signal handlers, and the user space
 * accesses that survive a page that is gone or read-only.
 */
#include "futex_spin_fuzz.h"

/* ------------------------------------------------------------------ */
/* User space accesses that may hit an unmapped or read-only page      */

static __thread sigjmp_buf fault_jmp;
static __thread int fault_armed;
__thread unsigned int tls_sigs;

static void fatal_write(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	if (__atomic_load_n(&fault_armed, __ATOMIC_RELAXED)) {
		__atomic_store_n(&fault_armed, 0, __ATOMIC_RELAXED);
		siglongjmp(fault_jmp, 1);
	}
	/*
	 * A real crash: leave a trace for the harness, then die of it. The
	 * process counts as doomed, so that the locks it dies with are not
	 * reported a second time as OWNER_DIED on a live holder.
	 */
	if (H && P.slot >= 0 && P.slot < MAX_PROCS) {
		/* stamped first, as exec_op() does, for the watchdog */
		H->procs[P.slot].doomed_at = mono_ns();
		__atomic_store_n(&H->procs[P.slot].doomed, 1, __ATOMIC_SEQ_CST);
		H->procs[P.slot].crash_sig = sig;
		H->procs[P.slot].crash_addr = (unsigned long)si->si_addr;
		H->procs[P.slot].crash_ip = ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] -
					    (unsigned long)segv_handler;
	}
	fatal_write("futex_spin_fuzz: worker crashed\n");
	signal(sig, SIG_DFL);
}

static void usr_handler(int sig)
{
	/* Counted so that a starvation report can tell signalled waiters. */
	__atomic_add_fetch(&tls_sigs, 1, __ATOMIC_RELAXED);
}

/*
 * The guarded helpers return false when the access faulted. sigsetjmp()
 * without the signal mask is cheap; SA_NODEFER keeps SIGSEGV unblocked
 * after the jump. The flag is shared with the signal handler only: the
 * signal fences keep the compiler from moving or dropping its stores
 * around the access (it did drop them, with plain stores).
 */
static void arm(int on)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&fault_armed, on, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

bool g_cas(unsigned int *p, unsigned int old, unsigned int new,
	   unsigned int *seen)
{
	if (sigsetjmp(fault_jmp, 0))
		return false;
	arm(1);
	cas32(p, old, new, seen);
	arm(0);
	return true;
}

static bool g_load(unsigned int *p, unsigned int *v)
{
	if (sigsetjmp(fault_jmp, 0))
		return false;
	arm(1);
	*v = LOAD(p);
	arm(0);
	return true;
}

bool g_store(unsigned int *p, unsigned int v)
{
	if (sigsetjmp(fault_jmp, 0))
		return false;
	arm(1);
	STORE(p, v);
	arm(0);
	return true;
}

bool g_store_ptr(struct robust_list **p, struct robust_list *v)
{
	if (sigsetjmp(fault_jmp, 0))
		return false;
	arm(1);
	RSTORE(p, v);
	arm(0);
	return true;
}

unsigned int peek(unsigned int *p)
{
	unsigned int v = 0xdeadbeef;

	g_load(p, &v);
	return v;
}

/* ------------------------------------------------------------------ */
/* Process setup                                                       */

static void die(const char *what)
{
	char buf[200], load[64], max[32];
	int err = errno;

	/* resource failures: how many tasks there are says whether we leak */
	read_file("/proc/loadavg", load, sizeof(load));
	read_file("/proc/sys/kernel/threads-max", max, sizeof(max));
	load[strcspn(load, "\n")] = 0;
	max[strcspn(max, "\n")] = 0;
	snprintf(buf, sizeof(buf),
		 "proc %d: %s: %s (loadavg %s, threads-max %s)", P.slot, what,
		 strerror(err), load, max);
	fatal_write(buf);
	fatal_write("\n");
	if (H)
		failf(NULL, CK_RUN, "%s", buf);
	_exit(3);
}

static void *xmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	void *p = mmap(addr, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

void set_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	/* One restarting and one interrupting signal for the waiters. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
}

void setup_process(int slot)
{
	int fd = H->cfg.memfd;
	char *vres;
	int i;

	P.slot = slot;
	P.shm = (char *)H;
	P.gen = LOAD(&H->procs[slot].gen);

	/*
	 * Extra views of the shared locks and words: the same key reached
	 * through another address, a private copy-on-write view (its key
	 * changes when the page is copied) and a read-only view.
	 */
	P.alias = xmap(NULL, VIEW_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       VIEW_OFF);
	P.cow = xmap(NULL, VIEW_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		     VIEW_OFF);
	P.ro = xmap(NULL, VIEW_LEN, PROT_READ, MAP_SHARED, fd, VIEW_OFF);
	P.priv = xmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	P.ro_page = xmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	P.none_page = xmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);

	/* Read-only words: free, owned by init, owned by us-to-be, waiters. */
	((unsigned int *)P.ro_page)[0] = 0;
	((unsigned int *)P.ro_page)[4] = 1 | FUTEX_WAITERS;
	((unsigned int *)P.ro_page)[8] = FUTEX_OWNER_DIED;
	((unsigned int *)P.ro_page)[12] = 0x3fffffff;
	if (mprotect(P.ro_page, PAGE, PROT_READ))
		die("mprotect");

	/*
	 * Private volatile pages sit between PROT_NONE guard pages, so the
	 * hole an munmap leaves is a single page that our own later mappings
	 * (thread stacks, malloc arenas) are too big to fill.
	 */
	vres = xmap(NULL, (2 * NR_VP + 1) * PAGE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < NR_VPAGES; i++) {
		struct vpage *vp = &P.vp[i];

		pthread_mutex_init(&vp->mu, NULL);
		vp->state = VS_RW;
		if (i < NR_VS) {
			vp->shared = true;
			vp->off = OFF_VS + i * PAGE;
			vp->addr = P.shm + vp->off;
		} else {
			vp->addr = vres + (2 * (i - NR_VS) + 1) * PAGE;
			xmap(vp->addr, PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		}
	}
	set_handlers();
}
