// SPDX-License-Identifier: MIT
/*
 * nnp-sim's sweep (tools/nnp-sim/sweep.c) of every collective, on chips
 * run by its host (one thread, no QEMU), and the routes its topologies
 * give the exchanges.
 *
 * In detail (docs/testing.md has the summary): allreduce, broadcast,
 * allgather, reduce_scatter, reduce, alltoall, gather and scatter of
 * floats on a ring of 5, a 4x4 torus and a POD of 2 chassis of 8 chips,
 * at 4 KiB and 192 KiB (a rank's part of several chunks), every rank's
 * output bit for bit (the ranks but the root name no source or
 * destination where the device asks none; the exchanges' messages
 * routed through the chips between); a size with no element for each
 * rank is no row; a timing-only sweep models each collective exactly as
 * one that moves the data; the names parse and nccl-tests' bus factors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sweep.h"
#include "topo.h"

static struct sim sim;

static void fabric_up(enum topo_kind kind, unsigned int n, uint64_t max_bytes,
		      bool timing_only)
{
	struct nnp_fw_config model = { 0 };
	struct topo t;

	assert_int_equal(topo_shape(&t, kind, n, 0, 8), 0);
	assert_int_equal(sim_create(&sim, n, 2 * max_bytes, timing_only, &model), 0);
	assert_int_equal(topo_wire(&sim, &t), 0);
	assert_int_equal(topo_comm(&sim, &t), 0);
	assert_int_equal(topo_set_algo(&sim, &t, NNP_FW_ALGO_AUTO), 0);
}

/* Every collective at both sizes, checked; each one's modeled ns. */
static void every_collective(enum topo_kind kind, unsigned int n,
			     bool timing_only, uint64_t ns[SWEEP_COUNT][2])
{
	static const uint64_t sizes[2] = { 4096, 192u << 10 };
	unsigned int c, k;

	fabric_up(kind, n, sizes[1], timing_only);
	for (c = 0; c < SWEEP_COUNT; c++)
		for (k = 0; k < 2; k++) {
			assert_int_equal(sweep_run(&sim, (enum sweep_coll)c, sizes[k],
						   &ns[c][k]), 0);
			assert_true(ns[c][k] > 0);
		}
	sim_destroy(&sim);
}

static void test_every_collective_exact(void **state)
{
	uint64_t ns[SWEEP_COUNT][2], timed[SWEEP_COUNT][2];

	(void)state;
	every_collective(TOPO_RING, 5, false, ns);
	every_collective(TOPO_POD, 16, false, ns);
	every_collective(TOPO_TORUS, 16, false, ns);
	every_collective(TOPO_TORUS, 16, true, timed);
	assert_memory_equal(ns, timed, sizeof(ns));
}

static void test_no_element_no_row(void **state)
{
	uint64_t ns = 0;

	(void)state;
	fabric_up(TOPO_RING, 5, 4096, false);
	/* 16 bytes: four floats, not one for each of 5 ranks. */
	assert_int_equal(sweep_run(&sim, SWEEP_ALLTOALL, 16, &ns), 1);
	assert_int_equal(sweep_run(&sim, SWEEP_REDUCE, 16, &ns), 0);
	sim_destroy(&sim);
}

static void test_names_and_bus(void **state)
{
	enum sweep_coll c;

	(void)state;
	assert_int_equal(sweep_coll_parse("reduce_scatter", &c), 0);
	assert_int_equal(c, SWEEP_REDUCE_SCATTER);
	assert_string_equal(sweep_coll_name(SWEEP_SCATTER), "scatter");
	assert_int_equal(sweep_coll_parse("alltoallv", &c), -1);
	assert_true(sweep_bus(SWEEP_ALLREDUCE, 4) == 1.5);
	assert_true(sweep_bus(SWEEP_ALLTOALL, 4) == 0.75);
	assert_true(sweep_bus(SWEEP_REDUCE, 4) == 1);
	assert_int_equal(sweep_buf_bytes(SWEEP_ALLREDUCE, 100), 100);
	assert_int_equal(sweep_buf_bytes(SWEEP_GATHER, 100), 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_collective_exact),
		cmocka_unit_test(test_no_element_no_row),
		cmocka_unit_test(test_names_and_bus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
