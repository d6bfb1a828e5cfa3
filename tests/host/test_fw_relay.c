// SPDX-License-Identifier: MIT
/*
 * Firmware simulator routed messages (v1.12): SEND and RECV between ranks
 * whose chips share no link, forwarded by the chips between them on the
 * routes COMM_ROUTES gave, on a ring of 4 in-process chips.
 *
 * In detail (docs/testing.md has the summary): a message from rank 0 to
 * rank 2 crosses chip 1, byte for byte, with exactly its bytes on chip
 * 1's ports and none on chip 3's; every rank to every other (1, 2 and 3
 * hops the short way, two messages a pair) byte-exact and in order per
 * pair; 6 MiB, more than a port holds, through the relay while it waits
 * for room at the next hop; a relay whose communicator is made, and
 * routed, after the packets came forwards them then; a next hop's link
 * down drops the packet (counted), fails the relay's communicator with
 * LINK_DOWN and ends the receiver ABORTED (not PEER_TIMEOUT), and so does
 * a link on the path going down before the message is sent (v1.23), a
 * chord no ring uses included, but not another communicator; a relay's
 * COMM_DESTROY drops the packets in transit, counted; COMM_ROUTES
 * and routed commands with bad fields refused (INVALID_FIELD, NOT_FOUND).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_ring.h"
#include "fw_reduce.h"

/* The modeled links of test_relay_wait_not_modeled (MB/s, ns), its stamp. */
#define MBPS	12500u
#define LATENCY	1000u
#define STAMP	(7u << 20)

/* An exchange's buffer a rank does not name. */
#define NONE64	UINT64_MAX

/* Links a message from a rank to each other rank crosses, in all. */
static uint64_t ring_hops(void)
{
	uint64_t hops = 0;
	uint32_t d;

	for (d = 1; d < N; d++)
		hops += d <= N / 2 ? d : N - d;
	return hops;
}

static const struct nnp_hw_queue_cmd nop = { .opcode = NNP_CMD_NOP };

/*
 * Rank 0 to rank 2, 200000 bytes (three full packets and a part): it
 * crosses chip 1, exactly, and nothing goes round by chip 3.
 */
static void test_routed_message_crosses_a_chip(void **state)
{
	const uint64_t len = 200000;
	uint32_t i;

	(void)state;
	ring_up(ALL);
	pattern(0, SRC, len, 1);
	memset(chips[2].h->dev_mem + DST, 0xee, len + 16);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], SRC, len, 2));
	fw_chip_post(&chips[1], nop);
	fw_chip_post(&chips[2], routed(NNP_CMD_RECV, keys[2], DST, len, 0));
	fw_chip_post(&chips[3], nop);
	fw_chips_run_one_thread(chips, N);
	for (i = 0; i < N; i++)
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
	assert_memory_equal(chips[2].h->dev_mem + DST, chips[0].h->dev_mem + SRC,
			    len);
	assert_int_equal(chips[2].h->dev_mem[DST + len], 0xee);
	assert_int_equal(port_info(1, 1).rx_bytes, len);
	assert_int_equal(port_info(1, 0).tx_bytes, len);
	assert_int_equal(port_info(1, 0).tx_packets, 4);
	assert_int_equal(port_info(2, 1).rx_bytes, len);
	assert_int_equal(port_info(3, 0).tx_bytes, 0);
	assert_int_equal(port_info(3, 1).rx_bytes, 0);
	assert_int_equal(nnp_fw_icl_held_bytes(chips[1].h->fw), 0);
	ring_down();
}

/* The bytes rank @from sends rank @to, message @k, and where they land. */
static uint64_t pair_len(uint32_t from, uint32_t to, uint32_t k)
{
	return 70000 + 1000 * (from * N + to) + 333 * k;
}

static uint64_t pair_off(uint32_t from, uint32_t to, uint32_t k)
{
	return (from * N + to) * 2 * 0x20000 + k * 0x20000;
}

/*
 * Every rank to every other, two messages a pair, all sends first: the
 * messages of a pair arrive in order, whoever forwards them.
 */
