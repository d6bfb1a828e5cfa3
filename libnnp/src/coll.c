// SPDX-License-Identifier: MIT
/*
 * libnnp collectives: each is one queue command per rank; the devices do
 * the rest over their links, device memory to device memory.
 */
#include <nnp_accel.h>
#include "nnp_hw.h"

#include "group.h"
#include "route_plan.h"
#include "stream.h"
#include "log.h"

/* The collectives pass our enums to the device as they are. */
_Static_assert(NNP_FLOAT32 == NNP_DTYPE_F32 && NNP_FLOAT16 == NNP_DTYPE_F16 &&
	       NNP_BFLOAT16 == NNP_DTYPE_BF16 && NNP_INT32 == NNP_DTYPE_I32 &&
	       NNP_FLOAT64 == NNP_DTYPE_F64 && NNP_INT64 == NNP_DTYPE_I64 &&
	       NNP_UINT8 == NNP_DTYPE_U8,
	       "nnp_dtype_t matches the device's element types");
_Static_assert(NNP_SUM == NNP_OP_SUM && NNP_PROD == NNP_OP_PROD &&
	       NNP_MIN == NNP_OP_MIN && NNP_MAX == NNP_OP_MAX &&
	       NNP_AVG == NNP_OP_AVG, "nnp_redop_t matches the device's ops");

size_t nnp_dtype_size(nnp_dtype_t t)
{
	switch (t) {
	case NNP_UINT8:
		return 1;
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

/* One rank's part of a collective, before it becomes a queue command. */
struct coll_args {
	uint8_t opcode;
	const char *name;	/* as traces name it */
	nnp_mem_t *send;	/* NULL: this rank reads nothing */
	size_t send_off, send_count;
	nnp_mem_t *recv;
	size_t recv_off, recv_count;
	size_t count;		/* the command's element count */
	nnp_dtype_t dtype;
	nnp_redop_t op;
	int root;
};

/* Is [@off, @off + @count elements) of device memory @m on @s's device? */
static int device_range_ok(const nnp_stream_t *s, const nnp_mem_t *m, size_t off,
			   size_t count, size_t es)
{
	return m && m->kind == NNP_MEM_DEVICE && count <= SIZE_MAX / es &&
	       nnp_stream_range_ok(s, m, off, count * es);
}

static nnp_result_t coll_submit(const struct coll_args *a, nnp_comm_t *comm,
				nnp_stream_t *stream)
{
	size_t es = nnp_dtype_size(a->dtype);
	struct nnp_hw_queue_cmd c = { .opcode = a->opcode, .len = a->count };
	char label[NNP_COMM_NAME_MAX + 8];
	const struct nnp_trace_op t = {
		.name = a->name, .dtype = a->dtype, .count = a->count,
		.redop = a->opcode == NNP_CMD_ALLREDUCE ||
			 a->opcode == NNP_CMD_REDUCE_SCATTER ||
			 a->opcode == NNP_CMD_REDUCE ? (int)a->op : -1,
		.root = a->opcode == NNP_CMD_BROADCAST ||
			a->opcode == NNP_CMD_REDUCE ||
			a->opcode == NNP_CMD_GATHER ||
			a->opcode == NNP_CMD_SCATTER ? a->root : -1,
		.peer = -1,
	};
	nnp_result_t res = nnp_comm_ready(comm, a->name);

	if (res != NNP_SUCCESS)
		return nnp_group_refuse(res);
	if (!comm || !stream || !es || (unsigned int)a->op > NNP_AVG ||
	    a->root < 0 || a->root >= comm->nranks ||
	    (a->recv && !device_range_ok(stream, a->recv, a->recv_off,
					 a->recv_count, es)) ||
	    (a->send && !device_range_ok(stream, a->send, a->send_off,
					 a->send_count, es)) ||
	    comm->dev != (a->recv ? a->recv : a->send)->dev)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%scollective of %zu elements of type %d, op %d, root %d: no comm or stream, an unknown type, op or root, or a buffer that is not device memory of the communicator's device or too small",
				nnp_comm_label(comm, label, sizeof(label)),
				a->count, (int)a->dtype, (int)a->op, a->root));
	if (a->dtype == NNP_UINT8 && t.redop >= 0)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%s%s of NNP_UINT8: bytes are moved, never reduced",
				nnp_comm_label(comm, label, sizeof(label)), a->name));
	if (a->dtype == NNP_UINT8 && nnp_device_hw_minor(stream->dev) < 15)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_NOT_SUPPORTED,
				"%s%s of NNP_UINT8: the device moves no bytes (hardware interface 1.15)",
				nnp_comm_label(comm, label, sizeof(label)), a->name));
	if (a->send) {
		c.src_key = a->send->key;
		c.src_off = a->send_off;
	}
	if (a->recv) {
		c.dst_key = a->recv->key;
		c.dst_off = a->recv_off;
	}
	c.value = NNP_COLL_VALUE((uint64_t)a->dtype, (uint64_t)a->op, comm->id,
				 (uint64_t)a->root);
	if (a->opcode == NNP_CMD_ALLREDUCE && comm->group_fusion)
		c.flags = NNP_CMD_FLAG_FUSE;
	return nnp_group_refuse(nnp_op_submit(stream, comm, &t, &c, false));
}

