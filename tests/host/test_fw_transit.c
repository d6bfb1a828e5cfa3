// SPDX-License-Identifier: MIT
/*
 * Firmware simulator transit communicators (v1.22): on a ring of 4
 * in-process chips, a communicator of chips 0 and 2 alone, which share
 * no link. Chips 1 and 3 are none of its ranks: each holds it as a
 * transit, one hop of its ring (0 -> 1 -> 2 and 2 -> 3 -> 0) and a relay
 * of its routed messages.
 *
 * In detail (docs/testing.md has the summary): an allreduce of 4 MiB,
 * more than a port holds, exact on both ranks, its chunks through both
 * transits; routed messages both ways, byte for byte; a transit made
 * after a chunk came to it passes it on, and the allreduce ends exact;
 * on a ring of 6, a
 * link down between two transits with nothing in flight: both fail
 * LINK_DOWN and pass an abort on, so the rank waiting ends ABORTED at
 * once, not at its timeout; a transit destroyed while a rank waits: both
 * sides end ABORTED at once; COMM_CREATE with a transit's bad fields INVALID_FIELD; queue
 * commands, COMM_TOPOLOGY and COMM_STATE naming a transit NOT_FOUND; and
 * COMM_DESTROY of a transit drops and counts what it held.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fw_ring.h"

/* The pair's elements of int32 (4 MiB), and its routed message's bytes. */
#define COUNT	(1u << 20)
#define MSG	300000u

static const struct nnp_hw_queue_cmd nop = { .opcode = NNP_CMD_NOP };

/* COMM_CREATE on chip @i: rank @rank of 2, or a transit; ports 0 and 1. */
static uint16_t create(uint32_t i, uint32_t rank, uint32_t flags)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
	struct nnp_hw_comm_args a = {
		.ctx = CTX, .comm = COMM, .nranks = 2, .rank = rank,
		.send_port = 0, .recv_port = 1, .epoch = EPOCH, .flags = flags,
	};

	memcpy(c.args, &a, sizeof(a));
	return fw_harness_admin(chips[i].h, c, NULL);
}

/*
 * Chips 0 and 2 ranks 0 and 1, 1 and 3 transits, each routed: rank 0
 * reaches rank 1 through chip 1 (its port 0), rank 1 rank 0 through chip
 * 3 (its port 0); a transit sends each rank towards its chip.
 */
static void pair_up(void)
{
	static const uint8_t routes[4][2] = {
		{ NONE, 0 }, { 1, 0 }, { 0, NONE }, { 0, 1 },
	};
	uint32_t i;

	N = 4;
	ring_up(0);
	for (i = 0; i < N; i++) {
		assert_int_equal(create(i, i & 1 ? 0 : i / 2,
					i & 1 ? NNP_HW_COMM_TRANSIT : 0),
				 NNP_STATUS_SUCCESS);
		assert_int_equal(routes_give(chips[i].h, COMM, routes[i], 2),
				 NNP_STATUS_SUCCESS);
	}
}

static struct nnp_hw_queue_cmd allreduce(uint32_t i)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_ALLREDUCE, .len = COUNT,
		.src_key = keys[i], .src_off = SRC,
		.dst_key = keys[i], .dst_off = DST,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	};
}

