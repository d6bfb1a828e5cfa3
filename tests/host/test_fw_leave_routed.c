// SPDX-License-Identifier: MIT
/*
 * Firmware simulator: a rank leaving tells every rank it has a route to
 * (hw 1.21), on a ring of 4 in-process chips routed the shorter way.
 *
 * In detail (docs/testing.md has the summary): rank 2 leaves while rank 0
 * waits to receive a routed message from it (one hop between them): the
 * receive ends PEER_LEFT with no clock moved, and rank 0's communicator
 * fails PEER_LEFT; the messages rank 2 sent before it left still come,
 * byte for byte and in order, and only the next receive ends; a routed
 * SEND to rank 2 once its leave came ends PEER_LEFT having sent no byte,
 * and one already waiting for room at rank 2 ends too; a receive from a
 * rank that did not leave completes; a GROUP already running when the
 * leave comes, with a RECV from rank 2, ends PEER_LEFT, and one whose
 * RECV from rank 2 takes a message sent before the leave completes once
 * its RECV from rank 1 does; ranks 0 and 3, whose communicators are
 * made and routed only after rank 2 left, hear of it then: rank 3's
 * allreduce and rank 0's RECV from rank 2 end PEER_LEFT without waiting;
 * routed message numbers skip the leave's
 * number (1023) as they wrap, and a message on either side of the wrap
 * comes byte for byte. With a chord between chips 0 and 2, off the ring
 * topology both have: a RECV by port over it ends PEER_LEFT at rank 2's
 * leave, after taking what rank 2 sent over it before, and a SEND over
 * it after the leave sends nothing. Rank 2's leave to rank 0, waiting at
 * the chip between them when that chip's communicator is destroyed too
 * (as at any job's end), counts as dropped but as no error of the port;
 * one coming to a chip whose communicator was destroyed before is
 * dropped on arrival, likewise, not held.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_ring.h"

static const struct nnp_hw_queue_cmd nop = { .opcode = NNP_CMD_NOP };

static void comm_destroy(uint32_t i)
{
	struct nnp_hw_admin_cmd d = {
		.opcode = NNP_ADMIN_COMM_DESTROY, .args = { CTX, COMM },
	};

	assert_int_equal(fw_harness_admin(chips[i].h, d, NULL),
			 NNP_STATUS_SUCCESS);
}

/* Chip @i's last command, run with every chip's queues: its status. */
static uint16_t run_one(uint32_t i, struct nnp_hw_queue_cmd c)
{
	uint32_t k;

	for (k = 0; k < N; k++)
		fw_chip_post(&chips[k], k == i ? c : nop);
	fw_chips_run_one_thread(chips, N);
	return chips[i].status;
}

/*
 * Chip 0 waits in @recv, from rank 2, which leaves instead: how @recv
 * ends. No clock moves, so the leave ends it, not a timeout.
 */
static uint16_t receive_across_the_leave(struct nnp_hw_queue_cmd recv)
{
	fw_chip_post(&chips[0], recv);
	run_rounds(4);
	assert_int_equal(cqe(0, chips[0].slot)->phase & 1, !chips[0].phase);
	comm_destroy(2);
	run_rounds(4);
	fw_chips_run_one_thread(chips, 1);
	return chips[0].status;
}

/* Rank 0 waits for a message from rank 2, which leaves instead. */
/*
 * Every rank destroys its communicator, in the order 2, 3, 0, 1, and
 * nothing runs to forward a leave. A rank leaving tells its ring
 * neighbours (a leave on each port) and every rank (a routed leave each),
 * the rank opposite going ahead (ring_routes()). In transit, dropped when
 * the chip holding it is destroyed after: 2's to 0 at chip 3, 3's to 1 at
 * chip 0, 0's to 2 at chip 1. Coming to a chip destroyed before, which
 * remembers the epoch and drops it at once rather than hold it as for a
 * communicator not made yet: at chip 2, 3's two and 1's two, and 1's to 3
 * passing through; at chip 3, 0's two; at chip 0, 1's two. So 3, 1, 5
 * and 3 dropped on chips 0-3 (before chips remembered: 1, 1, 0, 1, the
 * rest held), and no port's error: that count is a link's health, and
 * vm-multi_chassis failed now and then on leaves counted in it.
 */
static void test_leave_in_transit_at_destroy_is_no_error(void **state)
{
	static const uint64_t dropped[] = { 3, 1, 5, 3 };
	uint32_t i, port;

	(void)state;
	ring_up(ALL);
	for (i = 0; i < N; i++)
		comm_destroy((i + 2) % N);
	for (i = 0; i < N; i++) {
		assert_int_equal(fw_harness_counters(chips[i].h).icl_dropped,
				 dropped[i]);
		for (port = 0; port < 2; port++)
			assert_int_equal(port_info(i, port).errors, 0);
	}
	ring_down();
}

