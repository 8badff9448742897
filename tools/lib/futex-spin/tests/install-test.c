// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * A user of the installed library, built by tests/run.sh with pkg-config
 * against a make install: a mutex and a condition variable between two
 * threads. Exits 0 when they work.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <futex-spin.h>

static struct futex_spin_mutex m = FUTEX_SPIN_MUTEX_INITIALIZER;
static struct futex_spin_cond c = FUTEX_SPIN_COND_INITIALIZER;
static int ready;

static void *post(void *arg)
{
	futex_spin_mutex_lock(&m);
	ready = 1;
	futex_spin_cond_signal(&c);
	futex_spin_mutex_unlock(&m);
	return arg;
}

int main(void)
{
	pthread_t t;
	int ret = 0;

	if (futex_spin_mutex_lock(&m))
		return 1;
	if (pthread_create(&t, NULL, post, NULL))
		return 2;
	while (!ready && !ret)
		ret = futex_spin_cond_wait(&c, &m);
	futex_spin_mutex_unlock(&m);
	pthread_join(t, NULL);
	printf("# installed libfutex-spin: mode %s, wait %d\n",
	       futex_spin_mode() == FUTEX_SPIN_MODE_SPIN ? "spin" : "waitwake",
	       ret);
	return ret || futex_spin_mutex_trylock(&m) ? 3 : 0;
}
