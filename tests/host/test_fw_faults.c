// SPDX-License-Identifier: MIT
/*
 * Firmware simulator: faults on demand (fw_fault.c). Each one does what
 * docs/hw-interface.md says, is visible the way the driver looks for it,
 * and a reset ends the chip's own faults.
 *
 * In detail (docs/testing.md has the summary):
 * every fault on demand (`firmware-sim/src/control/fw_fault.c`): `hang`
 * stops the heartbeat, the admin queue and every queue until a reset, after
 * which the chip boots and works; `queue-stuck=0` leaves queue 0's SQ head
 * behind its tail with neither BUSY nor WAITING while queue 1, the
 * heartbeat and the admin queue go on; `msix-lost=1` writes the completion
 * and loses exactly one interrupt; `dma-fail=1` fails exactly one transfer
 * (the ring: cid 0xffff, DMA_ERROR); `die` takes the link down at both ends
 * and a reset brings it back; a reset of an idle chip takes its links down
 * at both ends until it is READY (`BOOT_MS` later, not a millisecond
 * sooner) and the neighbour's RECV waiting on it ends LINK_DOWN though the
 * link is up again by the time it runs, while a port down before the reset
 * stays down; `link-drop` loses and counts an arrival, `link-delay` holds
 * one for its time; malformed specs refused
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fw_harness.h"
#include "fw_control.h"

#define CTX		3
#define COMM		5
#define EPOCH		0x5eed000000000003ull
#define DEV_KEY_LEN	4096

static uint32_t db_read(struct fw_harness *h, uint32_t q, uint32_t reg)
{
	return nnp_fw_reg_read(h->fw, NNP_DOORBELL(q) + reg);
}

static int setup(void **state)
{
	struct fw_harness *h;

	fw_harness_setup_aq(state);
	h = *state;
	fw_harness_ctx_create(h, CTX);
	fw_harness_queue_create(h, CTX, 0);
	fw_harness_queue_create(h, CTX, 1);
	return 0;
}

static struct nnp_hw_queue_cmd fill_cmd(uint32_t key, uint16_t cid)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_FILL, .cid = cid, .dst_key = key,
		.len = DEV_KEY_LEN, .value = 0x5a,
	};
}

static const struct nnp_hw_cqe *cqe(struct fw_harness *h, uint32_t q,
				    uint32_t slot)
{
	return (const struct nnp_hw_cqe *)fw_harness_host_ptr(h, H_QCQ(q)) + slot;
}

/* Post @cmd on queue @q and run the workers once; returns its slot. */
static uint32_t post_run(struct fw_harness *h, uint32_t q,
			 struct nnp_hw_queue_cmd cmd)
{
	uint32_t slot = fw_harness_post(h, q, cmd);

	nnp_fw_run_queues(h->fw);
	return slot;
}

/* Submit a NOP on the admin queue without waiting for it. */
static void admin_post_nop(struct fw_harness *h, uint16_t cid)
{
	struct nnp_hw_admin_cmd *sq = fw_harness_host_ptr(h, H_AQ_SQ);
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_AQ_CQ);

	memset(&cq[h->aq_slot], 0, sizeof(cq[0]));
	memset(&sq[h->aq_slot], 0, sizeof(sq[0]));
	sq[h->aq_slot].opcode = NNP_ADMIN_NOP;
	sq[h->aq_slot].cid = cid;
	h->aq_slot = (h->aq_slot + 1) % H_AQ_DEPTH;
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_TAIL, h->aq_slot);
}

static void reset_and_boot(struct fw_harness *h)
{
	nnp_fw_reg_write(h->fw, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
	fw_harness_advance_ms(h, 0);
	fw_harness_advance_ms(h, BOOT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_READY);
}

static void test_hang(void **state)
{
	struct fw_harness *h = *state;
	uint32_t key = fw_harness_dev_key(h, CTX, 0, DEV_KEY_LEN, NNP_KEY_WRITE);
	uint32_t beat, slot, irqs, aq_slot = h->aq_slot;
	const struct nnp_hw_cqe *acq = fw_harness_host_ptr(h, H_AQ_CQ);

	assert_int_equal(nnp_fw_fault_set(h->fw, NNP_FW_FAULT_HANG, 0), 0);
	beat = nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT);
	fw_harness_advance_ms(h, 10 * HEARTBEAT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), beat);

	/* Nothing completes: no user command, no admin command. */
	slot = post_run(h, 0, fill_cmd(key, 0x11));
	assert_int_equal(cqe(h, 0, slot)->phase, 0);
	assert_int_equal(db_read(h, 0, NNP_DB_SQ_HEAD), 0);
	assert_int_equal(db_read(h, 0, NNP_DB_SQ_TAIL), 1);
	irqs = h->irqs[0];
	admin_post_nop(h, 0x77);
	fw_harness_advance_ms(h, HEARTBEAT_MS);
	assert_int_equal(acq[aq_slot].cid, 0);
	assert_int_equal(h->irqs[0], irqs);

	/* A reset ends it: the heartbeat runs from 0 again, the queue is gone. */
	reset_and_boot(h);
	fw_harness_advance_ms(h, HEARTBEAT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), 1);
	assert_int_equal(db_read(h, 0, NNP_DB_STATUS), 0);
	fw_harness_aq_setup(h, H_AQ_SQ, H_AQ_CQ, H_AQ_DEPTH);
	h->aq_slot = 0;
	memset(fw_harness_host_ptr(h, H_AQ_CQ), 0,
	       H_AQ_DEPTH * sizeof(struct nnp_hw_cqe));
	fw_harness_ctx_create(h, CTX);
}