static void test_receive_ends_when_its_sender_leaves(void **state)
{
	(void)state;
	ring_up(ALL);
	assert_int_equal(receive_across_the_leave(routed(NNP_CMD_RECV, keys[0],
							 DST, 1000, 2)),
			 NNP_STATUS_PEER_LEFT);
	assert_int_equal(fw_harness_comm_status(chips[0].h, CTX, COMM),
			 NNP_STATUS_PEER_LEFT);
	/* Ranks that waited on nothing of rank 2's go on. */
	assert_int_equal(fw_harness_comm_status(chips[1].h, CTX, COMM), 0);
	assert_int_equal(fw_harness_comm_status(chips[3].h, CTX, COMM), 0);
	ring_down();
}

/*
 * What rank 2 sent before it left comes first, through the relay, in
 * order and byte for byte: only the receive after it ends.
 */
static void test_messages_sent_before_the_leave_come(void **state)
{
	const uint64_t len[2] = { 150000, 3000 };
	uint32_t k;

	(void)state;
	ring_up(ALL);
	pattern(2, SRC, len[0] + len[1], 5);
	for (k = 0; k < 2; k++)
		assert_int_equal(run_one(2, routed(NNP_CMD_SEND, keys[2],
						   SRC + k * len[0], len[k], 0)),
				 NNP_STATUS_SUCCESS);
	comm_destroy(2);
	memset(chips[0].h->dev_mem + DST, 0xee, len[0] + len[1]);
	for (k = 0; k < 2; k++)
		assert_int_equal(run_one(0, routed(NNP_CMD_RECV, keys[0],
						   DST + k * len[0], len[k], 2)),
				 NNP_STATUS_SUCCESS);
	assert_memory_equal(chips[0].h->dev_mem + DST, chips[2].h->dev_mem + SRC,
			    len[0] + len[1]);
	assert_int_equal(run_one(0, routed(NNP_CMD_RECV, keys[0], DST, 10, 2)),
			 NNP_STATUS_PEER_LEFT);
	ring_down();
}

/* Once rank 2's leave came, a SEND to it ends before it sends a byte. */
static void test_send_to_a_rank_that_left_sends_nothing(void **state)
{
	(void)state;
	ring_up(ALL);
	comm_destroy(2);
	run_rounds(4);
	assert_int_equal(run_one(0, routed(NNP_CMD_SEND, keys[0], SRC, 1000, 2)),
			 NNP_STATUS_PEER_LEFT);
	assert_int_equal(fw_harness_counters(chips[0].h).icl_tx_bytes, 0);
	ring_down();
}

/*
 * 7 MiB to rank 2, which never receives it: the SEND waits for room on
 * the way, then ends PEER_LEFT once rank 2's leave comes (by chip 3, here
 * before chip 1 forwards what the leave's purge made room for).
 */
static void test_send_waiting_for_room_ends_at_the_leave(void **state)
{
	(void)state;
	ring_up(ALL);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], SRC, 7u << 20, 2));
	run_rounds(16);
	assert_int_equal(cqe(0, chips[0].slot)->phase & 1, !chips[0].phase);
	comm_destroy(2);
	nnp_fw_run_queues(chips[3].h->fw);
	fw_chips_run_one_thread(chips, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_PEER_LEFT);
	ring_down();
}

/* Rank 2 left; a message from rank 1 to rank 0 still comes. */
static void test_other_ranks_messages_go_on(void **state)
{
	(void)state;
	ring_up(ALL);
	comm_destroy(2);
	pattern(1, SRC, 5000, 9);
	fw_chip_post(&chips[0], routed(NNP_CMD_RECV, keys[0], DST, 5000, 1));
	fw_chip_post(&chips[1], routed(NNP_CMD_SEND, keys[1], SRC, 5000, 0));
	fw_chip_post(&chips[2], nop);
	fw_chip_post(&chips[3], nop);
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	assert_int_equal(chips[1].status, NNP_STATUS_SUCCESS);
	assert_memory_equal(chips[0].h->dev_mem + DST, chips[1].h->dev_mem + SRC,
			    5000);
	ring_down();
}

/*
 * Chip 0's GROUP of a RECV from rank 2 and one from rank 1, running;
 * rank 2 sent @sent bytes before it left (0: nothing), then rank 1 sends.
 * The group's status.
 */
