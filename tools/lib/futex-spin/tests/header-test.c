// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * futex-spin.h as a user includes it, compiled by tests/run.sh as strict
 * C11 and as C++17 with -pedantic and warnings as errors: the header needs
 * no feature macro and its initializers warn in neither language.
 */
#include <futex-spin.h>

static struct futex_spin_mutex m = FUTEX_SPIN_MUTEX_INITIALIZER;
static struct futex_spin_cond c = FUTEX_SPIN_COND_INITIALIZER;

int main(void)
{
	enum futex_spin_mode mode;

	return futex_spin_mode_from_env(&mode) || futex_spin_mutex_lock(&m) ||
	       futex_spin_cond_signal(&c) ||
	       futex_spin_mutex_timedlock(&m, 1, NULL) != 0;
}
