// SPDX-License-Identifier: MIT
/* Firmware simulator: admin queue setup, commands, completions, faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_harness.h"

#define SQ_ADDR		H_AQ_SQ
#define CQ_ADDR		H_AQ_CQ
#define DATA_ADDR	H_AQ_DATA
#define DEPTH		H_AQ_DEPTH

static struct nnp_hw_admin_cmd *sqe(struct fw_harness *h, uint32_t slot)
{
	return fw_harness_host_ptr(h, SQ_ADDR + slot * sizeof(struct nnp_hw_admin_cmd));
}

static struct nnp_hw_cqe *cqe(struct fw_harness *h, uint32_t slot)
{
	return fw_harness_host_ptr(h, CQ_ADDR + slot * sizeof(struct nnp_hw_cqe));
}

/* Put @cmd in @slot, ring the doorbell and let the firmware run. */
static void submit(struct fw_harness *h, uint32_t slot,
		   const struct nnp_hw_admin_cmd *cmd)
{
	*sqe(h, slot) = *cmd;
	assert_true(nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_TAIL,
				     (slot + 1) % DEPTH));
	nnp_fw_run(h->fw);
}

static void test_nop_completes(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_admin_cmd cmd = { .opcode = NNP_ADMIN_NOP, .cid = 0x1234 };

	submit(h, 0, &cmd);
	assert_int_equal(cqe(h, 0)->cid, 0x1234);
	assert_int_equal(cqe(h, 0)->status, NNP_STATUS_SUCCESS);
	assert_int_equal(cqe(h, 0)->phase, 1);
	assert_int_equal(cqe(h, 0)->sq_head, 1);
	assert_int_equal(cqe(h, 0)->result, 0);
	assert_int_equal(h->irqs[0], 1);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_INT_STATUS),
			 NNP_INT_ADMIN_CQ | NNP_INT_FW_EVENT);
	assert_int_equal(h->guest_errors, 0);
}

static void test_identify_fills_buffer(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_admin_cmd cmd = {
		.opcode = NNP_ADMIN_IDENTIFY, .cid = 9,
		.addr = DATA_ADDR, .len = 4096,
	};
	uint8_t *data = fw_harness_host_ptr(h, DATA_ADDR);
	struct nnp_hw_identify id;

	memset(data, 0xa5, 4096);
	submit(h, 0, &cmd);
	assert_int_equal(cqe(h, 0)->status, NNP_STATUS_SUCCESS);
	assert_int_equal(cqe(h, 0)->result, NNP_HW_IDENTIFY_SIZE);
	memcpy(&id, data, sizeof(id));
	assert_int_equal(id.magic, NNP_HW_ID_MAGIC);
	assert_int_equal(id.hw_version, 0x1001b);
	assert_int_equal(id.fw_version, 0x10200);
	assert_int_equal(id.chip_id, 7);
	assert_int_equal(id.mem_size, DEV_MEM_SIZE);
	assert_int_equal(id.caps, NNP_CAP_ADMIN_QUEUE | NNP_CAP_USER_QUEUES |
			 NNP_CAP_ICL | NNP_CAP_COLLECTIVES);
	assert_int_equal(id.num_ports, 4);
	assert_int_equal(id.num_queues, 64);
	assert_int_equal(id.num_vectors, 65);
	assert_string_equal(id.serial, "NNPSIM-00000007");
	assert_string_equal(id.fw_build, "nnp-fwsim 1.2.0");
	/* Not one byte past the structure. */
	assert_int_equal(data[NNP_HW_IDENTIFY_SIZE], 0xa5);
	assert_int_equal(data[4095], 0xa5);
}

static void expect_status(struct fw_harness *h, struct nnp_hw_admin_cmd cmd,
			  uint16_t status)
{
	cmd.cid = 77;
	submit(h, 0, &cmd);
	assert_int_equal(cqe(h, 0)->cid, 77);
	assert_int_equal(cqe(h, 0)->status, status);
	/* A bad command fails alone: the queue stays usable. */
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS),
			 NNP_AQ_STATUS_READY);
	/* Rewind for the next case: a fresh queue. */
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_CTRL, 0);
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_CTRL, NNP_AQ_CTRL_ENABLE);
	memset(cqe(h, 0), 0, sizeof(struct nnp_hw_cqe));
}