static void test_allreduce_through_transits(void **state)
{
	int32_t *a, *b;
	uint32_t k;

	(void)state;
	pair_up();
	a = (int32_t *)(chips[0].h->dev_mem + SRC);
	b = (int32_t *)(chips[2].h->dev_mem + SRC);
	for (k = 0; k < COUNT; k++) {
		a[k] = (int32_t)(k * 7 - 3);
		b[k] = (int32_t)(k ^ 0x5a5a5);
	}
	fw_chip_post(&chips[0], allreduce(0));
	fw_chip_post(&chips[1], nop);
	fw_chip_post(&chips[2], allreduce(2));
	fw_chip_post(&chips[3], nop);
	fw_chips_run_one_thread(chips, N);
	for (k = 0; k < N; k++)
		assert_int_equal(chips[k].status, NNP_STATUS_SUCCESS);
	for (k = 0; k < COUNT; k++) {
		int32_t want = (int32_t)(k * 7 - 3) + (int32_t)(k ^ 0x5a5a5);

		assert_int_equal(((int32_t *)(chips[0].h->dev_mem + DST))[k], want);
		assert_int_equal(((int32_t *)(chips[2].h->dev_mem + DST))[k], want);
	}
	/* Each rank's half of the data went round through both transits. */
	assert_int_equal(port_info(1, 0).tx_bytes, port_info(1, 1).rx_bytes);
	assert_int_equal(port_info(3, 0).tx_bytes, port_info(3, 1).rx_bytes);
	assert_true(port_info(1, 0).tx_bytes >= COUNT * 4 / 2);
	assert_true(port_info(3, 0).tx_bytes >= COUNT * 4 / 2);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_dropped, 0);
	assert_int_equal(fw_harness_counters(chips[3].h).icl_dropped, 0);
	ring_down();
}

static void test_routed_messages_both_ways(void **state)
{
	uint32_t i;

	(void)state;
	pair_up();
	pattern(0, SRC, MSG, 1);
	pattern(2, SRC, MSG, 2);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], SRC, MSG, 1));
	fw_chip_post(&chips[0], routed(NNP_CMD_RECV, keys[0], DST, MSG, 1));
	fw_chip_post(&chips[1], nop);
	fw_chip_post(&chips[2], routed(NNP_CMD_RECV, keys[2], DST, MSG, 0));
	fw_chip_post(&chips[2], routed(NNP_CMD_SEND, keys[2], SRC, MSG, 0));
	fw_chip_post(&chips[3], nop);
	fw_chips_run_one_thread(chips, N);
	for (i = 0; i < N; i++)
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
	assert_memory_equal(chips[2].h->dev_mem + DST, chips[0].h->dev_mem + SRC, MSG);
	assert_memory_equal(chips[0].h->dev_mem + DST, chips[2].h->dev_mem + SRC, MSG);
	/* 0 -> 1 -> 2 and 2 -> 3 -> 0, the shorter ways, and nothing else. */
	assert_int_equal(port_info(1, 0).tx_bytes, MSG);
	assert_int_equal(port_info(3, 0).tx_bytes, MSG);
	assert_int_equal(port_info(1, 1).tx_bytes, 0);
	assert_int_equal(port_info(3, 1).tx_bytes, 0);
	ring_down();
}

/*
 * Chip 1's transit is made only after rank 0's chunk came to it, and
 * nothing comes after: it passes that chunk on once made, and a small
 * allreduce ends exact on both ranks.
 */
static void test_transit_made_late(void **state)
{
	struct nnp_hw_queue_cmd c[2];
	int32_t *a, *b;
	uint32_t i;

	(void)state;
	N = 4;
	ring_up(0);
	for (i = 0; i < N; i++)
		if (i != 1)
			assert_int_equal(create(i, i == 2, i & 1 ? NNP_HW_COMM_TRANSIT : 0),
					 NNP_STATUS_SUCCESS);
	a = (int32_t *)(chips[0].h->dev_mem + SRC);
	b = (int32_t *)(chips[2].h->dev_mem + SRC);
	for (i = 0; i < 64; i++) {
		a[i] = (int32_t)i;
		b[i] = (int32_t)(1000 - i);
	}
	c[0] = allreduce(0);
	c[1] = allreduce(2);
	c[0].len = c[1].len = 64;
	fw_chip_post(&chips[0], c[0]);
	fw_chip_post(&chips[2], c[1]);
	for (i = 1; i < N; i += 2)
		fw_chip_post(&chips[i], nop);
	run_rounds(5);
	assert_true(nnp_fw_icl_held_bytes(chips[1].h->fw) > 0);
	assert_int_equal(create(1, 0, NNP_HW_COMM_TRANSIT), NNP_STATUS_SUCCESS);
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	assert_int_equal(chips[2].status, NNP_STATUS_SUCCESS);
	for (i = 0; i < 64; i++) {
		assert_int_equal(((int32_t *)(chips[0].h->dev_mem + DST))[i], 1000);
		assert_int_equal(((int32_t *)(chips[2].h->dev_mem + DST))[i], 1000);
	}
	assert_int_equal(nnp_fw_icl_held_bytes(chips[1].h->fw), 0);
	ring_down();
}

