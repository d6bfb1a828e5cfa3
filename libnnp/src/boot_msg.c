// SPDX-License-Identifier: MIT
/* The rendezvous's messages, checked as bytes (boot_msg.h). */
#include <stdbool.h>
#include <stdlib.h>

#include "boot_msg.h"

size_t nnp_boot_in_part_end(size_t got)
{
	if (got < offsetof(struct nnp_boot_in, hdr))
		return offsetof(struct nnp_boot_in, hdr);
	if (got < offsetof(struct nnp_boot_in, hello))
		return offsetof(struct nnp_boot_in, hello);
	return sizeof(struct nnp_boot_in);
}

/* In constant time, so that the answer's timing does not tell how close. */
static bool same_secret(const uint8_t *a, const uint8_t *b)
{
	uint8_t diff = 0;
	size_t i;

	for (i = 0; i < NNP_BOOTSTRAP_SECRET_BYTES; i++)
		diff |= a[i] ^ b[i];
	return !diff;
}

enum nnp_boot_in_step nnp_boot_in_check(const struct nnp_boot_in *in,
					size_t got, const uint8_t *secret)
{
	switch (got) {
	case offsetof(struct nnp_boot_in, hdr):
		return same_secret(in->secret, secret) ? NNP_BOOT_IN_MORE :
							 NNP_BOOT_IN_STRANGER;
	case offsetof(struct nnp_boot_in, hello):
		return nnp_boot_hdr_check(&in->hdr, sizeof(in->hello)) ?
		       NNP_BOOT_IN_MALFORMED : NNP_BOOT_IN_MORE;
	default:
		return NNP_BOOT_IN_HELLO;
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
			    const struct nnp_boot_hello *h, int fd)
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