/* n * @count elements, or SIZE_MAX if that overflows (then refused). */
static size_t times_ranks(const nnp_comm_t *comm, size_t count)
{
	size_t n = comm ? (size_t)comm->nranks : 1;

	return count > SIZE_MAX / n ? SIZE_MAX : count * n;
}

nnp_result_t nnp_allreduce(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			   size_t recv_off, size_t count, nnp_dtype_t dtype,
			   nnp_redop_t op, nnp_comm_t *comm, nnp_stream_t *stream)
{
	struct coll_args a = {
		.opcode = NNP_CMD_ALLREDUCE, .name = "allreduce", .send = send, .send_off = send_off,
		.send_count = count, .recv = recv, .recv_off = recv_off,
		.recv_count = count, .count = count, .dtype = dtype, .op = op,
	};

	if (!send)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "collective: send is NULL"));
	return coll_submit(&a, comm, stream);
}

nnp_result_t nnp_broadcast(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			   size_t recv_off, size_t count, nnp_dtype_t dtype,
			   int root, nnp_comm_t *comm, nnp_stream_t *stream)
{
	struct coll_args a = {
		.opcode = NNP_CMD_BROADCAST, .name = "broadcast", .send = send, .send_off = send_off,
		.send_count = count, .recv = recv, .recv_off = recv_off,
		.recv_count = count, .count = count, .dtype = dtype, .root = root,
	};

	/* Only the root's source is read; the others name none. */
	if (comm && comm->rank != root)
		a.send = NULL;
	else if (!send)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_broadcast: the root's send is NULL"));
	return coll_submit(&a, comm, stream);
}

nnp_result_t nnp_allgather(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			   size_t recv_off, size_t count, nnp_dtype_t dtype,
			   nnp_comm_t *comm, nnp_stream_t *stream)
{
	struct coll_args a = {
		.opcode = NNP_CMD_ALLGATHER, .name = "allgather", .send = send, .send_off = send_off,
		.send_count = count, .recv = recv, .recv_off = recv_off,
		.recv_count = times_ranks(comm, count), .count = count,
		.dtype = dtype,
	};

	if (!send)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "collective: send is NULL"));
	return coll_submit(&a, comm, stream);
}