static void test_queue_stuck(void **state)
{
	struct fw_harness *h = *state;
	uint32_t key = fw_harness_dev_key(h, CTX, 0, DEV_KEY_LEN, NNP_KEY_WRITE);
	uint32_t s0, s1, beat;

	assert_int_equal(nnp_fw_fault_set(h->fw, NNP_FW_FAULT_QUEUE_STUCK, 0), 0);
	s0 = post_run(h, 0, fill_cmd(key, 0x20));
	s1 = post_run(h, 1, fill_cmd(key, 0x21));
	/* Queue 1 runs, queue 0 has work and shows no progress, nor a wait. */
	assert_int_equal(cqe(h, 1, s1)->cid, 0x21);
	assert_int_equal(cqe(h, 1, s1)->status, NNP_STATUS_SUCCESS);
	assert_int_equal(cqe(h, 0, s0)->phase, 0);
	assert_int_equal(db_read(h, 0, NNP_DB_SQ_HEAD), 0);
	assert_int_equal(db_read(h, 0, NNP_DB_SQ_TAIL), 1);
	assert_int_equal(db_read(h, 0, NNP_DB_STATUS), NNP_QUEUE_STATUS_ENABLED);
	assert_int_equal(db_read(h, 1, NNP_DB_SQ_HEAD), 1);
	/* The rest of the chip lives. */
	beat = nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT);
	fw_harness_advance_ms(h, HEARTBEAT_MS);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), beat + 1);
	fw_harness_ctx_create(h, CTX + 1);

	/* Faults the reset ends do not come back with the queue. */
	reset_and_boot(h);
	fw_harness_aq_setup(h, H_AQ_SQ, H_AQ_CQ, H_AQ_DEPTH);
	h->aq_slot = 0;
	memset(fw_harness_host_ptr(h, H_AQ_CQ), 0,
	       H_AQ_DEPTH * sizeof(struct nnp_hw_cqe));
	fw_harness_ctx_create(h, CTX);
	fw_harness_queue_create(h, CTX, 0);
	memset(fw_harness_host_ptr(h, H_QCQ(0)), 0, H_QDEPTH * 16);
	h->q_tail[0] = 0;
	key = fw_harness_dev_key(h, CTX, 0, DEV_KEY_LEN, NNP_KEY_WRITE);
	s0 = post_run(h, 0, fill_cmd(key, 0x22));
	assert_int_equal(cqe(h, 0, s0)->cid, 0x22);
	assert_int_equal(db_read(h, 0, NNP_DB_SQ_HEAD), 1);
}

static void test_msix_lost(void **state)
{
	struct fw_harness *h = *state;
	uint32_t key = fw_harness_dev_key(h, CTX, 0, DEV_KEY_LEN, NNP_KEY_WRITE);
	unsigned int before = h->irqs[NNP_VECTOR_QUEUE(0)];
	uint32_t slot;

	assert_int_equal(nnp_fw_fault_set(h->fw, NNP_FW_FAULT_MSIX_LOST, 1), 0);
	/* The completion is written; its interrupt is not. */
	slot = post_run(h, 0, fill_cmd(key, 0x30));
	assert_int_equal(cqe(h, 0, slot)->cid, 0x30);
	assert_int_equal(cqe(h, 0, slot)->phase, 1);
	assert_int_equal(h->irqs[NNP_VECTOR_QUEUE(0)], before);
	/* Only one was lost. */
	slot = post_run(h, 0, fill_cmd(key, 0x31));
	assert_int_equal(cqe(h, 0, slot)->cid, 0x31);
	assert_int_equal(h->irqs[NNP_VECTOR_QUEUE(0)], before + 1);
}