static void test_bad_commands_fail_with_status(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_admin_cmd id = {
		.opcode = NNP_ADMIN_IDENTIFY, .addr = DATA_ADDR, .len = 256,
	};
	struct nnp_hw_admin_cmd c;
	uint8_t *data = fw_harness_host_ptr(h, DATA_ADDR);

	memset(data, 0x5a, 512);
	c = (struct nnp_hw_admin_cmd){ .opcode = 0x7f };
	expect_status(h, c, NNP_STATUS_INVALID_OPCODE);
	c = (struct nnp_hw_admin_cmd){ .opcode = NNP_ADMIN_NOP, .flags = 1 };
	expect_status(h, c, NNP_STATUS_INVALID_FIELD);
	c = (struct nnp_hw_admin_cmd){ .opcode = NNP_ADMIN_NOP, .rsvd0 = 1 };
	expect_status(h, c, NNP_STATUS_INVALID_FIELD);
	c = (struct nnp_hw_admin_cmd){ .opcode = NNP_ADMIN_NOP, .len = 4 };
	expect_status(h, c, NNP_STATUS_INVALID_FIELD);
	c = id;
	c.args[9] = 1;
	expect_status(h, c, NNP_STATUS_INVALID_FIELD);
	c = id;
	c.rsvd1 = 1;
	expect_status(h, c, NNP_STATUS_INVALID_FIELD);
	c = id;
	c.len = NNP_HW_IDENTIFY_SIZE - 1;
	expect_status(h, c, NNP_STATUS_BUFFER_TOO_SMALL);
	/* None of the failures wrote the buffer. */
	assert_int_equal(data[0], 0x5a);
	c = id;
	c.addr = HOST_MEM_BASE + HOST_MEM_SIZE - 8;
	expect_status(h, c, NNP_STATUS_DMA_ERROR);
	c = id;
	c.addr = 0;
	expect_status(h, c, NNP_STATUS_DMA_ERROR);
	assert_int_equal(data[0], 0x5a);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS),
			 NNP_FW_STATUS_READY);
}

static void test_ring_wraps_and_flips_phase(void **state)
{
	struct fw_harness *h = *state;
	uint32_t head = 0;
	unsigned int i;

	for (i = 0; i < 3 * DEPTH; i++) {
		struct nnp_hw_admin_cmd cmd = {
			.opcode = NNP_ADMIN_NOP, .cid = (uint16_t)(100 + i),
		};
		uint32_t slot = i % DEPTH;

		submit(h, slot, &cmd);
		assert_int_equal(cqe(h, slot)->cid, 100 + i);
		assert_int_equal(cqe(h, slot)->phase, ((i / DEPTH) & 1) ? 0 : 1);
		assert_int_equal(cqe(h, slot)->sq_head, (slot + 1) % DEPTH);
		head = (head + 1) % DEPTH;
		nnp_fw_reg_write(h->fw, NNP_REG_AQ_CQ_HEAD, head);
	}
	assert_int_equal(h->irqs[0], 3 * DEPTH);
	assert_int_equal(h->guest_errors, 0);
}

static void test_full_cq_stalls_until_consumed(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_admin_cmd cmd = { .opcode = NNP_ADMIN_NOP };
	uint32_t i;

	/* Fill all but one SQ slot without consuming completions. */
	for (i = 0; i < DEPTH - 1; i++) {
		cmd.cid = (uint16_t)i;
		*sqe(h, i) = cmd;
	}
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_TAIL, DEPTH - 1);
	nnp_fw_run(h->fw);
	assert_int_equal(cqe(h, 2)->cid, 2);
	/* The CQ now has one free slot, which the firmware must not use. */
	cmd.cid = 3;
	*sqe(h, 3) = cmd;
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_TAIL, 0);
	nnp_fw_run(h->fw);
	assert_int_equal(cqe(h, 3)->phase, 0);
	/* Consuming one completion lets it go on. */
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_CQ_HEAD, 1);
	nnp_fw_run(h->fw);
	assert_int_equal(cqe(h, 3)->cid, 3);
	assert_int_equal(cqe(h, 3)->phase, 1);
}

