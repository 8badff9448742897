#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kselftest harness fix in patches/kselftest/, before and after, on
# the host. A test whose ASSERT fails has a teardown whose check passes
# and logs in its handler: the harness of build/linux prints that line
# after the failure, where it reads like a second one; the patched
# harness must not, and must still log a teardown check that fails.
# Prints TAP.
#
#   harness-check.sh OUT
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "$1")
patch=$top/patches/kselftest/0001-selftests-harness-Clear-the-trigger-before-an-ASSERT.patch
ksft=tools/testing/selftests
rm -rf "$out"
mkdir -p "$out/before/$ksft" "$out/after/$ksft"

cat >"$out/t.c" <<'C'
#include "kselftest_harness.h"

FIXTURE(f) {
	int x;
};

FIXTURE_SETUP(f)
{
	self->x = 0;
}

FIXTURE_TEARDOWN(f)
{
	EXPECT_EQ(0, self->x) TH_LOG("teardown: x is %d", self->x);
}

TEST_F(f, assert_fails)
{
	ASSERT_EQ(0, 1);
}

TEST_F(f, assert_and_teardown_fail)
{
	self->x = 1;
	ASSERT_EQ(0, 1);
}

TEST_HARNESS_MAIN
C

for side in before after; do
	cp "$top/build/linux/$ksft/kselftest_harness.h" "$top/build/linux/$ksft/kselftest.h" \
		"$out/$side/$ksft/"
done
# Not as part of the repository $out may sit in, where git apply would
# skip paths outside the current folder without a word.
GIT_CEILING_DIRECTORIES=$out git -C "$out/after" apply "$patch" &&
	! cmp -s "$out/before/$ksft/kselftest_harness.h" "$out/after/$ksft/kselftest_harness.h" ||
	{ echo "Bail out! the patch does not apply"; exit 1; }
for side in before after; do
	cc -I"$out/$side/$ksft" -o "$out/$side/t" "$out/t.c" &&
		"$out/$side/t" >"$out/$side.txt" 2>&1
done

n=0
fail=0
point() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=$((fail + 1)); fi
}
spurious() { grep -q "assert_fails:teardown: x is 0" "$out/$1.txt"; }
echo "TAP version 13"
echo "1..3"
spurious before; point $? "before: a passing teardown check logs after a failed ASSERT"
! spurious after; point $? "after: it does not"
grep -q "assert_and_teardown_fail:teardown: x is 1" "$out/after.txt"
point $? "after: a failing teardown check still logs"
echo "# output in $out"
[ $fail = 0 ]
