// SPDX-License-Identifier: MIT
/*
 * How a libnnp wait polls before it sleeps (libnnp/src/spin.c): the
 * policy from NNP_SPIN_US, the CPUs of the affinity mask and the
 * launcher's count of ranks on the node.
 *
 * In detail (docs/testing.md has the summary): without NNP_SPIN_US 50 us
 * of polling without pause, as many ranks as CPUs or an unknown count
 * alike; ranks that outnumber the CPUs poll without pause for 5 us, then
 * yield until 50 us; NNP_SPIN_US 0 never polls, 3 polls 3 us without
 * pause even oversubscribed, 200 yields until 200 us; 10001, -1, "",
 * "12x" and "abc" mean the default. From the environment, with this
 * process pinned to one CPU: OMPI_COMM_WORLD_LOCAL_SIZE before
 * LOCAL_WORLD_SIZE before MPI_LOCALNRANKS, 0 or junk taken as unknown,
 * NNP_SPIN_US read as above.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "spin.h"

static void expect(struct nnp_spin p, int64_t spin_us, int64_t poll_us)
{
	assert_int_equal(p.spin_ns, spin_us * 1000);
	assert_int_equal(p.poll_ns, poll_us * 1000);
}

static void test_choose(void **state)
{
	static const char *const junk[] = { "10001", "-1", "", "12x", "abc" };
	unsigned int i;

	(void)state;
	expect(nnp_spin_choose(NULL, 2, 0), 50, 50);
	expect(nnp_spin_choose(NULL, 2, 2), 50, 50);
	expect(nnp_spin_choose(NULL, 2, 3), 5, 50);
	expect(nnp_spin_choose(NULL, 1, 4), 5, 50);
	expect(nnp_spin_choose(NULL, 0, 4), 50, 50);	/* affinity unknown */
	expect(nnp_spin_choose("0", 1, 8), 0, 0);
	expect(nnp_spin_choose("3", 1, 8), 3, 3);
	expect(nnp_spin_choose("200", 1, 8), 5, 200);
	expect(nnp_spin_choose("200", 8, 8), 200, 200);
	expect(nnp_spin_choose("10000", 2, 0), 10000, 10000);
	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		expect(nnp_spin_choose(junk[i], 2, 0), 50, 50);
}

static void unset_all(void)
{
	unsetenv("NNP_SPIN_US");
	unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
	unsetenv("LOCAL_WORLD_SIZE");
	unsetenv("MPI_LOCALNRANKS");
}

static void test_policy_from_environment(void **state)
{
	cpu_set_t one;

	(void)state;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	unset_all();
	expect(nnp_spin_policy(), 50, 50);
	setenv("MPI_LOCALNRANKS", "2", 1);
	expect(nnp_spin_policy(), 5, 50);
	setenv("LOCAL_WORLD_SIZE", "1", 1);
	expect(nnp_spin_policy(), 50, 50);
	setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
	expect(nnp_spin_policy(), 5, 50);
	setenv("NNP_SPIN_US", "0", 1);
	expect(nnp_spin_policy(), 0, 0);
	setenv("NNP_SPIN_US", "1000", 1);
	expect(nnp_spin_policy(), 5, 1000);
	setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "0", 1);
	setenv("LOCAL_WORLD_SIZE", "x", 1);
	expect(nnp_spin_policy(), 5, 1000);	/* MPI_LOCALNRANKS's 2 */
	unset_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_policy_from_environment),
	};

	return cmocka_run_group_tests_name("libnnp_spin", tests, NULL, NULL);
}
