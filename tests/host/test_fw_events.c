// SPDX-License-Identifier: MIT
/*
 * Firmware simulator events (hw 1.17): GET_EVENTS and NNP_INT_FW_EVENT.
 *
 * In detail (docs/testing.md has the summary): a link taken down and up
 * again is one LINK event at each end per change, with the port and its
 * state, the idle communicator over it failing at each end in between
 * (COMM_FAILED LINK_DOWN naming the port, hw 1.23), and latches FW_EVENT
 * and raises the admin vector once a worker runs; a RECV waiting on a link that goes down ends LINK_DOWN, and the
 * chip's events are the LINK first, then COMM_FAILED (context, id,
 * LINK_DOWN, no port), as COMM_STATUS says, and a second RECV of that
 * communicator, waiting on another queue and port, ends ABORTED at once
 * (hw 1.19); an abort from the peer is
 * COMM_FAILED ABORTED naming the port it came in on, and a second
 * failure of that communicator is no event; 140 events in a queue of 64
 * keep the newest 64 in order, the first taken counting the 76 dropped,
 * and the next GET_EVENTS none; a short buffer takes the oldest only; a
 * length of 0 or not a multiple of the entry is INVALID_FIELD; a reset
 * empties the queue, and its own link changes come after
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
#define DEV_KEY_LEN	4096

/* Chips 0 and 1: chip 0's port 0 to chip 1's port 1, and back. */
static int setup(void **state)
{
	struct fw_harness **h = calloc(2, sizeof(*h));
	unsigned int i;

	assert_non_null(h);
	for (i = 0; i < 2; i++) {
		void *st;

		fw_harness_setup_chip(&st, i);
		h[i] = st;
		fw_harness_ctx_create(h[i], CTX);
		fw_harness_queue_create(h[i], CTX, 0);
		nnp_fw_reg_write(h[i]->fw, NNP_REG_INT_ENABLE, NNP_INT_ALL);
	}
	assert_int_equal(nnp_fw_link_connect(h[0]->fw, 0, h[1]->fw, 1), 0);
	assert_int_equal(nnp_fw_link_connect(h[1]->fw, 0, h[0]->fw, 1), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(fw_harness_comm_pair(h[i], CTX, COMM, i, EPOCH),
				 NNP_STATUS_SUCCESS);
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	struct fw_harness **h = *state;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		void *st = h[i];

		fw_harness_teardown(&st);
	}
	free(h);
	return 0;
}

/*
 * GET_EVENTS with a buffer of @room entries: its status; the events into
 * @ev and their number into *@n.
 */
static uint16_t get_events(struct fw_harness *h, uint32_t room,
			   struct nnp_hw_event *ev, uint32_t *n)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_GET_EVENTS, .addr = H_AQ_DATA,
		.len = room * sizeof(*ev),
	};
	uint32_t result = 0;
	uint16_t st = fw_harness_admin(h, c, &result);

	assert_int_equal(result % sizeof(*ev), 0);
	*n = result / sizeof(*ev);
	memcpy(ev, fw_harness_host_ptr(h, H_AQ_DATA), result);
	return st;
}

/* Every event queued now, asserting GET_EVENTS succeeds. */
static uint32_t events(struct fw_harness *h, struct nnp_hw_event *ev)
{
	uint32_t n;

	assert_int_equal(get_events(h, NNP_HW_EVENTS, ev, &n), NNP_STATUS_SUCCESS);
	return n;
}

static void assert_link(const struct nnp_hw_event *e, uint32_t port,
			uint32_t state)
{
	assert_int_equal(e->kind, NNP_HW_EVENT_LINK);
	assert_int_equal(e->port, port);
	assert_int_equal(e->state, state);
	assert_int_equal(e->status, 0);
	assert_int_equal(e->ctx, 0);
}

