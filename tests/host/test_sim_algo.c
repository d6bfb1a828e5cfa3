// SPDX-License-Identifier: MIT
/*
 * The allreduce algorithms of fw_algo.c on chips run by tools/nnp-sim's
 * host (one thread, no QEMU): each algorithm's results bit for bit
 * against a reference and its link bytes exact, per port; the modeled
 * times unchanged when the host runs the chips in a random order;
 * timing-only chips modeled exactly as those that move the data; the
 * small-message latency of a torus against a ring's; and
 * nnp_fw_comm_set_topology()'s checks.
 *
 * In detail (docs/testing.md has the summary):
 * the allreduce algorithms (`firmware-sim/src/algorithms/fw_algo.c`) on
 * chips run by nnp-sim's host from one thread: RING, BIDIR and RINGS on a
 * ring of 4 (two port pairs) and TORUS on 4x4 and 2x4, i32 sum out of place
 * and f32 avg in place, every chip's result bit for bit against the sum of
 * the inputs (avg: one division by n), and each port's transmit bytes exact
 * (ring: 3S/2 on port 0; bidir: 3S/4 on ports 0 and 1; rings: 3S/8 on each
 * of 4; torus: 2(C-1)/C Px + 2(C-1)/C Py/R along rows, the same across, the
 * lanes starting along rows taking Px and those along columns Py in the
 * ratio C(R-1) : R(C-1), S/4 each on 4x4, 688128 and 458752 B per row and
 * column port on 2x4); AUTO by size (2 elements a chip: both ways, 4: all
 * four rings, 1: the one ring); modeled times and port bytes the same to
 * the ns when the host runs the chips in 3 random orders (ring, bidir,
 * rings, torus 4x4, 2x4 and 4x2: at 2 MiB a chip's lanes begin each pass
 * together, so no two want one port at once); a 4x16 torus, timing-only, at
 * 256 MiB: busbw at least 200 GB/s of the 224 of four ports (201.1; 140
 * with equal lanes that go on alone); RINGS on a ring of 16 at 4 MiB (64
 * KiB a lane's step): 4 packets of 16 KiB a step on each port (120), and
 * each step less than a hop and the step's wire time after the one before
 * (40.4 us in all; 68.3 in one packet a step); timing-only chips modeled
 * exactly as chips that move the data; a 16-element allreduce on 4x4 takes
 * 30 hops on the ring and 12 on the torus (ratio 2.45-2.50), and on 8x8
 * 4.2x the ring's 16-chip time but 2.3x the torus's (O(n) against O(sqrt
 * n)); 16 elements on a 2x8 torus 16 hops, 2 + 14, though its lanes' passes
 * differ in hops (27 if each pass waited for the longest); a link down
 * before BIDIR, RINGS or TORUS (2x4) ends every chip's allreduce, LINK_DOWN
 * at the link's ends and ABORTED elsewhere, none left waiting (ASan-clean
 * when built with it); `nnp_fw_comm_set_topology()` refuses sizes that are
 * not nranks, ports and positions out of range, 3 port pairs, an unknown
 * algorithm, communicator or context
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_base.h"
#include "sim.h"
#include "topo.h"

#define MAX_CHIPS	16

static struct sim sim;

/* @rows x @cols chips (a ring for 1 row), wired, with algorithm @algo. */
static void fabric_up(unsigned int rows, unsigned int cols, uint32_t algo,
		      uint64_t bytes, bool timing_only, unsigned int jitter)
{
	struct nnp_fw_config model = { 0 };
	enum topo_kind kind = rows > 1 ? TOPO_TORUS : TOPO_RING;
	struct topo t;

	assert_int_equal(topo_shape(&t, kind, rows * cols, rows > 1 ? rows : 0,
				    0), 0);
	/* Input and output apart: out of place reads its input in the ring. */
	assert_int_equal(sim_create(&sim, rows * cols, 2 * bytes, timing_only,
				    &model), 0);
	sim.jitter = jitter;
	assert_int_equal(topo_wire(&sim, &t), 0);
	assert_int_equal(topo_comm(&sim, &t), 0);
	assert_int_equal(topo_set_algo(&sim, &t, algo), 0);
}

