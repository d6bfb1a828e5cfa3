// SPDX-License-Identifier: MIT
/*
 * libnnp's placement (nnp_topo_pick()'s search, nnp_place_plan()) on
 * fabrics written by hand: which free chips a job gets, and why none.
 *
 * In detail (docs/testing.md has the summary):
 * on QEMU's torus:4x2 a ring of 4 is row 0 (0,1,2,3) and a ring of 8 is
 * every chip, each hop a link that is up; with the link 1-2 down the ring
 * of 4 is 0,1,5,4; best fit: of a ring of 6 and a pair, a job of 2 gets
 * the pair (6,7) and one of 6 the ring; one of 4 fails NO_PATH "no ring of
 * 4 among the 8 free chips: their links that are up join 6 of them, but
 * not as one"; 9 of 8 fails NO_DEVICE "9 chips asked for, 8 free"; two
 * pairs and a lone chip for a ring of 3: "... join at most 2 of them
 * (parts of 2, 2, 1)"; a ring of 1 is the first chip; a 2x4 torus on
 * torus:4x2 is every chip row by row, each row and column a ring, and a
 * 4x2 the same turned (0,4 / 1,5 / 2,6 / 3,7: a row of 2 chips has two
 * links); 2x2 on it fails (a column of 2 needs two links too), and so
 * does 2x4 on torus:4x4; 4x4 on it is exact; torus:2x2 holds a 2x2; two cliques of 8 joined
 * by one link: no ring of 16, and the search gives up in under 5 s (both
 * the ring planner of a job and placement: a budget that ran out used to
 * wrap around and let the search run on)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "nnp/nnp.h"
#include "place.h"
#include "rank_tables.h"

/* out[0..k) is a ring of distinct chips of info[], each hop up. */
static void assert_ring_of(const uint32_t *out, uint32_t k)
{
	uint32_t i, seen = 0;

	for (i = 0; i < k; i++) {
		assert_true(out[i] < MAXN);
		assert_false(seen & (1u << out[i]));
		seen |= 1u << out[i];
		if (k > 1)
			assert_true(nnp_rank_port_to(info, out[i], out[(i + 1) % k]) >= 0);
	}
}

static void assert_picked(uint32_t n, uint32_t rows, uint32_t cols,
			  const uint32_t *want)
{
	uint32_t out[MAXN];

	assert_int_equal(nnp_place_plan(info, n, rows, cols, out), NNP_SUCCESS);
	assert_memory_equal(out, want, rows * cols * sizeof(*out));
}

static void assert_none(uint32_t n, uint32_t rows, uint32_t cols,
			nnp_result_t res, const char *why)
{
	uint32_t out[MAXN];

	assert_int_equal(nnp_place_plan(info, n, rows, cols, out), res);
	assert_string_equal(nnp_get_last_error(), why);
}

static void test_ring_on_torus(void **state)
{
	static const uint32_t row0[] = { 0, 1, 2, 3 };
	static const uint32_t around[] = { 0, 1, 2, 3, 7, 6, 5, 4 };
	static const uint32_t one[] = { 0 };
	uint32_t out[MAXN];

	(void)state;
	torus_wires(4, 2);
	assert_picked(8, 1, 4, row0);
	assert_picked(8, 4, 1, row0);
	assert_picked(8, 1, 8, around);
	assert_ring_of(around, 8);
	assert_picked(8, 1, 1, one);
	assert_int_equal(nnp_place_plan(info, 8, 1, 6, out), NNP_SUCCESS);
	assert_ring_of(out, 6);
}

static void test_ring_around_a_link_down(void **state)
{
	static const uint32_t around[] = { 0, 1, 5, 4 };

	(void)state;
	torus_wires(4, 2);
	info[1].ports[0].state = NNP_LINK_WIRED;	/* 1 east to 2 */
	info[2].ports[1].state = NNP_LINK_WIRED;
	assert_picked(8, 1, 4, around);
}

