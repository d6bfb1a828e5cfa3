// SPDX-License-Identifier: MIT
/*
 * ICL socket frames (nnp_icl_frame.h): headers and hellos encoded to their
 * exact bytes, decoded back, and every malformed frame a peer may send
 * refused with its reason, as the QEMU device's link drops it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nnp_fw.h"
#include "nnp_icl_frame.h"

static const char bad_magic[] = "not an nnp ICL frame (magic or version)";

/* A DATA frame as version 3 and version 4 ends send it, byte by byte. */
static void test_encodes_headers_byte_exact(void **state)
{
	static const uint8_t v3[NNP_ICL_HDR_BYTES] = {
		0x4e, 0x49, 0x43, 0x4c, 3, NNP_ICL_DATA, 0, 0,
		0x00, 0x00, 0x01, 0x00, 0x78, 0x56, 0x34, 0x12,
		0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
	};
	static const uint8_t model[NNP_ICL_MODEL_BYTES] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
	};
	struct nnp_icl_frame f = {
		.type = NNP_ICL_DATA, .len = 0x10000, .seq = 0x12345678,
		.epoch = 0xfedcba9876543210ull, .model = 0x0102030405060708ull,
	};
	uint8_t out[NNP_ICL_HDR_BYTES + NNP_ICL_MODEL_BYTES];

	(void)state;
	memset(out, 0xee, sizeof(out));
	assert_int_equal(nnp_icl_header_encode(&f, false, out), NNP_ICL_HDR_BYTES);
	assert_memory_equal(out, v3, sizeof(v3));
	assert_int_equal(out[NNP_ICL_HDR_BYTES], 0xee);	/* nothing past it */
	assert_int_equal(nnp_icl_header_encode(&f, true, out),
			 NNP_ICL_HDR_BYTES + NNP_ICL_MODEL_BYTES);
	assert_int_equal(out[4], NNP_ICL_VERSION_MODEL);
	assert_memory_equal(out + 5, v3 + 5, sizeof(v3) - 5);
	assert_memory_equal(out + NNP_ICL_HDR_BYTES, model, sizeof(model));
}

static void test_decodes_what_it_encodes(void **state)
{
	struct nnp_icl_frame f = {
		.type = NNP_ICL_ABORT, .len = NNP_FW_ICL_MAX_PACKET, .seq = 7,
		.epoch = 0x1111, .model = 123456789,
	}, g;
	uint8_t raw[NNP_ICL_HDR_BYTES + NNP_ICL_MODEL_BYTES];

	(void)state;
	nnp_icl_header_encode(&f, true, raw);
	assert_null(nnp_icl_header_decode(raw, &g));
	assert_int_equal(g.version, NNP_ICL_VERSION_MODEL);
	assert_int_equal(g.model, 0);	/* until its bytes are read */
	assert_int_equal(nnp_icl_model_bytes(&g), NNP_ICL_MODEL_BYTES);
	nnp_icl_model_decode(raw + NNP_ICL_HDR_BYTES, &g);
	assert_int_equal(g.type, f.type);
	assert_int_equal(g.len, f.len);
	assert_int_equal(g.seq, f.seq);
	assert_true(g.epoch == f.epoch && g.model == f.model);
	nnp_icl_header_encode(&f, false, raw);
	assert_null(nnp_icl_header_decode(raw, &g));
	assert_int_equal(nnp_icl_model_bytes(&g), 0);
	assert_true(g.model == 0 && g.epoch == f.epoch);
}

/* Other magic, another version, one byte past the largest packet. */
static void test_refuses_malformed_headers(void **state)
{
	struct nnp_icl_frame f = { .type = NNP_ICL_DATA }, g;
	uint8_t raw[NNP_ICL_HDR_BYTES + NNP_ICL_MODEL_BYTES];
	static const uint8_t versions[] = { 0, 2, 5, 255 };
	unsigned int i;

	(void)state;
	nnp_icl_header_encode(&f, false, raw);
	raw[3] ^= 0x01;
	assert_string_equal(nnp_icl_header_decode(raw, &g), bad_magic);
	raw[3] ^= 0x01;
	for (i = 0; i < sizeof(versions); i++) {
		raw[4] = versions[i];
		assert_string_equal(nnp_icl_header_decode(raw, &g), bad_magic);
	}
	f.len = NNP_FW_ICL_MAX_PACKET + 1;
	nnp_icl_header_encode(&f, true, raw);
	assert_string_equal(nnp_icl_header_decode(raw, &g),
			    "frame longer than the largest packet");
	f.len = 0xffffffffu;
	nnp_icl_header_encode(&f, false, raw);
	assert_string_equal(nnp_icl_header_decode(raw, &g),
			    "frame longer than the largest packet");
}