nnp_result_t nnp_reduce_scatter(nnp_mem_t *send, size_t send_off,
				nnp_mem_t *recv, size_t recv_off, size_t count,
				nnp_dtype_t dtype, nnp_redop_t op,
				nnp_comm_t *comm, nnp_stream_t *stream)
{
	struct coll_args a = {
		.opcode = NNP_CMD_REDUCE_SCATTER, .name = "reduce_scatter",
		.send = send,
		.send_off = send_off, .send_count = times_ranks(comm, count),
		.recv = recv, .recv_off = recv_off, .recv_count = count,
		.count = count, .dtype = dtype, .op = op,
	};

	if (!send)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "collective: send is NULL"));
	return coll_submit(&a, comm, stream);
}

nnp_result_t nnp_reduce(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			size_t recv_off, size_t count, nnp_dtype_t dtype,
			nnp_redop_t op, int root, nnp_comm_t *comm,
			nnp_stream_t *stream)
{
	struct coll_args a = {
		.opcode = NNP_CMD_REDUCE, .name = "reduce", .send = send,
		.send_off = send_off, .send_count = count, .recv = recv,
		.recv_off = recv_off, .recv_count = count, .count = count,
		.dtype = dtype, .op = op, .root = root,
	};

	/* Only the root's destination is written; the others name none. */
	if (comm && comm->rank != root)
		a.recv = NULL;
	else if (!recv)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_reduce: the root's recv is NULL"));
	if (!send)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_reduce: send is NULL"));
	return coll_submit(&a, comm, stream);
}

/*
 * Whether this rank's exchange @opcode with @root can go: routes to each
 * rank it sends to or receives from. The last error says why not.
 */
static nnp_result_t exchange_routes(const nnp_comm_t *comm, uint8_t opcode,
				    int root, const char *name)
{
	nnp_result_t res = nnp_comm_ready(comm, name);
	int p;

	if (res != NNP_SUCCESS)
		return nnp_group_refuse(res);
	if (!comm || comm->nranks < 2)
		return NNP_SUCCESS;	/* coll_submit() checks the rest */
	if (!comm->routes)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_NOT_SUPPORTED,
				"%s: the driver or device has no COMM_ROUTES (driver interface 1.8, hardware interface 1.12)",
				name));
	if (comm->nranks > NNP_HW_MAX_ROUTED_RANKS)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_NOT_SUPPORTED,
				"%s: %d ranks, past the %d a routed exchange labels",
				name, comm->nranks, NNP_HW_MAX_ROUTED_RANKS));
	for (p = 0; p < comm->nranks; p++) {
		bool peer = opcode == NNP_CMD_ALLTOALL ||
			    (comm->rank == root) != (p == root);

		if (p != comm->rank && peer && comm->routes[p] == NNP_ROUTE_NONE)
			return nnp_group_refuse(nnp_fail(NNP_ERROR_NO_PATH,
					"%s: rank %d has no path of up links to rank %d",
					name, comm->rank, p));
	}
	return NNP_SUCCESS;
}

nnp_result_t nnp_alltoall(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			  size_t recv_off, size_t count, nnp_dtype_t dtype,
			  nnp_comm_t *comm, nnp_stream_t *stream)
{
	struct coll_args a = {
		.opcode = NNP_CMD_ALLTOALL, .name = "alltoall", .send = send,
		.send_off = send_off, .send_count = times_ranks(comm, count),
		.recv = recv, .recv_off = recv_off,
		.recv_count = times_ranks(comm, count), .count = count,
		.dtype = dtype,
	};
	nnp_result_t res;

	if (!send || !recv)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_alltoall: send or recv is NULL"));
	res = exchange_routes(comm, a.opcode, 0, "nnp_alltoall");
	return res == NNP_SUCCESS ? coll_submit(&a, comm, stream) :
				    nnp_group_refuse(res);
}

