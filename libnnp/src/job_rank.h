/* SPDX-License-Identifier: MIT */
/*
 * A rank's side of the job's view (job_msg.h): its connection to the
 * job's root, kept after the rendezvous, and a thread that answers the
 * root's asks with where the rank stands (job_rank.c).
 */
#ifndef NNP_JOB_RANK_H
#define NNP_JOB_RANK_H

#include "boot_msg.h"
#include "job_msg.h"

struct nnp_job_link;

/* Whom a rank's answers are of: its communicator, fixed once made. */
struct nnp_job_source {
	nnp_device_t *dev;
	uint32_t comm_id;
};

/* What a rank says of itself: all of @st but n and mac, of @src. */
typedef void (*nnp_job_fill_fn)(const struct nnp_job_source *src,
				struct nnp_job_state *st);

/* Keep connection @fd of session @s (its secret copied); NULL: no memory. */
struct nnp_job_link *nnp_job_link_new(int fd, const struct nnp_boot_session *s);

/*
 * Answer the root's asks from a thread of its own with what @fill says
 * of @src (copied), until nnp_job_link_end(). An ask not sealed for this
 * session, or not newer than the last, ends the link.
 */
nnp_result_t nnp_job_link_start(struct nnp_job_link *l, nnp_job_fill_fn fill,
				const struct nnp_job_source *src);

/*
 * Close the connection (the root lists the rank as gone), wait for the
 * thread, and free @l; NULL is nothing.
 */
void nnp_job_link_end(struct nnp_job_link *l);

#endif /* NNP_JOB_RANK_H */
