// SPDX-License-Identifier: MIT
/*
 * libnnp's rings over transit chips (transit_plan.c), for split groups
 * whose ranks' chips share no link with their ring neighbours, on port
 * tables wired as QEMU's fabrics wire them.
 *
 * In detail (docs/testing.md has the summary): ranks on chips 0 and 2 of
 * a ring of 4 cross chip 1 both ways, exact ports and routes; on a ring
 * of 8 the even chips cross the odd ones; on a 4x4 torus, for several
 * stride and diagonal groups, a packet sent on each rank's send port and
 * passed on by each transit's pair lands on the next rank's receive port,
 * and every routed message reaches its rank over the ring's chips alone;
 * the torus's every other chip goes round its square (4 transits);
 * a line whose middle chip is a rank has no path (NO_PATH naming the
 * hop), and a star whose centre would pass two hops on different ports
 * has no ring either.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rank_tables.h"
#include "route_plan.h"
#include "transit_plan.h"

/* The table's chip at @port of chip @a, and the port it lands on. */
static uint32_t across(uint32_t a, uint32_t port, uint32_t *in)
{
	uint32_t b;

	for (b = 0; b < MAXN && info[b].chip != info[a].ports[port].peer_chip; b++)
		;
	assert_true(b < MAXN);
	*in = info[a].ports[port].peer_port;
	return b;
}

/*
 * Every hop of @t's ring over @ranks: from each rank's send port through
 * the transits' pairs to the next rank on the ring, landing on its
 * receive port; and the ring holds every rank once.
 */
static void check_hops(const struct nnp_transit_plan *t, const uint32_t *ranks,
		       uint32_t n)
{
	uint32_t pos, k, a, b, in, steps, seen = 0;

	for (pos = 0; pos < n; pos++) {
		k = t->ring.order[pos];
		b = t->ring.order[(pos + 1) % n];
		assert_true(k < n);
		seen |= 1u << k;
		a = across(ranks[k], t->ring.send_port[k], &in);
		for (steps = 0; a != ranks[b]; steps++) {
			const uint32_t *p = t->pair[a];

			assert_true(steps < MAXN);
			assert_int_not_equal(p[0], NNP_TRANSIT_NONE);
			assert_true(in == p[0] || in == p[1]);
			a = across(a, in == p[0] ? p[1] : p[0], &in);
		}
		assert_int_equal(in, t->ring.recv_port[b]);
	}
	assert_int_equal(seen, (1u << n) - 1);
}

/* Each rank's routed message to each other rank, hop by hop over @t's chips. */
static void check_routes(const struct nnp_transit_plan *t, uint32_t n)
{
	uint8_t r[MAXN];
	uint32_t from, to, a, k, in, hops;

	for (from = 0; from < n; from++)
		for (to = 0; to < n; to++) {
			if (from == to)
				continue;
			a = t->chips[from];
			for (hops = 0; a != t->chips[to]; hops++) {
				assert_true(hops < t->nchips);
				for (k = 0; t->chips[k] != a; k++)
					assert_true(k + 1 < t->nchips);
				assert_int_equal(nnp_transit_routes(info, t, n, k, r),
						 NNP_SUCCESS);
				assert_int_not_equal(r[to], NNP_ROUTE_NONE);
				a = across(a, r[to], &in);
			}
		}
}

static void test_ring_of_4_crosses_chip_1(void **state)
{
	const uint32_t ranks[2] = { 0, 2 };
	struct nnp_transit_plan t;
	uint8_t r[2];

	(void)state;
	ring_wires(4);
	assert_int_equal(nnp_transit_plan(info, 4, ranks, 2, &t), NNP_SUCCESS);
	/* Both hops by chip 1, the lower of the two ways: one link each way. */
	assert_int_equal(t.ring.send_port[0], 0);
	assert_int_equal(t.ring.recv_port[0], 0);
	assert_int_equal(t.ring.send_port[1], 1);
	assert_int_equal(t.ring.recv_port[1], 1);
	assert_int_equal(t.pair[1][0], 1);
	assert_int_equal(t.pair[1][1], 0);
	assert_int_equal(t.pair[3][0], NNP_TRANSIT_NONE);
	assert_int_equal(t.nchips, 3);
	assert_int_equal(t.chips[2], 1);
	assert_int_equal(nnp_transit_routes(info, &t, 2, 2, r), NNP_SUCCESS);
	assert_int_equal(r[0], 1);
	assert_int_equal(r[1], 0);
	assert_int_equal(nnp_transit_routes(info, &t, 2, 0, r), NNP_SUCCESS);
	assert_int_equal(r[0], NNP_ROUTE_NONE);
	assert_int_equal(r[1], 0);
	check_hops(&t, ranks, 2);
	check_routes(&t, 2);
	nnp_transit_free(&t);
}