static uint16_t group_across_the_leave(uint64_t sent)
{
	struct nnp_hw_queue_cmd c[3] = {
		{ .opcode = NNP_CMD_GROUP, .len = 2, .cid = 100 },
		routed(NNP_CMD_RECV, keys[0], DST, sent ? sent : 64, 2),
		routed(NNP_CMD_RECV, keys[0], DST + AREA / 2, 4000, 1),
	};

	if (sent)
		assert_int_equal(run_one(2, routed(NNP_CMD_SEND, keys[2], SRC,
						   sent, 0)),
				 NNP_STATUS_SUCCESS);
	post_watching(0, c, 3, 0);
	run_rounds(4);
	assert_int_equal(cqe(0, chips[0].slot)->phase & 1, !chips[0].phase);
	comm_destroy(2);
	run_rounds(4);
	pattern(1, SRC, 4000, 13);
	fw_chip_post(&chips[1], routed(NNP_CMD_SEND, keys[1], SRC, 4000, 0));
	fw_chips_run_one_thread(chips, 2);
	return chips[0].status;
}

/* The RECV from rank 2 waits for what will not come: the group ends. */
static void test_group_waiting_on_the_leaver_ends(void **state)
{
	(void)state;
	ring_up(ALL);
	assert_int_equal(group_across_the_leave(0), NNP_STATUS_PEER_LEFT);
	ring_down();
}

/* Rank 2's message came before its leave: the group completes. */
static void test_group_takes_what_came_before_the_leave(void **state)
{
	(void)state;
	ring_up(ALL);
	pattern(2, SRC, 9000, 17);
	assert_int_equal(group_across_the_leave(9000), NNP_STATUS_SUCCESS);
	assert_memory_equal(chips[0].h->dev_mem + DST, chips[2].h->dev_mem + SRC,
			    9000);
	assert_memory_equal(chips[0].h->dev_mem + DST + AREA / 2,
			    chips[1].h->dev_mem + SRC, 4000);
	ring_down();
}

/* Make and route rank @i's communicator, as ring_up() does. */
static void comm_made_late(uint32_t i)
{
	uint8_t r[MAXR];

	ring_routes(i, r);
	assert_int_equal(comm_create(chips[i].h, i), NNP_STATUS_SUCCESS);
	assert_int_equal(routes_give(chips[i].h, COMM, r, N),
			 NNP_STATUS_SUCCESS);
}

/*
 * Rank 2 leaves before ranks 0 and 3 have made their communicators: its
 * leave to rank 3 (a neighbour) and its routed leave to rank 0 (through
 * chip 3) wait for them, and are heard once they are made and routed.
 */
static void test_comm_made_after_the_leave(void **state)
{
	struct nnp_hw_queue_cmd allreduce = {
		.opcode = NNP_CMD_ALLREDUCE, .len = 64, .dst_off = DST,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	};

	(void)state;
	ring_up(0x6);
	comm_destroy(2);
	run_rounds(4);
	comm_made_late(3);
	run_rounds(4);
	comm_made_late(0);
	run_rounds(4);
	allreduce.src_key = allreduce.dst_key = keys[3];
	fw_chip_post(&chips[3], allreduce);
	fw_chips_run_one_thread(&chips[3], 1);
	assert_int_equal(chips[3].status, NNP_STATUS_PEER_LEFT);
	fw_chip_post(&chips[0], routed(NNP_CMD_RECV, keys[0], DST, 100, 2));
	fw_chips_run_one_thread(chips, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_PEER_LEFT);
	ring_down();
}

/*
 * Routed numbers wrap before the leave's: the messages numbered 1022 and
 * then 0 come byte for byte, and the counter never names 1023.
 */
static void test_message_numbers_skip_the_leave(void **state)
{
	uint16_t n = NNP_FW_ROUTED_LEAVE - 1;
	uint32_t k;

	(void)state;
	assert_int_equal(nnp_fw_routed_next(&n), NNP_FW_ROUTED_LEAVE - 1);
	assert_int_equal(n, 0);
	ring_up(ALL);
	chips[0].h->fw->comms[COMM].routed_sent[2] = NNP_FW_ROUTED_LEAVE - 1;
	chips[2].h->fw->comms[COMM].routed_received[0] = NNP_FW_ROUTED_LEAVE - 1;
	pattern(0, SRC, 2 * 4000, 11);
	for (k = 0; k < 2; k++) {
		fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0],
					       SRC + k * 4000, 4000, 2));
		fw_chip_post(&chips[1], nop);
		fw_chip_post(&chips[2], routed(NNP_CMD_RECV, keys[2],
					       DST + k * 4000, 4000, 0));
		fw_chip_post(&chips[3], nop);
		fw_chips_run_one_thread(chips, N);
		assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
		assert_int_equal(chips[2].status, NNP_STATUS_SUCCESS);
	}
	assert_memory_equal(chips[2].h->dev_mem + DST, chips[0].h->dev_mem + SRC,
			    2 * 4000);
	assert_int_equal(chips[0].h->fw->comms[COMM].routed_sent[2], 1);
	ring_down();
}