static void test_every_pair_in_order(void **state)
{
	uint32_t i, d, k, n = 0;

	(void)state;
	ring_up(ALL);
	for (i = 0; i < N; i++) {
		for (d = 1; d < N; d++) {
			for (k = 0; k < 2; k++) {
				uint32_t to = (i + d) % N;

				pattern(i, SRC + pair_off(i, to, k),
					pair_len(i, to, k), i * 16 + to * 2 + k);
				fw_chip_post(&chips[i],
					     routed(NNP_CMD_SEND, keys[i],
						    SRC + pair_off(i, to, k),
						    pair_len(i, to, k), to));
			}
		}
		for (d = 1; d < N; d++) {
			for (k = 0; k < 2; k++) {
				uint32_t from = (i + N - d) % N;

				fw_chip_post(&chips[i],
					     routed(NNP_CMD_RECV, keys[i],
						    DST + pair_off(from, i, k),
						    pair_len(from, i, k), from));
			}
		}
	}
	fw_chips_run_one_thread(chips, N);
	for (i = 0; i < N; i++) {
		uint32_t slot;

		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		for (slot = 0; slot < 4 * (N - 1); slot++)
			assert_int_equal(cqe_status(i, slot), NNP_STATUS_SUCCESS);
		for (d = 1; d < N; d++) {
			uint32_t from = (i + N - d) % N;

			for (k = 0; k < 2; k++, n++)
				assert_memory_equal(
					chips[i].h->dev_mem + DST + pair_off(from, i, k),
					chips[from].h->dev_mem + SRC + pair_off(from, i, k),
					pair_len(from, i, k));
		}
	}
	assert_int_equal(n, N * (N - 1) * 2);
	ring_down();
}

/*
 * 6 MiB, more than a port holds: the relay forwards as the next hop makes
 * room, and nothing is lost or reordered.
 */
static void test_relay_waits_for_room(void **state)
{
	const uint64_t len = 6u << 20;
	uint32_t i;

	(void)state;
	ring_up(ALL);
	pattern(0, 0, len, 5);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], 0, len, 2));
	fw_chip_post(&chips[1], nop);
	fw_chip_post(&chips[2], routed(NNP_CMD_RECV, keys[2], 0, len, 0));
	fw_chip_post(&chips[3], nop);
	fw_chips_run_one_thread(chips, N);
	for (i = 0; i < N; i++)
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
	assert_memory_equal(chips[2].h->dev_mem, chips[0].h->dev_mem, len);
	assert_int_equal(port_info(1, 0).tx_bytes, len);
	ring_down();
}

/*
 * Rank 2 comes late, on modeled links: 6 MiB from rank 0 fill its share
 * of chip 2's port and of chip 1's, where the rest waits for room while
 * the relay tries again and again. Once rank 2 receives, the message is
 * exact, and its modeled arrival is the cut-through one (the wire time of
 * the message and of one more packet, and two links' latency, within
 * 1%), whatever the waits on the wall clock: a packet refused leaves as
 * it came.
 */
static void test_relay_wait_not_modeled(void **state)
{
	const uint64_t len = 6u << 20, wire = len * 1000 / MBPS;
	uint64_t modeled;
	uint8_t r[MAXR];

	(void)state;
	fw_harness_model = (struct nnp_fw_config){
		.icl_mbps = MBPS, .icl_latency_ns = LATENCY,
	};
	ring_up(0xb);
	fw_harness_model = (struct nnp_fw_config){ 0 };
	pattern(0, 0, len, 6);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], 0, len, 2));
	fw_chip_post(&chips[1], nop);
	fw_chip_post(&chips[2], nop);
	fw_chip_post(&chips[3], nop);
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	assert_int_equal(nnp_fw_icl_held_bytes(chips[1].h->fw),
			 len - NNP_FW_EPOCH_RX_BYTES);

	ring_routes(2, r);
	assert_int_equal(comm_create(chips[2].h, 2), NNP_STATUS_SUCCESS);
	assert_int_equal(routes_give(chips[2].h, COMM, r, N), NNP_STATUS_SUCCESS);
	fw_chip_post(&chips[2], routed(NNP_CMD_RECV, keys[2], 0, len, 0));
	fw_chip_post(&chips[2], (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_TIMESTAMP, .dst_key = keys[2], .dst_off = STAMP,
	});
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(cqe_status(2, 1), NNP_STATUS_SUCCESS);
	assert_int_equal(chips[2].status, NNP_STATUS_SUCCESS);
	assert_memory_equal(chips[2].h->dev_mem, chips[0].h->dev_mem, len);
	modeled = *(uint64_t *)(chips[2].h->dev_mem + STAMP);
	print_message("6 MiB over two hops: modeled %llu ns, wire %llu ns\n",
		      (unsigned long long)modeled, (unsigned long long)wire);
	assert_true(modeled >= wire);
	assert_true(modeled <= (wire + wire / 96 + 2 * LATENCY) * 101 / 100);
	ring_down();
}