static void assert_comm_failed(const struct nnp_hw_event *e, uint16_t status,
			       uint32_t port)
{
	assert_int_equal(e->kind, NNP_HW_EVENT_COMM_FAILED);
	assert_int_equal(e->ctx, CTX);
	assert_int_equal(e->comm, COMM);
	assert_int_equal(e->status, status);
	assert_int_equal(e->port, port);
	assert_int_equal(e->state, 0);
}

static void test_link_down_and_up(void **state)
{
	struct fw_harness **h = *state;
	struct nnp_hw_event ev[NNP_HW_EVENTS];
	unsigned int irqs;

	assert_int_equal(events(h[0], ev), 0);
	/* Booting latched it: cleared, as a driver does. */
	nnp_fw_reg_write(h[0]->fw, NNP_REG_INT_STATUS, NNP_INT_FW_EVENT);
	irqs = h[0]->irqs[NNP_VECTOR_ADMIN];
	nnp_fw_link_set(h[0]->fw, 0, false);
	/* Queued, and announced once a worker runs. */
	assert_int_equal(nnp_fw_reg_read(h[0]->fw, NNP_REG_INT_STATUS) &
			 NNP_INT_FW_EVENT, 0);
	nnp_fw_run_queues(h[0]->fw);
	assert_int_equal(nnp_fw_reg_read(h[0]->fw, NNP_REG_INT_STATUS) &
			 NNP_INT_FW_EVENT, NNP_INT_FW_EVENT);
	assert_int_equal(h[0]->irqs[NNP_VECTOR_ADMIN], irqs + 1);
	nnp_fw_link_set(h[0]->fw, 0, true);

	/* The idle communicator over the link failed at each end (v1.23). */
	assert_int_equal(events(h[0], ev), 3);
	assert_link(&ev[0], 0, NNP_PORT_WIRED);
	assert_comm_failed(&ev[1], NNP_STATUS_LINK_DOWN, 0);
	assert_link(&ev[2], 0, NNP_PORT_WIRED | NNP_PORT_UP);
	assert_int_equal(ev[0].lost, 0);
	assert_int_equal(events(h[1], ev), 3);
	assert_link(&ev[0], 1, NNP_PORT_WIRED);
	assert_comm_failed(&ev[1], NNP_STATUS_LINK_DOWN, 1);
	assert_link(&ev[2], 1, NNP_PORT_WIRED | NNP_PORT_UP);
	/* Taken: gone. A link set to the state it has is no change. */
	nnp_fw_link_set(h[0]->fw, 0, true);
	assert_int_equal(events(h[0], ev), 0);
}

/* A RECV of DEV_KEY_LEN bytes on @port of communicator COMM, into @key. */
static struct nnp_hw_queue_cmd recv_cmd(uint32_t key, uint32_t port)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_RECV, .cid = 0x52, .dst_key = key,
		.len = DEV_KEY_LEN, .value = NNP_P2P_VALUE(COMM, port),
	};
}

static void test_recv_on_a_link_going_down(void **state)
{
	struct fw_harness **h = *state;
	struct nnp_hw_event ev[NNP_HW_EVENTS];
	uint32_t key = fw_harness_dev_key(h[0], CTX, 0, DEV_KEY_LEN, NNP_KEY_WRITE);
	const struct nnp_hw_cqe *cq = fw_harness_host_ptr(h[0], H_QCQ(0));
	uint32_t slot;

	slot = fw_harness_post(h[0], 0, recv_cmd(key, 1));
	nnp_fw_run_queues(h[0]->fw);
	assert_int_equal(cq[slot].phase, 0);
	nnp_fw_link_set(h[0]->fw, 1, false);
	nnp_fw_run_queues(h[0]->fw);
	assert_int_equal(cq[slot].phase & NNP_CQE_PHASE, NNP_CQE_PHASE);
	assert_int_equal(cq[slot].status, NNP_STATUS_LINK_DOWN);

	assert_int_equal(events(h[0], ev), 2);
	assert_link(&ev[0], 1, NNP_PORT_WIRED);
	assert_comm_failed(&ev[1], NNP_STATUS_LINK_DOWN, NNP_HW_EVENT_NO_PORT);
	assert_int_equal(fw_harness_comm_status(h[0], CTX, COMM),
			 NNP_STATUS_LINK_DOWN);
}