/* Chip @c's input element @i: small integers, so any order sums exactly. */
static int32_t input(unsigned int c, uint64_t i)
{
	return (int32_t)((i * 7 + c * 13) % 101) - 50;
}

/*
 * An i32 SUM (or f32 AVG with @avg) allreduce of @count elements from
 * offset @src to offset @dst on every chip; the latest modeled end.
 */
static uint64_t allreduce(uint64_t count, uint64_t src, uint64_t dst, bool avg)
{
	uint64_t end = 0;
	unsigned int c;

	for (c = 0; c < sim.n && !sim.timing_only; c++) {
		uint8_t *m = sim.chips[c].mem + src;
		uint64_t i;

		for (i = 0; i < count; i++)
			if (avg)
				((float *)m)[i] = (float)input(c, i);
			else
				((int32_t *)m)[i] = input(c, i);
	}
	for (c = 0; c < sim.n; c++)
		sim_post(&sim, c, (struct nnp_hw_queue_cmd){
			.opcode = NNP_CMD_ALLREDUCE, .len = count,
			.src_key = sim.chips[c].key, .dst_key = sim.chips[c].key,
			.src_off = src, .dst_off = dst,
			.value = NNP_COLL_VALUE(avg ? NNP_DTYPE_F32 : NNP_DTYPE_I32,
						avg ? NNP_OP_AVG : NNP_OP_SUM,
						SIM_COMM, 0),
		});
	assert_int_equal(sim_run(&sim), 0);
	assert_int_equal(sim.errors, 0);
	for (c = 0; c < sim.n; c++) {
		struct nnp_fw_model m;

		nnp_fw_model_get(sim.chips[c].fw, &m);
		end = m.now_ns > end ? m.now_ns : end;
	}
	return end;
}

/* Every chip's output is the reference, bit for bit. */
static void check_output(uint64_t count, uint64_t dst, bool avg)
{
	unsigned int c, r;
	uint64_t i;

	for (c = 0; c < sim.n; c++) {
		const uint8_t *m = sim.chips[c].mem + dst;

		for (i = 0; i < count; i++) {
			int32_t sum = 0;

			for (r = 0; r < sim.n; r++)
				sum += input(r, i);
			if (avg) {
				/* One division by n, as the single ring does. */
				float want = (float)sum / (float)sim.n;

				assert_memory_equal(&((const float *)m)[i], &want, 4);
			} else {
				assert_int_equal(((const int32_t *)m)[i], sum);
			}
		}
	}
}

static void port_tx(unsigned int c, uint64_t tx[SIM_PORTS])
{
	struct nnp_hw_port_info info[SIM_PORTS];
	unsigned int p;

	assert_int_equal(sim_admin_read(&sim, c, NNP_ADMIN_GET_PORTS, info,
					sizeof(info)), NNP_STATUS_SUCCESS);
	for (p = 0; p < SIM_PORTS; p++)
		tx[p] = info[p].tx_bytes;
}

/*
 * @algo on @rows x @cols chips, in and out of place: exact results, and
 * each chip sent @want[p] bytes on port p for an allreduce of @bytes.
 */
static void check_algo(unsigned int rows, unsigned int cols, uint32_t algo,
		       uint64_t bytes, const uint64_t want[SIM_PORTS])
{
	uint64_t count = bytes / 4, tx[SIM_PORTS];
	unsigned int c, p;

	fabric_up(rows, cols, algo, bytes, false, 0);
	allreduce(count, 0, bytes, false);
	check_output(count, bytes, false);
	for (c = 0; c < sim.n; c++) {
		port_tx(c, tx);
		for (p = 0; p < SIM_PORTS; p++)
			assert_int_equal(tx[p], want[p]);
	}
	/* In place, and AVG: one division by every rank. */
	allreduce(count, 0, 0, true);
	check_output(count, 0, true);
	for (c = 0; c < sim.n; c++) {
		port_tx(c, tx);
		for (p = 0; p < SIM_PORTS; p++)
			assert_int_equal(tx[p], 2 * want[p]);
	}
	sim_destroy(&sim);
}

