// SPDX-License-Identifier: MIT
/*
 * libnnp's view of the device's communicators: the driver's
 * DRM_NNP_QUERY_COMMS (uapi 1.11) as struct nnp_comm_state, the device's
 * codes named as traces name them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "internal.h"
#include "log.h"
#include "names.h"
#include "nnp_accel.h"
#include "nnp_hw.h"

/* The first release of struct nnp_comm_state (0.9): all of it. */
#define COMM_STATE_SIZE_0_9	sizeof(struct nnp_comm_state)

void nnp_comm_state_from_driver(const struct drm_nnp_comm_info *c,
				struct nnp_comm_state *s)
{
	int known = !!(c->flags & DRM_NNP_COMM_INFO_STATE);

	*s = (struct nnp_comm_state){
		.size = sizeof(*s), .comm_id = (int)c->comm, .pid = c->pid, .uid = c->uid,
		.rank = c->rank, .nranks = c->nranks, .known = known,
		.epoch = c->epoch, .calls = c->calls,
		.calls_done = c->calls_done, .messages = c->messages,
		.bytes = c->bytes, .count = c->count, .peer = c->peer,
		.wait_port = c->wait_port, .wait_rank = c->wait_rank,
		.wait_ns = c->wait_ns,
	};
	memcpy(s->task, c->task, sizeof(s->task));
	s->task[sizeof(s->task) - 1] = '\0';
	memcpy(s->name, c->name, sizeof(s->name));
	s->name[sizeof(s->name) - 1] = '\0';
	if (c->status)
		s->failed = nnp_status_name(c->status) ?
			    nnp_status_name(c->status) : "error";
	if (!c->opcode)
		return;
	s->op = nnp_cmd_name(c->opcode) ? nnp_cmd_name(c->opcode) : "command";
	if (c->opcode != NNP_CMD_SEND && c->opcode != NNP_CMD_RECV &&
	    c->opcode != NNP_CMD_GROUP) {
		s->dtype = nnp_dtype_name((int)c->dtype);
		s->redop = nnp_redop_name((int)c->op);
	}
}

/* The driver's list into a new *@out (free() it); the failure said. */
static nnp_result_t query_comms(nnp_device_t *dev, struct drm_nnp_comms **out)
{
	struct drm_nnp_comms *v = calloc(1, sizeof(*v));
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COMMS, .size = sizeof(*v),
		.data = (uintptr_t)v,
	};
	int err;

	*out = NULL;
	if (!v)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no memory for the communicators");
	if (!drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q)) {
		*out = v;
		return NNP_SUCCESS;
	}
	err = errno;
	free(v);
	if (err == EOPNOTSUPP)
		return nnp_fail(NNP_ERROR_NOT_SUPPORTED,
				"%s: the driver predates interface 1.11: no view of its communicators",
				dev->path);
	return nnp_ioctl_failed(dev, "the communicators query", err);
}

/* Entry @i of @v, by its entry_size: the entry may grow. */
static struct drm_nnp_comm_info entry_of(const struct drm_nnp_comms *v,
					 unsigned int i)
{
	struct drm_nnp_comm_info c = { 0 };

	memcpy(&c, (const char *)v->comm + i * (size_t)v->entry_size,
	       v->entry_size < sizeof(c) ? v->entry_size : sizeof(c));
	return c;
}

bool nnp_device_comm_info(nnp_device_t *dev, uint32_t id,
			  struct drm_nnp_comm_info *out)
{
	struct drm_nnp_comms *v;
	bool found = false;
	unsigned int i;

	if (query_comms(dev, &v) != NNP_SUCCESS)
		return false;
	for (i = 0; i < v->num_comms && i < DRM_NNP_MAX_COMMS && !found; i++) {
		*out = entry_of(v, i);
		found = out->comm == id && out->pid == (uint32_t)getpid();
	}
	free(v);
	return found;
}

nnp_result_t nnp_device_get_comms(nnp_device_t *dev, struct nnp_comm_state *comms,
				  unsigned int max, unsigned int *count,
				  unsigned int *hidden)
{
	struct drm_nnp_comms *v;
	size_t entry;
	unsigned int i;
	nnp_result_t r;

	if (!dev || !count || (max && !comms))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_device_get_comms: no device, count or comms");
	entry = max ? comms[0].size : sizeof(struct nnp_comm_state);
	if (nnp_size_check(entry, COMM_STATE_SIZE_0_9, sizeof(struct nnp_comm_state),
			   "nnp_device_get_comms: comms[0]"))
		return NNP_ERROR_INVALID_ARGUMENT;
	r = query_comms(dev, &v);
	if (r != NNP_SUCCESS)
		return r;
	*count = v->num_comms < DRM_NNP_MAX_COMMS ? v->num_comms : DRM_NNP_MAX_COMMS;
	if (hidden)
		*hidden = v->hidden;
	for (i = 0; i < *count && i < max; i++) {
		const struct drm_nnp_comm_info c = entry_of(v, i);
		struct nnp_comm_state s;

		nnp_comm_state_from_driver(&c, &s);
		s.size = entry;
		memcpy((char *)comms + i * entry, &s, entry);
	}
	free(v);
	return NNP_SUCCESS;
}