static void test_best_fit(void **state)
{
	static const uint32_t pair[] = { 6, 7 }, six[] = { 0, 1, 2, 3, 4, 5 };
	uint32_t r;

	(void)state;
	chips(8);
	for (r = 0; r < 6; r++)
		wire(r, 0, (r + 1) % 6, 1);
	wire(6, 0, 7, 1);
	assert_picked(8, 1, 2, pair);
	assert_picked(8, 2, 1, pair);
	assert_picked(8, 1, 6, six);
	assert_none(8, 1, 4, NNP_ERROR_NO_PATH,
		    "no ring of 4 among the 8 free chips: their links that are up join 6 of them, but not as one");
	assert_none(8, 3, 3, NNP_ERROR_NO_DEVICE, "9 chips asked for, 8 free");
}

static void test_parts_too_small(void **state)
{
	(void)state;
	chips(5);
	wire(0, 0, 1, 0);
	wire(2, 0, 3, 0);
	assert_none(5, 1, 3, NNP_ERROR_NO_PATH,
		    "no ring of 3: the 5 free chips' links that are up join at most 2 of them (parts of 2, 2, 1)");
}

/* out[] row by row is a @rows x @cols torus: every row and column a ring. */
static void assert_torus_of(const uint32_t *out, uint32_t rows, uint32_t cols)
{
	uint32_t y, x;

	assert_ring_of(out, 1);
	for (y = 0; y < rows; y++)
		for (x = 0; x < cols; x++) {
			uint32_t a = out[y * cols + x];

			assert_true(nnp_rank_port_to(info, a, out[y * cols + (x + 1) % cols]) >= 0);
			assert_true(nnp_rank_port_to(info, a, out[(y + 1) % rows * cols + x]) >= 0);
		}
}

static void test_torus(void **state)
{
	static const uint32_t all[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	static const uint32_t turned[] = { 0, 4, 1, 5, 2, 6, 3, 7 };
	static const uint32_t sixteen[] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	};

	(void)state;
	torus_wires(4, 2);
	assert_picked(8, 2, 4, all);
	assert_torus_of(all, 2, 4);
	assert_picked(8, 4, 2, turned);
	assert_torus_of(turned, 4, 2);
	assert_none(8, 2, 2, NNP_ERROR_NO_PATH,
		    "no 2x2 torus among the 8 free chips: their links that are up join 8 of them, but not as one (each row and column a ring; one of 2 chips needs two links)");
	torus_wires(4, 4);
	assert_picked(16, 4, 4, sixteen);
	assert_torus_of(sixteen, 4, 4);
	assert_none(16, 2, 4, NNP_ERROR_NO_PATH,
		    "no 2x4 torus among the 16 free chips: their links that are up join 16 of them, but not as one (each row and column a ring; one of 2 chips needs two links)");
	torus_wires(2, 2);
	assert_picked(4, 2, 2, all);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Two cliques of 8, one link between them: no ring, many paths. */
static void test_search_gives_up(void **state)
{
	struct nnp_ring ring;
	uint32_t a, b, side;
	double t0;

	(void)state;
	chips(16);
	for (a = 0; a < 16; a++)
		info[a].nports = 8;
	for (side = 0; side < 16; side += 8)
		for (a = side; a < side + 8; a++)
			for (b = a + 1; b < side + 8; b++)
				wire(a, b - side - 1, b, a - side);
	wire(7, 7, 8, 7);
	/*
	 * The budget ends both searches in well under 0.4 s here; 5 s is
	 * room for a loaded host, and a search without its budget would
	 * run for hours, so the bound still tells the two apart.
	 */
	t0 = now_s();
	assert_int_equal(nnp_ring_plan(info, 16, &ring), NNP_ERROR_NO_PATH);
	assert_true(now_s() - t0 < 5.0);
	t0 = now_s();
	assert_none(16, 1, 16, NNP_ERROR_NO_PATH,
		    "no ring of 16 found among the 16 free chips before the search gave up");
	assert_true(now_s() - t0 < 5.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_on_torus),
		cmocka_unit_test(test_ring_around_a_link_down),
		cmocka_unit_test(test_best_fit),
		cmocka_unit_test(test_parts_too_small),
		cmocka_unit_test(test_torus),
		cmocka_unit_test(test_search_gives_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