nnp_result_t nnp_gather(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			size_t recv_off, size_t count, nnp_dtype_t dtype,
			int root, nnp_comm_t *comm, nnp_stream_t *stream)
{
	struct coll_args a = {
		.opcode = NNP_CMD_GATHER, .name = "gather", .send = send,
		.send_off = send_off, .send_count = count, .recv = recv,
		.recv_off = recv_off, .recv_count = times_ranks(comm, count),
		.count = count, .dtype = dtype, .root = root,
	};
	nnp_result_t res;

	/* Only the root's destination is written; the others name none. */
	if (comm && comm->rank != root)
		a.recv = NULL;
	else if (!recv)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_gather: the root's recv is NULL"));
	if (!send)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_gather: send is NULL"));
	res = exchange_routes(comm, a.opcode, root, "nnp_gather");
	return res == NNP_SUCCESS ? coll_submit(&a, comm, stream) :
				    nnp_group_refuse(res);
}

nnp_result_t nnp_scatter(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			 size_t recv_off, size_t count, nnp_dtype_t dtype,
			 int root, nnp_comm_t *comm, nnp_stream_t *stream)
{
	struct coll_args a = {
		.opcode = NNP_CMD_SCATTER, .name = "scatter", .send = send,
		.send_off = send_off, .send_count = times_ranks(comm, count),
		.recv = recv, .recv_off = recv_off, .recv_count = count,
		.count = count, .dtype = dtype, .root = root,
	};
	nnp_result_t res;

	/* Only the root's source is read; the others name none. */
	if (comm && comm->rank != root)
		a.send = NULL;
	else if (!send)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_scatter: the root's send is NULL"));
	if (!recv)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_scatter: recv is NULL"));
	res = exchange_routes(comm, a.opcode, root, "nnp_scatter");
	return res == NNP_SUCCESS ? coll_submit(&a, comm, stream) :
				    nnp_group_refuse(res);
}

/* SEND or RECV of @count elements with rank @peer through the link to it. */
static nnp_result_t p2p(uint8_t opcode, nnp_mem_t *mem, size_t off, size_t count,
			nnp_dtype_t dtype, int peer, nnp_comm_t *comm,
			nnp_stream_t *stream)
{
	size_t es = nnp_dtype_size(dtype);
	struct nnp_hw_queue_cmd c = { .opcode = opcode };
	char label[NNP_COMM_NAME_MAX + 8];
	const struct nnp_trace_op t = {
		.name = opcode == NNP_CMD_SEND ? "send" : "recv",
		.dtype = dtype, .count = count, .redop = -1, .root = -1,
		.peer = peer,
	};
	nnp_result_t res = nnp_comm_ready(comm, t.name);
	int port;

	if (res != NNP_SUCCESS)
		return nnp_group_refuse(res);
	if (!comm || !stream || !es || peer < 0 || peer >= comm->nranks ||
	    peer == comm->rank || !device_range_ok(stream, mem, off, count, es) ||
	    comm->dev != mem->dev)
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%s%s of %zu elements with peer %d: no comm or stream, an unknown type, the peer is not another rank, or the buffer is not device memory of the communicator's device or too small",
				nnp_comm_label(comm, label, sizeof(label)),
				opcode == NNP_CMD_SEND ? "nnp_send" : "nnp_recv", count, peer));
	port = opcode == NNP_CMD_SEND ? comm->send_port[peer] : comm->recv_port[peer];
	/* No link between the two chips: routed through others, if any. */
	if (port < 0 && (!comm->routes || comm->routes[peer] == NNP_ROUTE_NONE))
		return nnp_group_refuse(nnp_fail(NNP_ERROR_NO_PATH,
				"%srank %d: no up link %s rank %d for %s, and no route: %s",
				nnp_comm_label(comm, label, sizeof(label)),
				comm->rank, opcode == NNP_CMD_SEND ? "to" : "from",
				peer, opcode == NNP_CMD_SEND ? "nnp_send" : "nnp_recv",
				comm->routes ? "no path of up links, or a rank past 1023" :
				"the driver or device has no COMM_ROUTES (driver interface 1.8, hardware interface 1.12)"));
	if (opcode == NNP_CMD_SEND) {
		c.src_key = mem->key;
		c.src_off = off;
	} else {
		c.dst_key = mem->key;
		c.dst_off = off;
	}
	c.len = count * es;
	c.value = port < 0 ? NNP_P2P_ROUTED_VALUE(comm->id, (uint64_t)peer) :
			     NNP_P2P_VALUE(comm->id, (uint64_t)port);
	return nnp_group_refuse(nnp_op_submit(stream, comm, &t, &c, true));
}