/*
 * On a ring of 6, ranks on chips 0 and 3, transits on the others. The
 * link between chips 1 and 2, both transits, goes down before rank 1
 * (chip 3) starts its allreduce, with nothing of it in flight: both
 * transits fail LINK_DOWN and pass an abort out of their other port, so
 * rank 1 ends ABORTED at once (its timeout would be PEER_TIMEOUT, 2 s)
 * and rank 0's communicator has failed before it calls.
 */
static void test_link_down_between_transits(void **state)
{
	uint32_t i;

	(void)state;
	N = 6;
	ring_up(0);
	for (i = 0; i < N; i++)
		assert_int_equal(create(i, i == 3, i % 3 ? NNP_HW_COMM_TRANSIT : 0),
				 NNP_STATUS_SUCCESS);
	nnp_fw_link_set(chips[1].h->fw, 0, false);
	for (i = 0; i < N; i++)
		fw_chip_post(&chips[i], i == 3 ? allreduce(3) : nop);
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(chips[3].status, NNP_STATUS_ABORTED);
	assert_int_equal(fw_harness_comm_status(chips[1].h, CTX, COMM),
			 NNP_STATUS_LINK_DOWN);
	assert_int_equal(fw_harness_comm_status(chips[2].h, CTX, COMM),
			 NNP_STATUS_LINK_DOWN);
	assert_int_equal(fw_harness_comm_status(chips[0].h, CTX, COMM),
			 NNP_STATUS_ABORTED);
	/* The transits beyond pass it and fail for nothing. */
	assert_int_equal(fw_harness_comm_status(chips[4].h, CTX, COMM), 0);
	ring_down();
	N = 4;
}

/*
 * Chip 1's transit is destroyed while rank 1 (chip 2) waits for rank 0's
 * chunk, which is not sent yet: it passes an abort out of both ports, so
 * rank 1 ends ABORTED at once (its timeout would be PEER_TIMEOUT, 2 s)
 * and rank 0's communicator has failed before it calls.
 */
static void test_destroyed_transit_aborts_both_sides(void **state)
{
	struct nnp_hw_admin_cmd d = { .opcode = NNP_ADMIN_COMM_DESTROY };
	uint32_t i;

	(void)state;
	pair_up();
	for (i = 0; i < N; i++)
		fw_chip_post(&chips[i], i == 2 ? allreduce(2) : nop);
	run_rounds(3);
	d.args[0] = CTX;
	d.args[1] = COMM;
	assert_int_equal(fw_harness_admin(chips[1].h, d, NULL), NNP_STATUS_SUCCESS);
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(chips[2].status, NNP_STATUS_ABORTED);
	assert_int_equal(fw_harness_comm_status(chips[0].h, CTX, COMM),
			 NNP_STATUS_ABORTED);
	ring_down();
}

/* Admin command @opcode on chip 1's transit, @len bytes of @data. */
static uint16_t transit_admin(uint8_t opcode, const void *data, uint32_t len)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = opcode, .addr = H_AQ_DATA, .len = len,
	};

	memcpy(fw_harness_host_ptr(chips[1].h, H_AQ_DATA), data, len);
	c.args[0] = CTX;
	c.args[1] = COMM;
	return fw_harness_admin(chips[1].h, c, NULL);
}

