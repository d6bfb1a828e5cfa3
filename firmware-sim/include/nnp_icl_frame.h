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
 *
 * Two ends on one host (a unix socket) whose hellos both offer
 * NNP_ICL_FEAT_SHARE then each send SHARE, an empty frame carrying a
 * read-only descriptor of their device memory (a sealed memfd of the size
 * the hello announced), and the link is shared: a collective's chunk goes
 * as LENT (where it lies in the sender's memory, its length and a tag)
 * instead of DATA, the receiver reads it in the sender's memory mapped
 * read-only, and hands its tag back in GIVE_BACK once done with it;
 * RECLAIM asks the receiver to drop the tags it holds unread.
 *
 * Two ends whose hellos both offer NNP_ICL_FEAT_CREDIT count credits: each
 * end answers every DATA and ABORT frame it received with a credit once
 * it no longer holds the packet (taken or dropped), in CREDIT frames
 * carrying how many packets and bytes they free, and a sender keeps at
 * most the receiver's room of packets and bytes uncredited.
 *
 * An end whose peer's hello offers NNP_ICL_FEAT_CHIP sends CHIP_DOWN
 * (empty) when its chip stops (a reset begins, or it dies) and CHIP_UP
 * when it runs again; the link is down while either chip is.
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
/* HELLO features: the sender shares its device memory (mem_shift). */
#define NNP_ICL_FEAT_SHARE	(1u << 1)
/* HELLO features: the sender credits back the packets it received. */
#define NNP_ICL_FEAT_CREDIT	(1u << 2)
/* HELLO features: the sender says when its chip stops and runs again. */
#define NNP_ICL_FEAT_CHIP	(1u << 3)
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
	NNP_ICL_SHARE = 7,	/* empty; the memory's descriptor alongside */
	NNP_ICL_LENT = 8,	/* struct nnp_icl_lent, NNP_ICL_LENT_BYTES */
	NNP_ICL_GIVE_BACK = 9,	/* tags, le32 each */
	NNP_ICL_RECLAIM = 10,	/* tags, le32 each */
	NNP_ICL_CREDIT = 11,	/* struct nnp_icl_credit, NNP_ICL_CREDIT_BYTES */
	NNP_ICL_CHIP_DOWN = 12,	/* empty: the sender's chip stopped */
	NNP_ICL_CHIP_UP = 13,	/* empty: it runs again */
};

/* A LENT frame's payload: le64 offset, le32 length, le32 tag. */
#define NNP_ICL_LENT_BYTES	16
/* A CREDIT frame's payload: le32 packets, le64 bytes. */
#define NNP_ICL_CREDIT_BYTES	12
/* Most tags one GIVE_BACK or RECLAIM carries: a port's packets. */
#define NNP_ICL_TAGS_MAX	1024u
/* Device memory a hello may announce: 1 MiB to 64 GiB, as log2. */
#define NNP_ICL_MEM_SHIFT_MIN	20
#define NNP_ICL_MEM_SHIFT_MAX	36

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
	/* With NNP_ICL_FEAT_SHARE: log2 of the device memory SHARE gives. */
	uint8_t mem_shift;
	uint8_t nonce[NNP_ICL_NONCE_LEN];
};

/* Packets the receiver no longer holds, as a CREDIT frame counts them. */
struct nnp_icl_credit {
	uint32_t packets;
	uint64_t bytes;
};

/* A chunk of the sender's device memory lent, as a LENT frame names it. */
struct nnp_icl_lent {
	uint64_t offset;
	uint32_t len;
	uint32_t tag;
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
/*
 * The bytes of device memory @h offers to share: 0 unless it offers
 * NNP_ICL_FEAT_SHARE with a mem_shift in range.
 */
uint64_t nnp_icl_hello_mem_size(const struct nnp_icl_hello *h);
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
 * After the hello: NULL if @f is a packet (DATA, ABORT), an empty link
 * or chip state frame (LINK_DOWN, LINK_UP, CHIP_DOWN, CHIP_UP) or a
 * CREDIT of its exact length, else why the connection must go.
 */
const char *nnp_icl_frame_check_linked(const struct nnp_icl_frame *f);
/*
 * The same on a shared link, which also takes LENT (of its exact length),
 * GIVE_BACK and RECLAIM (1 to NNP_ICL_TAGS_MAX tags).
 */
const char *nnp_icl_frame_check_shared(const struct nnp_icl_frame *f);

void nnp_icl_lent_encode(const struct nnp_icl_lent *d,
			 uint8_t out[NNP_ICL_LENT_BYTES]);
/*
 * Decode a LENT payload into @d: NULL if the chunk lies wholly within the
 * @mapped bytes of the peer's memory and is a packet's size (1 byte to
 * NNP_FW_ICL_MAX_PACKET), else why the connection must go. Nothing of
 * the peer's memory may be touched before this said NULL.
 */
const char *nnp_icl_lent_decode(const uint8_t in[NNP_ICL_LENT_BYTES],
				uint64_t mapped, struct nnp_icl_lent *d);
void nnp_icl_credit_encode(const struct nnp_icl_credit *c,
			   uint8_t out[NNP_ICL_CREDIT_BYTES]);
/*
 * Decode a CREDIT payload into @c: NULL if it credits 1 packet or more
 * and no more bytes than that many packets can hold, else why the
 * connection must go.
 */
const char *nnp_icl_credit_decode(const uint8_t in[NNP_ICL_CREDIT_BYTES],
				  struct nnp_icl_credit *c);
/* The tags of a GIVE_BACK or RECLAIM payload of @n tags: le32 each. */
void nnp_icl_tags_encode(const uint32_t *tags, size_t n, uint8_t *out);
uint32_t nnp_icl_tag_decode(const uint8_t *in, size_t i);

#endif /* NNP_ICL_FRAME_H */
