// SPDX-License-Identifier: MIT
/*
 * Firmware simulator log (hw 1.19): FW_LOG_SEQ and the FW_LOG window.
 *
 * In detail (docs/testing.md has the summary): a new device has logged
 * nothing and its window reads zero; a guest error (a register access at
 * a bad offset) is message 0, kind GUEST_ERROR, its text and the clock's
 * time; a command a link failed is kind WARNING; 45 messages leave the
 * newest 32 in their slots (message k in entry k % 32), each
 * NUL-terminated; a message of 200 characters is cut to 111; a reset
 * keeps the log; the window's end and a misaligned offset read 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_base.h"
#include "fw_harness.h"

/* Entry @i of @fw's window, read a word at a time as a host does. */
static struct nnp_hw_log_entry entry(struct nnp_fw *fw, uint32_t i)
{
	struct nnp_hw_log_entry e;
	uint32_t w[sizeof(e) / 4], k;

	for (k = 0; k < sizeof(e) / 4; k++)
		w[k] = nnp_fw_reg_read(fw, NNP_REG_FW_LOG + i * sizeof(e) + 4 * k);
	memcpy(&e, w, sizeof(e));
	return e;
}

static void test_empty(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_log_entry e = entry(h->fw, 5), zero = { 0 };

	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_LOG_SEQ), 0);
	assert_memory_equal(&e, &zero, sizeof(e));
}

static void test_guest_error_and_warning(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_log_entry e;

	h->now_ns = 123456789;
	assert_int_equal(nnp_fw_reg_read(h->fw, 0x3), 0);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_LOG_SEQ), 1);
	e = entry(h->fw, 0);
	assert_int_equal(e.seq, 0);
	assert_int_equal(e.kind, NNP_HW_LOG_GUEST_ERROR);
	assert_int_equal(e.time_ns, 123456789);
	assert_int_equal(e.rsvd, 0);
	assert_string_equal(e.msg, "register access at bad offset 0x3");
	nnp_fw_op_failed(h->fw, NNP_STATUS_LINK_DOWN, "receive on port %u failed", 2u);
	e = entry(h->fw, 1);
	assert_int_equal(e.seq, 1);
	assert_int_equal(e.kind, NNP_HW_LOG_WARNING);
	assert_string_equal(e.msg, "receive on port 2 failed");
	nnp_fw_op_failed(h->fw, NNP_STATUS_INVALID_FIELD, "bad");
	assert_int_equal(entry(h->fw, 2).kind, NNP_HW_LOG_GUEST_ERROR);
}

static void test_newest_kept_whole(void **state)
{
	struct fw_harness *h = *state;
	char long_msg[201];
	uint32_t k;

	for (k = 0; k < 44; k++)
		nnp_fw_guest_error(h->fw, "message %u", k);
	memset(long_msg, 'x', 200);
	long_msg[200] = '\0';
	nnp_fw_guest_error(h->fw, "%s", long_msg);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_LOG_SEQ), 45);
	for (k = 45 - NNP_HW_LOG_ENTRIES; k < 44; k++) {
		struct nnp_hw_log_entry e = entry(h->fw, k % NNP_HW_LOG_ENTRIES);
		char want[32];

		snprintf(want, sizeof(want), "message %u", k);
		assert_int_equal(e.seq, k);
		assert_string_equal(e.msg, want);
	}
	/* Message 44, in entry 12: its first 111 characters and a NUL. */
	assert_int_equal(strlen(entry(h->fw, 44 % NNP_HW_LOG_ENTRIES).msg), 111);
	/* A reset keeps it all. */
	nnp_fw_reg_write(h->fw, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
	fw_harness_advance_ms(h, 1000);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_LOG_SEQ), 45);
	assert_string_equal(entry(h->fw, 43 % NNP_HW_LOG_ENTRIES).msg, "message 43");
	/* Past the window, nothing of it. */
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_LOG +
					 NNP_HW_LOG_ENTRIES * sizeof(struct nnp_hw_log_entry)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty, fw_harness_setup,
						fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_guest_error_and_warning,
						fw_harness_setup, fw_harness_teardown),
		cmocka_unit_test_setup_teardown(test_newest_kept_whole,
						fw_harness_setup, fw_harness_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
