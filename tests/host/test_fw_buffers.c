// SPDX-License-Identifier: MIT
/*
 * Firmware simulator buffers kept for reuse (fw_buffers.c): a packet copy
 * freed is the next one taken of its size class (up to 64 KiB, 256 KiB,
 * 1 MiB), whatever its size within it, a larger one is the allocator's;
 * each class keeps NNP_FW_POOL_BYTES of buffers at most; a
 * chip's scratch given back is the next taken that fits, two at once are
 * two buffers, a third given back is let go, and a larger request takes
 * a larger one. Built with AddressSanitizer: a buffer shorter than asked,
 * or one used after it was let go or leaked, fails the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_base.h"

/*
 * A packet of @small bytes, freed, is the next one of @large bytes (the
 * class's most, its whole room written), and not one of @large + 1.
 */
static void class_reused(size_t small, size_t large)
{
	struct nnp_fw_packet *a, *b, *next;

	a = nnp_fw_packet_alloc(small);
	assert_non_null(a);
	assert_true(a->pooled);
	memset(a + 1, 0xa5, large);
	nnp_fw_packet_free(a);
	b = nnp_fw_packet_alloc(large);
	assert_ptr_equal(b, a);
	assert_int_equal(b->pooled, a->pooled);
	memset(b + 1, 0x5a, large);
	next = nnp_fw_packet_alloc(large + 1);
	assert_non_null(next);
	assert_ptr_not_equal(next, b);
	memset(next + 1, 0x5a, large + 1);
	nnp_fw_packet_free(next);
	nnp_fw_packet_free(b);
}

static void test_packet_copy_reused(void **state)
{
	struct nnp_fw_packet *huge;

	(void)state;
	class_reused(100, NNP_FW_CHUNK_BYTES);
	class_reused(NNP_FW_CHUNK_BYTES + 1, 4 * NNP_FW_CHUNK_BYTES);
	class_reused(4 * NNP_FW_CHUNK_BYTES + 1, NNP_FW_ICL_MAX_PACKET);
	huge = nnp_fw_packet_alloc(NNP_FW_ICL_MAX_PACKET + 1);
	assert_non_null(huge);
	assert_false(huge->pooled);
	memset(huge + 1, 0x5a, NNP_FW_ICL_MAX_PACKET + 1);
	nnp_fw_packet_free(huge);
	nnp_fw_packet_free(NULL);
}

/* Packets of @len bytes: their class keeps NNP_FW_POOL_BYTES of them. */
static void class_bounded(size_t len, size_t class_bytes)
{
	const uint32_t most = NNP_FW_POOL_BYTES / class_bytes, n = most + 40;
	struct nnp_fw_packet **pk = calloc(n, sizeof(*pk));
	uint32_t i, before = nnp_fw_packets_pooled(len);

	assert_non_null(pk);
	for (i = 0; i < n; i++) {
		pk[i] = nnp_fw_packet_alloc(len);
		assert_non_null(pk[i]);
	}
	assert_int_equal(nnp_fw_packets_pooled(len), 0);
	for (i = 0; i < n; i++)
		nnp_fw_packet_free(pk[i]);
	assert_int_equal(nnp_fw_packets_pooled(len), most);
	assert_true(before <= most);
	free(pk);
}

static void test_packet_pool_bounded(void **state)
{
	(void)state;
	class_bounded(64, NNP_FW_CHUNK_BYTES);
	class_bounded(NNP_FW_CHUNK_BYTES + 1, 4 * NNP_FW_CHUNK_BYTES);
	class_bounded(NNP_FW_ICL_MAX_PACKET, NNP_FW_ICL_MAX_PACKET);
	assert_int_equal(nnp_fw_packets_pooled(NNP_FW_ICL_MAX_PACKET + 1), 0);
}

static void test_scratch_reused(void **state)
{
	struct nnp_fw *fw = calloc(1, sizeof(*fw));
	uint8_t *a, *b, *c, *d;

	(void)state;
	assert_non_null(fw);
	a = nnp_fw_scratch_take(fw, 4096);
	assert_non_null(a);
	memset(a, 1, 4096);
	nnp_fw_scratch_give(fw, a);
	/* Smaller: the same. */
	assert_ptr_equal(nnp_fw_scratch_take(fw, 1000), a);
	/* Two at once: two. */
	b = nnp_fw_scratch_take(fw, 1000);
	assert_non_null(b);
	assert_ptr_not_equal(b, a);
	memset(b, 2, 1000);
	c = nnp_fw_scratch_take(fw, 10);
	nnp_fw_scratch_give(fw, a);
	nnp_fw_scratch_give(fw, b);
	nnp_fw_scratch_give(fw, c);	/* both slots full: let go */
	nnp_fw_scratch_give(fw, NULL);
	/* Larger than either: a new one, whole. */
	d = nnp_fw_scratch_take(fw, 1 << 20);
	assert_non_null(d);
	memset(d, 3, 1 << 20);
	nnp_fw_scratch_give(fw, d);
	assert_ptr_equal(nnp_fw_scratch_take(fw, 1 << 20), d);
	nnp_fw_scratch_give(fw, d);
	nnp_fw_scratch_release(fw);
	free(fw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packet_copy_reused),
		cmocka_unit_test(test_packet_pool_bounded),
		cmocka_unit_test(test_scratch_reused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