static void test_failure_ends_the_other_commands(void **state)
{
	struct fw_harness **h = *state;
	uint32_t key = fw_harness_dev_key(h[0], CTX, 0, 2 * DEV_KEY_LEN,
					  NNP_KEY_WRITE);
	const struct nnp_hw_cqe *cq0 = fw_harness_host_ptr(h[0], H_QCQ(0));
	const struct nnp_hw_cqe *cq1 = fw_harness_host_ptr(h[0], H_QCQ(1));
	struct nnp_hw_queue_cmd other = recv_cmd(key, 0);
	uint32_t s0, s1;

	/* Two receives of the communicator, on two queues, one a port. */
	fw_harness_queue_create(h[0], CTX, 1);
	other.dst_off = DEV_KEY_LEN;
	s0 = fw_harness_post(h[0], 0, recv_cmd(key, 1));
	s1 = fw_harness_post(h[0], 1, other);
	nnp_fw_run_queues(h[0]->fw);
	assert_int_equal(cq0[s0].phase, 0);
	assert_int_equal(cq1[s1].phase, 0);
	/* Port 1 goes: its receive fails, and the other ends at once. */
	nnp_fw_link_set(h[0]->fw, 1, false);
	nnp_fw_run_queues(h[0]->fw);
	assert_int_equal(cq0[s0].phase & NNP_CQE_PHASE, NNP_CQE_PHASE);
	assert_int_equal(cq0[s0].status, NNP_STATUS_LINK_DOWN);
	assert_int_equal(cq1[s1].phase & NNP_CQE_PHASE, NNP_CQE_PHASE);
	assert_int_equal(cq1[s1].status, NNP_STATUS_ABORTED);
	assert_int_equal(fw_harness_comm_status(h[0], CTX, COMM),
			 NNP_STATUS_LINK_DOWN);
}

static void test_abort_from_the_peer(void **state)
{
	struct fw_harness **h = *state;
	struct nnp_hw_event ev[NNP_HW_EVENTS];
	uint32_t args[3] = { CTX, COMM, NNP_HW_COMM_DESTROY_ABORT };
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_DESTROY };
	uint32_t key = fw_harness_dev_key(h[1], CTX, 0, DEV_KEY_LEN,
					  NNP_KEY_READ | NNP_KEY_WRITE);

	/* Chip 1's allreduce in flight, aborted: its end passes the abort on. */
	fw_harness_post(h[1], 0, (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_ALLREDUCE, .len = 64, .src_key = key,
		.dst_key = key, .dst_off = 1024,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	});
	nnp_fw_run_queues(h[1]->fw);
	memcpy(c.args, args, sizeof(args));
	assert_int_equal(fw_harness_admin(h[1], c, NULL), NNP_STATUS_SUCCESS);
	nnp_fw_run_queues(h[1]->fw);
	nnp_fw_run_queues(h[0]->fw);
	/* Chip 1 sends it out of port 0 first, into chip 0's port 1. */
	assert_int_equal(events(h[0], ev), 1);
	assert_comm_failed(&ev[0], NNP_STATUS_ABORTED, 1);
	/* Its failure is the first one only. */
	nnp_fw_link_set(h[0]->fw, 1, false);
	nnp_fw_run_queues(h[0]->fw);
	assert_int_equal(events(h[0], ev), 1);
	assert_link(&ev[0], 1, NNP_PORT_WIRED);
	/* The chip that aborted it destroyed it: no event of its own. */
	assert_int_equal(events(h[1], ev), 1);
	assert_link(&ev[0], 0, NNP_PORT_WIRED);
}

