// SPDX-License-Identifier: MIT
/*
 * Non-blocking communicator creation (nnp_comm_config_t.blocking = 0, as
 * NCCL's): the rendezvous and the device's part run on a thread of their
 * own, so that a runtime can make several communicators at once, or keep
 * a watchdog that gives up on a rendezvous that never completes. The
 * caller holds the communicator from the start; the thread fills it in,
 * and its result, NNP_IN_PROGRESS until then, says when it may be used.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "comm.h"
#include "log.h"

struct nnp_comm_init {
	pthread_t thread;
	bool joined;
	atomic_int result;	/* NNP_IN_PROGRESS, then how it ended */
	atomic_bool cancel;	/* set by abort or destroy */
	char error[512];	/* the thread's last error, if it failed */
	/* What the thread makes it with. */
	nnp_unique_id_t id;
	struct nnp_comm_opts opts;
};

/*
 * Move what the thread made into @shell, which the caller holds. The
 * members @shell was given at the start (device, rank, ranks, name) are
 * the same in @made and stay untouched, as a caller may read them.
 */
static void adopt(nnp_comm_t *shell, nnp_comm_t *made)
{
	shell->id = made->id;
	shell->send_port = made->send_port;
	shell->recv_port = made->recv_port;
	shell->routes = made->routes;
	shell->timeout_ms = made->timeout_ms;
	shell->group_fusion = made->group_fusion;
	shell->group_fusion_asked = made->group_fusion_asked;
	shell->epoch = made->epoch;
	shell->all = made->all;
	shell->job = made->job;
	free(made);
}

static void *init_main(void *arg)
{
	nnp_comm_t *shell = arg;
	struct nnp_comm_init *in = shell->init;
	nnp_comm_t *made = NULL;
	nnp_result_t res;

	nnp_bootstrap_cancel_on(&in->cancel);
	res = nnp_comm_init_opts(&made, shell->nranks, &in->id, shell->rank,
				 shell->dev, &in->opts);
	if (res == NNP_SUCCESS && atomic_load(&in->cancel)) {
		/* Made after all, but no longer wanted: destroy() wants none. */
		nnp_comm_destroy(made);
		res = nnp_fail(NNP_ERROR_COMM_FAILED, "rank %d: aborted while being made",
			       shell->rank);
	} else if (res == NNP_SUCCESS) {
		adopt(shell, made);
	}
	if (res != NNP_SUCCESS)
		snprintf(in->error, sizeof(in->error), "%s", nnp_get_last_error());
	atomic_store(&in->result, res);
	return NULL;
}

nnp_result_t nnp_comm_init_async(nnp_comm_t **comm, int nranks,
				 const nnp_unique_id_t *id, int rank,
				 nnp_device_t *dev, const struct nnp_comm_opts *o)
{
	nnp_comm_t *m = calloc(1, sizeof(*m));
	struct nnp_comm_init *in = calloc(1, sizeof(*in));
	int err;

	if (!m || !in) {
		free(m);
		free(in);
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for a communicator");
	}
	*in = (struct nnp_comm_init){ .id = *id, .opts = *o };
	atomic_init(&in->result, NNP_IN_PROGRESS);
	atomic_init(&in->cancel, false);
	*m = (struct nnp_comm){
		.dev = dev, .rank = rank, .nranks = nranks, .init = in,
	};
	memcpy(m->name, o->name, sizeof(m->name));
	err = pthread_create(&in->thread, NULL, init_main, m);
	if (err) {
		free(in);
		free(m);
		return nnp_fail(NNP_ERROR_IO, "rank %d: no thread to make the communicator on: %s",
				rank, strerror(err));
	}
	*comm = m;
	return NNP_IN_PROGRESS;
}

nnp_result_t nnp_comm_ready(const nnp_comm_t *comm, const char *what)
{
	char label[NNP_COMM_NAME_MAX + 8];
	nnp_result_t res;

	if (!comm || !comm->init)
		return NNP_SUCCESS;
	res = atomic_load(&comm->init->result);
	if (res == NNP_IN_PROGRESS)
		return nnp_fail(res, "%s%s: rank %d: the communicator is still being made (nnp_comm_get_async_error() says when it is)",
				nnp_comm_label(comm, label, sizeof(label)), what,
				comm->rank);
	if (res != NNP_SUCCESS)
		return nnp_fail(res, "%s%s: the communicator was not made: %s",
				nnp_comm_label(comm, label, sizeof(label)), what,
				comm->init->error);
	return NNP_SUCCESS;
}

nnp_result_t nnp_comm_init_end(nnp_comm_t *comm)
{
	struct nnp_comm_init *in = comm->init;

	if (!in)
		return NNP_SUCCESS;
	if (!in->joined) {
		atomic_store(&in->cancel, true);
		pthread_join(in->thread, NULL);
		in->joined = true;
	}
	return atomic_load(&in->result);
}