/*
 * Chip 1 makes its communicator only after rank 0's packets came: they
 * wait for it, and go on once it has its routes.
 */
static void test_relay_made_late(void **state)
{
	const uint64_t len = 150000;
	uint8_t r[N];
	uint32_t i;

	(void)state;
	ring_up(0xd);	/* all but rank 1 */
	pattern(0, SRC, len, 9);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], SRC, len, 2));
	fw_chip_post(&chips[1], nop);
	fw_chip_post(&chips[3], nop);
	fw_chips_run_one_thread(chips, 2);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	assert_int_equal(nnp_fw_icl_held_bytes(chips[1].h->fw), len);
	assert_int_equal(port_info(1, 0).tx_bytes, 0);

	ring_routes(1, r);
	assert_int_equal(comm_create(chips[1].h, 1), NNP_STATUS_SUCCESS);
	assert_int_equal(routes_give(chips[1].h, COMM, r, N), NNP_STATUS_SUCCESS);
	fw_chip_post(&chips[1], nop);
	fw_chip_post(&chips[2], routed(NNP_CMD_RECV, keys[2], DST, len, 0));
	fw_chips_run_one_thread(chips, N);
	for (i = 1; i < N; i++)
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
	assert_memory_equal(chips[2].h->dev_mem + DST, chips[0].h->dev_mem + SRC,
			    len);
	assert_int_equal(nnp_fw_icl_held_bytes(chips[1].h->fw), 0);
	ring_down();
}

/*
 * The link from chip 1 to chip 2 goes down: chip 1 drops the packet and
 * its communicator fails LINK_DOWN; the abort goes round the other way,
 * so rank 2's receive ends ABORTED well before its timeout.
 */
static void test_next_hop_down(void **state)
{
	const uint64_t len = 1000;
	uint32_t i;

	(void)state;
	ring_up(ALL);
	nnp_fw_link_set(chips[1].h->fw, 0, false);
	pattern(0, SRC, len, 3);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], SRC, len, 2));
	fw_chip_post(&chips[1], nop);
	fw_chip_post(&chips[2], routed(NNP_CMD_RECV, keys[2], DST, len, 0));
	fw_chip_post(&chips[3], nop);
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	/* The abort ended it, not its timeout (that would be PEER_TIMEOUT). */
	assert_int_equal(chips[2].status, NNP_STATUS_ABORTED);
	assert_int_equal(fw_harness_comm_status(chips[1].h, CTX, COMM),
			 NNP_STATUS_LINK_DOWN);
	/* The packet, and rank 0's abort passed back. */
	assert_int_equal(port_info(1, 1).rx_packets, 2);
	assert_int_equal(port_info(1, 1).errors, 1);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_dropped, 1);
	assert_int_equal(nnp_fw_icl_held_bytes(chips[1].h->fw), 0);
	for (i = 0; i < N; i++)
		assert_int_not_equal(fw_harness_comm_status(chips[i].h, CTX, COMM), 0);
	ring_down();
}

/*
 * Post a routed RECV of rank 2 from rank 0 and run until it waits; then
 * take the link at chip @chip's port @port down, with nothing of the
 * message sent, and run on: chip 2's status.
 */
static uint16_t receive_across_a_lost_link(uint32_t chip, uint32_t port)
{
	uint32_t i;

	fw_chip_post(&chips[2], routed(NNP_CMD_RECV, keys[2], DST, 1000, 0));
	run_rounds(4);
	assert_int_equal(cqe(2, chips[2].slot)->phase & 1, !chips[2].phase);
	nnp_fw_link_set(chips[chip].h->fw, port, false);
	for (i = 0; i < N; i++)
		if (i != 2)
			fw_chip_post(&chips[i], nop);
	fw_chips_run_one_thread(chips, N);
	return chips[2].status;
}

/* Chip @i warned once, that communicator @comm failed for its port @port. */
static void assert_lost_warned(uint32_t i, uint32_t port, uint32_t comm)
{
	char want[80];

	snprintf(want, sizeof(want), "comm %u failed: its link on port %u went down",
		 comm, port);
	assert_int_equal(chips[i].h->warnings, 1);
	assert_string_equal(chips[i].h->last_warning, want);
}

