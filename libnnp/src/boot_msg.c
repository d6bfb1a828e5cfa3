// SPDX-License-Identifier: MIT
/* The rendezvous's messages, checked and sealed as bytes (boot_msg.h). */
#include <stdlib.h>
#include <string.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "boot_msg.h"

_Static_assert(NNP_BOOT_MAC_BYTES == SHA256_DIGEST_SIZE, "the MAC is HMAC-SHA256");

size_t nnp_boot_in_part_end(size_t got)
{
	if (got < offsetof(struct nnp_boot_in, hdr))
		return offsetof(struct nnp_boot_in, hdr);
	if (got < offsetof(struct nnp_boot_in, hello))
		return offsetof(struct nnp_boot_in, hello);
	return sizeof(struct nnp_boot_in);
}

void nnp_boot_mac(const struct nnp_boot_session *s, const char *label,
		  const void *a, size_t len, const void *b, size_t blen,
		  uint8_t mac[NNP_BOOT_MAC_BYTES])
{
	struct hmac_sha256_ctx m;

	hmac_sha256_set_key(&m, NNP_BOOTSTRAP_SECRET_BYTES, s->secret);
	hmac_sha256_update(&m, strlen(label) + 1, (const uint8_t *)label);
	hmac_sha256_update(&m, sizeof(s->rank_nonce), s->rank_nonce);
	hmac_sha256_update(&m, sizeof(s->root_nonce), s->root_nonce);
	if (len)	/* a root's proof covers no message */
		hmac_sha256_update(&m, len, a);
	if (blen)
		hmac_sha256_update(&m, blen, b);
	hmac_sha256_digest(&m, SHA256_DIGEST_SIZE, mac);
}

bool nnp_boot_mac_equal(const uint8_t *a, const uint8_t *b)
{
	return memeql_sec(a, b, NNP_BOOT_MAC_BYTES);
}

void nnp_boot_prove_root(const struct nnp_boot_session *s,
			 uint8_t mac[NNP_BOOT_MAC_BYTES])
{
	nnp_boot_mac(s, "nnp boot root", NULL, 0, NULL, 0, mac);
}

bool nnp_boot_root_proven(struct nnp_boot_session *s,
			  const struct nnp_boot_proof *p)
{
	uint8_t mac[NNP_BOOT_MAC_BYTES];

	memcpy(s->root_nonce, p->nonce, sizeof(s->root_nonce));
	nnp_boot_prove_root(s, mac);
	return nnp_boot_mac_equal(mac, p->mac);
}

static void hello_mac(const struct nnp_boot_session *s,
		      const struct nnp_boot_hello *h, uint8_t mac[NNP_BOOT_MAC_BYTES])
{
	nnp_boot_mac(s, "nnp boot hello", h, offsetof(struct nnp_boot_hello, mac),
		 NULL, 0, mac);
}

void nnp_boot_seal_hello(const struct nnp_boot_session *s,
			 struct nnp_boot_hello *h)
{
	hello_mac(s, h, h->mac);
}

static void reply_mac(const struct nnp_boot_session *s,
		      const struct nnp_boot_reply *r,
		      const struct nnp_rank_info *table, uint32_t n,
		      uint8_t mac[NNP_BOOT_MAC_BYTES])
{
	nnp_boot_mac(s, "nnp boot reply", r, offsetof(struct nnp_boot_reply, mac),
		 table, n * sizeof(*table), mac);
}

void nnp_boot_seal_reply(const struct nnp_boot_session *s,
			 struct nnp_boot_reply *r,
			 const struct nnp_rank_info *table, uint32_t n)
{
	reply_mac(s, r, table, n, r->mac);
}

bool nnp_boot_reply_sealed(const struct nnp_boot_session *s,
			   const struct nnp_boot_reply *r,
			   const struct nnp_rank_info *table, uint32_t n)
{
	uint8_t mac[NNP_BOOT_MAC_BYTES];

	reply_mac(s, r, table, n, mac);
	return nnp_boot_mac_equal(mac, r->mac);
}

