/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous of a multi-process job, before any communicator exists:
 * every rank sends its chip and ports to a root over TCP and gets back
 * everybody's, and the epoch that will name the communicator on the links.
 * The unique id holds the root's address (as NCCL's does).
 */
#ifndef NNP_BOOTSTRAP_H
#define NNP_BOOTSTRAP_H

#include <stdatomic.h>

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
 * On the wire, version 2: the secret itself never crosses it. Each end
 * proves it holds the secret with HMAC-SHA256 under it over both ends'
 * fresh nonces, as the ICL socket hello does, so that a root that does not
 * hold it (a user who bound NNP_COMM_ID's port first, anyone on the path)
 * learns nothing of it and cannot hand a rank an epoch or a table:
 *
 *   rank -> root  open:  version, NNP_BOOT_JOIN, the rank's nonce
 *   root -> rank  proof: the root's nonce, MAC("nnp boot root", nonces)
 *   rank -> root  hello: nranks, rank, chip and ports,
 *                        MAC("nnp boot hello", nonces, the hello before it)
 *   root -> rank  reply: status, missing, epoch, MAC("nnp boot reply",
 *                        nonces, the reply before it, the table after it)
 *   root -> rank  table: nranks entries, on success only
 *
 * where nonces are the rank's then the root's and each label ends with its
 * NUL. The root drops a connection unanswered whose open is not version
 * 2 or whose hello's MAC is wrong; a rank leaves a root whose proof or
 * reply's MAC is wrong (another job's root, an impostor, a replay). A
 * message is a header, then len bytes; a length other than the one
 * expected is refused unread.
 */
#define NNP_BOOT_MSG_MAGIC	0x6e6e7062u	/* "nnpb" */
#define NNP_BOOT_VERSION	2	/* the first, unnumbered, sent the secret */
#define NNP_BOOT_NONCE_BYTES	32
#define NNP_BOOT_MAC_BYTES	32	/* HMAC-SHA256 */

struct nnp_boot_hdr {
	uint32_t magic;
	uint32_t len;
};

/* What a connection opens for: to join the job, or (job_msg.h) to view it. */
#define NNP_BOOT_JOIN		0
#define NNP_BOOT_VIEW		1

struct nnp_boot_open {
	uint32_t version;
	uint32_t kind;		/* NNP_BOOT_JOIN or NNP_BOOT_VIEW */
	uint8_t nonce[NNP_BOOT_NONCE_BYTES];
};

struct nnp_boot_proof {
	uint8_t nonce[NNP_BOOT_NONCE_BYTES];
	uint8_t mac[NNP_BOOT_MAC_BYTES];
};

struct nnp_boot_hello {
	uint32_t nranks;
	uint32_t rank;
	struct nnp_rank_info info;
	uint8_t mac[NNP_BOOT_MAC_BYTES];
};

struct nnp_boot_reply {
	uint32_t status;	/* nnp_result_t */
	uint32_t missing;	/* NNP_ERROR_TIMEOUT: the first rank not in */
	uint64_t epoch;
	uint8_t mac[NNP_BOOT_MAC_BYTES];
};

/*
 * Make the id of a new job. Serves its rendezvous from a thread of this
 * process, unless NNP_COMM_ID=host:port names the address: then rank 0
 * serves it there, and every process gets the same id from this call.
 */
nnp_result_t nnp_bootstrap_new_id(nnp_unique_id_t *id);

struct nnp_job_link;

/*
 * Join job @id as @rank of @nranks, telling @mine; wait for all ranks.
 * On success *@all (@nranks entries, by rank; free() it) and *@epoch, the
 * same random nonzero 64 bits on every rank; and in *@link, unless it
 * is NULL, the connection to a root at NNP_COMM_ID, kept for the job's
 * view (job_rank.h; NULL for an id of another kind, or no memory).
 */
nnp_result_t nnp_bootstrap_join(const nnp_unique_id_t *id, int nranks, int rank,
				const struct nnp_rank_info *mine,
				struct nnp_rank_info **all, uint64_t *epoch,
				struct nnp_job_link **link);

/*
 * This thread's joins give up, as if timed out, within 50 ms of *@flag
 * turning true (NULL: never); for a non-blocking creation that is aborted.
 */
void nnp_bootstrap_cancel_on(const atomic_bool *flag);

/* A random value, for epochs and job ids. */
uint64_t nnp_random64(void);

#endif /* NNP_BOOTSTRAP_H */
