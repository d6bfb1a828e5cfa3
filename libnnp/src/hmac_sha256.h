/* SPDX-License-Identifier: MIT */
/*
 * HMAC-SHA256 (RFC 2104, FIPS 180-4), the MAC the rendezvous proves the
 * job's secret with: the same one the ICL socket hello uses, written here
 * because libnnp links no crypto library (QEMU's is not ours to link).
 */
#ifndef NNP_HMAC_SHA256_H
#define NNP_HMAC_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NNP_SHA256_BYTES	32
#define NNP_SHA256_BLOCK	64

struct nnp_sha256 {
	uint32_t h[8];
	uint64_t bytes;		/* hashed so far */
	uint8_t block[NNP_SHA256_BLOCK];	/* bytes % 64 of them pending */
};

struct nnp_hmac {
	struct nnp_sha256 inner, outer;
};

/* Start a MAC under @key (any length; a longer one than a block is hashed). */
void nnp_hmac_init(struct nnp_hmac *m, const void *key, size_t len);
void nnp_hmac_update(struct nnp_hmac *m, const void *data, size_t len);
void nnp_hmac_final(struct nnp_hmac *m, uint8_t mac[NNP_SHA256_BYTES]);

/* Compare two MACs in constant time: the timing tells nothing of either. */
bool nnp_mac_equal(const uint8_t *a, const uint8_t *b);

#endif /* NNP_HMAC_SHA256_H */
