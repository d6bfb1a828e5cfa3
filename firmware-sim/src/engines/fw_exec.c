// SPDX-License-Identifier: MIT
/*
 * Firmware simulator DMA engine: user queue commands executed against
 * memory named by (key, offset).
 *
 * Every access is resolved through the context's key table first (owner,
 * rights, bounds), so a command either touches exactly the memory its keys
 * name or fails before touching anything. Device memory is reached
 * directly; host memory through the key's page list, in runs of pages
 * that are contiguous in host memory, each run of more than a page mapped
 * for a plain memcpy when the host allows it (dma_map), else copied by
 * dma_read/dma_write.
 */
#include <stdlib.h>
#include <string.h>

#include "fw_engines.h"

/* Bounce buffer for host-to-host copies and host fills that cannot map. */
#define BOUNCE_SIZE (64u * 1024)
/* Most bytes one mapping covers: bounds the walk along the page list. */
#define RUN_MAX (4u << 20)
/*
 * Fewest bytes worth a mapping: up to a page, dma_read/dma_write cost one
 * translation as a mapping does, without the mapping's bookkeeping.
 */
#define MAP_MIN (NNP_HW_PAGE_SIZE + 1)

/*
 * The contiguous piece of @s at byte @pos: device pointer, or host address
 * and the run of pages from there that follow each other in host memory.
 */
struct piece {
	uint8_t *ptr;		/* device memory, or NULL for host */
	uint64_t dma;		/* host DMA address */
	uint64_t len;
};

static struct piece span_piece(struct nnp_fw *fw, const struct nnp_fw_span *s,
			       uint64_t pos)
{
	uint64_t at = s->start + pos;
	struct piece p = { 0 };

	if (s->type == NNP_KEY_TYPE_DEVICE) {
		p.ptr = (uint8_t *)fw->cfg.mem + s->dev_base + at;
		p.len = s->len - pos;
	} else {
		uint64_t byte = s->page_offset + at;
		uint64_t page = byte / NNP_HW_PAGE_SIZE;
		uint64_t in_page = byte % NNP_HW_PAGE_SIZE;
		uint64_t left = s->len - pos;

		p.dma = s->pages[page] + in_page;
		p.len = NNP_HW_PAGE_SIZE - in_page;
		while (p.len < left && p.len < RUN_MAX &&
		       s->pages[page + 1] == s->pages[page] + NNP_HW_PAGE_SIZE) {
			page++;
			p.len += NNP_HW_PAGE_SIZE;
		}
		if (p.len > left)
			p.len = left;
	}
	return p;
}

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a < b ? a : b;

	return m < c ? m : c;
}

/*
 * A pointer to @p for direct access: device memory, or host memory mapped
 * for at most *@n bytes (*@n shrinks to what was mapped); NULL if the host
 * memory cannot be mapped, or is not worth it.
 */
static uint8_t *piece_map(struct nnp_fw *fw, const struct piece *p,
			  uint64_t *n, bool write)
{
	if (p->ptr)
		return p->ptr;
	if (!fw->host.dma_map || *n < MAP_MIN)
		return NULL;
	return fw->host.dma_map(fw->host.opaque, p->dma, n, write);
}

static void piece_unmap(struct nnp_fw *fw, const struct piece *p, void *m,
			uint64_t n, bool write, uint64_t done)
{
	if (m && !p->ptr)
		fw->host.dma_unmap(fw->host.opaque, m, n, write, done);
}

struct xfer {
	uint64_t host;		/* bytes read from or written to host memory */
	uint64_t peer;		/* ... to or from another device's (PEER keys) */
	uint64_t local;		/* bytes moved within device memory */
	uint64_t start_ns;	/* the command's modeled start */
};

/* @n bytes moved to or from @s, if it is not device memory. */
static void count_bus(struct xfer *x, const struct nnp_fw_span *s, uint64_t n)
{
	if (s->type == NNP_KEY_TYPE_PEER)
		x->peer += n;
	else if (s->type != NNP_KEY_TYPE_DEVICE)
		x->host += n;
}

/*
 * Copy up to @n bytes from @s to @d by mapping the host side(s); returns
 * the bytes copied, 0 if a host side would not map.
 */
