// SPDX-License-Identifier: MIT
/*
 * A group's small collectives on one stream, run at once as one GROUP
 * (hardware interface 1.14): each waits for its neighbours while the
 * others do, so 32 allreduces of 8 bytes cost about one's latency, not
 * 32 of them, and their labels keep them apart on the links.
 *
 * The device does not order a GROUP's members, so what NCCL promises, a
 * stream's collectives in the order issued, holds only if none of them
 * touches memory another writes: one that does starts the next batch,
 * after this one. And a member that finds its peer's room for the
 * communicator full waits, possibly behind another member's packets
 * that the peer cannot take yet: so a batch holds only what may all be
 * in flight at once, well inside a communicator's room at a peer
 * (3 MiB and 768 packets, docs/hw-interface.md): collectives of at most
 * one chunk a ring step (64 KiB, each step then one packet a port), at
 * most 1 MiB and 384 packets of them together.
 */
#include "group_batch.h"
#include "internal.h"

#define MEMBER_MAX_BYTES	(64u << 10)
#define BATCH_MAX_BYTES		(1u << 20)
#define BATCH_MAX_PACKETS	384u

void nnp_coll_batch_init(struct coll_batch *b, uint32_t cap,
			 const struct nnp_hw_queue_cmd **members,
			 struct coll_span *reads, struct coll_span *writes)
{
	*b = (struct coll_batch){
		.members = members, .reads = reads, .writes = writes, .cap = cap,
	};
}

static bool ring_collective(uint8_t opcode)
{
	return opcode == NNP_CMD_ALLREDUCE || opcode == NNP_CMD_BROADCAST ||
	       opcode == NNP_CMD_ALLGATHER || opcode == NNP_CMD_REDUCE_SCATTER ||
	       opcode == NNP_CMD_REDUCE;
}

static bool overlap(const struct coll_span *a, const struct coll_span *b)
{
	return a->key && a->key == b->key && a->len && b->len &&
	       a->off < b->off + b->len && b->off < a->off + a->len;
}

/* Whether no span in @x can overlap @s. */
static bool box_misses(const struct coll_box *x, const struct coll_span *s)
{
	if (!x->key || !s->key || !s->len)
		return true;
	return !x->mixed && (s->key != x->key || s->off >= x->hi ||
			     s->off + s->len <= x->lo);
}

static void box_add(struct coll_box *x, const struct coll_span *s)
{
	if (!s->key || !s->len)
		return;
	if (!x->key) {
		*x = (struct coll_box){ s->key, false, s->off, s->off + s->len };
		return;
	}
	x->mixed |= s->key != x->key;
	if (s->off < x->lo)
		x->lo = s->off;
	if (s->off + s->len > x->hi)
		x->hi = s->off + s->len;
}

/*
 * Whether a member of @b touches what @w writes, or writes what @r reads.
 * Members issued over buffers of their own, one after another (the
 * usual group), lie outside each other's box: no span is looked at. With
 * 32 allreduces on each of 4 streams in a 4-chip guest, the boxes took
 * the batching of one stream's launch from 24-29 us to 12-15.
 */
static bool conflicts(const struct coll_batch *b, const struct coll_span *r,
		      const struct coll_span *w)
{
	uint32_t i;

	if (box_misses(&b->write_box, r) && box_misses(&b->write_box, w) &&
	    box_misses(&b->read_box, w))
		return false;
	for (i = 0; i < b->n; i++)
		if (overlap(&b->writes[i], r) || overlap(&b->writes[i], w) ||
		    overlap(&b->reads[i], w))
			return true;
	return false;
}

bool nnp_coll_batch_add(struct coll_batch *b, const struct nnp_hw_queue_cmd *cmd,
			int nranks)
{
	uint64_t part, all, most, packets;
	struct coll_span r, w;

	if (b->n == b->cap || !ring_collective(cmd->opcode) || nranks < 1)
		return false;
	part = cmd->len * nnp_dtype_size((nnp_dtype_t)NNP_COLL_DTYPE(cmd->value));
	all = part * (uint64_t)nranks;
	r = (struct coll_span){ cmd->src_key, cmd->src_off,
				cmd->opcode == NNP_CMD_REDUCE_SCATTER ? all : part };
	w = (struct coll_span){ cmd->dst_key, cmd->dst_off,
				cmd->opcode == NNP_CMD_ALLGATHER ? all : part };
	most = r.len > w.len ? r.len : w.len;
	/* An allreduce's ring steps: 2(n - 1), each a packet on a port. */
	packets = 2 * (uint64_t)(nranks - 1);
	if (most > MEMBER_MAX_BYTES || b->bytes + 2 * most > BATCH_MAX_BYTES ||
	    b->packets + packets > BATCH_MAX_PACKETS || conflicts(b, &r, &w))
		return false;
	b->members[b->n] = cmd;
	b->reads[b->n] = r;
	b->writes[b->n] = w;
	box_add(&b->read_box, &r);
	box_add(&b->write_box, &w);
	b->n++;
	b->bytes += 2 * most;
	b->packets += packets;
	return true;
}

uint32_t nnp_coll_batch_flush(struct coll_batch *b, struct nnp_hw_queue_cmd *cmds,
			      uint32_t n)
{
	uint32_t i;

	if (b->n > 1)
		cmds[n++] = (struct nnp_hw_queue_cmd){ .opcode = NNP_CMD_GROUP,
						       .len = b->n };
	for (i = 0; i < b->n; i++)
		cmds[n++] = *b->members[i];
	b->n = 0;
	b->bytes = 0;
	b->packets = 0;
	b->read_box = b->write_box = (struct coll_box){ 0 };
	return n;
}
