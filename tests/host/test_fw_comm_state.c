// SPDX-License-Identifier: MIT
/*
 * Firmware simulator COMM_STATE (hw 1.18): where a communicator stands.
 *
 * In detail (docs/testing.md has the summary): a new communicator says
 * its epoch, rank and size, no collective started and none in flight;
 * an allreduce called on one chip only is collective 1, started and not
 * done, with its type, op and count, parked on the ring's receiving port
 * for the other rank, for as long as the clock moved; once the peer calls
 * it, both chips count it done with its bytes and have nothing in flight;
 * a broadcast names its root, a port-addressed RECV its port, no peer and
 * its length, and once the SEND comes each end counts one message and
 * its bytes; a failed collective counts done, not its bytes; a short
 * buffer is BUFFER_TOO_SMALL, an unknown communicator NOT_FOUND, a third
 * argument INVALID_FIELD.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_harness.h"
#include "fw_control.h"

#define CTX		3
#define COMM		5
#define EPOCH		0x5eed000000000005ull
#define KEY_LEN		4096

struct pair {
	struct fw_harness *h[2];
	uint32_t key[2];
};

/* Chips 0 and 1: chip 0's port 0 to chip 1's port 1, and back. */
static int setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	unsigned int i;

	assert_non_null(p);
	fw_harness_pair_up(p->h, CTX, COMM, EPOCH);
	for (i = 0; i < 2; i++) {
		p->key[i] = fw_harness_dev_key(p->h[i], CTX, 0, KEY_LEN,
					       NNP_KEY_READ | NNP_KEY_WRITE);
	}
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct pair *p = *state;

	fw_harness_pair_down(p->h);
	free(p);
	return 0;
}

/* COMM_STATE of (CTX, @comm) into @len bytes: its status; *@s the answer. */
static uint16_t comm_state(struct fw_harness *h, uint32_t comm, uint32_t len,
			   struct nnp_hw_comm_state *s)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_COMM_STATE, .addr = H_AQ_DATA, .len = len,
	};
	uint32_t result = 0;
	uint16_t st;

	c.args[0] = CTX;
	c.args[1] = comm;
	memset(fw_harness_host_ptr(h, H_AQ_DATA), 0xa5, sizeof(*s));
	st = fw_harness_admin(h, c, &result);
	memcpy(s, fw_harness_host_ptr(h, H_AQ_DATA), sizeof(*s));
	if (!st)
		assert_int_equal(result, sizeof(*s));
	return st;
}

static struct nnp_hw_comm_state state_of(struct fw_harness *h)
{
	struct nnp_hw_comm_state s;

	assert_int_equal(comm_state(h, COMM, sizeof(s), &s), NNP_STATUS_SUCCESS);
	return s;
}

static void assert_idle(const struct nnp_hw_comm_state *s)
{
	assert_int_equal(s->opcode, 0);
	assert_int_equal(s->peer, NNP_HW_COMM_NO_RANK);
	assert_int_equal(s->count, 0);
	assert_int_equal(s->wait_port, NNP_HW_COMM_NO_PORT);
	assert_int_equal(s->wait_rank, NNP_HW_COMM_NO_RANK);
	assert_int_equal(s->wait_ns, 0);
}

/* An allreduce by @op of 64 i32 on @p's chip @i, within its key. */
static void post_allreduce(struct pair *p, unsigned int i, uint32_t op)
{
	fw_harness_post(p->h[i], 0, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_ALLREDUCE, .len = 64, .src_key = p->key[i],
		.dst_key = p->key[i], .dst_off = 1024,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, op, COMM, 0),
	});
}

static void test_new_is_idle(void **state)
{
	struct pair *p = *state;
	struct nnp_hw_comm_state s = state_of(p->h[1]);

	assert_int_equal(s.epoch, EPOCH);
	assert_int_equal(s.rank, 1);
	assert_int_equal(s.nranks, 2);
	assert_int_equal(s.status, 0);
	assert_int_equal(s.calls, 0);
	assert_int_equal(s.calls_done, 0);
	assert_int_equal(s.messages, 0);
	assert_int_equal(s.bytes, 0);
	assert_int_equal(s.rsvd, 0);
	assert_idle(&s);
}

