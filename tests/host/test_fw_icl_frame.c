// SPDX-License-Identifier: MIT
/*
 * ICL socket frames (nnp_icl_frame.h): headers and hellos encoded to their
 * exact bytes, decoded back, and every malformed frame a peer may send
 * refused with its reason, as the QEMU device's link drops it. Shared
 * links: the memory a hello announces, LENT frames' bytes and their
 * bounds against the peer's memory, tag lists.
 *
 * In detail (docs/testing.md has the summary):
 * ICL socket frames (`firmware-sim/src/transport/fw_icl_frame.c`, what
 * `qemu-device/nnp_icl_socket.c` reads from a peer QEMU): a DATA header
 * encoded to its exact 24 bytes as version 3, and as version 4 with the
 * modeled arrival's 8 bytes after it; decoded back field by field (the
 * model only once its bytes are read); a wrong magic, versions 0, 2, 5 and
 * 255, a length of 1 MiB + 1 and of 2^32 - 1 each refused with its reason;
 * a HELLO encoded to its exact 48 bytes (reserved bytes not read back),
 * matched only by the chip and port it names and expects, each off by one
 * refused; the hello's one expected frame (type and length); after the
 * hello, DATA and ABORT of any length and empty LINK_DOWN/LINK_UP and
 * CHIP_DOWN/CHIP_UP taken, a link or chip state frame with a payload and
 * types 0, HELLO, AUTH, 7, 14 and 255 refused; shared links: the hello's byte 14 as log2 of the memory offered
 * (26: 64 MiB; 20 and 36 the bounds, 19, 37, 255 and no NNP_ICL_FEAT_SHARE:
 * nothing), a LENT payload encoded to its exact 16 bytes and back, and
 * checked against the peer's mapped memory: the last byte in taken, one
 * byte past, an offset at or past the end, offset + length wrapping past
 * 2^64 (also against 2^64 - 1 bytes), a length of 0, 1 MiB + 1 and 2^32 - 1
 * refused with their reasons; on a shared link LENT only of exactly 16
 * bytes (15, 17, 0 refused), GIVE_BACK and RECLAIM of 1 to 1024 whole tags
 * (0, 2, 6 and 4100 bytes refused), SHARE and type 12 refused, none of the
 * three on a link that shares nothing; a tag list's exact bytes; CREDIT:
 * its exact 12 bytes (le32 packets, le64 bytes) and back, 1 packet of 0 or
 * 1 MiB and 2^32 - 1 packets of their most taken, no packets or more bytes
 * than the packets hold refused with their reasons, taken on any link only
 * at exactly 12 bytes (11, 13 refused)
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
	raw[15] = 0xff;	/* reserved: not read */
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

/* Byte 14 is log2 of the memory shared, read only with the feature. */
static void test_hello_announces_memory(void **state)
{
	struct nnp_icl_hello h = {
		.features = NNP_ICL_FEAT_MODEL | NNP_ICL_FEAT_SHARE,
		.mem_shift = 26,
	}, g;
	uint8_t raw[NNP_ICL_HELLO_BYTES];

	(void)state;
	nnp_icl_hello_encode(&h, raw);
	assert_int_equal(raw[7], 3);
	assert_int_equal(raw[14], 26);
	assert_int_equal(raw[15], 0);
	nnp_icl_hello_decode(raw, &g);
	assert_int_equal(g.mem_shift, 26);
	assert_int_equal(nnp_icl_hello_mem_size(&g), 64ull << 20);
	g.mem_shift = 20;
	assert_int_equal(nnp_icl_hello_mem_size(&g), 1ull << 20);
	g.mem_shift = 36;
	assert_int_equal(nnp_icl_hello_mem_size(&g), 64ull << 30);
	/* Out of the device's range, or not offered: nothing shared. */
	g.mem_shift = 19;
	assert_int_equal(nnp_icl_hello_mem_size(&g), 0);
	g.mem_shift = 37;
	assert_int_equal(nnp_icl_hello_mem_size(&g), 0);
	g.mem_shift = 255;
	assert_int_equal(nnp_icl_hello_mem_size(&g), 0);
	g.mem_shift = 26;
	g.features = NNP_ICL_FEAT_MODEL;
	assert_int_equal(nnp_icl_hello_mem_size(&g), 0);
}