/* The single ring: every byte on port 0, 2(n-1)/n of the buffer. */
static void test_ring_exact(void **state)
{
	const uint64_t S = 4u << 20;
	const uint64_t want[SIM_PORTS] = { 2 * 3 * S / 4 };

	(void)state;
	check_algo(1, 4, NNP_FW_ALGO_RING, S, want);
}

/* Both ways round: half the data forward on port 0, half back on 1. */
static void test_bidir_exact(void **state)
{
	const uint64_t S = 4u << 20;
	const uint64_t want[SIM_PORTS] = { 3 * S / 4, 3 * S / 4 };

	(void)state;
	check_algo(1, 4, NNP_FW_ALGO_BIDIR, S, want);
}

/* Both pairs both ways: a quarter of the ring's bytes on each port. */
static void test_rings_exact(void **state)
{
	const uint64_t S = 4u << 20;
	const uint64_t q = 3 * S / 4 / 2;
	const uint64_t want[SIM_PORTS] = { q, q, q, q };

	(void)state;
	check_algo(1, 4, NNP_FW_ALGO_RINGS, S, want);
}

/*
 * The torus on R x C: the two lanes that start along a row take Px each,
 * the two that start along a column Py, in the ratio C(R-1) : R(C-1) so
 * that their first passes, (C-1)/C Px and (R-1)/R Py, take equal time
 * (S/4 each on a square). A lane sends 2(C-1)/C Px along a row when it
 * starts there, 2(C-1)/C Py/R when it ends there (its middle pass on the
 * segment its columns left it), and the same across.
 */
static void torus_want(unsigned int R, unsigned int C, uint64_t S,
		       uint64_t want[SIM_PORTS])
{
	uint64_t wx = C * (R - 1), wy = R * (C - 1);
	uint64_t Px = S * wx / (2 * (wx + wy)), Py = S * wy / (2 * (wx + wy));
	uint64_t x = 2 * (C - 1) * Px / C + 2 * (C - 1) * (Py / R) / C;
	uint64_t y = 2 * (R - 1) * Py / R + 2 * (R - 1) * (Px / C) / R;

	want[0] = want[1] = x;
	want[2] = want[3] = y;
}

static void test_torus_exact(void **state)
{
	const uint64_t S = 3u << 20;	/* a multiple of 4 lanes x 16 x 4 B */
	/* 2 x 4: lanes of 4/20 and 6/20 of S, then 1/8 and 1/4 of each: 80 x 4 B. */
	const uint64_t S24 = 320u << 12;
	uint64_t want[SIM_PORTS];

	(void)state;
	torus_want(4, 4, S, want);
	check_algo(4, 4, NNP_FW_ALGO_TORUS, S, want);
	/* Not square: rows and columns of other lengths. */
	torus_want(2, 4, S24, want);
	assert_int_equal(want[0], 688128);	/* not the 737280 of S/4 a lane */
	assert_int_equal(want[2], 458752);
	check_algo(2, 4, NNP_FW_ALGO_TORUS, S24, want);
}

/* AUTO picks by topology and size: the bytes per port tell which. */
static void test_auto_choice(void **state)
{
	uint64_t tx[SIM_PORTS];

	(void)state;
	fabric_up(1, 4, NNP_FW_ALGO_AUTO, 1024, false, 0);
	allreduce(8, 0, 0, false);	/* 2 a chip: both ways */
	port_tx(0, tx);
	assert_int_equal(tx[0] + tx[1], 2 * 3 * 8 * 4 / 4);
	assert_true(tx[0] && tx[1] && !tx[2] && !tx[3]);
	allreduce(16, 0, 0, false);	/* 4 a chip: all four rings */
	port_tx(0, tx);
	assert_true(tx[2] && tx[3]);
	allreduce(4, 0, 0, false);	/* 1 a chip: the one ring */
	check_output(4, 0, false);
	sim_destroy(&sim);
}

/*
 * Each chip's modeled time after @algo on @rows x @cols, the host
 * running the kicked chips in order (@jitter 0) or at random.
 */