/*
 * Rank 2 waits for rank 0's message, which takes chip 1 (0 -> 1 -> 2).
 * The link between chips 0 and 1 goes down while all three are idle:
 * both fail LINK_DOWN (v1.23) and their aborts go round, so rank 2 ends
 * ABORTED at once. Before, nothing on the path had a command to fail, and
 * rank 2 waited out its timeout (PEER_TIMEOUT).
 */
static void test_link_down_before_the_message(void **state)
{
	uint32_t i;

	(void)state;
	ring_up(ALL);
	assert_int_equal(receive_across_a_lost_link(0, 0), NNP_STATUS_ABORTED);
	for (i = 0; i < N; i++)
		assert_int_equal(fw_harness_comm_status(chips[i].h, CTX, COMM),
				 i < 2 ? NNP_STATUS_LINK_DOWN : NNP_STATUS_ABORTED);
	/* The chips at the link say why in their log, once; the rest nothing. */
	assert_lost_warned(0, 0, COMM);
	assert_lost_warned(1, 1, COMM);
	assert_int_equal(chips[2].h->warnings, 0);
	assert_int_equal(chips[3].h->warnings, 0);
	ring_down();
}

/* COMM_CREATE of communicator @comm, rank @rank of the ring, on chip @i. */
static uint16_t other_comm_create(uint32_t i, uint32_t comm)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
	struct nnp_hw_comm_args a = {
		.ctx = CTX, .comm = comm, .nranks = N, .rank = i,
		.send_port = 0, .recv_port = 1, .epoch = EPOCH + comm,
	};

	memcpy(c.args, &a, sizeof(a));
	return fw_harness_admin(chips[i].h, c, NULL);
}

/*
 * A chord, chip 0's port 2 to chip 2's, that no ring uses: rank 0 and
 * rank 2 route their messages to each other over it. It goes down while
 * rank 2 waits for rank 0's message: chips 0 and 2, whose routes start on
 * it, fail LINK_DOWN, the others ABORTED by their aborts; a second
 * communicator of the same chips, routed round the ring only, is not
 * touched.
 */
static void test_chord_down_fails_who_routes_over_it(void **state)
{
	uint8_t r[MAXR];
	uint32_t i;

	(void)state;
	ring_up(ALL);
	assert_int_equal(nnp_fw_link_connect(chips[0].h->fw, 2, chips[2].h->fw, 2),
			 0);
	for (i = 0; i < N; i++) {
		assert_int_equal(other_comm_create(i, COMM + 1), NNP_STATUS_SUCCESS);
		ring_routes(i, r);
		assert_int_equal(routes_give(chips[i].h, COMM + 1, r, N),
				 NNP_STATUS_SUCCESS);
		if (i % 2)
			continue;
		r[(i + 2) % N] = 2;
		assert_int_equal(routes_give(chips[i].h, COMM, r, N),
				 NNP_STATUS_SUCCESS);
	}
	assert_int_equal(receive_across_a_lost_link(0, 2), NNP_STATUS_ABORTED);
	for (i = 0; i < N; i++) {
		assert_int_equal(fw_harness_comm_status(chips[i].h, CTX, COMM),
				 i % 2 ? NNP_STATUS_ABORTED : NNP_STATUS_LINK_DOWN);
		assert_int_equal(fw_harness_comm_status(chips[i].h, CTX, COMM + 1),
				 0);
	}
	assert_lost_warned(0, 2, COMM);
	assert_lost_warned(2, 2, COMM);
	ring_down();
}

/* COMM_ROUTES and routed SEND/RECV with bad fields. */
/*
 * 6 MiB from rank 0 to rank 2, whose communicator is not made: its port
 * holds what it has room for, chip 1 the rest, in transit. Chip 1's
 * COMM_DESTROY drops the packets in transit, counts each as dropped
 * (icl_dropped, the port's errors) and frees their room; chip 2's wait
 * for its own communicator.
 */
