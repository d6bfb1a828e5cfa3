// SPDX-License-Identifier: MIT
/*
 * libnnp collectives: communicators over the devices' inter-chip links,
 * and allreduce as one queue command per rank; the devices do the rest.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>
#include <nnp_accel.h>
#include "nnp_hw.h"

#include "internal.h"

/* nnp_allreduce() passes our enums to the device as they are. */
_Static_assert(NNP_FLOAT32 == NNP_DTYPE_F32 && NNP_FLOAT16 == NNP_DTYPE_F16 &&
	       NNP_BFLOAT16 == NNP_DTYPE_BF16 && NNP_INT32 == NNP_DTYPE_I32 &&
	       NNP_FLOAT64 == NNP_DTYPE_F64 && NNP_INT64 == NNP_DTYPE_I64,
	       "nnp_dtype_t matches the device's element types");
_Static_assert(NNP_SUM == NNP_OP_SUM && NNP_PROD == NNP_OP_PROD &&
	       NNP_MIN == NNP_OP_MIN && NNP_MAX == NNP_OP_MAX &&
	       NNP_AVG == NNP_OP_AVG, "nnp_redop_t matches the device's ops");

struct nnp_comm {
	nnp_device_t *dev;
	uint32_t id;
	int rank;
	int nranks;
};

/* Which port of @ports leads, up, to chip @chip: -1 if none. */
static int port_to(const struct nnp_port_info *ports, unsigned int n,
		   uint32_t chip)
{
	unsigned int p;

	for (p = 0; p < n; p++)
		if ((ports[p].state & NNP_LINK_UP) && ports[p].peer_chip == chip)
			return (int)p;
	return -1;
}

/* A value no earlier communicator of these chips had. */
static uint32_t new_epoch(void)
{
	uint32_t e;

	if (getrandom(&e, sizeof(e), 0) != sizeof(e))
		e = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
	return e;
}

struct rank_plan {
	uint32_t chip;
	unsigned int nports;
	struct nnp_port_info ports[NNP_MAX_PORTS];
	int send_port;
	int recv_port;
};

static nnp_result_t plan_ring(nnp_device_t **devs, int n, struct rank_plan *plan)
{
	int r;

	for (r = 0; r < n; r++) {
		struct nnp_device_info info;
		nnp_result_t res = nnp_device_get_info(devs[r], &info);

		if (res == NNP_SUCCESS)
			res = nnp_device_get_ports(devs[r], plan[r].ports,
						   NNP_MAX_PORTS, &plan[r].nports);
		if (res != NNP_SUCCESS)
			return res;
		plan[r].chip = info.chip_id;
		if (plan[r].nports > NNP_MAX_PORTS)
			plan[r].nports = NNP_MAX_PORTS;
	}
	if (n == 1) {
		plan[0].send_port = plan[0].recv_port = 0;
		return NNP_SUCCESS;
	}
	/* Rank r sends on a link to rank r + 1, which receives on its end. */
	for (r = 0; r < n; r++) {
		int next = (r + 1) % n;
		int p = port_to(plan[r].ports, plan[r].nports, plan[next].chip);

		if (p < 0)
			return NNP_ERROR_NO_PATH;
		plan[r].send_port = p;
		plan[next].recv_port = (int)plan[r].ports[p].peer_port;
	}
	return NNP_SUCCESS;
}

nnp_result_t nnp_comm_init_all(nnp_device_t **devs, int n, nnp_comm_t **comms)
{
	struct rank_plan *plan;
	uint32_t epoch = new_epoch();
	nnp_result_t res;
	int r;

	if (!devs || !comms || n < 1 || n > 0xffff)
		return NNP_ERROR_INVALID_ARGUMENT;
	for (r = 0; r < n; r++) {
		if (!devs[r])
			return NNP_ERROR_INVALID_ARGUMENT;
		comms[r] = NULL;
	}
	plan = calloc((size_t)n, sizeof(*plan));
	if (!plan)
		return NNP_ERROR_OUT_OF_MEMORY;
	res = plan_ring(devs, n, plan);
	for (r = 0; r < n && res == NNP_SUCCESS; r++) {
		struct drm_nnp_comm_create c = {
			.nranks = (uint32_t)n, .rank = (uint32_t)r,
			.send_port = (uint32_t)plan[r].send_port,
			.recv_port = (uint32_t)plan[r].recv_port, .epoch = epoch,
		};

		comms[r] = calloc(1, sizeof(*comms[r]));
		if (!comms[r]) {
			res = NNP_ERROR_OUT_OF_MEMORY;
		} else if (drmIoctl(devs[r]->fd, DRM_IOCTL_NNP_COMM_CREATE, &c)) {
			res = errno == ENOSPC ? NNP_ERROR_BUSY :
			      nnp_result_from_errno(errno);
			free(comms[r]);
			comms[r] = NULL;
		} else {
			*comms[r] = (struct nnp_comm){
				.dev = devs[r], .id = c.comm, .rank = r, .nranks = n,
			};
		}
	}
	if (res != NNP_SUCCESS)
		for (r = 0; r < n; r++) {
			nnp_comm_destroy(comms[r]);
			comms[r] = NULL;
		}
	free(plan);
	return res;
}

void nnp_comm_destroy(nnp_comm_t *comm)
{
	struct drm_nnp_comm_destroy d;

	if (!comm)
		return;
	d = (struct drm_nnp_comm_destroy){ .comm = comm->id };
	drmIoctl(comm->dev->fd, DRM_IOCTL_NNP_COMM_DESTROY, &d);
	free(comm);
}

int nnp_comm_rank(const nnp_comm_t *comm)
{
	return comm ? comm->rank : -1;
}

int nnp_comm_count(const nnp_comm_t *comm)
{
	return comm ? comm->nranks : -1;
}

static size_t dtype_size(nnp_dtype_t t)
{
	switch (t) {
	case NNP_FLOAT16:
	case NNP_BFLOAT16:
		return 2;
	case NNP_FLOAT32:
	case NNP_INT32:
		return 4;
	case NNP_FLOAT64:
	case NNP_INT64:
		return 8;
	}
	return 0;
}

nnp_result_t nnp_allreduce(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			   size_t recv_off, size_t count, nnp_dtype_t dtype,
			   nnp_redop_t op, nnp_comm_t *comm, nnp_stream_t *stream)
{
	size_t es = dtype_size(dtype);
	struct nnp_hw_queue_cmd c = { .opcode = NNP_CMD_ALLREDUCE };

	if (!comm || !stream || !es || (unsigned int)op > NNP_AVG ||
	    count > SIZE_MAX / es ||
	    !nnp_stream_range_ok(stream, send, send_off, count * es) ||
	    !nnp_stream_range_ok(stream, recv, recv_off, count * es) ||
	    comm->dev != send->dev || send->kind != NNP_MEM_DEVICE ||
	    recv->kind != NNP_MEM_DEVICE)
		return NNP_ERROR_INVALID_ARGUMENT;
	c.src_key = send->key;
	c.src_off = send_off;
	c.dst_key = recv->key;
	c.dst_off = recv_off;
	c.len = count;
	c.value = NNP_COLL_VALUE((uint64_t)dtype, (uint64_t)op, comm->id);
	return nnp_stream_submit(stream, &c);
}
