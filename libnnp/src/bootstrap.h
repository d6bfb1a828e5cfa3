/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous of a multi-process job, before any communicator exists:
 * every rank sends its chip and ports to a root over TCP and gets back
 * everybody's, and the epoch that will name the communicator on the links.
 * The unique id holds the root's address (as NCCL's does).
 */
#ifndef NNP_BOOTSTRAP_H
#define NNP_BOOTSTRAP_H

#include "netif.h"
#include "nnp_hw.h"
#include "ring_plan.h"

/* The most ranks a job may have: a communicator's on the device. */
#define NNP_BOOTSTRAP_MAX_RANKS	NNP_HW_MAX_RANKS

/*
 * The job's secret: random in an id this process serves, NNP_COMM_SECRET
 * (16 to 64 characters, zero-padded) at NNP_COMM_ID.
 */
#define NNP_BOOTSTRAP_SECRET_BYTES	64
#define NNP_BOOTSTRAP_MIN_SECRET	16

/* The unique id's contents (the tests read the root's address in it). */
struct nnp_job_id {
	char magic[8];
	uint8_t secret[NNP_BOOTSTRAP_SECRET_BYTES];
	union nnp_sockaddr root;	/* IPv4 or IPv6 */
	uint8_t rank0_serves;	/* NNP_COMM_ID: rank 0 starts the root */
};

_Static_assert(sizeof(struct nnp_job_id) <= NNP_UNIQUE_ID_BYTES, "id fits");

/*
 * On the wire: a rank first sends the job's secret (the root drops a
 * connection whose secret differs before reading anything else), then
 * its hello as a message; the root answers with a reply and, on success,
 * the table (nranks entries). A message is a header, then len bytes; a
 * length other than the one expected is refused unread.
 */
#define NNP_BOOT_MSG_MAGIC	0x6e6e7062u	/* "nnpb" */

struct nnp_boot_hdr {
	uint32_t magic;
	uint32_t len;
};

struct nnp_boot_hello {
	uint32_t nranks;
	uint32_t rank;
	struct nnp_rank_info info;
};

struct nnp_boot_reply {
	uint32_t status;	/* nnp_result_t */
	uint32_t missing;	/* NNP_ERROR_TIMEOUT: the first rank not in */
	uint64_t epoch;
};

/*
 * Make the id of a new job. Serves its rendezvous from a thread of this
 * process, unless NNP_COMM_ID=host:port names the address: then rank 0
 * serves it there, and every process gets the same id from this call.
 */
nnp_result_t nnp_bootstrap_new_id(nnp_unique_id_t *id);

/*
 * Join job @id as @rank of @nranks, telling @mine; wait for all ranks.
 * On success *@all (@nranks entries, by rank; free() it) and *@epoch, the
 * same random nonzero 64 bits on every rank.
 */
nnp_result_t nnp_bootstrap_join(const nnp_unique_id_t *id, int nranks, int rank,
				const struct nnp_rank_info *mine,
				struct nnp_rank_info **all, uint64_t *epoch);

/* A random value, for epochs and job ids. */
uint64_t nnp_random64(void);

#endif /* NNP_BOOTSTRAP_H */