static void test_ring_of_8_even_chips(void **state)
{
	const uint32_t ranks[4] = { 0, 2, 4, 6 };
	struct nnp_transit_plan t;
	uint32_t x;

	(void)state;
	ring_wires(8);
	assert_int_equal(nnp_transit_plan(info, 8, ranks, 4, &t), NNP_SUCCESS);
	for (x = 0; x < 4; x++) {
		assert_int_equal(t.ring.send_port[x], 0);
		assert_int_equal(t.ring.recv_port[x], 1);
		assert_int_equal(t.pair[2 * x + 1][0], 1);
		assert_int_equal(t.pair[2 * x + 1][1], 0);
	}
	assert_int_equal(t.nchips, 8);
	check_hops(&t, ranks, 4);
	check_routes(&t, 4);
	nnp_transit_free(&t);
}

static void test_torus_groups(void **state)
{
	static const uint32_t groups[][4] = {
		{ 0, 5, 10, 15 },	/* the diagonal */
		{ 0, 2, 8, 10 },	/* every other chip: round its square */
		{ 1, 3, 9, 11 },
		{ 0, 4, 8, 12 },	/* a column: links, no transit */
		{ 3, 6, 9, 12 },
	};
	struct nnp_transit_plan t;
	uint32_t g;

	(void)state;
	torus_wires(4, 4);
	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		assert_int_equal(nnp_transit_plan(info, 16, groups[g], 4, &t),
				 NNP_SUCCESS);
		check_hops(&t, groups[g], 4);
		check_routes(&t, 4);
		if (g == 1) {
			/* 0, 2, 10, 8: by chips 1, 6, 9 and 4, not across. */
			assert_int_equal(t.ring.order[1], 1);
			assert_int_equal(t.ring.order[2], 3);
			assert_int_equal(t.nchips, 8);
		}
		if (g == 3)
			assert_int_equal(t.nchips, 4);
		nnp_transit_free(&t);
	}
}

static void test_no_path_but_through_a_rank(void **state)
{
	const uint32_t ranks[3] = { 0, 1, 2 };
	struct nnp_transit_plan t;

	(void)state;
	chips(3);
	wire(0, 0, 1, 1);
	wire(1, 0, 2, 1);
	assert_int_equal(nnp_transit_plan(info, 3, ranks, 3, &t), NNP_ERROR_NO_PATH);
	assert_non_null(strstr(nnp_get_last_error(),
			       "no path from rank 2 (chip 106) to rank 0 (chip 100) but through other ranks"));
	nnp_transit_free(&t);
}

static void test_star_centre_would_pass_two_hops(void **state)
{
	const uint32_t ranks[3] = { 1, 2, 3 };
	struct nnp_transit_plan t;

	(void)state;
	chips(4);
	wire(0, 0, 1, 0);
	wire(0, 1, 2, 0);
	wire(0, 2, 3, 0);
	assert_int_equal(nnp_transit_plan(info, 4, ranks, 3, &t), NNP_ERROR_NO_PATH);
	assert_non_null(strstr(nnp_get_last_error(),
			       "chip 100 would pass two of its hops between different ports"));
	nnp_transit_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_of_4_crosses_chip_1),
		cmocka_unit_test(test_ring_of_8_even_chips),
		cmocka_unit_test(test_torus_groups),
		cmocka_unit_test(test_no_path_but_through_a_rank),
		cmocka_unit_test(test_star_centre_would_pass_two_hops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