static uint64_t copy_mapped(struct nnp_fw *fw, const struct piece *s,
			    const struct piece *d, uint64_t n)
{
	uint64_t sn = n, dn;
	uint8_t *sp = piece_map(fw, s, &sn, false);
	uint8_t *dp = NULL;

	dn = sn;
	if (sp)
		dp = piece_map(fw, d, &dn, true);
	if (dp)
		memmove(dp, sp, dn);
	else
		dn = 0;
	piece_unmap(fw, d, dp, dn, true, dn);
	piece_unmap(fw, s, sp, sn, false, dn);
	return dn;
}

/* Copy up to @n bytes from @s to @d by dma_read/dma_write; a DMA status. */
static uint16_t copy_dma(struct nnp_fw *fw, const struct piece *s,
			 const struct piece *d, uint64_t n, uint8_t **bounce)
{
	void *o = fw->host.opaque;

	if (s->ptr)
		return fw->host.dma_write(o, d->dma, s->ptr, n) ?
		       NNP_STATUS_DMA_ERROR : NNP_STATUS_SUCCESS;
	if (d->ptr)
		return fw->host.dma_read(o, s->dma, d->ptr, n) ?
		       NNP_STATUS_DMA_ERROR : NNP_STATUS_SUCCESS;
	if (!*bounce && !(*bounce = malloc(BOUNCE_SIZE)))
		return NNP_STATUS_NO_RESOURCES;
	if (fw->host.dma_read(o, s->dma, *bounce, n) ||
	    fw->host.dma_write(o, d->dma, *bounce, n))
		return NNP_STATUS_DMA_ERROR;
	return NNP_STATUS_SUCCESS;
}

static uint16_t copy_spans(struct nnp_fw *fw, const struct nnp_fw_span *src,
			   const struct nnp_fw_span *dst, struct xfer *x)
{
	uint8_t *bounce = NULL;
	uint64_t pos = 0;
	uint16_t status = NNP_STATUS_SUCCESS;

	if (src->type == NNP_KEY_TYPE_DEVICE && dst->type == NNP_KEY_TYPE_DEVICE) {
		/* One contiguous range each: memmove handles overlap. */
		memmove(span_piece(fw, dst, 0).ptr, span_piece(fw, src, 0).ptr,
			src->len);
		x->local += src->len;
		return status;
	}
	while (pos < src->len && !status) {
		struct piece s = span_piece(fw, src, pos);
		struct piece d = span_piece(fw, dst, pos);
		uint64_t n = copy_mapped(fw, &s, &d, s.len < d.len ? s.len : d.len);

		if (!n) {
			n = min3(s.len, d.len, BOUNCE_SIZE);
			status = copy_dma(fw, &s, &d, n, &bounce);
		}
		/* Read from or written to host or peer memory, or both. */
		count_bus(x, src, n);
		count_bus(x, dst, n);
		pos += n;
	}
	free(bounce);
	return status;
}

static uint16_t fill_span(struct nnp_fw *fw, const struct nnp_fw_span *dst,
			  uint8_t byte, struct xfer *x)
{
	uint8_t *pattern = NULL;
	uint64_t pos = 0;
	uint16_t status = NNP_STATUS_SUCCESS;

	if (dst->type == NNP_KEY_TYPE_DEVICE) {
		memset(span_piece(fw, dst, 0).ptr, byte, dst->len);
		x->local += dst->len;
		return status;
	}
	while (pos < dst->len && !status) {
		struct piece d = span_piece(fw, dst, pos);
		uint64_t n = d.len;
		uint8_t *m = piece_map(fw, &d, &n, true);

		if (m) {
			memset(m, byte, n);
			piece_unmap(fw, &d, m, n, true, n);
		} else {
			n = d.len < BOUNCE_SIZE ? d.len : BOUNCE_SIZE;
			if (!pattern) {
				pattern = malloc(BOUNCE_SIZE);
				if (!pattern)
					return NNP_STATUS_NO_RESOURCES;
				memset(pattern, byte, BOUNCE_SIZE);
			}
			if (fw->host.dma_write(fw->host.opaque, d.dma, pattern, n))
				status = NNP_STATUS_DMA_ERROR;
		}
		count_bus(x, dst, n);
		pos += n;
	}
	free(pattern);
	return status;
}

/* The modeled time the command starts at (fw_clock.c). */
static uint16_t write_timestamp(struct nnp_fw *fw, const struct nnp_fw_span *dst,
				struct xfer *x)
{
	uint64_t now = x->start_ns;
	uint64_t pos = 0;