static void test_full_queue_keeps_the_newest(void **state)
{
	struct fw_harness **h = *state;
	struct nnp_hw_event ev[NNP_HW_EVENTS];
	uint32_t i, n;

	/* The communicator over the link fails at the first change: taken. */
	nnp_fw_link_set(h[0]->fw, 0, false);
	nnp_fw_link_set(h[0]->fw, 0, true);
	assert_int_equal(events(h[0], ev), 3);
	for (i = 0; i < 70; i++) {
		nnp_fw_link_set(h[0]->fw, 0, false);
		nnp_fw_link_set(h[0]->fw, 0, true);
	}
	/* A short buffer takes the oldest kept, with the count dropped. */
	assert_int_equal(get_events(h[0], 4, ev, &n), NNP_STATUS_SUCCESS);
	assert_int_equal(n, 4);
	assert_int_equal(ev[0].lost, 140 - NNP_HW_EVENTS);
	for (i = 0; i < 4; i++)
		assert_link(&ev[i], 0, NNP_PORT_WIRED |
			    (i % 2 ? NNP_PORT_UP : 0));
	assert_int_equal(events(h[0], ev), NNP_HW_EVENTS - 4);
	assert_int_equal(ev[0].lost, 0);
	assert_link(&ev[NNP_HW_EVENTS - 5], 0, NNP_PORT_WIRED | NNP_PORT_UP);
	assert_int_equal(events(h[0], ev), 0);
	/* The modeled clock stamps them, and never goes back. */
	for (i = 1; i < NNP_HW_EVENTS - 4; i++)
		assert_true(ev[i].time_ns >= ev[i - 1].time_ns);
}

static void test_bad_lengths(void **state)
{
	struct fw_harness **h = *state;
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_GET_EVENTS, .addr = H_AQ_DATA,
	};

	nnp_fw_link_set(h[0]->fw, 0, false);
	assert_int_equal(fw_harness_admin(h[0], c, NULL),
			 NNP_STATUS_INVALID_FIELD);
	c.len = sizeof(struct nnp_hw_event) + 1;
	assert_int_equal(fw_harness_admin(h[0], c, NULL),
			 NNP_STATUS_INVALID_FIELD);
	c.len = sizeof(struct nnp_hw_event) - 1;
	assert_int_equal(fw_harness_admin(h[0], c, NULL),
			 NNP_STATUS_INVALID_FIELD);
	/* Refused ones took nothing. */
	c.len = sizeof(struct nnp_hw_event);
	assert_int_equal(fw_harness_admin(h[0], c, NULL), NNP_STATUS_SUCCESS);
}

static void test_reset_empties(void **state)
{
	struct fw_harness **h = *state;
	struct nnp_hw_event ev[NNP_HW_EVENTS];

	nnp_fw_link_set(h[0]->fw, 2, false);
	nnp_fw_link_set(h[1]->fw, 2, false);
	assert_int_equal(events(h[1], ev), 0);
	nnp_fw_link_set(h[1]->fw, 0, false);
	nnp_fw_reg_write(h[1]->fw, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
	fw_harness_advance_ms(h[1], 0);
	fw_harness_advance_ms(h[1], BOOT_MS);
	assert_int_equal(nnp_fw_reg_read(h[1]->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_READY);
	fw_harness_aq_setup(h[1], H_AQ_SQ, H_AQ_CQ, H_AQ_DEPTH);
	/*
	 * Its port 0 went down before the reset: that event is gone. The
	 * reset took port 1 down and booting brought it up.
	 */
	assert_int_equal(events(h[1], ev), 2);
	assert_link(&ev[0], 1, NNP_PORT_WIRED);
	assert_link(&ev[1], 1, NNP_PORT_WIRED | NNP_PORT_UP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_link_down_and_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_on_a_link_going_down,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_ends_the_other_commands,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_from_the_peer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_full_queue_keeps_the_newest,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_lengths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_empties, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