static void test_bad_setup_sets_error(void **state)
{
	struct fw_harness *h = *state;
	static const struct {
		uint64_t sq, cq;
		uint32_t depth;
	} bad[] = {
		{ SQ_ADDR, CQ_ADDR, 3 },
		{ SQ_ADDR, CQ_ADDR, 1 },
		{ SQ_ADDR, CQ_ADDR, 8192 },
		{ 0, CQ_ADDR, 4 },
		{ SQ_ADDR + 8, CQ_ADDR, 4 },
		{ SQ_ADDR, CQ_ADDR + 4, 4 },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nnp_fw_reg_write(h->fw, NNP_REG_AQ_CTRL, 0);
		fw_harness_aq_setup(h, bad[i].sq, bad[i].cq, bad[i].depth);
		assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS),
				 NNP_AQ_STATUS_ERROR);
		assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_ERROR),
				 NNP_FW_ERR_AQ_CONFIG);
		/* A doorbell on a broken queue does nothing. */
		assert_false(nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_TAIL, 1));
	}
	/* A good setup recovers. */
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_CTRL, 0);
	fw_harness_aq_setup(h, SQ_ADDR, CQ_ADDR, DEPTH);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS),
			 NNP_AQ_STATUS_READY);
}

static void test_doorbell_past_depth_sets_error(void **state)
{
	struct fw_harness *h = *state;

	assert_false(nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_TAIL, DEPTH));
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS),
			 NNP_AQ_STATUS_ERROR);
	assert_int_equal(h->guest_errors, 1);
}

static void test_setup_locked_while_enabled(void **state)
{
	struct fw_harness *h = *state;

	nnp_fw_reg_write(h->fw, NNP_REG_AQ_DEPTH, 16);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_DEPTH), DEPTH);
	assert_int_equal(h->guest_errors, 1);
}

static void test_unreachable_ring_sets_error(void **state)
{
	struct fw_harness *h = *state;

	nnp_fw_reg_write(h->fw, NNP_REG_AQ_CTRL, 0);
	fw_harness_aq_setup(h, 0x40000000, CQ_ADDR, DEPTH);
	assert_true(nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_TAIL, 1));
	nnp_fw_run(h->fw);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS),
			 NNP_AQ_STATUS_ERROR);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_ERROR),
			 NNP_FW_ERR_AQ_DMA);
	assert_int_equal(h->irqs[0], 0);
}

static void test_enable_before_ready_refused(void **state)
{
	struct fw_harness *h = *state;

	fw_harness_aq_setup(h, SQ_ADDR, CQ_ADDR, DEPTH);
	/* Not READY, and BUSY until the firmware has run its reset. */
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS),
			 NNP_AQ_STATUS_BUSY);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_CTRL), 0);
	assert_int_equal(h->guest_errors, 1);
}

static void test_reset_drops_queue(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_admin_cmd cmd = { .opcode = NNP_ADMIN_NOP, .cid = 5 };

	*sqe(h, 0) = cmd;
	nnp_fw_reg_write(h->fw, NNP_REG_AQ_SQ_TAIL, 1);
	nnp_fw_reg_write(h->fw, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
	nnp_fw_run(h->fw);
	assert_int_equal(cqe(h, 0)->phase, 0);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS), 0);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_DEPTH), 0);
}

#define AQ_TEST(fn) cmocka_unit_test_setup_teardown(fn, fw_harness_setup_aq, fw_harness_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		AQ_TEST(test_nop_completes),
		AQ_TEST(test_identify_fills_buffer),
		AQ_TEST(test_bad_commands_fail_with_status),
		AQ_TEST(test_ring_wraps_and_flips_phase),
		AQ_TEST(test_full_cq_stalls_until_consumed),
		AQ_TEST(test_bad_setup_sets_error),
		AQ_TEST(test_doorbell_past_depth_sets_error),
		AQ_TEST(test_setup_locked_while_enabled),
		AQ_TEST(test_unreachable_ring_sets_error),
		AQ_TEST(test_reset_drops_queue),
		cmocka_unit_test_setup_teardown(test_enable_before_ready_refused,
						fw_harness_setup_unbooted,
						fw_harness_teardown),
	};

	return cmocka_run_group_tests_name("fw_admin", tests, NULL, NULL);
}
