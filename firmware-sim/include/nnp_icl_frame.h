/* SPDX-License-Identifier: MIT */
/*
 * nnp ICL socket frames: the wire format of an inter-chip link between
 * nnp devices in two QEMU processes (qemu-device/nnp_icl_socket.c, which
 * says how the link uses them). It lives here, free of QEMU, so that the
 * host tests and the fuzzer decode a peer's bytes with the very code the
 * device does.
 *
 * Every frame is a 24-byte little-endian header (magic, version, type,
 * reserved, payload length, sequence, epoch), in version 4 followed by the
 * packet's modeled arrival time (le64), then the payload. Both ends open
 * with HELLO (struct nnp_icl_hello, NNP_ICL_HELLO_BYTES) and AUTH (an
 * HMAC-SHA256, NNP_ICL_MAC_LEN); then come DATA and ABORT (the firmware's
 * packets) and LINK_DOWN / LINK_UP (empty).
 */
#ifndef NNP_ICL_FRAME_H
#define NNP_ICL_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NNP_ICL_MAGIC		0x4c43494eu	/* "NICL" */
#define NNP_ICL_VERSION		3
/* The header and the packet's modeled arrival (le64) after it. */
#define NNP_ICL_VERSION_MODEL	4
/* HELLO features: the sender takes version 4 DATA and ABORT frames. */
#define NNP_ICL_FEAT_MODEL	(1u << 0)
#define NNP_ICL_NONCE_LEN	32
#define NNP_ICL_MAC_LEN		32	/* HMAC-SHA256 */

#define NNP_ICL_HDR_BYTES	24
#define NNP_ICL_MODEL_BYTES	8
#define NNP_ICL_HELLO_BYTES	(16 + NNP_ICL_NONCE_LEN)

enum nnp_icl_frame_type {
	NNP_ICL_HELLO = 1,
	NNP_ICL_DATA = 2,
	NNP_ICL_ABORT = 3,
	NNP_ICL_LINK_DOWN = 4,
	NNP_ICL_LINK_UP = 5,
	NNP_ICL_AUTH = 6,
};

/* A frame's header, in host order. */
struct nnp_icl_frame {
	uint8_t version;
	uint8_t type;
	uint32_t len;		/* payload bytes that follow */
	uint32_t seq;		/* DATA and ABORT: the packet's sequence */
	uint64_t epoch;		/* DATA and ABORT: its communicator's epoch */
	uint64_t model;		/* version 4: the modeled arrival; else 0 */
};

/* What a HELLO carries, in host order. */
struct nnp_icl_hello {
	uint32_t chip_id;
	uint16_t port;
	uint8_t up;		/* the sender's end has not been taken down */
	uint8_t features;	/* NNP_ICL_FEAT_*; 0 from version 3 ends */
	uint32_t want_chip;	/* the chip and port the sender links to */
	uint16_t want_port;
	uint8_t nonce[NNP_ICL_NONCE_LEN];
};

/*
 * The header of @f into @out: version 4 (and then @f->model into
 * @model_out) if @with_model, else 3. Returns the bytes to send before
 * the payload: NNP_ICL_HDR_BYTES, or that plus NNP_ICL_MODEL_BYTES.
 */
size_t nnp_icl_header_encode(const struct nnp_icl_frame *f, bool with_model,
			     uint8_t out[NNP_ICL_HDR_BYTES + NNP_ICL_MODEL_BYTES]);
/*
 * Decode a received header into @f (model 0): NULL if it may be followed,
 * else why the connection must go. @f->version then says whether
 * NNP_ICL_MODEL_BYTES follow (nnp_icl_model_bytes()), and @f->len, within
 * NNP_FW_ICL_MAX_PACKET, how much payload.
 */
const char *nnp_icl_header_decode(const uint8_t in[NNP_ICL_HDR_BYTES],
				  struct nnp_icl_frame *f);
size_t nnp_icl_model_bytes(const struct nnp_icl_frame *f);
void nnp_icl_model_decode(const uint8_t in[NNP_ICL_MODEL_BYTES],
			  struct nnp_icl_frame *f);

void nnp_icl_hello_encode(const struct nnp_icl_hello *h,
			  uint8_t out[NNP_ICL_HELLO_BYTES]);
void nnp_icl_hello_decode(const uint8_t in[NNP_ICL_HELLO_BYTES],
			  struct nnp_icl_hello *h);
/*
 * Is @peer the chip and port (@want_chip, @want_port) we link to, and
 * does it link to our @chip_id and @port?
 */
bool nnp_icl_hello_matches(const struct nnp_icl_hello *peer, uint32_t chip_id,
			   unsigned int port, uint32_t want_chip,
			   unsigned int want_port);

/*
 * During the hello, the one frame expected: NULL if @f is of @type with a
 * payload of @len, else what is wrong.
 */
const char *nnp_icl_frame_expect(const struct nnp_icl_frame *f, uint8_t type,
				 size_t len);
/*
 * After the hello: NULL if @f is a packet (DATA, ABORT) or an empty link
 * state frame (LINK_DOWN, LINK_UP), else why the connection must go.
 */
const char *nnp_icl_frame_check_linked(const struct nnp_icl_frame *f);

#endif /* NNP_ICL_FRAME_H */
