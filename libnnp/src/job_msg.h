/* SPDX-License-Identifier: MIT */
/*
 * The job's view on the wire (nnptool job, nnp_job_view()). Once every
 * rank is in, the rendezvous's root goes on serving at the job's address
 * for as long as a rank stays connected, and each rank keeps its
 * connection to it, sealed in the session of its join, to answer where
 * it stands. A client that holds the job's secret asks the root, which
 * asks every rank at once and answers with them all:
 *
 *   client -> root  open:  version 2, NNP_BOOT_VIEW, the client's nonce
 *   root -> client  proof: as to a rank (bootstrap.h)
 *   client -> root  query: MAC("nnp job query", nonces)
 *   root -> rank    ask:   n, MAC("nnp job ask", nonces, n)
 *   rank -> root    state: n, where it stands, MAC("nnp job state", ...)
 *   root -> client  view:  nranks, epoch, MAC("nnp job view", nonces,
 *                          the view before it, the table after it),
 *                          then one entry a rank
 *
 * where a rank's nonces are those of its join, and n grows with each ask,
 * so that a state answers that ask only. The root drops a client whose
 * query's MAC is wrong, unanswered, as it drops a stranger; the client
 * leaves a root whose proof or view's MAC is wrong. A rank that does not
 * answer within NNP_JOB_ASK_MS is listed as silent; one whose connection
 * closed (it exited, was killed, or destroyed its communicator) as gone.
 */
#ifndef NNP_JOB_MSG_H
#define NNP_JOB_MSG_H

#include "boot_msg.h"
#include "nnp_accel.h"

/* How long the root waits for the ranks' states, and a client for all. */
#define NNP_JOB_ASK_MS		2000
#define NNP_JOB_VIEW_MS		(NNP_JOB_ASK_MS + 3000)

struct nnp_job_query {
	uint8_t mac[NNP_BOOT_MAC_BYTES];
};

struct nnp_job_ask {
	uint64_t n;
	uint8_t mac[NNP_BOOT_MAC_BYTES];
};

/* nnp_job_state.flags */
#define NNP_JOB_HAS_COMM	(1u << 0)	/* @comm is the job's communicator */

/* Where a rank stands, as it says. */
struct nnp_job_state {
	uint64_t n;		/* the ask's */
	uint32_t flags;
	uint32_t pid;
	char host[64];		/* its gethostname(), NUL-terminated */
	/* Its communicator of the job, as the driver lists it. */
	struct drm_nnp_comm_info comm;
	uint8_t mac[NNP_BOOT_MAC_BYTES];
};

/* nnp_job_entry.heard */
#define NNP_JOB_GONE		0	/* its connection to the root closed */
#define NNP_JOB_SILENT		1	/* connected, no answer in time */
#define NNP_JOB_ANSWERED	2

/* One rank of the view. */
struct nnp_job_entry {
	uint32_t rank;
	uint32_t heard;		/* NNP_JOB_* */
	uint32_t chip;		/* as it joined with it */
	uint32_t zero;
	char addr[64];		/* where its connection came from, as the root saw it */
	struct nnp_job_state state;	/* ANSWERED: what it said */
};

struct nnp_job_view {
	uint32_t nranks;
	uint32_t zero;
	uint64_t epoch;
	uint8_t mac[NNP_BOOT_MAC_BYTES];
};

_Static_assert(sizeof(struct nnp_job_state) ==
	       offsetof(struct nnp_job_state, mac) + NNP_BOOT_MAC_BYTES,
	       "a state's MAC covers all before it");
_Static_assert(sizeof(struct nnp_job_entry) % 8 == 0, "entries pack whole");

void nnp_job_seal_query(const struct nnp_boot_session *s, struct nnp_job_query *q);
bool nnp_job_query_sealed(const struct nnp_boot_session *s,
			  const struct nnp_job_query *q);
void nnp_job_seal_ask(const struct nnp_boot_session *s, struct nnp_job_ask *a);
bool nnp_job_ask_sealed(const struct nnp_boot_session *s,
			const struct nnp_job_ask *a);
void nnp_job_seal_state(const struct nnp_boot_session *s, struct nnp_job_state *st);
bool nnp_job_state_sealed(const struct nnp_boot_session *s,
			  const struct nnp_job_state *st);
/* Seal @v and the @v->nranks entries of @table after it. */
void nnp_job_seal_view(const struct nnp_boot_session *s, struct nnp_job_view *v,
		       const struct nnp_job_entry *table);
bool nnp_job_view_sealed(const struct nnp_boot_session *s,
			 const struct nnp_job_view *v,
			 const struct nnp_job_entry *table);

#endif /* NNP_JOB_MSG_H */
