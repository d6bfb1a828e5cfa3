// SPDX-License-Identifier: MIT
/*
 * ICL socket frames, encoded and decoded byte by byte (nnp_icl_frame.h):
 * everything a peer process sends is checked here before the link acts
 * on it, and no length it names is trusted past NNP_FW_ICL_MAX_PACKET.
 */
#include <string.h>

#include "fw_le.h"
#include "nnp_fw.h"
#include "nnp_icl_frame.h"

/* Offsets in the header and in a HELLO's payload. */
enum {
	HDR_MAGIC = 0, HDR_VERSION = 4, HDR_TYPE = 5, HDR_LEN = 8,
	HDR_SEQ = 12, HDR_EPOCH = 16,
	HELLO_CHIP = 0, HELLO_PORT = 4, HELLO_UP = 6, HELLO_FEATURES = 7,
	HELLO_WANT_CHIP = 8, HELLO_WANT_PORT = 12, HELLO_MEM_SHIFT = 14,
	HELLO_NONCE = 16,
	LENT_OFFSET = 0, LENT_LEN = 8, LENT_TAG = 12,
	CREDIT_PACKETS = 0, CREDIT_BYTES = 4,
};

size_t nnp_icl_header_encode(const struct nnp_icl_frame *f, bool with_model,
			     uint8_t out[NNP_ICL_HDR_BYTES + NNP_ICL_MODEL_BYTES])
{
	memset(out, 0, NNP_ICL_HDR_BYTES);
	fw_store_le32(out + HDR_MAGIC, NNP_ICL_MAGIC);
	out[HDR_VERSION] = with_model ? NNP_ICL_VERSION_MODEL : NNP_ICL_VERSION;
	out[HDR_TYPE] = f->type;
	fw_store_le32(out + HDR_LEN, f->len);
	fw_store_le32(out + HDR_SEQ, f->seq);
	fw_store_le64(out + HDR_EPOCH, f->epoch);
	if (!with_model)
		return NNP_ICL_HDR_BYTES;
	fw_store_le64(out + NNP_ICL_HDR_BYTES, f->model);
	return NNP_ICL_HDR_BYTES + NNP_ICL_MODEL_BYTES;
}

const char *nnp_icl_header_decode(const uint8_t in[NNP_ICL_HDR_BYTES],
				  struct nnp_icl_frame *f)
{
	*f = (struct nnp_icl_frame){
		.version = in[HDR_VERSION],
		.type = in[HDR_TYPE],
		.len = fw_load_le32(in + HDR_LEN),
		.seq = fw_load_le32(in + HDR_SEQ),
		.epoch = fw_load_le64(in + HDR_EPOCH),
	};
	if (fw_load_le32(in + HDR_MAGIC) != NNP_ICL_MAGIC ||
	    (f->version != NNP_ICL_VERSION && f->version != NNP_ICL_VERSION_MODEL))
		return "not an nnp ICL frame (magic or version)";
	if (f->len > NNP_FW_ICL_MAX_PACKET)
		return "frame longer than the largest packet";
	return NULL;
}

size_t nnp_icl_model_bytes(const struct nnp_icl_frame *f)
{
	return f->version == NNP_ICL_VERSION_MODEL ? NNP_ICL_MODEL_BYTES : 0;
}

void nnp_icl_model_decode(const uint8_t in[NNP_ICL_MODEL_BYTES],
			  struct nnp_icl_frame *f)
{
	f->model = fw_load_le64(in);
}

void nnp_icl_hello_encode(const struct nnp_icl_hello *h,
			  uint8_t out[NNP_ICL_HELLO_BYTES])
{
	memset(out, 0, NNP_ICL_HELLO_BYTES);
	fw_store_le32(out + HELLO_CHIP, h->chip_id);
	fw_store_le16(out + HELLO_PORT, h->port);
	out[HELLO_UP] = h->up;
	out[HELLO_FEATURES] = h->features;
	fw_store_le32(out + HELLO_WANT_CHIP, h->want_chip);
	fw_store_le16(out + HELLO_WANT_PORT, h->want_port);
	out[HELLO_MEM_SHIFT] = h->mem_shift;
	memcpy(out + HELLO_NONCE, h->nonce, NNP_ICL_NONCE_LEN);
}

void nnp_icl_hello_decode(const uint8_t in[NNP_ICL_HELLO_BYTES],
			  struct nnp_icl_hello *h)
{
	h->chip_id = fw_load_le32(in + HELLO_CHIP);
	h->port = fw_load_le16(in + HELLO_PORT);
	h->up = in[HELLO_UP];
	h->features = in[HELLO_FEATURES];
	h->want_chip = fw_load_le32(in + HELLO_WANT_CHIP);
	h->want_port = fw_load_le16(in + HELLO_WANT_PORT);
	h->mem_shift = in[HELLO_MEM_SHIFT];
	memcpy(h->nonce, in + HELLO_NONCE, NNP_ICL_NONCE_LEN);
}

