// SPDX-License-Identifier: MIT
/*
 * Firmware simulator byte order: the little-endian helpers of fw_le.h
 * decode known byte images of hardware structures, as a guest lays them
 * out, to exact values, and encode a completion back to its exact bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fw_le.h"

static void test_loads_at_any_alignment(void **state)
{
	static const uint8_t b[] = {
		0xee, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	};

	(void)state;
	assert_int_equal(fw_load_le16(b + 1), 0x0201);
	assert_int_equal(fw_load_le32(b + 1), 0x04030201);
	assert_true(fw_load_le64(b + 1) == 0x0807060504030201ull);
}

/* A COPY command as the guest writes it, byte by byte. */
static void test_decodes_a_queue_command(void **state)
{
	uint8_t b[NNP_HW_SQE_SIZE] = {
		[0] = 0x01, [1] = 0x00, [2] = 0x34, [3] = 0x12,
		[8] = 0x78, [9] = 0x56, [10] = 0x34, [11] = 0x12,
		[12] = 0x02, [13] = 0x01,
		[16] = 0x01, [17] = 0x02, [18] = 0x03, [19] = 0x04,
		[20] = 0x05, [21] = 0x06, [22] = 0x07, [23] = 0x08,
		[24] = 0xff, [31] = 0x80,
		[32] = 0x00, [33] = 0x10,
		[40] = 0x5c,
	};
	struct nnp_hw_queue_cmd c;

	(void)state;
	memcpy(&c, b, sizeof(c));
	fw_le_queue_cmd(&c);
	assert_int_equal(c.opcode, 1);
	assert_int_equal(c.cid, 0x1234);
	assert_int_equal(c.src_key, 0x12345678);
	assert_int_equal(c.dst_key, 0x0102);
	assert_true(c.src_off == 0x0807060504030201ull);
	assert_true(c.dst_off == 0x80000000000000ffull);
	assert_true(c.len == 0x1000);
	assert_true(c.value == 0x5c);
	assert_int_equal(c.rsvd0, 0);
	assert_true(c.rsvd1 == 0 && c.rsvd2 == 0);
}

/*
 * KEY_REGISTER: the header decoded at the fetch, the 64-bit fields of the
 * key's arguments from the raw argument words.
 */
static void test_decodes_admin_command_and_key_args(void **state)
{
	uint8_t b[NNP_HW_SQE_SIZE] = {
		[0] = 0x04, [2] = 0xcd, [3] = 0xab,
		[8] = 0x00, [9] = 0x20, [10] = 0x43, [11] = 0x65,
		[12] = 0x87, [13] = 0x09,
		[16] = 0x10,
		/* args: ctx 3, type 1, rights 3, page_offset 0x64 */
		[24] = 0x03, [28] = 0x01, [32] = 0x03, [36] = 0x64,
		/* length 0x0000000123456789, dev_base 0xfedcba9876543210 */
		[40] = 0x89, [41] = 0x67, [42] = 0x45, [43] = 0x23, [44] = 0x01,
		[48] = 0x10, [49] = 0x32, [50] = 0x54, [51] = 0x76,
		[52] = 0x98, [53] = 0xba, [54] = 0xdc, [55] = 0xfe,
	};
	struct nnp_hw_admin_cmd c;
	struct nnp_hw_key_args a;

	(void)state;
	memcpy(&c, b, sizeof(c));
	fw_le_admin_cmd(&c);
	assert_int_equal(c.cid, 0xabcd);
	assert_true(c.addr == 0x0000098765432000ull);
	assert_int_equal(c.len, 0x10);
	assert_int_equal(fw_admin_arg(&c, 0), 3);
	assert_int_equal(fw_admin_arg(&c, 3), 0x64);
	memcpy(&a, c.args, sizeof(a));
	fw_le_key_args(&a);
	assert_int_equal(a.ctx, 3);
	assert_int_equal(a.type, 1);
	assert_int_equal(a.rights, 3);
	assert_int_equal(a.page_offset, 0x64);
	assert_true(a.length == 0x0000000123456789ull);
	assert_true(a.dev_base == 0xfedcba9876543210ull);
}

/* A completion the firmware posts, as the guest reads it. */
static void test_encodes_a_completion(void **state)
{
	static const uint8_t want[NNP_HW_CQE_SIZE] = {
		0x04, 0x03, 0x02, 0x01, 0x07, 0x00, 0x34, 0x12,
		0x0b, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	struct nnp_hw_cqe c = {
		.result = 0x01020304, .sq_head = 7, .cid = 0x1234,
		.status = 0xb, .phase = 1,
	};

	(void)state;
	fw_le_cqe(&c);
	assert_memory_equal(&c, want, sizeof(want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_at_any_alignment),
		cmocka_unit_test(test_decodes_a_queue_command),
		cmocka_unit_test(test_decodes_admin_command_and_key_args),
		cmocka_unit_test(test_encodes_a_completion),
	};

	return cmocka_run_group_tests_name("fw_le", tests, NULL, NULL);
}
