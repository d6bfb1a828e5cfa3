// SPDX-License-Identifier: MIT
/*
 * libnnp's routes for messages between ranks whose chips share no link
 * (route_plan.c), on port tables wired as QEMU's fabrics wire them.
 *
 * In detail (docs/testing.md has the summary): on a ring of 6 every
 * message takes the shorter way (3 hops, the tie, towards the lower
 * rank's side), each hop's routes agreeing with the path; on a 4x4 torus
 * every pair's path is as long as the torus distance and each step is
 * one link; a chip with its links down is reached by no route, and the
 * others route round it; ranks from the limit on get no route; a link
 * only one end reports is not used.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rank_tables.h"
#include "route_plan.h"

/* Follow the routes of every chip from @from to @to: the hops. */
static uint32_t walk(uint32_t n, uint32_t from, uint32_t to)
{
	uint8_t routes[MAXN];
	uint32_t hops = 0, a = from;

	while (a != to && hops <= n) {
		uint32_t p, b;

		assert_int_equal(nnp_route_plan(info, n, a, 1024, routes),
				 NNP_SUCCESS);
		p = routes[to];
		assert_int_not_equal(p, NNP_ROUTE_NONE);
		for (b = 0; b < n && info[b].chip != info[a].ports[p].peer_chip; b++)
			;
		assert_true(b < n);
		a = b;
		hops++;
	}
	return hops;
}

static uint32_t ring_dist(uint32_t n, uint32_t a, uint32_t b)
{
	uint32_t d = (b + n - a) % n;

	return d < n - d ? d : n - d;
}

static void test_ring_takes_the_shorter_way(void **state)
{
	uint32_t hops[MAXN], a, b;
	uint8_t routes[MAXN];

	(void)state;
	ring_wires(6);
	assert_int_equal(nnp_route_plan(info, 6, 0, 1024, routes), NNP_SUCCESS);
	assert_int_equal(routes[0], NNP_ROUTE_NONE);
	assert_int_equal(routes[1], 0);
	assert_int_equal(routes[2], 0);
	/* The tie, 3 hops either way: towards rank 1, the lower neighbour. */
	assert_int_equal(routes[3], 0);
	assert_int_equal(routes[4], 1);
	assert_int_equal(routes[5], 1);
	assert_int_equal(nnp_route_path(info, 6, 0, 4, hops), 2);
	assert_int_equal(hops[0], 5);
	assert_int_equal(hops[1], 4);
	for (a = 0; a < 6; a++)
		for (b = 0; b < 6; b++)
			assert_int_equal(walk(6, a, b), ring_dist(6, a, b));
}

static void test_torus_paths_are_shortest(void **state)
{
	uint32_t hops[MAXN], a, b, k;

	(void)state;
	torus_wires(4, 4);
	for (a = 0; a < 16; a++) {
		for (b = 0; b < 16; b++) {
			uint32_t d = ring_dist(4, a % 4, b % 4) +
				     ring_dist(4, a / 4, b / 4);
			uint32_t n = nnp_route_path(info, 16, a, b, hops);

			assert_int_equal(n, d);
			assert_int_equal(walk(16, a, b), d);
			/* Each step one link: one coordinate moves by one. */
			for (k = 0; k < n; k++) {
				uint32_t prev = k ? hops[k - 1] : a;

				assert_int_equal(ring_dist(4, prev % 4, hops[k] % 4) +
						 ring_dist(4, prev / 4, hops[k] / 4), 1);
			}
			if (n)
				assert_int_equal(hops[n - 1], b);
		}
	}
}

static void test_down_links_are_routed_round(void **state)
{
	uint8_t routes[MAXN];

	(void)state;
	ring_wires(5);
	/* Rank 2's links down: 1 and 3 reach each other the long way. */
	info[2].ports[0].state = NNP_LINK_WIRED;
	info[2].ports[1].state = NNP_LINK_WIRED;
	assert_int_equal(nnp_route_plan(info, 5, 1, 1024, routes), NNP_SUCCESS);
	assert_int_equal(routes[2], NNP_ROUTE_NONE);
	assert_int_equal(routes[3], 1);
	assert_int_equal(walk(5, 1, 3), 3);
	assert_int_equal(nnp_route_plan(info, 5, 2, 1024, routes), NNP_SUCCESS);
	assert_int_equal(routes[0], NNP_ROUTE_NONE);
	assert_int_equal(routes[4], NNP_ROUTE_NONE);
}

static void test_limit_and_one_sided_links(void **state)
{
	uint8_t routes[MAXN];

	(void)state;
	ring_wires(8);
	assert_int_equal(nnp_route_plan(info, 8, 0, 4, routes), NNP_SUCCESS);
	assert_int_equal(routes[3], 0);
	assert_int_equal(routes[4], NNP_ROUTE_NONE);
	assert_int_equal(routes[7], NNP_ROUTE_NONE);
	assert_int_equal(nnp_route_plan(info, 8, 5, 4, routes), NNP_SUCCESS);
	assert_int_equal(routes[0], NNP_ROUTE_NONE);
	/* Rank 1 says its port 1 leads elsewhere: 0 to 1 goes round. */
	info[1].ports[1].peer_port = 2;
	assert_int_equal(nnp_route_plan(info, 8, 0, 1024, routes), NNP_SUCCESS);
	assert_int_equal(routes[1], 1);
	assert_int_equal(walk(8, 0, 1), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_takes_the_shorter_way),
		cmocka_unit_test(test_torus_paths_are_shortest),
		cmocka_unit_test(test_down_links_are_routed_round),
		cmocka_unit_test(test_limit_and_one_sided_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