nnp_result_t nnp_send(nnp_mem_t *send, size_t off, size_t count,
		      nnp_dtype_t dtype, int peer, nnp_comm_t *comm,
		      nnp_stream_t *stream)
{
	return p2p(NNP_CMD_SEND, send, off, count, dtype, peer, comm, stream);
}

nnp_result_t nnp_recv(nnp_mem_t *recv, size_t off, size_t count,
		      nnp_dtype_t dtype, int peer, nnp_comm_t *comm,
		      nnp_stream_t *stream)
{
	return p2p(NNP_CMD_RECV, recv, off, count, dtype, peer, comm, stream);
}

/* The rank at the far end of each port of @comm's chip, -1 where none. */
static void port_ranks(const nnp_comm_t *comm, int16_t *rank_at)
{
	int p;

	for (p = 0; p < NNP_MAX_PORTS; p++)
		rank_at[p] = -1;
	for (p = 0; p < comm->nranks; p++)
		if (comm->recv_port[p] >= 0 && comm->recv_port[p] < NNP_MAX_PORTS)
			rank_at[comm->recv_port[p]] = (int16_t)p;
}

nnp_result_t nnp_recv_any(nnp_mem_t *recv, size_t off, size_t count,
			  nnp_dtype_t dtype, int *source, nnp_comm_t *comm,
			  nnp_stream_t *stream)
{
	size_t es = nnp_dtype_size(dtype);
	struct nnp_hw_queue_cmd c = { .opcode = NNP_CMD_RECV };
	char label[NNP_COMM_NAME_MAX + 8];
	const struct nnp_trace_op t = {
		.name = "recv", .dtype = dtype, .count = count, .redop = -1,
		.root = -1, .peer = -1,
	};
	int16_t rank_at[NNP_MAX_PORTS];
	nnp_result_t res = nnp_comm_ready(comm, t.name);

	if (source)
		*source = -1;
	/* Refused, not held: no member of a GROUP says whence it took. */
	if (nnp_group_open())
		return nnp_group_refuse(nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%snnp_recv_any inside a group: a group's receives name their peers",
				nnp_comm_label(comm, label, sizeof(label))));
	if (res != NNP_SUCCESS)
		return res;
	if (!comm || !stream || !source || !es || !recv ||
	    !device_range_ok(stream, recv, off, count, es) || comm->dev != recv->dev)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%snnp_recv_any of %zu elements: no comm, stream or source, an unknown type, or the buffer is not device memory of the communicator's device or too small",
				nnp_comm_label(comm, label, sizeof(label)), count);
	if (nnp_device_hw_minor(comm->dev) < 26)
		return nnp_fail(NNP_ERROR_NOT_SUPPORTED,
				"%snnp_recv_any: the device's hardware interface 1.%u has no receive from any source (1.26 has)",
				nnp_comm_label(comm, label, sizeof(label)),
				nnp_device_hw_minor(comm->dev));
	res = nnp_stream_expect_sources(stream);
	if (res != NNP_SUCCESS)
		return res;
	c.dst_key = recv->key;
	c.dst_off = off;
	c.len = count * es;
	c.value = NNP_P2P_ANY_VALUE(comm->id);
	port_ranks(comm, rank_at);
	res = nnp_op_submit(stream, comm, &t, &c, true);
	if (res == NNP_SUCCESS)
		nnp_stream_note_source(stream, source, rank_at);
	return res;
}
