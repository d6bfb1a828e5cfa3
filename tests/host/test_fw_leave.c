// SPDX-License-Identifier: MIT
/*
 * Firmware simulator: a rank leaving its communicator (hw 1.20).
 *
 * In detail (docs/testing.md has the summary): a peer that destroys its
 * communicator, or whose context goes with its process, while this chip
 * waits in a collective it never called ends that collective PEER_LEFT
 * at once, and so fails the communicator (COMM_STATUS, one COMM_FAILED
 * event), PEER_LEFT also when another peer's abort comes before the
 * collective ends; a collective called after the leave came ends PEER_LEFT
 * without waiting, a broadcast's root before it sends a byte; the
 * collectives the leaver did call complete, with its data; a RECV by
 * port from the leaver's port ends PEER_LEFT at the leave, but one for a
 * message it sent before it left takes it, byte for byte, and a SEND
 * to it sends nothing; of two
 * leaves the one after fewer collectives counts; an abort whose label
 * has the leave bit (a collective far into a long job) is still an
 * abort; call numbers compare across the label's wrap.
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
#define COUNT		64

struct pair {
	struct fw_harness *h[2];
	uint32_t key[2];
	const struct nnp_hw_cqe *cq[2];
	uint32_t slot[2];
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
		p->cq[i] = fw_harness_host_ptr(p->h[i], H_QCQ(0));
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

/* A sum of COUNT i32 on chip @i: its input at 0, its output at 1024. */
static void post_allreduce(struct pair *p, unsigned int i)
{
	p->slot[i] = fw_harness_post(p->h[i], 0, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_ALLREDUCE, .len = COUNT,
		.src_key = p->key[i], .dst_key = p->key[i], .dst_off = 1024,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	});
}

/* Chip @i's last command's status, or -1 while it has not completed. */
static int status_of(const struct pair *p, unsigned int i)
{
	const struct nnp_hw_cqe *e = &p->cq[i][p->slot[i]];

	return (e->phase & NNP_CQE_PHASE) ? e->status : -1;
}

static void comm_destroy(struct fw_harness *h)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_COMM_DESTROY, .args = { CTX, COMM },
	};

	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_SUCCESS);
}

/* The one event of @h, a COMM_FAILED of COMM with @status. */
static void assert_one_failure(struct fw_harness *h, uint16_t status)
{
	struct nnp_hw_event ev[NNP_HW_EVENTS];
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_GET_EVENTS, .addr = H_AQ_DATA,
		.len = sizeof(ev),
	};
	uint32_t result = 0;

	assert_int_equal(fw_harness_admin(h, c, &result), NNP_STATUS_SUCCESS);
	assert_int_equal(result, sizeof(ev[0]));
	memcpy(ev, fw_harness_host_ptr(h, H_AQ_DATA), sizeof(ev[0]));
	assert_int_equal(ev[0].kind, NNP_HW_EVENT_COMM_FAILED);
	assert_int_equal(ev[0].status, status);
	assert_int_equal(ev[0].comm, COMM);
	assert_int_equal(fw_harness_comm_status(h, CTX, COMM), status);
}

/* Chip 0 waits in collective 1; chip 1, which never called it, leaves. */
static void test_waiting_call_ends_at_the_leave(void **state)
{
	struct pair *p = *state;

	post_allreduce(p, 0);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), -1);
	comm_destroy(p->h[1]);
	/* No clock moved: the leave ends it, not a timeout. */
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
	assert_one_failure(p->h[0], NNP_STATUS_PEER_LEFT);
}

/*
 * An abort from another peer that comes after the leave tore chip 0's
 * collective down, before that collective ended (one worker ending it
 * while another chip's thread hands in the abort): the communicator
 * failed for the leave, its one event and COMM_STATUS say PEER_LEFT, and
 * so does the collective.
 */