static void modeled_times(unsigned int rows, unsigned int cols, uint32_t algo,
			  unsigned int jitter, bool timing_only,
			  uint64_t *now, uint64_t tx[SIM_PORTS])
{
	const uint64_t S = 2u << 20;
	unsigned int c;

	fabric_up(rows, cols, algo, S, timing_only, jitter);
	allreduce(S / 4, 0, S, false);
	allreduce(S / 64, 0, 0, false);
	for (c = 0; c < sim.n; c++) {
		struct nnp_fw_model m;

		nnp_fw_model_get(sim.chips[c].fw, &m);
		now[c] = m.now_ns;
	}
	port_tx(sim.n - 1, tx);
	sim_destroy(&sim);
}

/*
 * The ring, both ways, and a torus square or not: no two lanes want one
 * port at the same modeled time (a chip's lanes begin each pass together,
 * fw_algo.c's lanes_next_pass()), so the host's order changes nothing.
 */
static void test_jitter_same_times(void **state)
{
	static const struct { uint32_t algo; unsigned int rows, cols; } runs[] = {
		{ NNP_FW_ALGO_RING, 1, 4 }, { NNP_FW_ALGO_BIDIR, 1, 4 },
		{ NNP_FW_ALGO_RINGS, 1, 4 }, { NNP_FW_ALGO_TORUS, 4, 4 },
		{ NNP_FW_ALGO_TORUS, 2, 4 }, { NNP_FW_ALGO_TORUS, 4, 2 },
	};
	uint64_t want[MAX_CHIPS], got[MAX_CHIPS], tx[SIM_PORTS], tx2[SIM_PORTS];
	unsigned int a, seed, rows, cols;

	(void)state;
	for (a = 0; a < sizeof(runs) / sizeof(runs[0]); a++) {
		rows = runs[a].rows;
		cols = runs[a].cols;
		modeled_times(rows, cols, runs[a].algo, 0, false, want, tx);
		for (seed = 1; seed <= 3; seed++) {
			modeled_times(rows, cols, runs[a].algo, seed, false, got,
				      tx2);
			assert_memory_equal(got, want, rows * cols * sizeof(got[0]));
			assert_memory_equal(tx2, tx, sizeof(tx));
		}
	}
}

/* No bytes moved, the same modeled times and link bytes. */
static void test_timing_only_same_model(void **state)
{
	uint64_t want[MAX_CHIPS], got[MAX_CHIPS], tx[SIM_PORTS], tx2[SIM_PORTS];

	(void)state;
	modeled_times(2, 4, NNP_FW_ALGO_TORUS, 0, false, want, tx);
	modeled_times(2, 4, NNP_FW_ALGO_TORUS, 0, true, got, tx2);
	assert_memory_equal(got, want, 8 * sizeof(got[0]));
	assert_memory_equal(tx2, tx, sizeof(tx));
}

/*
 * A torus whose sides differ, 4 x 16 (a POD of 4 chassis of 16 chips),
 * timing-only: at 256 MiB its lanes keep the four ports busy, at least
 * 200 GB/s of NCCL's bus bandwidth of the 224 they carry (201.1 measured;
 * equal parts and lanes going on alone, each from its own last pass:
 * 140). The rest is the middle pass, whose ports are not all busy.
 */
static void test_uneven_torus_busbw(void **state)
{
	const uint64_t S = 256ull << 20;
	double busbw;
	uint64_t ns;

	(void)state;
	fabric_up(4, 16, NNP_FW_ALGO_TORUS, S, true, 0);
	ns = allreduce(S / 4, 0, 0, false);
	sim_destroy(&sim);
	busbw = 2.0 * 63 / 64 * (double)S / (double)ns;
	print_message("  4 x 16 torus, 256 MiB: %.1f GB/s busbw\n", busbw);
	assert_true(busbw >= 200);
}

/*
 * A lane's small ring steps go in packets of 16 KiB, and each goes on
 * once it arrived, not its whole step: RINGS on a ring of 16 chips, 4 MiB
 * (a lane's step is 64 KiB), sends 4 packets a step on each port, 120 in
 * its 30 steps, and a step costs a hop and a packet's wire time (and its
 * fold), less than the hop and the whole step's wire time, 1170 ns, that
 * a step of one 64 KiB packet waited for.
 */