/*
 * Ring of 4 and a chord: chip 0's port 2 to chip 2's port 2, the first
 * hop of ranks 0 and 2's routes to each other. Ranks 0 and 2 have the
 * ring as their topology, as libnnp gives it: the chord is not in it.
 */
static void chord_up(void)
{
	uint8_t r[MAXR];
	uint32_t i;

	ring_up(0xa);
	assert_int_equal(nnp_fw_link_connect(chips[0].h->fw, 2,
					     chips[2].h->fw, 2), 0);
	for (i = 0; i < N; i += 2) {
		ring_routes(i, r);
		r[(i + 2) % N] = 2;
		assert_int_equal(comm_create(chips[i].h, i), NNP_STATUS_SUCCESS);
		assert_int_equal(routes_give(chips[i].h, COMM, r, N),
				 NNP_STATUS_SUCCESS);
		assert_int_equal(ring_topology_give(chips[i].h, i),
				 NNP_STATUS_SUCCESS);
	}
}

/* A message by port over the chord, @len bytes at @off. */
static struct nnp_hw_queue_cmd on_chord(uint8_t opcode, uint32_t i,
					uint64_t off, uint64_t len)
{
	return p2p_cmd(opcode, keys[i], off, len, NNP_P2P_VALUE(COMM, 2));
}

/*
 * Rank 0 waits to receive by port from rank 2 over the chord, a link off
 * the ring; rank 2 leaves: the receive ends PEER_LEFT with no clock
 * moved, as one on a ring port does.
 */
static void test_receive_by_port_off_the_ring_ends(void **state)
{
	(void)state;
	chord_up();
	assert_int_equal(receive_across_the_leave(on_chord(NNP_CMD_RECV, 0, DST,
							   1000)),
			 NNP_STATUS_PEER_LEFT);
	ring_down();
}

/*
 * What rank 2 sent by port over the chord before it left comes byte for
 * byte; only the receive after it ends.
 */
static void test_chord_messages_before_the_leave_come(void **state)
{
	(void)state;
	chord_up();
	pattern(2, SRC, 3000, 9);
	fw_chip_post(&chips[2], on_chord(NNP_CMD_SEND, 2, SRC, 3000));
	fw_chips_run_one_thread(&chips[2], 1);
	assert_int_equal(chips[2].status, NNP_STATUS_SUCCESS);
	comm_destroy(2);
	memset(chips[0].h->dev_mem + DST, 0xee, 3000);
	assert_int_equal(run_one(0, on_chord(NNP_CMD_RECV, 0, DST, 3000)),
			 NNP_STATUS_SUCCESS);
	assert_memory_equal(chips[0].h->dev_mem + DST, chips[2].h->dev_mem + SRC,
			    3000);
	assert_int_equal(run_one(0, on_chord(NNP_CMD_RECV, 0, DST, 10)),
			 NNP_STATUS_PEER_LEFT);
	ring_down();
}

/* Once rank 2 left, a SEND to it by port over the chord sends nothing. */
static void test_send_by_port_off_the_ring_sends_nothing(void **state)
{
	uint64_t sent;

	(void)state;
	chord_up();
	comm_destroy(2);
	run_rounds(4);
	sent = fw_harness_counters(chips[0].h).icl_tx_bytes;
	assert_int_equal(run_one(0, on_chord(NNP_CMD_SEND, 0, SRC, 10)),
			 NNP_STATUS_PEER_LEFT);
	assert_int_equal(fw_harness_counters(chips[0].h).icl_tx_bytes, sent);
	ring_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_receive_ends_when_its_sender_leaves),
		cmocka_unit_test(test_leave_in_transit_at_destroy_is_no_error),
		cmocka_unit_test(test_messages_sent_before_the_leave_come),
		cmocka_unit_test(test_send_to_a_rank_that_left_sends_nothing),
		cmocka_unit_test(test_send_waiting_for_room_ends_at_the_leave),
		cmocka_unit_test(test_other_ranks_messages_go_on),
		cmocka_unit_test(test_group_waiting_on_the_leaver_ends),
		cmocka_unit_test(test_group_takes_what_came_before_the_leave),
		cmocka_unit_test(test_comm_made_after_the_leave),
		cmocka_unit_test(test_message_numbers_skip_the_leave),
		cmocka_unit_test(test_receive_by_port_off_the_ring_ends),
		cmocka_unit_test(test_chord_messages_before_the_leave_come),
		cmocka_unit_test(test_send_by_port_off_the_ring_sends_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
