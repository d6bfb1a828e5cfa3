// SPDX-License-Identifier: MIT
/*
 * Firmware simulator RECV from any source (v1.26), on a ring of 4
 * in-process chips.
 *
 * In detail (docs/testing.md has the summary): rank 0's three RECVs from
 * any source take one message each from its neighbour rank 1 by port and
 * from ranks 2 (routed, across chip 1) and 3 (routed, a neighbour), each
 * byte-exact where it landed, and each completion names the message's
 * source as the data says: the port it came in on, or the routed rank.
 * A RECV naming rank 2 that started first keeps rank 2's first message,
 * though the RECV from any source runs while it is queued: that one takes
 * the second.
 * An alltoall's chunk lent before the receiver's alltoall started is not
 * taken for a message. A SEND with
 * NNP_P2P_ANY and a RECV from any source with a port, peer or
 * NNP_P2P_ROUTED set are INVALID_FIELD (one in a GROUP: test_fw_group); one whose communicator is destroyed
 * with ABORT while it waits ends ABORTED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fw_ring.h"

#define LEN	100000u

static const struct nnp_hw_queue_cmd nop = { .opcode = NNP_CMD_NOP };

static struct nnp_hw_queue_cmd recv_any_of(uint64_t off, uint64_t len)
{
	return p2p_cmd(NNP_CMD_RECV, keys[0], off, len, NNP_P2P_ANY_VALUE(COMM));
}

static struct nnp_hw_queue_cmd recv_any(uint64_t off)
{
	return recv_any_of(off, LEN);
}

/* Where rank 0's @k-th RECV from any source puts its message. */
static uint64_t slot_off(uint32_t k)
{
	return DST + k * 0x20000;
}

/* The rank the result of a RECV from any source on rank 0 names. */
static uint32_t source_of(uint32_t result)
{
	if (result & NNP_P2P_FROM_ROUTED)
		return result & ~NNP_P2P_FROM_ROUTED;
	/* Rank 0's port 0 is the link to rank 1, port 1 to rank 3. */
	assert_true(result < 2);
	return result == 0 ? 1 : 3;
}

static void test_takes_each_source(void **state)
{
	uint32_t k, seen = 0;

	(void)state;
	ring_up(ALL);
	for (k = 1; k < N; k++)
		pattern(k, SRC, LEN, 40 + k);
	/* Rank 1 by port (out of its port 1 to rank 0), 2 and 3 routed. */
	fw_chip_post(&chips[1], p2p_cmd(NNP_CMD_SEND, keys[1], SRC, LEN,
					NNP_P2P_VALUE(COMM, 1)));
	fw_chip_post(&chips[2], routed(NNP_CMD_SEND, keys[2], SRC, LEN, 0));
	fw_chip_post(&chips[3], routed(NNP_CMD_SEND, keys[3], SRC, LEN, 0));
	for (k = 0; k < N - 1; k++)
		fw_chip_post(&chips[0], recv_any(slot_off(k)));
	fw_chips_run_one_thread(chips, N);
	for (k = 0; k < N; k++)
		assert_int_equal(chips[k].status, NNP_STATUS_SUCCESS);
	for (k = 0; k < N - 1; k++) {
		const struct nnp_hw_cqe *e = cqe(0, k);
		uint32_t from = source_of(e->result);

		assert_int_equal(e->status, NNP_STATUS_SUCCESS);
		assert_int_equal(e->result & NNP_P2P_FROM_ROUTED,
				 from == 1 ? 0 : NNP_P2P_FROM_ROUTED);
		assert_memory_equal(chips[0].h->dev_mem + slot_off(k),
				    chips[from].h->dev_mem + SRC, LEN);
		seen |= 1u << from;
	}
	assert_int_equal(seen, 0xe);
	ring_down();
}

/*
 * A RECV naming rank 2 (on queue 1) and one from any source (queue 0)
 * both wait when rank 2 sends twice: the first took the number of rank
 * 2's first message as it started, so the one from any source takes the
 * second, though the first's packets come before.
 */