	/* Device memory, or host pages that may split the 8 bytes. */
	while (pos < sizeof(now)) {
		struct piece d = span_piece(fw, dst, pos);
		uint64_t n = d.len;

		if (d.ptr) {
			memcpy(d.ptr, (uint8_t *)&now + pos, sizeof(now) - pos);
			x->local += sizeof(now) - pos;
			return NNP_STATUS_SUCCESS;
		}
		if (fw->host.dma_write(fw->host.opaque, d.dma,
				       (uint8_t *)&now + pos, n))
			return NNP_STATUS_DMA_ERROR;
		count_bus(x, dst, n);
		pos += n;
	}
	return NNP_STATUS_SUCCESS;
}

/* The fields each opcode uses; all others must be zero. */
#define USES_SRC	(1u << 0)
#define USES_DST	(1u << 1)
#define USES_LEN	(1u << 2)
#define USES_VALUE	(1u << 3)	/* a fill byte */
#define USES_COLL	(1u << 4)	/* dtype, op and communicator */
#define USES_P2P	(1u << 5)	/* communicator and port */
#define USES_REDOP	(1u << 6)	/* the collective reduces: no U8 */
#define USES_FUSE	(1u << 7)	/* NNP_CMD_FLAG_FUSE (v1.25) */

static bool fields_ok(const struct nnp_hw_queue_cmd *c, unsigned int uses)
{
	uint8_t flags = uses & USES_FUSE ? NNP_CMD_FLAG_FUSE : 0;

	if ((c->flags & ~flags) || c->rsvd0 || c->rsvd1 || c->rsvd2)
		return false;
	if (!(uses & USES_SRC) && (c->src_key || c->src_off))
		return false;
	if (!(uses & USES_DST) && (c->dst_key || c->dst_off))
		return false;
	if (!(uses & USES_LEN) && c->len)
		return false;
	if (uses & USES_VALUE)
		return c->value <= 0xff;
	if (uses & USES_COLL)
		return NNP_COLL_DTYPE(c->value) <
		       (uses & USES_REDOP ? NNP_DTYPE_REDUCIBLE : NNP_DTYPE_COUNT) &&
		       NNP_COLL_OP(c->value) < NNP_OP_COUNT &&
		       !NNP_COLL_RSVD(c->value);
	/* A port, routed (v1.12) a peer rank, or a RECV's any (v1.26). */
	if (uses & USES_P2P && c->value & NNP_P2P_ANY)
		return c->opcode == NNP_CMD_RECV &&
		       c->value == NNP_P2P_ANY_VALUE(NNP_P2P_COMM(c->value));
	if (uses & USES_P2P)
		return c->value & NNP_P2P_ROUTED ?
		       !(c->value >> 49) && !NNP_P2P_PORT(c->value) :
		       !(c->value >> 32);
	return !c->value;
}

static unsigned int opcode_uses(uint8_t opcode, bool *known)
{
	*known = true;
	switch (opcode) {
	case NNP_CMD_NOP:
	case NNP_CMD_BARRIER:
		return 0;
	case NNP_CMD_COPY:
		return USES_SRC | USES_DST | USES_LEN;
	case NNP_CMD_FILL:
		return USES_DST | USES_LEN | USES_VALUE;
	case NNP_CMD_TIMESTAMP:
		return USES_DST;
	case NNP_CMD_ALLREDUCE:
		return USES_SRC | USES_DST | USES_LEN | USES_COLL | USES_REDOP |
		       USES_FUSE;
	case NNP_CMD_REDUCE_SCATTER:
	case NNP_CMD_REDUCE:
		return USES_SRC | USES_DST | USES_LEN | USES_COLL | USES_REDOP;
	case NNP_CMD_BROADCAST:
	case NNP_CMD_ALLGATHER:
	case NNP_CMD_ALLTOALL:
	case NNP_CMD_GATHER:
	case NNP_CMD_SCATTER:
		return USES_SRC | USES_DST | USES_LEN | USES_COLL;
	case NNP_CMD_SEND:
		return USES_SRC | USES_LEN | USES_P2P;
	case NNP_CMD_RECV:
		return USES_DST | USES_LEN | USES_P2P;
	}
	*known = false;
	return 0;
}

