/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous's messages as bytes (bootstrap.h has the wire format):
 * what the root reads from a connection until it is a rank of the job,
 * and what a rank reads from the root. Checked here, without sockets, so
 * that the fuzzer reads a stranger's bytes with the code the root does.
 */
#ifndef NNP_BOOT_MSG_H
#define NNP_BOOT_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"

/* What a rank sends, in order; read as bytes, each part checked first. */
struct nnp_boot_in {
	uint8_t secret[NNP_BOOTSTRAP_SECRET_BYTES];
	struct nnp_boot_hdr hdr;
	struct nnp_boot_hello hello;
};

_Static_assert(sizeof(struct nnp_boot_in) == NNP_BOOTSTRAP_SECRET_BYTES +
	       sizeof(struct nnp_boot_hdr) + sizeof(struct nnp_boot_hello),
	       "no padding in what is read");

/* Where the part of struct nnp_boot_in that holds byte @got ends. */
size_t nnp_boot_in_part_end(size_t got);

enum nnp_boot_in_step {
	NNP_BOOT_IN_MORE,	/* the part is good: read on */
	NNP_BOOT_IN_STRANGER,	/* not the job's secret: drop it unanswered */
	NNP_BOOT_IN_MALFORMED,	/* not a hello message: refuse it */
	NNP_BOOT_IN_HELLO,	/* whole: admit it, or refuse it */
};

/* @got bytes of @in are in, a whole part: what the root does next. */
enum nnp_boot_in_step nnp_boot_in_check(const struct nnp_boot_in *in,
					size_t got, const uint8_t *secret);

/* The ranks in so far, by rank; none before the first accepted hello. */
struct nnp_boot_member {
	int fd;			/* -1 until the rank is in */
	struct nnp_rank_info info;
};

struct nnp_boot_roster {
	struct nnp_boot_member *m;
	uint32_t nranks, joined;
};

/*
 * Make @h's sender, on @fd, its rank: NNP_SUCCESS, or why not
 * (NNP_ERROR_INVALID_ARGUMENT: another job size, a rank out of it or
 * taken; NNP_ERROR_OUT_OF_MEMORY). The first accepted hello fixes the
 * job's size.
 */
nnp_result_t nnp_boot_admit(struct nnp_boot_roster *r,
			    const struct nnp_boot_hello *h, int fd);
/* The first rank that never joined (nranks if all did). */
uint32_t nnp_boot_first_missing(const struct nnp_boot_roster *r);

/* Is @h the header of a message of @len bytes? NNP_ERROR_IO if not. */
nnp_result_t nnp_boot_hdr_check(const struct nnp_boot_hdr *h, uint32_t len);
/*
 * The outcome a root's reply tells: one the root sends (success, timeout,
 * refused, out of memory), else NNP_ERROR_IO.
 */
nnp_result_t nnp_boot_reply_status(const struct nnp_boot_reply *r);

#endif /* NNP_BOOT_MSG_H */