static void test_named_receive_keeps_its_message(void **state)
{
	const struct nnp_hw_cqe *named;

	(void)state;
	ring_up(ALL);
	pattern(2, SRC, LEN, 1);
	pattern(2, SRC + 0x20000, LEN, 2);
	fw_harness_queue_create(chips[0].h, CTX, 1);
	fw_chip_post(&chips[0], recv_any(slot_off(1)));
	fw_harness_post(chips[0].h, 1,
			routed(NNP_CMD_RECV, keys[0], slot_off(0), LEN, 2));
	/* Both start, and wait. */
	run_rounds(3);
	fw_chip_post(&chips[2], routed(NNP_CMD_SEND, keys[2], SRC, LEN, 0));
	fw_chip_post(&chips[2], routed(NNP_CMD_SEND, keys[2], SRC + 0x20000, LEN, 0));
	fw_chip_post(&chips[1], nop);
	fw_chip_post(&chips[3], nop);
	fw_chips_run_one_thread(chips, N);
	run_rounds(3);
	named = fw_harness_host_ptr(chips[0].h, H_QCQ(1));
	assert_int_equal(named->status, NNP_STATUS_SUCCESS);
	assert_int_equal(named->phase & NNP_CQE_PHASE, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_SUCCESS);
	assert_int_equal(cqe(0, 0)->result, NNP_P2P_FROM_ROUTED | 2);
	assert_memory_equal(chips[0].h->dev_mem + slot_off(0),
			    chips[2].h->dev_mem + SRC, LEN);
	assert_memory_equal(chips[0].h->dev_mem + slot_off(1),
			    chips[2].h->dev_mem + SRC + 0x20000, LEN);
	ring_down();
}

static struct nnp_hw_queue_cmd alltoall(uint32_t i, uint64_t seg)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_ALLTOALL, .len = seg,
		.src_key = keys[i], .src_off = SRC,
		.dst_key = keys[i], .dst_off = DST,
		.value = NNP_COLL_VALUE(NNP_DTYPE_U8, 0, COMM, 0),
	};
}

/*
 * Rank 1's alltoall lends rank 0 its segment before rank 0's starts, and
 * rank 2 sends rank 0 a message of the same length: rank 0's RECV from
 * any source, waiting first, takes rank 2's message and not the
 * exchange's chunk, whose routed number is the same kind, and rank 0's
 * alltoall then gets every segment.
 */
static void test_exchange_chunk_left_alone(void **state)
{
	const uint64_t seg = 4000, msg = DST + 0x100000;
	uint32_t i, p;

	(void)state;
	ring_up(ALL);
	for (i = 0; i < N; i++)
		pattern(i, SRC, N * seg, 80 + i);
	pattern(2, SRC + 0x100000, seg, 99);
	fw_chip_post(&chips[0], recv_any_of(msg, seg));
	fw_chip_post(&chips[2], routed(NNP_CMD_SEND, keys[2], SRC + 0x100000, seg, 0));
	for (i = 0; i < N; i++)
		fw_chip_post(&chips[i], alltoall(i, seg));
	fw_chips_run_one_thread(chips, N);
	assert_int_equal(cqe_status(0, 0), NNP_STATUS_SUCCESS);
	assert_int_equal(cqe(0, 0)->result, NNP_P2P_FROM_ROUTED | 2);
	assert_memory_equal(chips[0].h->dev_mem + msg,
			    chips[2].h->dev_mem + SRC + 0x100000, seg);
	for (i = 0; i < N; i++)
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
	for (p = 0; p < N; p++)
		assert_memory_equal(chips[0].h->dev_mem + DST + p * seg,
				    chips[p].h->dev_mem + SRC, seg);
	ring_down();
}

static void test_refused(void **state)
{
	struct nnp_hw_queue_cmd c = recv_any(DST);

	(void)state;
	ring_up(ALL);
	c.opcode = NNP_CMD_SEND;
	c.src_key = c.dst_key;
	c.src_off = c.dst_off;
	c.dst_key = 0;
	c.dst_off = 0;
	assert_int_equal(run_alone(c), NNP_STATUS_INVALID_FIELD);
	c = recv_any(DST);
	c.value |= 1;		/* a port */
	assert_int_equal(run_alone(c), NNP_STATUS_INVALID_FIELD);
	c = recv_any(DST);
	c.value |= NNP_P2P_ROUTED;
	assert_int_equal(run_alone(c), NNP_STATUS_INVALID_FIELD);
	c = recv_any(DST);
	c.value |= (uint64_t)2 << 32;	/* a peer */
	assert_int_equal(run_alone(c), NNP_STATUS_INVALID_FIELD);
	ring_down();
}

static void test_destroyed_while_waiting(void **state)
{
	(void)state;
	ring_up(ALL);
	fw_chip_post(&chips[0], recv_any(DST));
	run_rounds(3);
	comm_abort(0);
	fw_chips_run_one_thread(chips, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_ABORTED);
	ring_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_takes_each_source),
		cmocka_unit_test(test_named_receive_keeps_its_message),
		cmocka_unit_test(test_exchange_chunk_left_alone),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_destroyed_while_waiting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