static bool good_open(const struct nnp_boot_in *in)
{
	return !nnp_boot_hdr_check(&in->open_hdr, sizeof(in->open)) &&
	       in->open.version == NNP_BOOT_VERSION &&
	       in->open.kind == NNP_BOOT_JOIN;
}

static bool hello_sealed(const struct nnp_boot_session *s,
			 const struct nnp_boot_hello *h)
{
	uint8_t mac[NNP_BOOT_MAC_BYTES];

	hello_mac(s, h, mac);
	return nnp_boot_mac_equal(mac, h->mac);
}

enum nnp_boot_in_step nnp_boot_in_check(const struct nnp_boot_in *in,
					size_t got,
					const struct nnp_boot_session *s)
{
	switch (got) {
	case offsetof(struct nnp_boot_in, hdr):
		return good_open(in) ? NNP_BOOT_IN_OPENED : NNP_BOOT_IN_STRANGER;
	case offsetof(struct nnp_boot_in, hello):
		return nnp_boot_hdr_check(&in->hdr, sizeof(in->hello)) ?
		       NNP_BOOT_IN_MALFORMED : NNP_BOOT_IN_MORE;
	default:
		return hello_sealed(s, &in->hello) ? NNP_BOOT_IN_HELLO :
						     NNP_BOOT_IN_STRANGER;
	}
}

/* Can @h join this job? Only an accepted hello fixes the job's size. */
static nnp_result_t check_hello(const struct nnp_boot_roster *r,
				const struct nnp_boot_hello *h)
{
	if (h->nranks < 1 || h->nranks > NNP_BOOTSTRAP_MAX_RANKS ||
	    h->rank >= h->nranks)
		return NNP_ERROR_INVALID_ARGUMENT;
	if (r->m && (h->nranks != r->nranks || r->m[h->rank].fd >= 0))
		return NNP_ERROR_INVALID_ARGUMENT;
	return NNP_SUCCESS;
}

nnp_result_t nnp_boot_admit(struct nnp_boot_roster *r,
			    const struct nnp_boot_hello *h, int fd,
			    const struct nnp_boot_session *s)
{
	nnp_result_t st = check_hello(r, h);
	uint32_t i;

	if (st != NNP_SUCCESS)
		return st;
	if (!r->m) {
		r->m = calloc(h->nranks, sizeof(*r->m));
		if (!r->m)
			return NNP_ERROR_OUT_OF_MEMORY;
		r->nranks = h->nranks;
		for (i = 0; i < r->nranks; i++)
			r->m[i].fd = -1;
	}
	r->m[h->rank].fd = fd;
	r->m[h->rank].info = h->info;
	r->m[h->rank].s = *s;
	r->joined++;
	return NNP_SUCCESS;
}

uint32_t nnp_boot_first_missing(const struct nnp_boot_roster *r)
{
	uint32_t i;

	for (i = 0; i < r->nranks && r->m[i].fd >= 0; i++)
		;
	return i;
}

nnp_result_t nnp_boot_hdr_check(const struct nnp_boot_hdr *h, uint32_t len)
{
	return h->magic == NNP_BOOT_MSG_MAGIC && h->len == len ? NNP_SUCCESS :
								 NNP_ERROR_IO;
}

nnp_result_t nnp_boot_reply_status(const struct nnp_boot_reply *r)
{
	switch (r->status) {
	case NNP_SUCCESS:
	case NNP_ERROR_INVALID_ARGUMENT:
	case NNP_ERROR_TIMEOUT:
	case NNP_ERROR_OUT_OF_MEMORY:
		return (nnp_result_t)r->status;
	default:
		/* Not a root of ours: its word must not become the caller's. */
		return NNP_ERROR_IO;
	}
}
