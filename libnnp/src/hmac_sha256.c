// SPDX-License-Identifier: MIT
/* HMAC-SHA256 (hmac_sha256.h), checked against RFC 4231's vectors. */
#include <string.h>

#include "hmac_sha256.h"

static const uint32_t k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned int n)
{
	return x >> n | x << (32 - n);
}

static void sha256_block(struct nnp_sha256 *s, const uint8_t *p)
{
	uint32_t w[64], v[8], t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 64; i++)
		w[i] = w[i - 16] + (ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ w[i - 15] >> 3) +
		       w[i - 7] + (ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ w[i - 2] >> 10);
	memcpy(v, s->h, sizeof(v));
	for (i = 0; i < 64; i++) {
		t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) +
		     ((v[4] & v[5]) ^ (~v[4] & v[6])) + k256[i] + w[i];
		t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) +
		     ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		s->h[i] += v[i];
}

static void sha256_init(struct nnp_sha256 *s)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->bytes = 0;
}

static void sha256_update(struct nnp_sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		size_t at = s->bytes % NNP_SHA256_BLOCK;
		size_t n = NNP_SHA256_BLOCK - at < len ? NNP_SHA256_BLOCK - at : len;

		memcpy(s->block + at, p, n);
		s->bytes += n;
		p += n;
		len -= n;
		if (at + n == NNP_SHA256_BLOCK)
			sha256_block(s, s->block);
	}
}

static void sha256_final(struct nnp_sha256 *s, uint8_t out[NNP_SHA256_BYTES])
{
	uint64_t bits = s->bytes * 8;
	uint8_t pad[NNP_SHA256_BLOCK + 8] = { 0x80 };
	size_t padlen = (NNP_SHA256_BLOCK + 56 - s->bytes % NNP_SHA256_BLOCK) %
			NNP_SHA256_BLOCK;
	int i;

	/* 0x80, zeros to 56 mod 64, then the length in bits, big-endian. */
	if (!padlen)
		padlen = NNP_SHA256_BLOCK;
	for (i = 0; i < 8; i++)
		pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(s, pad, padlen + 8);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
}

void nnp_hmac_init(struct nnp_hmac *m, const void *key, size_t len)
{
	uint8_t k[NNP_SHA256_BLOCK] = { 0 }, pad[NNP_SHA256_BLOCK];
	size_t i;

	if (len > NNP_SHA256_BLOCK) {
		sha256_init(&m->inner);
		sha256_update(&m->inner, key, len);
		sha256_final(&m->inner, k);
	} else {
		memcpy(k, key, len);
	}
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&m->inner);
	sha256_update(&m->inner, pad, sizeof(pad));
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&m->outer);
	sha256_update(&m->outer, pad, sizeof(pad));
}

void nnp_hmac_update(struct nnp_hmac *m, const void *data, size_t len)
{
	sha256_update(&m->inner, data, len);
}

void nnp_hmac_final(struct nnp_hmac *m, uint8_t mac[NNP_SHA256_BYTES])
{
	uint8_t inner[NNP_SHA256_BYTES];

	sha256_final(&m->inner, inner);
	sha256_update(&m->outer, inner, sizeof(inner));
	sha256_final(&m->outer, mac);
}

bool nnp_mac_equal(const uint8_t *a, const uint8_t *b)
{
	uint8_t diff = 0;
	size_t i;

	for (i = 0; i < NNP_SHA256_BYTES; i++)
		diff |= a[i] ^ b[i];
	return !diff;
}
