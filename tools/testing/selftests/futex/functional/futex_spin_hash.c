// SPDX-License-Identifier: GPL-2.0
/*
 * FUTEX_SPIN_LOCK and the private futex hash (PR_FUTEX_HASH). The queue
 * head of a private futex lives in its process's hash and moves with the
 * waiters when that hash is replaced: resizes, by the user and by new
 * threads, while lockers spin, sleep and are handed the lock; a head kept
 * by a task across a resize, to more slots and to the global hash for
 * good; a head made before the process had a private hash; many heads in
 * the buckets of a small fixed hash.
 *
 * Each test runs in a process of its own (the harness forks one), which
 * starts with no private hash and no thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/prctl.h>

#include "kselftest_harness.h"
#include "futex_spin_test.h"

#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH			78
#define PR_FUTEX_HASH_SET_SLOTS		1
#define PR_FUTEX_HASH_GET_SLOTS		2
#endif

/* 0 or -errno; PR_FUTEX_HASH_SET_SLOTS returns once the new hash is in use */
static int fs_hash_set(unsigned int slots)
{
	return prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, slots, 0, 0) ?
	       -errno : 0;
}

/* Slots of the private hash, 0 for the global hash, or -errno */
static int fs_hash_get(void)
{
	int ret = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0);

	return ret < 0 ? -errno : ret;
}