static void test_hello_bytes_and_match(void **state)
{
	struct nnp_icl_hello h = {
		.chip_id = 0x01020304, .port = 0x0506, .up = 1,
		.features = NNP_ICL_FEAT_MODEL, .want_chip = 0x0a0b0c0d,
		.want_port = 0x0e0f,
	}, g;
	uint8_t raw[NNP_ICL_HELLO_BYTES];
	static const uint8_t head[16] = {
		0x04, 0x03, 0x02, 0x01, 0x06, 0x05, 1, NNP_ICL_FEAT_MODEL,
		0x0d, 0x0c, 0x0b, 0x0a, 0x0f, 0x0e, 0, 0,
	};

	(void)state;
	memset(h.nonce, 0xa5, sizeof(h.nonce));
	nnp_icl_hello_encode(&h, raw);
	assert_int_equal(sizeof(raw), 48);
	assert_memory_equal(raw, head, sizeof(head));
	assert_memory_equal(raw + 16, h.nonce, NNP_ICL_NONCE_LEN);
	raw[14] = raw[15] = 0xff;	/* reserved: not read */
	nnp_icl_hello_decode(raw, &g);
	assert_int_equal(g.chip_id, h.chip_id);
	assert_int_equal(g.port, h.port);
	assert_int_equal(g.up, 1);
	assert_int_equal(g.features, NNP_ICL_FEAT_MODEL);
	assert_int_equal(g.want_chip, h.want_chip);
	assert_int_equal(g.want_port, h.want_port);
	assert_memory_equal(g.nonce, h.nonce, NNP_ICL_NONCE_LEN);
	/* We are chip 0x0a0b0c0d port 0x0e0f, linking to the sender. */
	assert_true(nnp_icl_hello_matches(&g, 0x0a0b0c0d, 0x0e0f, 0x01020304, 0x0506));
	assert_false(nnp_icl_hello_matches(&g, 0x0a0b0c0e, 0x0e0f, 0x01020304, 0x0506));
	assert_false(nnp_icl_hello_matches(&g, 0x0a0b0c0d, 0x0e0e, 0x01020304, 0x0506));
	assert_false(nnp_icl_hello_matches(&g, 0x0a0b0c0d, 0x0e0f, 0x01020305, 0x0506));
	assert_false(nnp_icl_hello_matches(&g, 0x0a0b0c0d, 0x0e0f, 0x01020304, 0x0507));
	/* A port number past 16 bits is not the peer's truncated one. */
	assert_false(nnp_icl_hello_matches(&g, 0x0a0b0c0d, 0x10e0f, 0x01020304, 0x0506));
}

static void test_hello_expects_one_frame(void **state)
{
	struct nnp_icl_frame f = { .type = NNP_ICL_HELLO, .len = NNP_ICL_HELLO_BYTES };
	static const char bad[] = "the peer did not follow the hello protocol";

	(void)state;
	assert_null(nnp_icl_frame_expect(&f, NNP_ICL_HELLO, NNP_ICL_HELLO_BYTES));
	assert_string_equal(nnp_icl_frame_expect(&f, NNP_ICL_AUTH, NNP_ICL_HELLO_BYTES), bad);
	f.len--;
	assert_string_equal(nnp_icl_frame_expect(&f, NNP_ICL_HELLO, NNP_ICL_HELLO_BYTES), bad);
}

static void test_linked_frames(void **state)
{
	struct nnp_icl_frame f = { .len = 0 };
	static const uint8_t unexpected[] = { 0, NNP_ICL_HELLO, NNP_ICL_AUTH, 7, 255 };
	unsigned int i;

	(void)state;
	for (f.type = NNP_ICL_DATA; f.type <= NNP_ICL_LINK_UP; f.type++)
		assert_null(nnp_icl_frame_check_linked(&f));
	f.len = 100;
	f.type = NNP_ICL_DATA;
	assert_null(nnp_icl_frame_check_linked(&f));
	f.type = NNP_ICL_ABORT;
	assert_null(nnp_icl_frame_check_linked(&f));
	f.len = 1;
	f.type = NNP_ICL_LINK_DOWN;
	assert_string_equal(nnp_icl_frame_check_linked(&f), "link state frame with a payload");
	f.type = NNP_ICL_LINK_UP;
	assert_string_equal(nnp_icl_frame_check_linked(&f), "link state frame with a payload");
	for (i = 0; i < sizeof(unexpected); i++) {
		f.type = unexpected[i];
		assert_string_equal(nnp_icl_frame_check_linked(&f), "unexpected frame type");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encodes_headers_byte_exact),
		cmocka_unit_test(test_decodes_what_it_encodes),
		cmocka_unit_test(test_refuses_malformed_headers),
		cmocka_unit_test(test_hello_bytes_and_match),
		cmocka_unit_test(test_hello_expects_one_frame),
		cmocka_unit_test(test_linked_frames),
	};

	return cmocka_run_group_tests_name("fw_icl_frame", tests, NULL, NULL);
}