static void test_allreduce_waits_for_the_late_rank(void **state)
{
	struct pair *p = *state;
	struct nnp_hw_comm_state s;
	unsigned int i;

	post_allreduce(p, 0, NNP_OP_MAX);
	nnp_fw_run_queues(p->h[0]->fw);
	fw_harness_advance_ms(p->h[0], 700);
	s = state_of(p->h[0]);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.calls_done, 0);
	assert_int_equal(s.opcode, NNP_CMD_ALLREDUCE);
	assert_int_equal(s.dtype, NNP_DTYPE_I32);
	assert_int_equal(s.op, NNP_OP_MAX);
	assert_int_equal(s.count, 64);
	assert_int_equal(s.peer, NNP_HW_COMM_NO_RANK);
	/* Its ring's receiving port, from rank 1. */
	assert_int_equal(s.wait_port, 1);
	assert_int_equal(s.wait_rank, 1);
	assert_int_equal(s.wait_ns, 700 * 1000000ull);
	/* The late rank: nothing started. */
	s = state_of(p->h[1]);
	assert_int_equal(s.calls, 0);
	assert_idle(&s);

	post_allreduce(p, 1, NNP_OP_MAX);
	for (i = 0; i < 4; i++) {
		nnp_fw_run_queues(p->h[1]->fw);
		nnp_fw_run_queues(p->h[0]->fw);
	}
	for (i = 0; i < 2; i++) {
		s = state_of(p->h[i]);
		assert_int_equal(s.calls, 1);
		assert_int_equal(s.calls_done, 1);
		assert_int_equal(s.bytes, 64 * 4);
		assert_int_equal(s.messages, 0);
		assert_idle(&s);
	}
}

static void test_broadcast_names_its_root(void **state)
{
	struct pair *p = *state;
	struct nnp_hw_comm_state s;

	/* Rank 0 is not the root: it names no source. */
	fw_harness_post(p->h[0], 0, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_BROADCAST, .len = 64, .dst_key = p->key[0],
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, 0, COMM, 1),
	});
	nnp_fw_run_queues(p->h[0]->fw);
	s = state_of(p->h[0]);
	assert_int_equal(s.opcode, NNP_CMD_BROADCAST);
	assert_int_equal(s.peer, 1);
	assert_int_equal(s.wait_rank, 1);
}

static void test_message_by_port(void **state)
{
	struct pair *p = *state;
	struct nnp_hw_comm_state s;
	unsigned int i;

	fw_harness_post(p->h[0], 0, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_RECV, .dst_key = p->key[0], .len = 1000,
		.value = NNP_P2P_VALUE(COMM, 1),
	});
	nnp_fw_run_queues(p->h[0]->fw);
	s = state_of(p->h[0]);
	assert_int_equal(s.opcode, NNP_CMD_RECV);
	assert_int_equal(s.count, 1000);
	assert_int_equal(s.dtype, 0);
	assert_int_equal(s.peer, NNP_HW_COMM_NO_RANK);
	assert_int_equal(s.wait_port, 1);
	assert_int_equal(s.wait_rank, 1);
	assert_int_equal(s.calls, 0);

	fw_harness_post(p->h[1], 0, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_SEND, .src_key = p->key[1], .len = 1000,
		.value = NNP_P2P_VALUE(COMM, 0),
	});
	for (i = 0; i < 4; i++) {
		nnp_fw_run_queues(p->h[1]->fw);
		nnp_fw_run_queues(p->h[0]->fw);
	}
	for (i = 0; i < 2; i++) {
		s = state_of(p->h[i]);
		assert_int_equal(s.messages, 1);
		assert_int_equal(s.bytes, 1000);
		assert_int_equal(s.calls, 0);
		assert_idle(&s);
	}
}

static void test_failed_counts_done_not_bytes(void **state)
{
	struct pair *p = *state;
	struct nnp_hw_comm_state s;

	post_allreduce(p, 0, NNP_OP_SUM);
	nnp_fw_run_queues(p->h[0]->fw);
	nnp_fw_link_set(p->h[0]->fw, 1, false);
	nnp_fw_run_queues(p->h[0]->fw);
	s = state_of(p->h[0]);
	assert_int_equal(s.status, NNP_STATUS_LINK_DOWN);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.calls_done, 1);
	assert_int_equal(s.bytes, 0);
	assert_idle(&s);
}

static void test_bad_calls(void **state)
{
	struct pair *p = *state;
	struct nnp_hw_comm_state s;
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_COMM_STATE, .addr = H_AQ_DATA,
		.len = sizeof(s),
	};

	assert_int_equal(comm_state(p->h[0], COMM, sizeof(s) - 1, &s),
			 NNP_STATUS_BUFFER_TOO_SMALL);
	/* Nothing written. */
	assert_int_equal(s.rank, 0xa5a5a5a5);
	assert_int_equal(comm_state(p->h[0], COMM + 1, sizeof(s), &s),
			 NNP_STATUS_NOT_FOUND);
	assert_int_equal(comm_state(p->h[0], NNP_HW_MAX_COMMS, sizeof(s), &s),
			 NNP_STATUS_NOT_FOUND);
	c.args[0] = CTX;
	c.args[1] = COMM;
	c.args[2] = 1;
	assert_int_equal(fw_harness_admin(p->h[0], c, NULL),
			 NNP_STATUS_INVALID_FIELD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_is_idle, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_allreduce_waits_for_the_late_rank,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_broadcast_names_its_root,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_message_by_port, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failed_counts_done_not_bytes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_calls, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