static void test_small_steps_pipeline(void **state)
{
	const uint64_t S = 4u << 20, steps = 30, step_wire = 1170;
	struct nnp_hw_port_info info[SIM_PORTS];
	unsigned int p;
	uint64_t ns;

	(void)state;
	fabric_up(1, 16, NNP_FW_ALGO_RINGS, S, true, 0);
	ns = allreduce(S / 4, 0, 0, false) - 2000;
	assert_int_equal(sim_admin_read(&sim, 0, NNP_ADMIN_GET_PORTS, info,
					sizeof(info)), NNP_STATUS_SUCCESS);
	sim_destroy(&sim);
	print_message("  ring of 16, 4 MiB: %.3f us, %.0f ns a step\n", ns / 1e3,
		      (double)ns / steps);
	for (p = 0; p < SIM_PORTS; p++)
		assert_int_equal(info[p].tx_packets, 4 * steps);
	assert_true(ns < steps * (1000 + step_wire));
	assert_true(ns > steps * (1000 + step_wire / 4));
}

/*
 * A small allreduce is latency: 2(n-1) hops around a ring of n, but
 * 2(R-1) + 2(C-1) on an R x C torus, O(sqrt(n)). The modeled times of
 * 16 elements on 4 x 4 chips, less the command overhead, are in the
 * ratio 30 : 12 within the chunks' wire and memory time.
 */
static void test_small_latency(void **state)
{
	uint64_t ring, torus, ring64, torus64;

	(void)state;
	fabric_up(4, 4, NNP_FW_ALGO_RING, 4096, true, 0);
	ring = allreduce(16, 0, 0, false) - 2000;
	sim_destroy(&sim);
	fabric_up(4, 4, NNP_FW_ALGO_TORUS, 4096, true, 0);
	torus = allreduce(16, 0, 0, false) - 2000;
	sim_destroy(&sim);
	/* 1 us a hop (the default latency) plus a few ns of wire each. */
	assert_in_range(ring, 30000, 30000 + 30 * 10);
	assert_in_range(torus, 12000, 12000 + 12 * 10);
	assert_in_range(ring * 100 / torus, 245, 250);
	/* Four times the chips: the ring's latency 4.2x, the torus's 2.3x. */
	fabric_up(8, 8, NNP_FW_ALGO_RING, 4096, true, 0);
	ring64 = allreduce(64, 0, 0, false) - 2000;
	sim_destroy(&sim);
	fabric_up(8, 8, NNP_FW_ALGO_TORUS, 4096, true, 0);
	torus64 = allreduce(64, 0, 0, false) - 2000;
	sim_destroy(&sim);
	assert_in_range(ring64 * 100 / ring, 415, 425);	/* 126 / 30 */
	assert_in_range(torus64 * 100 / torus, 230, 236);	/* 28 / 12 */
	/*
	 * Sides that differ, 2 x 8: 2 + 14 hops, the lanes' passes
	 * unequal in hops (1, 14, 1 and 7, 2, 7) and none waiting for
	 * another's (27 us if each pass waited for the longest).
	 */
	fabric_up(2, 8, NNP_FW_ALGO_TORUS, 4096, true, 0);
	torus = allreduce(16, 0, 0, false) - 2000;
	sim_destroy(&sim);
	print_message("  2 x 8 torus, 16 elements: %llu ns\n",
		      (unsigned long long)torus);
	assert_in_range(torus, 16000, 16000 + 16 * 10);
}

/*
 * A link down: every chip's allreduce ends, LINK_DOWN where a lane uses
 * the link and ABORTED elsewhere, none waits for ever (the clock stands
 * still, and the communicator never times out), and ASan-clean lanes
 * give back what they lent.
 */