static void test_destroy_drops_transit(void **state)
{
	struct nnp_hw_admin_cmd d = { .opcode = NNP_ADMIN_COMM_DESTROY };
	const uint64_t len = 6u << 20;
	uint64_t held1, held2, dropped, errors;

	(void)state;
	ring_up(0xb);	/* all but rank 2 */
	pattern(0, 0, len, 4);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], 0, len, 2));
	fw_chip_post(&chips[1], nop);
	fw_chips_run_one_thread(chips, 2);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	held1 = nnp_fw_icl_held_bytes(chips[1].h->fw);
	held2 = nnp_fw_icl_held_bytes(chips[2].h->fw);
	assert_int_equal(held1 + held2, len);
	assert_true(held1 > 0);
	assert_int_equal(held1 % NNP_FW_CHUNK_BYTES, 0);
	dropped = fw_harness_counters(chips[1].h).icl_dropped;
	errors = port_info(1, 1).errors;

	d.args[0] = CTX;
	d.args[1] = COMM;
	assert_int_equal(fw_harness_admin(chips[1].h, d, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(nnp_fw_icl_held_bytes(chips[1].h->fw), 0);
	assert_int_equal(fw_harness_counters(chips[1].h).icl_dropped - dropped,
			 held1 / NNP_FW_CHUNK_BYTES);
	assert_int_equal(port_info(1, 1).errors - errors, held1 / NNP_FW_CHUNK_BYTES);
	assert_int_equal(nnp_fw_icl_held_bytes(chips[2].h->fw), held2);
	assert_int_equal(fw_harness_counters(chips[2].h).icl_dropped, 0);
	ring_down();
}

static void test_bad_routes_refused(void **state)
{
	uint8_t r[5] = { NONE, 0, 0, 1, 0 };
	struct nnp_hw_queue_cmd c;

	(void)state;
	ring_up(0);
	assert_int_equal(routes_give(chips[0].h, COMM, r, N), NNP_STATUS_NOT_FOUND);
	assert_int_equal(comm_create(chips[0].h, 0), NNP_STATUS_SUCCESS);

	/* A routed command before the routes: no peer is reachable. */
	assert_int_equal(run_alone(routed(NNP_CMD_SEND, keys[0], SRC, 8, 2)),
			 NNP_STATUS_INVALID_FIELD);

	assert_int_equal(routes_give(chips[0].h, COMM, r, N - 1),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(routes_give(chips[0].h, COMM, r, N + 1),
			 NNP_STATUS_INVALID_FIELD);
	r[0] = 0;	/* a route to itself */
	assert_int_equal(routes_give(chips[0].h, COMM, r, N),
			 NNP_STATUS_INVALID_FIELD);
	r[0] = NONE;
	r[2] = 4;	/* a port past the chip's 4 */
	assert_int_equal(routes_give(chips[0].h, COMM, r, N),
			 NNP_STATUS_INVALID_FIELD);
	r[2] = NONE;	/* rank 2 unreachable */
	assert_int_equal(routes_give(chips[0].h, COMM, r, N), NNP_STATUS_SUCCESS);

	assert_int_equal(run_alone(routed(NNP_CMD_SEND, keys[0], SRC, 8, 2)),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(run_alone(routed(NNP_CMD_RECV, keys[0], DST, 8, 0)),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(run_alone(routed(NNP_CMD_SEND, keys[0], SRC, 8, N)),
			 NNP_STATUS_INVALID_FIELD);
	/* A port beside the peer, and bits past the routed flag. */
	c = routed(NNP_CMD_SEND, keys[0], SRC, 8, 1);
	c.value |= 1;
	assert_int_equal(run_alone(c),
			 NNP_STATUS_INVALID_FIELD);
	c = routed(NNP_CMD_SEND, keys[0], SRC, 8, 1);
	c.value |= 1ull << 49;
	assert_int_equal(run_alone(c),
			 NNP_STATUS_INVALID_FIELD);
	ring_down();
}

static struct nnp_hw_queue_cmd exchange(uint8_t opcode, uint32_t i,
					uint64_t count, uint32_t root,
					uint64_t src, uint64_t dst)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = opcode, .len = count,
		.src_key = src == NONE64 ? 0 : keys[i],
		.src_off = src == NONE64 ? 0 : src,
		.dst_key = dst == NONE64 ? 0 : keys[i],
		.dst_off = dst == NONE64 ? 0 : dst,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, 0, COMM, root),
	};
}

/* Post @cmd on every chip (@cmd(i)), run them together; every status. */
#define RUN_ALL(cmd_of_i)						\
	do {								\
		uint32_t i_;						\
		for (i_ = 0; i_ < N; i_++) {				\
			uint32_t i = i_;				\
			fw_chip_post(&chips[i], cmd_of_i);		\
		}							\
		fw_chips_run_one_thread(chips, N);			\
	} while (0)

/* @c of @count elements of @dtype instead. */
static struct nnp_hw_queue_cmd typed(struct nnp_hw_queue_cmd c,
				     unsigned int dtype, uint64_t count)
{
	c.value = (c.value & ~0xffull) | dtype;
	c.len = count;
	return c;
}

/*
 * Alltoall of @seg bytes a pair, in elements of @dtype, out of place (@dst
 * DST) or in place (@dst SRC): segment p of rank r's result is segment r
 * of rank p's input, and each chip sends as many segments' bytes as a
 * rank's messages cross links in all (on 4 chips its own 3, and one it
 * forwards).
 */
static void alltoall_typed(uint64_t seg, uint64_t dst, unsigned int dtype)
{
	uint8_t *want[MAXR];
	uint32_t i, p;

	ring_up(ALL);
	for (i = 0; i < N; i++) {
		for (p = 0; p < N; p++)
			pattern(i, SRC + p * seg, seg, i * N + p);
		want[i] = malloc(N * seg);
		assert_non_null(want[i]);
	}
	for (i = 0; i < N; i++)
		for (p = 0; p < N; p++)
			memcpy(want[i] + p * seg, chips[p].h->dev_mem + SRC + i * seg,
			       seg);
	RUN_ALL(typed(exchange(NNP_CMD_ALLTOALL, i, 0, 0, SRC, dst), dtype,
		      seg / nnp_fw_dtype_size(dtype)));
	for (i = 0; i < N; i++) {
		uint64_t tx = 0;

		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		assert_memory_equal(chips[i].h->dev_mem + dst, want[i], N * seg);
		for (p = 0; p < 2; p++)
			tx += port_info(i, p).tx_bytes;
		assert_int_equal(tx, ring_hops() * seg);
		assert_int_equal(fw_harness_counters(chips[i].h).host_dma_bytes, 0);
		free(want[i]);
	}
	ring_down();
}

static void alltoall_case(uint64_t seg, uint64_t dst)
{
	alltoall_typed(seg, dst, NNP_DTYPE_I32);
}

static void test_alltoall(void **state)
{
	(void)state;
	alltoall_case(100000, DST);
	alltoall_case(4, DST);
	alltoall_case(0, DST);
	/* Bytes (U8, v1.15): segments of any length, odd ones too. */
	alltoall_typed(99999, DST, NNP_DTYPE_U8);
	alltoall_typed(1, SRC, NNP_DTYPE_U8);
}

/* Scratch buffers chip @i keeps for its next in-place command. */
static unsigned int scratch_kept(uint32_t i)
{
	unsigned int k, n = 0;

	for (k = 0; k < NNP_FW_SCRATCH_SLOTS; k++)
		n += atomic_load(&chips[i].h->fw->scratch_slots[k]) != NULL;
	return n;
}

/*
 * In place, through scratch, which each chip keeps while it has a
 * context and lets go when the last one goes, or on a reset.
 */
static void test_alltoall_in_place(void **state)
{
	struct nnp_hw_admin_cmd destroy = { .opcode = NNP_ADMIN_CTX_DESTROY };
	uint32_t i;

	(void)state;
	alltoall_case(70000, SRC);
	/* alltoall_case() let the ring go: once more, and keep it. */
	ring_up(ALL);
	RUN_ALL(exchange(NNP_CMD_ALLTOALL, i, 1000, 0, SRC, SRC));
	for (i = 0; i < N; i++) {
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		assert_int_equal(scratch_kept(i), 1);
	}
	destroy.args[0] = CTX;
	assert_int_equal(fw_harness_admin(chips[0].h, destroy, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(scratch_kept(0), 0);
	nnp_fw_reset(chips[1].h->fw);
	fw_harness_advance_ms(chips[1].h, 0);
	assert_int_equal(scratch_kept(1), 0);
	assert_int_equal(scratch_kept(2), 1);
	ring_down();
}

/* 1 MiB a pair: far past a port's room, forwarded as room comes. */
static void test_alltoall_past_the_room(void **state)
{
	(void)state;
	alltoall_case(1u << 20, DST);
}

/*
 * On 8 chips, 256 KiB a pair: every link carries messages that cross up
 * to 4 of them, the forwarded ones sharing each port's room with the
 * chip's own.
 */
static void test_alltoall_on_8(void **state)
{
	(void)state;
	N = 8;
	alltoall_case(500000, DST);
	N = 4;
}

/* Gather to and scatter from every root, 60000 bytes a rank. */
static void test_gather_and_scatter(void **state)
{
	const uint64_t seg = 60000;
	uint32_t root, i;

	(void)state;
	ring_up(ALL);
	for (root = 0; root < N; root++) {
		for (i = 0; i < N; i++)
			pattern(i, SRC, N * seg, root * 16 + i);
		memset(chips[root].h->dev_mem + DST, 0xee, N * seg + 1);
		RUN_ALL(exchange(NNP_CMD_GATHER, i, seg / 4, root, SRC,
				 i == root ? DST : NONE64));
		for (i = 0; i < N; i++) {
			assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
			assert_memory_equal(chips[root].h->dev_mem + DST + i * seg,
					    chips[i].h->dev_mem + SRC, seg);
		}
		assert_int_equal(chips[root].h->dev_mem[DST + N * seg], 0xee);

		for (i = 0; i < N; i++)
			memset(chips[i].h->dev_mem + DST, 0xee, seg + 1);
		RUN_ALL(exchange(NNP_CMD_SCATTER, i, seg / 4, root,
				 i == root ? SRC : NONE64, DST));
		for (i = 0; i < N; i++) {
			assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
			assert_memory_equal(chips[i].h->dev_mem + DST,
					    chips[root].h->dev_mem + SRC + i * seg, seg);
			assert_int_equal(chips[i].h->dev_mem[DST + seg], 0xee);
		}
	}
	ring_down();
}

/*
 * On a ring of 3 (every rank a neighbour), rank 0 scatters 60000 bytes a
 * rank to ranks that take a turn only every 20 ms. Its chunks are lent:
 * its SCATTER ends only once both have read them, so its source written
 * over at once after is not what they receive.
 */
static void test_scatter_ends_once_read(void **state)
{
	const uint64_t seg = 60000;
	uint8_t want[3 * 60000];
	uint32_t i;

	(void)state;
	N = 3;
	ring_up(ALL);
	pattern(0, SRC, N * seg, 50);
	memcpy(want, chips[0].h->dev_mem + SRC, N * seg);
	for (i = 1; i < N; i++)
		chips[i].nap_us = 20000;
	for (i = 0; i < N; i++)
		fw_chip_start(&chips[i], exchange(NNP_CMD_SCATTER, i, seg / 4, 0,
						  i ? NONE64 : SRC, DST));
	fw_chip_join(&chips[0]);
	memset(chips[0].h->dev_mem + SRC, 0xee, N * seg);
	for (i = 1; i < N; i++)
		fw_chip_join(&chips[i]);
	for (i = 0; i < N; i++) {
		chips[i].nap_us = 0;
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		assert_memory_equal(chips[i].h->dev_mem + DST, want + i * seg, seg);
	}
	ring_down();
	N = 4;
}

/*
 * Rank 2 never comes. A routed SEND from rank 0 fills rank 2's share of
 * chip 2's port, then rank 0 scatters 1 MiB a rank: its lent segment for
 * rank 2 waits at chip 1 for room, still lent, so the SCATTER ends
 * PEER_TIMEOUT (ranks 1 and 3 served), and takes it back from chip 1's
 * queue as it ends: nothing of it is left to forward from its memory.
 */
static void test_lent_chunk_taken_back_from_a_relay(void **state)
{
	const uint64_t first = NNP_FW_EPOCH_RX_BYTES, seg = 1u << 20;
	uint32_t i;

	(void)state;
	ring_up(0xb);
	pattern(0, SRC, N * seg, 60);
	pattern(0, DST, first, 61);
	fw_chip_post(&chips[0], routed(NNP_CMD_SEND, keys[0], DST, first, 2));
	for (i = 0; i < N; i++)
		fw_chip_post(&chips[i], i == 2 ? nop :
			     exchange(NNP_CMD_SCATTER, i, seg / 4, 0,
				      i ? NONE64 : SRC, DST));
	fw_chips_time_out(chips, N);
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(cqe_status(0, 0), NNP_STATUS_SUCCESS);
	assert_int_equal(chips[0].status, NNP_STATUS_PEER_TIMEOUT);
	for (i = 1; i < N; i += 2) {
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		assert_memory_equal(chips[i].h->dev_mem + DST,
				    chips[0].h->dev_mem + SRC + i * seg, seg);
	}
	assert_int_equal(nnp_fw_icl_held_bytes(chips[1].h->fw), 0);
	assert_int_equal(nnp_fw_icl_held_bytes(chips[2].h->fw), first);
	ring_down();
}

/* Exchanges with bad fields, each alone on chip 0. */
static void test_exchange_refused(void **state)
{
	struct nnp_hw_queue_cmd c;
	uint8_t r5[MAXR];

	(void)state;
	ring_up(0);
	assert_int_equal(comm_create(chips[0].h, 0), NNP_STATUS_SUCCESS);
	/* No routes yet. */
	assert_int_equal(run_alone(exchange(NNP_CMD_ALLTOALL, 0, 4, 0, SRC, DST)),
			 NNP_STATUS_INVALID_FIELD);
	ring_routes(0, r5);
	assert_int_equal(routes_give(chips[0].h, COMM, r5, N), NNP_STATUS_SUCCESS);
	c = exchange(NNP_CMD_ALLTOALL, 0, 4, 0, SRC, DST);
	c.value |= (uint64_t)NNP_OP_MAX << 8;
	assert_int_equal(run_alone(c), NNP_STATUS_INVALID_FIELD);
	assert_int_equal(run_alone(exchange(NNP_CMD_ALLTOALL, 0, 4, 1, SRC, DST)),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(run_alone(exchange(NNP_CMD_GATHER, 0, 4, N, SRC, DST)),
			 NNP_STATUS_INVALID_FIELD);
	r5[2] = NONE;	/* rank 2 unreachable: refused, nothing failed */
	assert_int_equal(routes_give(chips[0].h, COMM, r5, N), NNP_STATUS_SUCCESS);
	assert_int_equal(run_alone(exchange(NNP_CMD_ALLTOALL, 0, 4, 0, SRC, DST)),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(run_alone(exchange(NNP_CMD_SCATTER, 0, 4, 0, SRC, DST)),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(fw_harness_comm_status(chips[0].h, CTX, COMM), 0);
	/*
	 * Refused memory once its labels are taken fails the communicator,
	 * as for any collective: the other ranks stop rather than wait.
	 * Rank 0 is not gather's root: it names no dst.
	 */
	assert_int_equal(run_alone(exchange(NNP_CMD_GATHER, 0, 4, 1, SRC, DST)),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(fw_harness_comm_status(chips[0].h, CTX, COMM),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(run_alone(exchange(NNP_CMD_ALLTOALL, 0, 4, 0, SRC, DST)),
			 NNP_STATUS_ABORTED);
	ring_down();

	/* Scatter's non-root names no src; past the key. */
	ring_up(0x1);
	assert_int_equal(run_alone(exchange(NNP_CMD_SCATTER, 0, 4, 1, SRC, DST)),
			 NNP_STATUS_INVALID_FIELD);
	ring_down();
	ring_up(0x1);
	/* 4 segments of 2 MiB from 4 MiB: past the 8 MiB key. */
	assert_int_equal(run_alone(exchange(NNP_CMD_ALLTOALL, 0, 512 * 1024, 0,
					    DST, SRC)),
			 NNP_STATUS_OUT_OF_BOUNDS);
	ring_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routed_message_crosses_a_chip),
		cmocka_unit_test(test_every_pair_in_order),
		cmocka_unit_test(test_relay_waits_for_room),
		cmocka_unit_test(test_relay_wait_not_modeled),
		cmocka_unit_test(test_relay_made_late),
		cmocka_unit_test(test_next_hop_down),
		cmocka_unit_test(test_link_down_before_the_message),
		cmocka_unit_test(test_chord_down_fails_who_routes_over_it),
		cmocka_unit_test(test_destroy_drops_transit),
		cmocka_unit_test(test_bad_routes_refused),
		cmocka_unit_test(test_alltoall),
		cmocka_unit_test(test_alltoall_in_place),
		cmocka_unit_test(test_alltoall_past_the_room),
		cmocka_unit_test(test_alltoall_on_8),
		cmocka_unit_test(test_gather_and_scatter),
		cmocka_unit_test(test_scatter_ends_once_read),
		cmocka_unit_test(test_lent_chunk_taken_back_from_a_relay),
		cmocka_unit_test(test_exchange_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
