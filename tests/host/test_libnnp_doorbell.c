// SPDX-License-Identifier: MIT
/*
 * When a libnnp stream with a shadow doorbell (hardware 1.11) must also
 * write the MMIO doorbell: exactly when the event index, where the device
 * stopped looking, lies among the slots the submission filled.
 *
 * In detail (docs/testing.md has the summary): for rings of 2, 8 and 256
 * entries, every event index, old tail and count of 1 to depth - 1 new
 * commands, wrapping or not: a doorbell write if and only if the event
 * index is one of old, old + 1, ..., new - 1 (mod depth); and a few cases
 * by hand, at the largest depth too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stream.h"

static void test_every_case_of_small_rings(void **state)
{
	static const uint32_t depths[] = { 2, 8, 256 };
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		uint32_t d = depths[i], ev, old, n;

		for (ev = 0; ev < d; ev++)
			for (old = 0; old < d; old++)
				for (n = 1; n < d; n++) {
					uint32_t new = (old + n) % d;
					bool filled = (ev - old + d) % d < n;

					assert_int_equal(nnp_shadow_needs_doorbell(ev, new, old, d),
							 filled);
				}
	}
}

static void test_by_hand(void **state)
{
	(void)state;
	/* The device stopped at the owner's old tail: ring. */
	assert_true(nnp_shadow_needs_doorbell(3, 4, 3, 8));
	assert_true(nnp_shadow_needs_doorbell(7, 0, 7, 8));
	assert_true(nnp_shadow_needs_doorbell(32767, 0, 32767, 32768));
	/* Still working behind it (stopped last at 3, now past 5): no ring. */
	assert_false(nnp_shadow_needs_doorbell(3, 6, 5, 8));
	assert_false(nnp_shadow_needs_doorbell(6, 2, 7, 8));
	/* A full ring's worth after the event index: ring. */
	assert_true(nnp_shadow_needs_doorbell(6, 7, 0, 8));
	assert_false(nnp_shadow_needs_doorbell(7, 7, 0, 8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_case_of_small_rings),
		cmocka_unit_test(test_by_hand),
	};

	return cmocka_run_group_tests_name("libnnp_doorbell", tests, NULL, NULL);
}