/* Lock with the user-space fast path first, as a mutex library does */
static int fs_hash_lock(__u32 *word, pid_t tid)
{
	__u32 zero = 0;

	if (__atomic_compare_exchange_n(word, &zero, tid, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	return fs_lock(word, FUTEX_SPIN_LOCK_PRIVATE, NULL);
}

static int fs_hash_unlock(__u32 *word, pid_t tid)
{
	__u32 owned = tid;

	if (__atomic_compare_exchange_n(word, &owned, 0, false,
					__ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return 0;
	return fs_unlock(word, FUTEX_SPIN_UNLOCK_PRIVATE) < 0 ? -1 : 0;
}

#define FS_HASH_WORDS		4
#define FS_HASH_LOCKERS		6

/* Lockers turning the locks of @words while the hash changes under them */
struct hash_run {
	__u32 words[FS_HASH_WORDS];
	int inside[FS_HASH_WORDS];	/* tasks in each critical section */
	int nwords;
	int stop;
	long long turns;
	int overlaps;			/* two tasks were inside at once */
	int errors;			/* a lock or unlock failed */
	int done;			/* lockers that left their loop */
};

static void *hash_locker(void *arg)
{
	struct hash_run *r = arg;
	pid_t tid = fs_gettid();
	unsigned int i;

	for (i = tid; !__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST); i++) {
		int k = i % r->nwords;
		__u32 *word = &r->words[k];

		if (fs_hash_lock(word, tid)) {
			__atomic_add_fetch(&r->errors, 1, __ATOMIC_SEQ_CST);
			break;
		}
		if (__atomic_add_fetch(&r->inside[k], 1, __ATOMIC_SEQ_CST) != 1)
			__atomic_add_fetch(&r->overlaps, 1, __ATOMIC_SEQ_CST);
		/*
		 * Every third turn sleeps holding the lock: the others queue
		 * asleep and are handed it. The rest hold it briefly, so that
		 * waiters spin on a running owner.
		 */
		if (i % 3 == 0)
			usleep(200);
		else
			fs_busy_until(fs_now_ns(CLOCK_MONOTONIC) + 20000);
		__atomic_sub_fetch(&r->inside[k], 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&r->turns, 1, __ATOMIC_SEQ_CST);
		if (fs_hash_unlock(word, tid)) {
			__atomic_add_fetch(&r->errors, 1, __ATOMIC_SEQ_CST);
			break;
		}
	}
	__atomic_add_fetch(&r->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Wait up to FS_MUST_MS for @n lockers to be done */
static bool hash_run_wait(struct hash_run *r, int n)
{
	long long start = fs_now_ns(CLOCK_MONOTONIC);

	while (__atomic_load_n(&r->done, __ATOMIC_SEQ_CST) < n) {
		if (fs_ms_since(start) > FS_MUST_MS)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * Stop the lockers and wait for them. One that does not come back is
 * asleep on a lock that nobody will release: say which word it was on.
 */
static void hash_run_stop(struct __test_metadata *_metadata,
			  struct hash_run *r, pthread_t *t, int n)
{
	int i;

	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	ASSERT_TRUE(hash_run_wait(r, n)) {
		for (i = 0; i < r->nwords; i++)
			TH_LOG("word %d: %#x", i, fs_load(&r->words[i]));
		TH_LOG("%d of %d lockers still waiting after %d ms",
		       n - r->done, n, FS_MUST_MS);
	}
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, fs_join(t[i], NULL));
	EXPECT_EQ(0, r->errors);
	EXPECT_EQ(0, r->overlaps) TH_LOG("two tasks held one lock");
}

FIXTURE(hash) {
	struct hash_run run;
	pthread_t lockers[FS_HASH_LOCKERS];
};

FIXTURE_SETUP(hash)
{
	fs_setup(_metadata);
	memset(&self->run, 0, sizeof(self->run));
	if (fs_hash_get() < 0)
		SKIP(return, "no PR_FUTEX_HASH (CONFIG_FUTEX_PRIVATE_HASH)");
}

FIXTURE_TEARDOWN(hash)
{
	fs_teardown(_metadata);
}

static void hash_run_start(struct __test_metadata *_metadata,
			   struct hash_run *r, pthread_t *t, int n, int nwords)
{
	int i;

	r->nwords = nwords;
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, hash_locker, r));
}

/*
 * The slots change in a loop, to sizes larger and smaller, while six
 * lockers turn one lock: each change replaces the hash and must carry the
 * queue head, and its sleepers, over.
 */
TEST_F(hash, resize_under_contention)
{
	static const unsigned int sizes[] = { 2, 64, 4, 256, 16, 8, 128, 32 };
	long long moved = fs_stat(_metadata, "heads_moved");
	long long start, resizes = 0;

	hash_run_start(_metadata, &self->run, self->lockers, FS_HASH_LOCKERS, 1);
	start = fs_now_ns(CLOCK_MONOTONIC);
	while (fs_ms_since(start) < 1500) {
		unsigned int slots = sizes[resizes % ARRAY_SIZE(sizes)];

		ASSERT_EQ(0, fs_hash_set(slots));
		ASSERT_EQ(slots, fs_hash_get());
		resizes++;
		usleep(2000);
	}
	hash_run_stop(_metadata, &self->run, self->lockers, FS_HASH_LOCKERS);
	TH_LOG("%lld resizes, %lld turns", resizes, self->run.turns);
	EXPECT_LT((long long)ARRAY_SIZE(sizes), resizes);
	EXPECT_LT(100, self->run.turns);
	if (moved >= 0)
		EXPECT_LT(moved, fs_stat(_metadata, "heads_moved"))
			TH_LOG("no queue head was moved by %lld resizes", resizes);
	EXPECT_EQ(0, fs_live_heads(_metadata));
}

static void *hash_idler(void *arg)
{
	struct hash_run *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST))
		usleep(1000);
	return NULL;
}

/*
 * Past 4 CPUs the private hash grows with the threads (4 slots per thread,
 * counting up to one thread per CPU): threads created one by one while
 * lockers turn the lock replace the hash under them.
 */
TEST_F(hash, resize_by_new_threads)
{
	long long moved = fs_stat(_metadata, "heads_moved");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t idlers[16];
	int i, n, slots;

	if (cpus <= 4)
		SKIP(return, "the hash grows with threads past 4 CPUs only (%ld online)",
		     cpus);
	hash_run_start(_metadata, &self->run, self->lockers, 2, 1);
	usleep(100 * 1000);
	slots = fs_hash_get();
	n = cpus < 16 ? cpus : 16;
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pthread_create(&idlers[i], NULL, hash_idler, &self->run));
		usleep(20 * 1000);
	}
	usleep(200 * 1000);
	hash_run_stop(_metadata, &self->run, self->lockers, 2);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, fs_join(idlers[i], NULL));
	EXPECT_LT(slots, fs_hash_get()) TH_LOG("%d threads, %ld CPUs", n + 3, cpus);
	EXPECT_LT(100, self->run.turns);
	if (moved >= 0)
		EXPECT_LT(moved, fs_stat(_metadata, "heads_moved"));
	EXPECT_EQ(0, fs_live_heads(_metadata));
}

/*
 * A hash of 2 slots, fixed by the user: four locks share its buckets, so
 * heads are found past others in one bucket, and new threads do not grow it.
 */
TEST_F(hash, fixed_small_hash)
{
	ASSERT_EQ(0, fs_hash_set(2));
	hash_run_start(_metadata, &self->run, self->lockers, FS_HASH_LOCKERS,
		       FS_HASH_WORDS);
	usleep(1000 * 1000);
	hash_run_stop(_metadata, &self->run, self->lockers, FS_HASH_LOCKERS);
	EXPECT_EQ(2, fs_hash_get());
	EXPECT_LT(100, self->run.turns);
	EXPECT_EQ(0, fs_live_heads(_metadata));
}

/*
 * A task that keeps the queue head of the lock it used last, across a
 * replacement of the hash, and a task that looks the head up afterwards:
 * both must use the one head, or the keeper's unlock wakes nobody.
 */