static void test_abort_after_the_leave_is_the_leave(void **state)
{
	struct pair *p = *state;
	struct nnp_fw *fw = p->h[0]->fw;

	post_allreduce(p, 0);
	nnp_fw_run_queues(fw);
	comm_destroy(p->h[1]);
	mtx_lock(&fw->lock);
	assert_true(fw->link_hooks->comm_failed_locked(fw, &fw->comms[COMM],
							NNP_STATUS_ABORTED, 0));
	mtx_unlock(&fw->lock);
	nnp_fw_run_queues(fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
	assert_one_failure(p->h[0], NNP_STATUS_PEER_LEFT);
}

/* The process went: its context, and so its communicator, with it. */
static void test_context_gone_is_a_leave(void **state)
{
	struct pair *p = *state;
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_CTX_DESTROY, .args = { CTX },
	};

	post_allreduce(p, 0);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(fw_harness_admin(p->h[1], c, NULL), NNP_STATUS_SUCCESS);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
}

/* A collective called once the leave is in ends without waiting. */
static void test_later_call_ends_at_once(void **state)
{
	struct pair *p = *state;

	comm_destroy(p->h[1]);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(fw_harness_comm_status(p->h[0], CTX, COMM), 0);
	post_allreduce(p, 0);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
	assert_one_failure(p->h[0], NNP_STATUS_PEER_LEFT);
}

/*
 * A broadcast's root only sends, and would find room for it all: it
 * fails before it sends anything.
 */
static void test_root_that_only_sends_ends_too(void **state)
{
	struct pair *p = *state;

	comm_destroy(p->h[1]);
	nnp_fw_run_queues(p->h[0]->fw);
	p->slot[0] = fw_harness_post(p->h[0], 0, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_BROADCAST, .len = COUNT, .src_key = p->key[0],
		.dst_key = p->key[0], .dst_off = 1024,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, 0, COMM, 0),
	});
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
	assert_int_equal(fw_harness_counters(p->h[0]).icl_tx_bytes, 0);
}

/*
 * The leaver called collective 1 and left as soon as its own part was
 * done: chip 0's collective 1 completes with both inputs summed, and
 * only collective 2 fails.
 */
static void test_calls_made_before_the_leave_complete(void **state)
{
	struct pair *p = *state;
	int32_t *out = (int32_t *)(p->h[0]->dev_mem + 1024);
	unsigned int i, k;

	for (i = 0; i < 2; i++) {
		int32_t *in = (int32_t *)p->h[i]->dev_mem;

		for (k = 0; k < COUNT; k++)
			in[k] = (int32_t)(k * (i + 1));
		post_allreduce(p, i);
	}
	for (k = 0; k < 8 && status_of(p, 1) < 0; k++) {
		nnp_fw_run_queues(p->h[1]->fw);
		nnp_fw_run_queues(p->h[0]->fw);
	}
	assert_int_equal(status_of(p, 1), NNP_STATUS_SUCCESS);
	comm_destroy(p->h[1]);
	for (k = 0; k < 8 && status_of(p, 0) < 0; k++)
		nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_SUCCESS);
	for (k = 0; k < COUNT; k++)
		assert_int_equal(out[k], (int32_t)(3 * k));
	assert_int_equal(fw_harness_comm_status(p->h[0], CTX, COMM), 0);

	post_allreduce(p, 0);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
}

/* A message of @len bytes by port on chip @i: to chip 1 - @i. */
static void post_message(struct pair *p, unsigned int i, bool send,
			 uint32_t len)
{
	struct nnp_hw_queue_cmd c = {
		.opcode = send ? NNP_CMD_SEND : NNP_CMD_RECV, .len = len,
		.value = NNP_P2P_VALUE(COMM, send ? 0 : 1),
	};

	if (send)
		c.src_key = p->key[i];
	else
		c.dst_key = p->key[i];
	c.dst_off = send ? 0 : 2048;
	p->slot[i] = fw_harness_post(p->h[i], 0, c);
}

/* A RECV from the port the leaver was at ends at the leave. */
static void test_receive_from_the_leaver_ends(void **state)
{
	struct pair *p = *state;

	post_message(p, 0, false, 1000);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), -1);
	comm_destroy(p->h[1]);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
}

/*
 * What the leaver sent before it left still comes, in order: the RECV
 * for it completes, byte for byte, and only the next one ends.
 */