static void test_bad_transits_refused(void **state)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
	struct nnp_hw_comm_args good = {
		.ctx = CTX, .comm = COMM, .nranks = 2, .send_port = 0,
		.recv_port = 1, .epoch = EPOCH, .flags = NNP_HW_COMM_TRANSIT,
	};
	struct nnp_hw_comm_args bad[5];
	const uint32_t order[2] = { 0, 1 };
	const struct nnp_hw_comm_topology t = { .algo = NNP_HW_ALGO_RING };
	uint8_t st[sizeof(struct nnp_hw_comm_state)];
	uint32_t k;

	(void)state;
	N = 4;
	ring_up(0);
	for (k = 0; k < 5; k++)
		bad[k] = good;
	bad[0].rank = 1;		/* a transit is no rank */
	bad[1].nranks = 1;		/* nobody to pass between */
	bad[2].recv_port = 0;		/* one port is no hop */
	bad[3].flags = 2;		/* a flag the device does not know */
	bad[4].send_port = 4;		/* past the chip's ports */
	for (k = 0; k < 5; k++) {
		memcpy(c.args, &bad[k], sizeof(bad[k]));
		assert_int_equal(fw_harness_admin(chips[1].h, c, NULL),
				 NNP_STATUS_INVALID_FIELD);
	}
	/* A transit has no ring order. */
	memcpy(fw_harness_host_ptr(chips[1].h, H_AQ_DATA), order, sizeof(order));
	memcpy(c.args, &good, sizeof(good));
	c.addr = H_AQ_DATA;
	c.len = sizeof(order);
	assert_int_equal(fw_harness_admin(chips[1].h, c, NULL),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(create(1, 0, NNP_HW_COMM_TRANSIT), NNP_STATUS_SUCCESS);

	/* It takes no command of a rank's. */
	assert_int_equal(transit_admin(NNP_ADMIN_COMM_TOPOLOGY, &t, sizeof(t)),
			 NNP_STATUS_NOT_FOUND);
	assert_int_equal(transit_admin(NNP_ADMIN_COMM_STATE, st, sizeof(st)),
			 NNP_STATUS_NOT_FOUND);
	fw_chip_post(&chips[1], allreduce(1));
	fw_chips_run_one_thread(&chips[1], 1);
	assert_int_equal(chips[1].status, NNP_STATUS_NOT_FOUND);
	assert_int_equal(fw_harness_comm_status(chips[1].h, CTX, COMM), 0);
	ring_down();
}

/*
 * 6 MiB from rank 0 to rank 1, whose communicator is not made on chip 2:
 * chip 1's transit holds what chip 2 has no room for. Its COMM_DESTROY
 * drops those packets, counts each, and frees their room.
 */
static void test_destroy_drops_what_it_held(void **state)
{
	struct nnp_hw_admin_cmd d = { .opcode = NNP_ADMIN_COMM_DESTROY };
	const uint8_t r0[2] = { NONE, 0 }, r1[2] = { 1, 0 };
	const uint64_t len = 6u << 20;
	uint64_t held;

	(void)state;
	N = 4;
	ring_up(0);
	assert_int_equal(create(0, 0, 0), NNP_STATUS_SUCCESS);
	assert_int_equal(routes_give(chips[0].h, COMM, r0, 2), NNP_STATUS_SUCCESS);
	assert_int_equal(create(1, 0, NNP_HW_COMM_TRANSIT), NNP_STATUS_SUCCESS);
	assert_int_equal(routes_give(chips[1].h, COMM, r1, 2), NNP_STATUS_SUCCESS);
	pattern(0, 0, len, 4);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], 0, len, 1));
	fw_chip_post(&chips[1], nop);
	fw_chips_run_one_thread(chips, 2);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	held = nnp_fw_icl_held_bytes(chips[1].h->fw);
	assert_true(held > 0);
	assert_int_equal(held + nnp_fw_icl_held_bytes(chips[2].h->fw), len);
	d.args[0] = CTX;
	d.args[1] = COMM;
	assert_int_equal(fw_harness_admin(chips[1].h, d, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(nnp_fw_icl_held_bytes(chips[1].h->fw), 0);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_dropped,
			 held / NNP_FW_CHUNK_BYTES);
	ring_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allreduce_through_transits),
		cmocka_unit_test(test_routed_messages_both_ways),
		cmocka_unit_test(test_transit_made_late),
		cmocka_unit_test(test_link_down_between_transits),
		cmocka_unit_test(test_destroyed_transit_aborts_both_sides),
		cmocka_unit_test(test_bad_transits_refused),
		cmocka_unit_test(test_destroy_drops_what_it_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