static void test_link_down_ends_all(void **state)
{
	static const uint32_t algos[] = {
		NNP_FW_ALGO_BIDIR, NNP_FW_ALGO_RINGS, NNP_FW_ALGO_TORUS,
	};
	unsigned int a, c, down, aborted;

	(void)state;
	for (a = 0; a < 3; a++) {
		unsigned int rows = algos[a] == NNP_FW_ALGO_TORUS ? 2 : 1;

		fabric_up(rows, 4, algos[a], 1u << 20, false, 0);
		nnp_fw_link_set(sim.chips[1].fw, 0, false);
		for (c = 0; c < sim.n; c++)
			sim_post(&sim, c, (struct nnp_hw_queue_cmd){
				.opcode = NNP_CMD_ALLREDUCE, .len = (1u << 20) / 4,
				.src_key = sim.chips[c].key,
				.dst_key = sim.chips[c].key,
				.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM,
							SIM_COMM, 0),
			});
		assert_int_equal(sim_run(&sim), sim.n);
		down = aborted = 0;
		for (c = 0; c < sim.n; c++) {
			uint16_t st = sim_last_status(&sim, c);

			assert_true(st == NNP_STATUS_LINK_DOWN ||
				    st == NNP_STATUS_ABORTED);
			down += st == NNP_STATUS_LINK_DOWN;
			aborted += st == NNP_STATUS_ABORTED;
		}
		/*
		 * The chips at the link's ends, 1 and 2, failed the
		 * communicator as it went down (v1.23), before any call.
		 */
		assert_int_equal(sim.chips[1].fw->comms[SIM_COMM].error,
				 NNP_STATUS_LINK_DOWN);
		assert_int_equal(sim.chips[2].fw->comms[SIM_COMM].error,
				 NNP_STATUS_LINK_DOWN);
		assert_int_equal(down + aborted, sim.n);
		sim.errors = 0;
		sim_destroy(&sim);
	}
}

static void test_set_topology_checks(void **state)
{
	struct nnp_fw_topology t = {
		.algo = NNP_FW_ALGO_TORUS,
		.dim = { { .n = 2, .pairs = 1, .next_port = { 0 },
			   .prev_port = { 1 } },
			 { .n = 2, .pairs = 1, .next_port = { 2 },
			   .prev_port = { 3 } } },
	};
	struct nnp_fw *fw;

	(void)state;
	fabric_up(1, 4, NNP_FW_ALGO_RING, 1024, false, 0);
	fw = sim.chips[0].fw;
	assert_int_equal(nnp_fw_comm_set_topology(fw, SIM_CTX, SIM_COMM, &t), 0);
	/* 2 x 3 is not 4 ranks. */
	t.dim[1].n = 3;
	assert_int_equal(nnp_fw_comm_set_topology(fw, SIM_CTX, SIM_COMM, &t), -1);
	t.dim[1].n = 2;
	t.dim[1].next_port[0] = SIM_PORTS;
	assert_int_equal(nnp_fw_comm_set_topology(fw, SIM_CTX, SIM_COMM, &t), -1);
	t.dim[1].next_port[0] = 2;
	t.dim[0].pos = 2;
	assert_int_equal(nnp_fw_comm_set_topology(fw, SIM_CTX, SIM_COMM, &t), -1);
	t.dim[0].pos = 0;
	t.dim[0].pairs = 3;
	assert_int_equal(nnp_fw_comm_set_topology(fw, SIM_CTX, SIM_COMM, &t), -1);
	t.dim[0].pairs = 1;
	t.algo = NNP_FW_ALGO_COUNT;
	assert_int_equal(nnp_fw_comm_set_topology(fw, SIM_CTX, SIM_COMM, &t), -1);
	t.algo = NNP_FW_ALGO_AUTO;
	assert_int_equal(nnp_fw_comm_set_topology(fw, SIM_CTX, SIM_COMM + 1, &t), -1);
	assert_int_equal(nnp_fw_comm_set_topology(fw, SIM_CTX + 1, SIM_COMM, &t), -1);
	sim_destroy(&sim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_exact),
		cmocka_unit_test(test_bidir_exact),
		cmocka_unit_test(test_rings_exact),
		cmocka_unit_test(test_torus_exact),
		cmocka_unit_test(test_uneven_torus_busbw),
		cmocka_unit_test(test_small_steps_pipeline),
		cmocka_unit_test(test_auto_choice),
		cmocka_unit_test(test_jitter_same_times),
		cmocka_unit_test(test_timing_only_same_model),
		cmocka_unit_test(test_small_latency),
		cmocka_unit_test(test_link_down_ends_all),
		cmocka_unit_test(test_set_topology_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
