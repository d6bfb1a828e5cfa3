// SPDX-License-Identifier: MIT
/*
 * What a rank of a job made by a rendezvous tells the job's view
 * (job_msg.h): its host, process and chip, and its communicator as the
 * driver lists it, the collective it is in and whom that waits for.
 */
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "job_rank.h"
#include "log.h"

static void comm_job_state(const struct nnp_job_source *src,
			   struct nnp_job_state *st)
{
	st->pid = (uint32_t)getpid();
	gethostname(st->host, sizeof(st->host) - 1);
	if (nnp_device_comm_info(src->dev, src->comm_id, &st->comm))
		st->flags |= NNP_JOB_HAS_COMM;
}

void nnp_comm_job_answer(nnp_comm_t *comm, struct nnp_job_link *link)
{
	const struct nnp_job_source src = { .dev = comm->dev, .comm_id = comm->id };

	if (!link)
		return;
	if (nnp_job_link_start(link, comm_job_state, &src) != NNP_SUCCESS) {
		nnp_log(NNP_LOG_WARN, "rank %d: the job's view will not hear from it: %s",
			comm->rank, nnp_get_last_error());
		nnp_job_link_end(link);
		return;
	}
	comm->job = link;
}