/* COPY, FILL, TIMESTAMP: resolve the keys, then move the bytes. */
static uint16_t exec_transfer(struct nnp_fw *fw, uint32_t ctx,
			      const struct nnp_hw_queue_cmd *cmd,
			      unsigned int uses, struct xfer *x)
{
	struct nnp_fw_span src, dst;
	uint16_t status = NNP_STATUS_SUCCESS;

	if (uses & USES_SRC)
		status = nnp_fw_key_resolve(fw, ctx, cmd->src_key, cmd->src_off,
					    cmd->len, NNP_KEY_READ, &src);
	if (!status && (uses & USES_DST))
		status = nnp_fw_key_resolve(fw, ctx, cmd->dst_key, cmd->dst_off,
					    cmd->opcode == NNP_CMD_TIMESTAMP ?
					    sizeof(uint64_t) : cmd->len,
					    NNP_KEY_WRITE, &dst);
	if (status) {
		nnp_fw_guest_error(fw, "queue cid %u: memory access refused (status 0x%x)",
				   cmd->cid, status);
		return status;
	}

	switch (cmd->opcode) {
	case NNP_CMD_COPY:
		return copy_spans(fw, &src, &dst, x);
	case NNP_CMD_FILL:
		return fill_span(fw, &dst, (uint8_t)cmd->value, x);
	case NNP_CMD_TIMESTAMP:
		return write_timestamp(fw, &dst, x);
	}
	return NNP_STATUS_SUCCESS;
}

void nnp_fw_count_local(struct nnp_fw *fw, uint64_t bytes)
{
	mtx_lock(&fw->lock);
	fw->counters.local_bytes += bytes;
	mtx_unlock(&fw->lock);
}

uint16_t nnp_fw_exec(struct nnp_fw *fw, uint32_t ctx,
		     const struct nnp_hw_queue_cmd *cmd, struct nnp_fw_op **op)
{
	struct xfer x = { 0 };
	uint64_t pcie_ns = 0, hbm_ns;
	uint16_t status;
	bool known;
	unsigned int uses = opcode_uses(cmd->opcode, &known);

	if (!known) {
		nnp_fw_guest_error(fw, "queue cid %u: unknown opcode 0x%x",
				   cmd->cid, cmd->opcode);
		return NNP_STATUS_INVALID_OPCODE;
	}
	if (!fields_ok(cmd, uses)) {
		nnp_fw_guest_error(fw, "queue cid %u: reserved field set", cmd->cid);
		return NNP_STATUS_INVALID_FIELD;
	}

	x.start_ns = nnp_fw_clock_begin(fw);
	/* Links' commands depend on the communicator: they check their own. */
	if (uses & (USES_COLL | USES_P2P)) {
		status = !(uses & USES_COLL) ? nnp_fw_p2p(fw, ctx, cmd, op) :
			 nnp_fw_is_exchange(cmd->opcode) ?
			 nnp_fw_exchange(fw, ctx, cmd, op) :
			 nnp_fw_collective(fw, ctx, cmd, op);
		if (*op)
			(*op)->start_ns = (*op)->t_ns = x.start_ns;
		return status;
	}
	status = exec_transfer(fw, ctx, cmd, uses, &x);

	/* Device memory is read and written for a copy, written for a fill. */
	hbm_ns = nnp_fw_hbm_ns(fw, cmd->opcode == NNP_CMD_COPY ? 2 * x.local :
			       x.local);
	/* Peer to peer crosses PCIe as host DMA does. */
	if (x.host + x.peer)
		pcie_ns = fw->cfg.pcie_latency_ns +
			  nnp_fw_ns_at(x.host + x.peer, fw->cfg.pcie_mbps);
	/* NOP and BARRIER move nothing: 0 ns, on no engine's account. */
	nnp_fw_clock_end(fw, ctx, NNP_HW_ENGINE_COPY, x.start_ns,
			 x.start_ns + nnp_fw_max_ns(hbm_ns, pcie_ns),
			 hbm_ns, pcie_ns);

	mtx_lock(&fw->lock);
	fw->counters.host_dma_bytes += x.host;
	fw->counters.peer_dma_bytes += x.peer;
	fw->counters.local_bytes += x.local;
	mtx_unlock(&fw->lock);
	return status;
}