static void test_messages_sent_before_the_leave_come(void **state)
{
	struct pair *p = *state;
	uint8_t *src = p->h[1]->dev_mem, *dst = p->h[0]->dev_mem + 2048;
	unsigned int k;

	for (k = 0; k < 1000; k++)
		src[k] = (uint8_t)(k * 7 + 1);
	post_message(p, 1, true, 1000);
	for (k = 0; k < 8 && status_of(p, 1) < 0; k++)
		nnp_fw_run_queues(p->h[1]->fw);
	assert_int_equal(status_of(p, 1), NNP_STATUS_SUCCESS);
	comm_destroy(p->h[1]);
	post_message(p, 0, false, 1000);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_SUCCESS);
	assert_memory_equal(dst, src, 1000);
	post_message(p, 0, false, 1000);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
}

static void test_send_to_the_leaver_sends_nothing(void **state)
{
	struct pair *p = *state;

	comm_destroy(p->h[1]);
	nnp_fw_run_queues(p->h[0]->fw);
	post_message(p, 0, true, 1000);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
	assert_int_equal(fw_harness_counters(p->h[0]).icl_tx_bytes, 0);
}

/* Two ranks left, after 5 and 3 collectives: collective 4 fails. */
static void test_fewest_calls_count(void **state)
{
	struct pair *p = *state;
	struct nnp_fw *fw = p->h[0]->fw;
	struct nnp_fw_comm *m = &fw->comms[COMM];

	mtx_lock(&fw->lock);
	nnp_fw_comm_left_locked(fw, m, 5, 1);
	nnp_fw_comm_left_locked(fw, m, 3, 1);
	m->calls_started = 3;
	mtx_unlock(&fw->lock);
	post_allreduce(p, 0);
	nnp_fw_run_queues(fw);
	assert_int_equal(status_of(p, 0), NNP_STATUS_PEER_LEFT);
}

/*
 * Collective labels grow with the job: one past 2^30 carries the leave
 * bit, and its abort must still fail the peer's communicator.
 */
static void test_abort_label_is_never_a_leave(void **state)
{
	struct pair *p = *state;

	p->h[1]->fw->comms[COMM].seq = NNP_FW_SEQ_LEAVE | 16;
	post_allreduce(p, 1);
	nnp_fw_run_queues(p->h[1]->fw);
	/* Its timeout, not a link: one down would fail chip 0 itself (v1.23). */
	fw_harness_advance_ms(p->h[1], COLL_TIMEOUT_MS + 1);
	nnp_fw_run_queues(p->h[1]->fw);
	nnp_fw_run_queues(p->h[1]->fw);
	assert_int_equal(status_of(p, 1), NNP_STATUS_PEER_TIMEOUT);
	nnp_fw_run_queues(p->h[0]->fw);
	assert_int_equal(fw_harness_comm_status(p->h[0], CTX, COMM),
			 NNP_STATUS_ABORTED);
}

static void test_call_numbers_wrap(void **state)
{
	(void)state;
	assert_true(nnp_fw_call_after(1, 0));
	assert_false(nnp_fw_call_after(5, 5));
	assert_false(nnp_fw_call_after(4, 5));
	/* 0 is no collective's number. */
	assert_false(nnp_fw_call_after(0, 7));
	/* The label keeps 30 bits: collective 2^30 + 1 is 2 past 2^30 - 1. */
	assert_true(nnp_fw_call_after(NNP_FW_SEQ_LEAVE + 1, NNP_FW_LEAVE_CALLS));
	assert_false(nnp_fw_call_after(NNP_FW_LEAVE_CALLS, NNP_FW_SEQ_LEAVE + 1));
	assert_true(nnp_fw_call_after(NNP_FW_LEAVE_CALLS / 2 + 3, 3));
	assert_false(nnp_fw_call_after(NNP_FW_LEAVE_CALLS / 2 + 4, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_waiting_call_ends_at_the_leave,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_after_the_leave_is_the_leave,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_context_gone_is_a_leave,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_later_call_ends_at_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_that_only_sends_ends_too,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_calls_made_before_the_leave_complete,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_receive_from_the_leaver_ends,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_messages_sent_before_the_leave_come,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_to_the_leaver_sends_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_fewest_calls_count,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_label_is_never_a_leave,
						setup, teardown),
		cmocka_unit_test(test_call_numbers_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