uint64_t nnp_icl_hello_mem_size(const struct nnp_icl_hello *h)
{
	if (!(h->features & NNP_ICL_FEAT_SHARE) ||
	    h->mem_shift < NNP_ICL_MEM_SHIFT_MIN ||
	    h->mem_shift > NNP_ICL_MEM_SHIFT_MAX)
		return 0;
	return 1ull << h->mem_shift;
}

bool nnp_icl_hello_matches(const struct nnp_icl_hello *peer, uint32_t chip_id,
			   unsigned int port, uint32_t want_chip,
			   unsigned int want_port)
{
	return peer->chip_id == want_chip && peer->port == want_port &&
	       peer->want_chip == chip_id && peer->want_port == port;
}

const char *nnp_icl_frame_expect(const struct nnp_icl_frame *f, uint8_t type,
				 size_t len)
{
	if (f->type != type || f->len != len)
		return "the peer did not follow the hello protocol";
	return NULL;
}

const char *nnp_icl_frame_check_linked(const struct nnp_icl_frame *f)
{
	switch (f->type) {
	case NNP_ICL_DATA:
	case NNP_ICL_ABORT:
		return NULL;
	case NNP_ICL_LINK_DOWN:
	case NNP_ICL_LINK_UP:
	case NNP_ICL_CHIP_DOWN:
	case NNP_ICL_CHIP_UP:
		return f->len ? "link state frame with a payload" : NULL;
	case NNP_ICL_CREDIT:
		return f->len != NNP_ICL_CREDIT_BYTES ?
		       "CREDIT frame of a wrong length" : NULL;
	default:
		return "unexpected frame type";
	}
}

const char *nnp_icl_frame_check_shared(const struct nnp_icl_frame *f)
{
	switch (f->type) {
	case NNP_ICL_LENT:
		return f->len != NNP_ICL_LENT_BYTES ? "LENT frame of a wrong length"
						    : NULL;
	case NNP_ICL_GIVE_BACK:
	case NNP_ICL_RECLAIM:
		return !f->len || f->len % 4 || f->len / 4 > NNP_ICL_TAGS_MAX ?
		       "tag list of a wrong length" : NULL;
	default:
		return nnp_icl_frame_check_linked(f);
	}
}

void nnp_icl_lent_encode(const struct nnp_icl_lent *d,
			 uint8_t out[NNP_ICL_LENT_BYTES])
{
	fw_store_le64(out + LENT_OFFSET, d->offset);
	fw_store_le32(out + LENT_LEN, d->len);
	fw_store_le32(out + LENT_TAG, d->tag);
}

const char *nnp_icl_lent_decode(const uint8_t in[NNP_ICL_LENT_BYTES],
				uint64_t mapped, struct nnp_icl_lent *d)
{
	d->offset = fw_load_le64(in + LENT_OFFSET);
	d->len = fw_load_le32(in + LENT_LEN);
	d->tag = fw_load_le32(in + LENT_TAG);
	if (!d->len || d->len > NNP_FW_ICL_MAX_PACKET)
		return "lent chunk of no or too many bytes";
	/* Written so that no sum can wrap: offset + len past 2^64 too. */
	if (d->offset > mapped || d->len > mapped - d->offset)
		return "lent chunk outside the peer's memory";
	return NULL;
}

void nnp_icl_credit_encode(const struct nnp_icl_credit *c,
			   uint8_t out[NNP_ICL_CREDIT_BYTES])
{
	fw_store_le32(out + CREDIT_PACKETS, c->packets);
	fw_store_le64(out + CREDIT_BYTES, c->bytes);
}

const char *nnp_icl_credit_decode(const uint8_t in[NNP_ICL_CREDIT_BYTES],
				  struct nnp_icl_credit *c)
{
	c->packets = fw_load_le32(in + CREDIT_PACKETS);
	c->bytes = fw_load_le64(in + CREDIT_BYTES);
	if (!c->packets)
		return "credit of no packets";
	if (c->bytes > (uint64_t)c->packets * NNP_FW_ICL_MAX_PACKET)
		return "credit of more bytes than its packets hold";
	return NULL;
}

void nnp_icl_tags_encode(const uint32_t *tags, size_t n, uint8_t *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		fw_store_le32(out + 4 * i, tags[i]);
}

uint32_t nnp_icl_tag_decode(const uint8_t *in, size_t i)
{
	return fw_load_le32(in + 4 * i);
}