/* A LENT frame's payload, byte by byte, and back. */
static void test_lent_bytes(void **state)
{
	static const uint8_t want[NNP_ICL_LENT_BYTES] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x00, 0x00, 0x01, 0x00, 0xd4, 0xc3, 0xb2, 0xa1,
	};
	struct nnp_icl_lent d = {
		.offset = 0x0102030405060708ull, .len = 0x10000, .tag = 0xa1b2c3d4,
	}, g;
	uint8_t raw[NNP_ICL_LENT_BYTES];

	(void)state;
	nnp_icl_lent_encode(&d, raw);
	assert_memory_equal(raw, want, sizeof(want));
	assert_null(nnp_icl_lent_decode(raw, 1ull << 60, &g));
	assert_true(g.offset == d.offset);
	assert_int_equal(g.len, d.len);
	assert_int_equal(g.tag, d.tag);
}

/* Decode @offset, @len against @mapped bytes: the codec's verdict. */
static const char *lent_verdict(uint64_t offset, uint32_t len, uint64_t mapped)
{
	struct nnp_icl_lent d = { .offset = offset, .len = len, .tag = 1 }, g;
	uint8_t raw[NNP_ICL_LENT_BYTES];

	nnp_icl_lent_encode(&d, raw);
	return nnp_icl_lent_decode(raw, mapped, &g);
}

/*
 * Every chunk a peer names must lie within the memory it mapped to us:
 * the last byte in, one byte past refused, offsets past the end, sums that
 * wrap past 2^64, empty and oversized chunks.
 */
static void test_lent_bounds(void **state)
{
	static const char outside[] = "lent chunk outside the peer's memory";
	static const char size[] = "lent chunk of no or too many bytes";
	const uint64_t m = 64ull << 20;

	(void)state;
	assert_null(lent_verdict(0, 1, m));
	assert_null(lent_verdict(m - 1, 1, m));
	assert_null(lent_verdict(m - NNP_FW_ICL_MAX_PACKET, NNP_FW_ICL_MAX_PACKET, m));
	assert_string_equal(lent_verdict(m - 15, 16, m), outside);
	assert_string_equal(lent_verdict(m, 1, m), outside);
	assert_string_equal(lent_verdict(m + 4096, 4096, m), outside);
	assert_string_equal(lent_verdict(UINT64_MAX, 1, m), outside);
	/* offset + len wraps to a small number: still outside. */
	assert_string_equal(lent_verdict(UINT64_MAX - 7, 16, m), outside);
	assert_string_equal(lent_verdict(UINT64_MAX - 7, 16, UINT64_MAX), outside);
	assert_string_equal(lent_verdict(0, 1, 0), outside);
	assert_string_equal(lent_verdict(0, 0, m), size);
	assert_string_equal(lent_verdict(0, NNP_FW_ICL_MAX_PACKET + 1, m), size);
	assert_string_equal(lent_verdict(0, UINT32_MAX, m), size);
}

/*
 * What a shared link takes after the hello: the linked frames, LENT of its
 * exact length (a truncated or padded one refused), tag lists of 1 to
 * 1024 whole tags; SHARE belongs to the hello. A link that shares nothing
 * takes none of them.
 */
static void test_shared_frames(void **state)
{
	static const char wrong_lent[] = "LENT frame of a wrong length";
	static const char wrong_tags[] = "tag list of a wrong length";
	static const uint32_t lens[] = { 0, 2, 6, 4 * NNP_ICL_TAGS_MAX + 4 };
	struct nnp_icl_frame f = { .type = NNP_ICL_LENT, .len = NNP_ICL_LENT_BYTES };
	uint32_t tags[3] = { 0, 0xdeadbeef, 0x400 | 5 };
	uint8_t raw[12];
	unsigned int i;

	(void)state;
	assert_null(nnp_icl_frame_check_shared(&f));
	assert_string_equal(nnp_icl_frame_check_linked(&f), "unexpected frame type");
	f.len = NNP_ICL_LENT_BYTES - 1;
	assert_string_equal(nnp_icl_frame_check_shared(&f), wrong_lent);
	f.len = NNP_ICL_LENT_BYTES + 1;
	assert_string_equal(nnp_icl_frame_check_shared(&f), wrong_lent);
	f.len = 0;
	assert_string_equal(nnp_icl_frame_check_shared(&f), wrong_lent);
	for (f.type = NNP_ICL_GIVE_BACK; f.type <= NNP_ICL_RECLAIM; f.type++) {
		f.len = 4;
		assert_null(nnp_icl_frame_check_shared(&f));
		f.len = 4 * NNP_ICL_TAGS_MAX;
		assert_null(nnp_icl_frame_check_shared(&f));
		assert_string_equal(nnp_icl_frame_check_linked(&f), "unexpected frame type");
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			f.len = lens[i];
			assert_string_equal(nnp_icl_frame_check_shared(&f), wrong_tags);
		}
	}
	f.len = 0;
	for (f.type = NNP_ICL_DATA; f.type <= NNP_ICL_LINK_UP; f.type++)
		assert_null(nnp_icl_frame_check_shared(&f));
	f.len = 1;
	f.type = NNP_ICL_LINK_UP;
	assert_string_equal(nnp_icl_frame_check_shared(&f), "link state frame with a payload");
	f.len = 0;
	f.type = NNP_ICL_SHARE;
	assert_string_equal(nnp_icl_frame_check_shared(&f), "unexpected frame type");
	f.type = NNP_ICL_CHIP_UP + 1;
	assert_string_equal(nnp_icl_frame_check_shared(&f), "unexpected frame type");
	/* A tag list: le32 each, in order. */
	nnp_icl_tags_encode(tags, 3, raw);
	assert_memory_equal(raw, ((const uint8_t[]){ 0, 0, 0, 0, 0xef, 0xbe, 0xad, 0xde,
						     5, 4, 0, 0 }), 12);
	for (i = 0; i < 3; i++)
		assert_int_equal(nnp_icl_tag_decode(raw, i), tags[i]);
}