static void test_dma_fail(void **state)
{
	struct fw_harness *h = *state;
	uint32_t key = fw_harness_dev_key(h, CTX, 0, DEV_KEY_LEN, NNP_KEY_WRITE);
	uint32_t slot;

	/* The command's own fetch fails: the ring is at fault. */
	assert_int_equal(nnp_fw_fault_set(h->fw, NNP_FW_FAULT_DMA_FAIL, 1), 0);
	slot = post_run(h, 0, fill_cmd(key, 0x40));
	assert_int_equal(cqe(h, 0, slot)->phase, 0);
	assert_int_equal(db_read(h, 0, NNP_DB_STATUS),
			 NNP_QUEUE_STATUS_ENABLED | NNP_QUEUE_STATUS_ERROR);
	assert_int_equal(db_read(h, 0, NNP_DB_ERROR),
			 0xffffu << 16 | NNP_STATUS_DMA_ERROR);
	/* Only one failed: queue 1 runs. */
	slot = post_run(h, 1, fill_cmd(key, 0x41));
	assert_int_equal(cqe(h, 1, slot)->cid, 0x41);
	assert_int_equal(cqe(h, 1, slot)->status, NNP_STATUS_SUCCESS);
}

static void test_die_and_revive(void **state)
{
	struct fw_harness *h = *state;
	struct fw_harness *peer;
	struct nnp_hw_port_info info[4];
	void *pstate;

	fw_harness_setup_chip(&pstate, 8);
	peer = pstate;
	assert_int_equal(nnp_fw_link_connect(h->fw, 1, peer->fw, 2), 0);
	fw_harness_ports(h, info);
	assert_int_equal(info[1].state, NNP_PORT_WIRED | NNP_PORT_UP);

	assert_int_equal(nnp_fw_fault_set(h->fw, NNP_FW_FAULT_DIE, 0), 0);
	fw_harness_ports(peer, info);
	assert_int_equal(info[2].state, NNP_PORT_WIRED);
	assert_int_equal(info[2].peer, NNP_PORT_PEER(7, 1));
	{
		uint32_t beat = nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT);

		fw_harness_advance_ms(h, 5 * HEARTBEAT_MS);
		assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_HEARTBEAT), beat);
	}
	/* The reset revives the chip and the links it took down. */
	reset_and_boot(h);
	fw_harness_ports(peer, info);
	assert_int_equal(info[2].state, NNP_PORT_WIRED | NNP_PORT_UP);
	fw_harness_teardown(&pstate);
}

/* A RECV of @len bytes on @port of communicator COMM, into @key. */
static struct nnp_hw_queue_cmd recv_cmd(uint32_t key, uint32_t port)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_RECV, .cid = 0x52, .dst_key = key,
		.len = DEV_KEY_LEN, .value = NNP_P2P_VALUE(COMM, port),
	};
}

static uint8_t port_state(struct fw_harness *h, unsigned int port)
{
	struct nnp_hw_port_info info[NNP_FW_MAX_PORTS];

	nnp_fw_icl_ports_info(h->fw, info);
	return info[port].state;
}

/*
 * A chip being reset, even an idle one, takes its links down at both ends
 * until it has booted: a neighbour waiting on it ends LINK_DOWN, even
 * though the link is up again before the neighbour's worker looks. A link
 * down before the reset stays down.
 */
static void test_reset_takes_links_down(void **state)
{
	struct fw_harness *h = *state;
	struct fw_harness *peer;
	uint32_t key, slot;
	void *pstate;

	fw_harness_setup_chip(&pstate, 8);
	peer = pstate;
	assert_int_equal(nnp_fw_link_connect(h->fw, 0, peer->fw, 1), 0);
	assert_int_equal(nnp_fw_link_connect(h->fw, 3, peer->fw, 3), 0);
	nnp_fw_link_set(h->fw, 3, false);
	fw_harness_ctx_create(peer, CTX);
	fw_harness_queue_create(peer, CTX, 0);
	assert_int_equal(fw_harness_comm_pair(peer, CTX, COMM, 1, EPOCH),
			 NNP_STATUS_SUCCESS);
	key = fw_harness_dev_key(peer, CTX, 0, DEV_KEY_LEN, NNP_KEY_WRITE);
	slot = fw_harness_post(peer, 0, recv_cmd(key, 1));
	nnp_fw_run_queues(peer->fw);
	assert_int_equal(cqe(peer, 0, slot)->phase, 0);

	nnp_fw_reg_write(h->fw, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
	fw_harness_advance_ms(h, 0);
	assert_int_equal(port_state(h, 0), NNP_PORT_WIRED);
	assert_int_equal(port_state(peer, 1), NNP_PORT_WIRED);
	fw_harness_advance_ms(h, BOOT_MS - 1);
	assert_int_equal(port_state(peer, 1), NNP_PORT_WIRED);
	fw_harness_advance_ms(h, 1);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_READY);
	assert_int_equal(port_state(h, 0), NNP_PORT_WIRED | NNP_PORT_UP);
	assert_int_equal(port_state(peer, 1), NNP_PORT_WIRED | NNP_PORT_UP);
	assert_int_equal(port_state(peer, 3), NNP_PORT_WIRED);

	/* Its clock never moved: only the link going down ends the RECV. */
	nnp_fw_run_queues(peer->fw);
	assert_int_equal(cqe(peer, 0, slot)->phase & NNP_CQE_PHASE, NNP_CQE_PHASE);
	assert_int_equal(cqe(peer, 0, slot)->cid, 0x52);
	assert_int_equal(cqe(peer, 0, slot)->status, NNP_STATUS_LINK_DOWN);
	fw_harness_teardown(&pstate);
}