struct keeper {
	__u32 *word;
	pthread_t thread;
	pid_t tid;
	int started;
	int holds;		/* the keeper holds the lock */
	int release;		/* main: let go now */
	int ret;
	long unlock_ret;
};

static void *keeper_fn(void *arg)
{
	struct keeper *k = arg;

	k->tid = fs_gettid();
	__atomic_store_n(&k->started, 1, __ATOMIC_SEQ_CST);
	/* The word is owned: this queues, and makes the head the keeper keeps */
	k->ret = fs_lock(k->word, FUTEX_SPIN_LOCK_PRIVATE, NULL);
	__atomic_store_n(&k->holds, 1, __ATOMIC_SEQ_CST);
	if (k->ret)
		return NULL;
	while (!__atomic_load_n(&k->release, __ATOMIC_SEQ_CST))
		usleep(1000);
	k->unlock_ret = fs_unlock(k->word, FUTEX_SPIN_UNLOCK_PRIVATE);
	return NULL;
}

static void cached_head_across(struct __test_metadata *_metadata,
			       unsigned int slots)
{
	long long created = fs_stat(_metadata, "heads_created");
	struct waiter b = { .forever = true, .unlock = true,
			    .op = FUTEX_SPIN_LOCK_PRIVATE };
	struct keeper k = { 0 };
	__u32 word = fs_gettid();

	ASSERT_EQ(0, fs_hash_set(16));
	k.word = &word;
	b.word = &word;
	ASSERT_EQ(0, pthread_create(&k.thread, NULL, keeper_fn, &k));
	ASSERT_TRUE(fs_wait_flag(&k.started));
	ASSERT_TRUE(fs_wait_blocked(getpid(), k.tid));
	ASSERT_LE(0, fs_unlock(&word, FUTEX_SPIN_UNLOCK_PRIVATE));
	ASSERT_TRUE(fs_wait_flag(&k.holds));
	ASSERT_EQ(0, k.ret);

	/* Returns once the new hash is in use: the kept head pins nothing */
	ASSERT_EQ(0, fs_hash_set(slots));
	ASSERT_EQ(slots, fs_hash_get());

	ASSERT_TRUE(waiter_queue(&b)) TH_LOG("the second locker did not sleep");
	__atomic_store_n(&k.release, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, fs_join(k.thread, NULL));
	EXPECT_EQ(0, k.unlock_ret);
	ASSERT_TRUE(wait_done(&b))
		TH_LOG("the sleeper was not woken; word %#x", fs_load(&word));
	EXPECT_EQ(0, b.ret);
	ASSERT_EQ(0, fs_join(b.thread, NULL));
	if (created >= 0)
		EXPECT_EQ(created + 1, fs_stat(_metadata, "heads_created"))
			TH_LOG("one lock, more than one queue head");
}

TEST_F(hash, kept_head_outlives_resize)
{
	cached_head_across(_metadata, 128);
}

/* 0 slots: the global hash, for good; the heads move there */
TEST_F(hash, kept_head_moves_to_global_hash)
{
	cached_head_across(_metadata, 0);
	EXPECT_EQ(-EBUSY, fs_hash_set(16)) TH_LOG("the global hash is for good");
	EXPECT_EQ(0, fs_hash_get());
}

/*
 * A process gets its private hash when it first creates a thread, and
 * nothing is moved then from the global hash. A queue head made by the
 * process while it was alone must not be left behind there.
 */
TEST_F(hash, head_made_before_first_thread)
{
	struct waiter b = { .forever = true, .unlock = true,
			    .op = FUTEX_SPIN_LOCK_PRIVATE };
	__u32 word = FS_NO_SUCH_TID;
	struct timespec to;

	if (fs_hash_get() != 0)
		SKIP(return, "the test process already has a private hash");
	b.word = &word;
	/* Alone, on a word nobody can release: queues, times out, keeps a head */
	to = fs_deadline(CLOCK_MONOTONIC, 5);
	ASSERT_EQ(-ETIMEDOUT, fs_lock(&word, FUTEX_SPIN_LOCK_PRIVATE, &to));

	fs_store(&word, fs_gettid());
	ASSERT_TRUE(waiter_queue(&b)) TH_LOG("the thread did not sleep");
	EXPECT_LE(0, fs_unlock(&word, FUTEX_SPIN_UNLOCK_PRIVATE));
	ASSERT_TRUE(wait_done(&b))
		TH_LOG("the thread was not woken; word %#x", fs_load(&word));
	EXPECT_EQ(0, b.ret);
	ASSERT_EQ(0, fs_join(b.thread, NULL));
	EXPECT_LT(0, fs_hash_get());
}

TEST_HARNESS_MAIN