/* Decode a CREDIT of @packets and @bytes: the codec's verdict. */
static const char *credit_verdict(uint32_t packets, uint64_t bytes)
{
	struct nnp_icl_credit c = { .packets = packets, .bytes = bytes }, g;
	uint8_t raw[NNP_ICL_CREDIT_BYTES];

	nnp_icl_credit_encode(&c, raw);
	return nnp_icl_credit_decode(raw, &g);
}

/*
 * CREDIT, on any link after the hello: its exact bytes, and no credit
 * of no packets or of more bytes than its packets can hold; a truncated
 * or padded frame refused.
 */
static void test_credit_frames(void **state)
{
	static const uint8_t want[NNP_ICL_CREDIT_BYTES] = {
		0x04, 0x03, 0x02, 0x01,
		0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	static const char more[] = "credit of more bytes than its packets hold";
	struct nnp_icl_credit c = { .packets = 0x01020304, .bytes = 4u << 20 }, g;
	struct nnp_icl_frame f = { .type = NNP_ICL_CREDIT, .len = NNP_ICL_CREDIT_BYTES };
	uint8_t raw[NNP_ICL_CREDIT_BYTES];

	(void)state;
	nnp_icl_credit_encode(&c, raw);
	assert_memory_equal(raw, want, sizeof(want));
	assert_null(nnp_icl_credit_decode(raw, &g));
	assert_int_equal(g.packets, c.packets);
	assert_true(g.bytes == c.bytes);
	assert_null(credit_verdict(1, 0));
	assert_null(credit_verdict(1, NNP_FW_ICL_MAX_PACKET));
	assert_null(credit_verdict(UINT32_MAX, (uint64_t)UINT32_MAX * NNP_FW_ICL_MAX_PACKET));
	assert_string_equal(credit_verdict(0, 0), "credit of no packets");
	assert_string_equal(credit_verdict(1, NNP_FW_ICL_MAX_PACKET + 1), more);
	assert_string_equal(credit_verdict(2, UINT64_MAX), more);
	assert_null(nnp_icl_frame_check_linked(&f));
	assert_null(nnp_icl_frame_check_shared(&f));
	f.len = NNP_ICL_CREDIT_BYTES - 1;
	assert_string_equal(nnp_icl_frame_check_linked(&f), "CREDIT frame of a wrong length");
	f.len = NNP_ICL_CREDIT_BYTES + 1;
	assert_string_equal(nnp_icl_frame_check_shared(&f), "CREDIT frame of a wrong length");
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
	/* A chip's state: empty, as the link's. */
	for (f.type = NNP_ICL_CHIP_DOWN; f.type <= NNP_ICL_CHIP_UP; f.type++) {
		f.len = 0;
		assert_null(nnp_icl_frame_check_linked(&f));
		assert_null(nnp_icl_frame_check_shared(&f));
		f.len = 1;
		assert_string_equal(nnp_icl_frame_check_linked(&f),
				    "link state frame with a payload");
	}
	f.type = NNP_ICL_CHIP_UP + 1;
	f.len = 0;
	assert_string_equal(nnp_icl_frame_check_linked(&f), "unexpected frame type");
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
		cmocka_unit_test(test_hello_announces_memory),
		cmocka_unit_test(test_lent_bytes),
		cmocka_unit_test(test_lent_bounds),
		cmocka_unit_test(test_shared_frames),
		cmocka_unit_test(test_credit_frames),
	};

	return cmocka_run_group_tests_name("fw_icl_frame", tests, NULL, NULL);
}
