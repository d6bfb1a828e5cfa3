/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous's messages as bytes (bootstrap.h has the wire format):
 * what the root reads from a connection until it is a rank of the job,
 * what a rank reads from the root, and the MACs by which each proves the
 * other holds the job's secret. Checked here, without sockets, so that
 * the fuzzer reads a stranger's bytes with the code the root does.
 */
#ifndef NNP_BOOT_MSG_H
#define NNP_BOOT_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"

/* What a rank sends, in order; read as bytes, each part checked first. */
struct nnp_boot_in {
	struct nnp_boot_hdr open_hdr;
	struct nnp_boot_open open;
	struct nnp_boot_hdr hdr;
	struct nnp_boot_hello hello;
};

_Static_assert(sizeof(struct nnp_boot_in) == 2 * sizeof(struct nnp_boot_hdr) +
	       sizeof(struct nnp_boot_open) + sizeof(struct nnp_boot_hello),
	       "no padding in what is read");
_Static_assert(sizeof(struct nnp_boot_hello) == offsetof(struct nnp_boot_hello, mac) +
	       NNP_BOOT_MAC_BYTES, "a hello's MAC covers all before it");
_Static_assert(sizeof(struct nnp_boot_reply) == offsetof(struct nnp_boot_reply, mac) +
	       NNP_BOOT_MAC_BYTES, "a reply's MAC covers all before it");

/* One rank's connection to the root: the job's secret and both nonces. */
struct nnp_boot_session {
	const uint8_t *secret;	/* NNP_BOOTSTRAP_SECRET_BYTES */
	uint8_t rank_nonce[NNP_BOOT_NONCE_BYTES];
	uint8_t root_nonce[NNP_BOOT_NONCE_BYTES];
};

/*
 * HMAC(secret, @label and its NUL, both nonces, @len bytes at @a, @blen
 * at @b): the label keeps a MAC made for one message from passing for
 * another's, the nonces from passing in another connection.
 */
void nnp_boot_mac(const struct nnp_boot_session *s, const char *label,
		  const void *a, size_t len, const void *b, size_t blen,
		  uint8_t mac[NNP_BOOT_MAC_BYTES]);
/* In time that does not depend on where two MACs differ. */
bool nnp_boot_mac_equal(const uint8_t *a, const uint8_t *b);

/* Where the part of struct nnp_boot_in that holds byte @got ends. */
size_t nnp_boot_in_part_end(size_t got);

enum nnp_boot_in_step {
	NNP_BOOT_IN_MORE,	/* the part is good: read on */
	NNP_BOOT_IN_OPENED,	/* a good open: prove the secret, read on */
	NNP_BOOT_IN_STRANGER,	/* not of the job: drop it unanswered */
	NNP_BOOT_IN_MALFORMED,	/* not a hello message: refuse it */
	NNP_BOOT_IN_HELLO,	/* whole and sealed: admit it, or refuse it */
};

/*
 * @got bytes of @in are in, a whole part: what the root does next. Past
 * NNP_BOOT_IN_OPENED, @s holds the open's nonce and the root's.
 */
enum nnp_boot_in_step nnp_boot_in_check(const struct nnp_boot_in *in,
					size_t got,
					const struct nnp_boot_session *s);

/* The root's proof that it holds @s's secret, for @s's nonces. */
void nnp_boot_prove_root(const struct nnp_boot_session *s,
			 uint8_t mac[NNP_BOOT_MAC_BYTES]);
/* Take @p's nonce into @s: is @p the proof of a root with @s's secret? */
bool nnp_boot_root_proven(struct nnp_boot_session *s,
			  const struct nnp_boot_proof *p);
void nnp_boot_seal_hello(const struct nnp_boot_session *s,
			 struct nnp_boot_hello *h);
/* Seal @r, and the @n entries of @table after it (none unless success). */
void nnp_boot_seal_reply(const struct nnp_boot_session *s,
			 struct nnp_boot_reply *r,
			 const struct nnp_rank_info *table, uint32_t n);
bool nnp_boot_reply_sealed(const struct nnp_boot_session *s,
			   const struct nnp_boot_reply *r,
			   const struct nnp_rank_info *table, uint32_t n);

/* The ranks in so far, by rank; none before the first accepted hello. */
struct nnp_boot_member {
	int fd;			/* -1 until the rank is in */
	struct nnp_rank_info info;
	struct nnp_boot_session s;	/* its answer is sealed for it */
};

struct nnp_boot_roster {
	struct nnp_boot_member *m;
	uint32_t nranks, joined;
};

/*
 * Make @h's sender, on @fd in session @s, its rank: NNP_SUCCESS, or why not
 * (NNP_ERROR_INVALID_ARGUMENT: another job size, a rank out of it or
 * taken; NNP_ERROR_OUT_OF_MEMORY). The first accepted hello fixes the
 * job's size.
 */
nnp_result_t nnp_boot_admit(struct nnp_boot_roster *r,
			    const struct nnp_boot_hello *h, int fd,
			    const struct nnp_boot_session *s);
/* The first rank that never joined (nranks if all did). */
uint32_t nnp_boot_first_missing(const struct nnp_boot_roster *r);

/* Is @h the header of a message of @len bytes? NNP_ERROR_IO if not. */
nnp_result_t nnp_boot_hdr_check(const struct nnp_boot_hdr *h, uint32_t len);
/*
 * The outcome a root's reply tells: one the root sends (success, timeout,
 * refused, out of memory), else NNP_ERROR_IO. Only a sealed reply's counts.
 */
nnp_result_t nnp_boot_reply_status(const struct nnp_boot_reply *r);

#endif /* NNP_BOOT_MSG_H */
