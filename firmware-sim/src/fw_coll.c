// SPDX-License-Identifier: MIT
/*
 * Firmware simulator collectives: communicators and a pipelined ring
 * allreduce over inter-chip links, entirely in device memory.
 *
 * Allreduce is a reduce-scatter then an allgather around the ring: the
 * buffer is cut into one segment per rank, each segment into chunks, and
 * every step sends a chunk to the next rank and reduces the matching chunk
 * from the previous one as it arrives, so that sending and reducing overlap
 * across chips. Each rank sends 2(n-1) segments: 2(n-1)/n of the buffer.
 * A rank whose part fails tells the next rank, which fails and passes it
 * on, so every rank ends within the collective timeout. After a failure
 * the ranks no longer agree on where they are: the communicator is made
 * again, with a new epoch, before it is used again (as with NCCL's abort).
 */
#include <stdlib.h>
#include <string.h>

#include "fw_internal.h"
#include "fw_reduce.h"

#define CHUNK_BYTES (64u * 1024)

uint16_t nnp_fw_comm_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	struct nnp_hw_comm_args a;
	struct nnp_fw_comm *c;
	uint16_t status = NNP_STATUS_SUCCESS;

	memcpy(&a, cmd->args, sizeof(a));
	if (a.comm == 0 || a.comm >= NNP_HW_MAX_COMMS || a.nranks == 0 ||
	    a.nranks > 0xffff || a.rank >= a.nranks ||
	    (a.nranks > 1 && (a.send_port >= fw->cfg.num_ports ||
			      a.recv_port >= fw->cfg.num_ports)))
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	c = &fw->comms[a.comm];
	if (!nnp_fw_ctx_valid_locked(fw, a.ctx)) {
		status = NNP_STATUS_NOT_FOUND;
	} else if (c->ctx) {
		status = NNP_STATUS_BUSY;
	} else {
		c->ctx = a.ctx;
		c->nranks = a.nranks;
		c->rank = a.rank;
		c->send_port = a.send_port;
		c->recv_port = a.recv_port;
		c->epoch = a.epoch;
		c->seq = 0;
	}
	mtx_unlock(&fw->lock);
	return status;
}

uint16_t nnp_fw_comm_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	uint32_t ctx = cmd->args[0], comm = cmd->args[1];
	uint16_t status = NNP_STATUS_NOT_FOUND;

	mtx_lock(&fw->lock);
	if (comm && comm < NNP_HW_MAX_COMMS && ctx && fw->comms[comm].ctx == ctx) {
		memset(&fw->comms[comm], 0, sizeof(fw->comms[comm]));
		status = NNP_STATUS_SUCCESS;
	}
	mtx_unlock(&fw->lock);
	return status;
}

void nnp_fw_comms_clear_locked(struct nnp_fw *fw, uint32_t ctx)
{
	uint32_t i;

	for (i = 1; i < NNP_HW_MAX_COMMS; i++)
		if (fw->comms[i].ctx && (!ctx || fw->comms[i].ctx == ctx))
			memset(&fw->comms[i], 0, sizeof(fw->comms[i]));
}

struct ring {
	struct nnp_fw *fw;
	struct nnp_fw_comm c;
	uint64_t tag;
	uint8_t *buf;		/* the destination, reduced in place */
	uint8_t *tmp;		/* one received chunk */
	size_t es;
	uint64_t count;
	unsigned int dtype, op;
};

static uint64_t seg_start(const struct ring *r, uint32_t k)
{
	return (uint64_t)((unsigned __int128)r->count * k / r->c.nranks);
}

static uint64_t seg_len(const struct ring *r, uint32_t k)
{
	return seg_start(r, k + 1) - seg_start(r, k);
}

/*
 * One ring step: send segment @out to the next rank while receiving
 * segment @in from the previous one, chunk by chunk; each received chunk
 * is reduced into (@reduce) or copied over the destination.
 */