static void test_link_drop_and_delay(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_port_info info[4];
	const uint8_t data[64] = { 1, 2, 3 };
	struct timespec t0, t1;
	long ms;

	assert_int_equal(nnp_fw_link_attach_remote(h->fw, 3, 9, 0), 0);
	nnp_fw_link_set(h->fw, 3, true);
	assert_int_equal(nnp_fw_icl_deliver(h->fw, 3, 1, 0, false, 0, data,
					    sizeof(data)), 0);
	assert_int_equal(nnp_fw_fault_set(h->fw, NNP_FW_FAULT_LINK_DROP, 3), 0);
	assert_int_equal(nnp_fw_icl_deliver(h->fw, 3, 1, 1, false, 0, data,
					    sizeof(data)), -1);
	fw_harness_ports(h, info);
	assert_int_equal(info[3].rx_packets, 1);
	assert_int_equal(info[3].errors, 1);
	assert_int_equal(fw_harness_counters(h).icl_dropped, 1);

	/* Delay without loss: the arrival waits, then it is queued. */
	assert_int_equal(nnp_fw_fault_set(h->fw, NNP_FW_FAULT_NONE, 0), 0);
	assert_int_equal(nnp_fw_fault_set(h->fw, NNP_FW_FAULT_LINK_DELAY,
					  3u << 16 | 50), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(nnp_fw_icl_deliver(h->fw, 3, 1, 2, false, 0, data,
					    sizeof(data)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 50);
	fw_harness_ports(h, info);
	assert_int_equal(info[3].rx_packets, 2);
}

static void test_parse(void **state)
{
	struct fw_harness *h = *state;
	static const char *const bad[] = {
		"", "hang=1", "hangs", "queue-stuck", "queue-stuck=", "queue-stuck=64",
		"queue-stuck=-1", "msix-lost=x", "dma-fail=1x", "link-drop=4",
		"link-delay=1", "link-delay=1:", "link-delay=1:10001", "link-delay=9:5",
		"link-delay=:5", "msix-lost=99999999999", "nonsense",
	};
	enum nnp_fw_fault f;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (nnp_fw_fault_parse(h->fw, bad[i], &f) != -1)
			fail_msg("'%s' was taken", bad[i]);
	assert_int_equal(nnp_fw_fault_parse(h->fw, "link-delay=2:10000", &f), 0);
	assert_int_equal(f, NNP_FW_FAULT_LINK_DELAY);
	assert_int_equal(nnp_fw_fault_parse(h->fw, "queue-stuck=63", &f), 0);
	assert_int_equal(f, NNP_FW_FAULT_QUEUE_STUCK);
	assert_int_equal(nnp_fw_fault_parse(h->fw, "msix-lost=3", &f), 0);
	assert_int_equal(nnp_fw_fault_parse(h->fw, "dma-fail=2", &f), 0);
	assert_int_equal(nnp_fw_fault_parse(h->fw, "link-drop=0", &f), 0);
	assert_int_equal(nnp_fw_fault_parse(h->fw, "hang", &f), 0);
	assert_int_equal(f, NNP_FW_FAULT_HANG);
	assert_int_equal(nnp_fw_fault_parse(h->fw, "none", &f), 0);
	assert_int_equal(f, NNP_FW_FAULT_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hang, setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_queue_stuck, setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_msix_lost, setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_dma_fail, setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_die_and_revive, setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_reset_takes_links_down, setup,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_link_drop_and_delay, setup,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_parse, setup, fw_harness_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