static uint16_t ring_step(struct ring *r, uint32_t out, uint32_t in, bool reduce)
{
	uint64_t chunk = CHUNK_BYTES / r->es;
	uint64_t out_len = seg_len(r, out), in_len = seg_len(r, in);
	uint64_t most = out_len > in_len ? out_len : in_len, off;
	uint16_t st;

	for (off = 0; off < most; off += chunk) {
		if (off < out_len) {
			uint64_t n = out_len - off < chunk ? out_len - off : chunk;

			st = nnp_fw_icl_send(r->fw, r->c.send_port, r->tag, false,
					     r->buf + (seg_start(r, out) + off) * r->es,
					     n * r->es);
			if (st)
				return st;
		}
		if (off < in_len) {
			uint64_t n = in_len - off < chunk ? in_len - off : chunk;
			uint8_t *at = r->buf + (seg_start(r, in) + off) * r->es;

			st = nnp_fw_icl_recv(r->fw, r->c.recv_port, r->tag,
					     reduce ? r->tmp : at, n * r->es);
			if (st)
				return st;
			if (reduce)
				nnp_fw_reduce(r->dtype, r->op, at, r->tmp, n);
		}
	}
	return NNP_STATUS_SUCCESS;
}

static uint16_t ring_allreduce(struct ring *r)
{
	uint32_t n = r->c.nranks, me = r->c.rank, s, own;
	uint16_t st = NNP_STATUS_SUCCESS;

	for (s = 0; s + 1 < n && !st; s++)
		st = ring_step(r, (me + n - s) % n, (me + 2 * n - s - 1) % n, true);
	/* This rank now holds the full reduction of one segment. */
	own = (me + 1) % n;
	if (!st && r->op == NNP_OP_AVG)
		nnp_fw_divide(r->dtype, r->buf + seg_start(r, own) * r->es,
			      seg_len(r, own), n);
	for (s = 0; s + 1 < n && !st; s++)
		st = ring_step(r, (me + 1 + n - s) % n, (me + n - s) % n, false);
	return st;
}

uint16_t nnp_fw_allreduce(struct nnp_fw *fw, uint32_t ctx,
			  const struct nnp_hw_queue_cmd *cmd,
			  const struct nnp_fw_span *src,
			  const struct nnp_fw_span *dst, uint64_t *local)
{
	uint32_t comm = NNP_COLL_COMM(cmd->value);
	struct ring r = {
		.fw = fw,
		.dtype = NNP_COLL_DTYPE(cmd->value),
		.op = NNP_COLL_OP(cmd->value),
		.count = cmd->len,
	};
	uint8_t *from;
	uint16_t st;

	/* Payload never crosses the host: both sides are device memory. */
	if (src->type != NNP_KEY_TYPE_DEVICE || dst->type != NNP_KEY_TYPE_DEVICE)
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	st = comm && comm < NNP_HW_MAX_COMMS && fw->comms[comm].ctx == ctx ?
	     NNP_STATUS_SUCCESS : NNP_STATUS_NOT_FOUND;
	if (!st) {
		r.c = fw->comms[comm];
		r.tag = (uint64_t)comm << 48 | (uint64_t)r.c.epoch << 16 |
			(fw->comms[comm].seq++ & 0xffff);
	}
	mtx_unlock(&fw->lock);
	if (st)
		return st;

	r.es = nnp_fw_dtype_size(r.dtype);
	r.buf = (uint8_t *)fw->cfg.mem + dst->dev_base + dst->start;
	from = (uint8_t *)fw->cfg.mem + src->dev_base + src->start;
	if (from != r.buf) {
		memmove(r.buf, from, r.count * r.es);
		*local += r.count * r.es;
	}
	if (r.c.nranks == 1)
		return NNP_STATUS_SUCCESS;

	nnp_fw_icl_purge(fw, r.c.recv_port, comm, r.tag);
	r.tmp = malloc(CHUNK_BYTES);
	st = r.tmp ? ring_allreduce(&r) : NNP_STATUS_NO_RESOURCES;
	free(r.tmp);
	if (st && st != NNP_STATUS_ABORTED)
		nnp_fw_guest_error(fw, "allreduce on comm %u failed: status 0x%x",
				   comm, st);
	/* Pass the failure on so that the whole ring stops. */
	if (st)
		nnp_fw_icl_send(fw, r.c.send_port, r.tag, true, NULL, 0);
	return st;
}
