// SPDX-License-Identifier: MIT
/*
 * Firmware simulator links shared with a remote peer: a chip in another
 * process on this host that maps this chip's device memory read-only, as
 * this one maps the peer's (the embedder exchanges the memory and then
 * calls nnp_fw_link_share_remote()). A collective's chunk crosses as on
 * an in-process link (fw_lend.c), as a descriptor: the host sends where
 * the chunk lies, its length and a tag (icl_tx_lent), the peer queues it
 * (nnp_fw_icl_deliver_lent()), reduces or copies straight from our memory
 * and gives the tag back (icl_give_back, then nnp_fw_icl_given_back()
 * here). Copies (point-to-point messages, aborts) take the remote path.
 *
 * A tag names one slot of the port's table of chunks out at the peer and
 * one use of it (a generation), so a peer can give back only what it
 * holds, once. The table is the sender's credits: at most the port's
 * bound of packets and bytes are out at once, so a sender waits (parked)
 * where the receiver would refuse, and the receiver never drops an honest
 * sender's chunk for want of room. A chunk counts as lent when it takes a
 * slot and as returned when the slot is freed: given back, its send
 * failed, or the link stopped being shared; whichever comes first.
 *
 * The peer is another process and may not answer: a command ending early
 * asks for its chunks back (icl_reclaim) and waits at most
 * NNP_FW_RECLAIM_MS, then forgets them and has the embedder drop the link
 * (icl_drop). A command ends on the admin path too (a queue or context
 * destroyed), which must answer the driver well within its own timeout
 * whatever a peer does: the peer's silence costs its link, not the device.
 * What was lent is ours, mapped read-only by the peer: nothing it does
 * can write it. Forgotten chunks hold their slot, not the command, until
 * given back or the link stops being shared (the connection is gone), so
 * a late give-back frees nothing lent since. The peer then may read
 * memory we write again; it can read all of it anyway, and only its own
 * result suffers.
 */
#include <stdlib.h>
#include <time.h>

#include "fw_transport.h"

/*
 * How long a command ending early waits for the peer to give back: an
 * honest peer answers a RECLAIM in far less, and once one wait ran out
 * the link drops and frees every slot, so a teardown waits about this
 * once per silent link: well inside the driver's admin timeout (5 s).
 */
#define NNP_FW_RECLAIM_MS	250

/* A tag: the slot in the low bits, the use above. */
#define SLOT_BITS	10
#define SLOTS		NNP_FW_PORT_RX_PACKETS
#define GEN_MASK	((1u << (32 - SLOT_BITS)) - 1)

_Static_assert(SLOTS == 1u << SLOT_BITS, "a tag's slot bits name every slot");

static uint32_t tag_of(const struct nnp_fw_port *p, uint32_t slot)
{
	return p->lent[slot].gen << SLOT_BITS | slot;
}

/*
 * Slot @i is free again, with p->lock held: a chunk its lender still
 * counts comes back to it (who may wait: lent_back).
 */
static void slot_free_locked(struct nnp_fw_port *p, uint32_t i)
{
	struct nnp_fw_lent *l = &p->lent[i];

	if (l->owner)
		atomic_fetch_add(&l->owner->returned, 1);
	l->owner = NULL;
	l->used = false;
	l->next_free = p->lent_free;
	p->lent_free = i;
	p->lent_out--;
	p->lent_out_bytes -= l->len;
	cnd_broadcast(&p->lent_back);
}

/* A slot for @len bytes lent by @op, with p->lock held; SLOTS if none. */
static uint32_t slot_take_locked(struct nnp_fw_port *p, struct nnp_fw_op *op,
				 size_t len)
{
	uint32_t i = p->lent_free;

	/* The copies' credits and the slots share the peer's room. */
	if (i == SLOTS || !nnp_fw_icl_peer_room_locked(p, len))
		return SLOTS;
	p->lent_free = p->lent[i].next_free;
	p->lent[i] = (struct nnp_fw_lent){
		.used = true, .owner = op, .len = len, .num = op->lent + 1,
		.gen = (p->lent[i].gen + 1) & GEN_MASK,
	};
	p->lent_out++;
	p->lent_out_bytes += len;
	return i;
}

static struct nnp_fw_lent *lent_table_new(void)
{
	struct nnp_fw_lent *t = calloc(SLOTS, sizeof(*t));
	uint32_t i;

	for (i = 0; t && i < SLOTS; i++)
		t[i].next_free = i + 1;
	return t;
}

static bool in_device_memory(const struct nnp_fw *fw, const void *data,
			     size_t len)
{
	const uint8_t *mem = fw->cfg.mem, *d = data;

	return d >= mem && (uint64_t)(d - mem) <= fw->cfg.mem_size &&
	       len <= fw->cfg.mem_size - (uint64_t)(d - mem);
}

/*
 * Lend the chunk of @tpl to the peer under a tag, once the peer has room
 * (credits), or park @op until it has; a copy takes the remote path.
 */
static uint16_t shared_send(struct nnp_fw *fw, struct nnp_fw_op *op,
			    uint32_t port, const struct nnp_fw_packet *tpl,
			    uint64_t at)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint64_t wire = nnp_fw_ns_at(tpl->len, fw->cfg.icl_mbps), depart;
	uint32_t slot = SLOTS, tag = 0, wakes;
	bool shared, up;
	uint16_t st;

	if (!tpl->owner || !fw->host.icl_tx_lent ||
	    !in_device_memory(fw, tpl->data, tpl->len))
		return nnp_fw_icl_remote_send(fw, op, port, tpl, at);
	do {
		wakes = nnp_fw_icl_wakes(fw, port);
		mtx_lock(&p->lock);
		shared = p->tp == &nnp_fw_shared_transport;
		up = p->up;
		if (shared && up)
			slot = slot_take_locked(p, tpl->owner, tpl->len);
		if (slot != SLOTS)
			tag = tag_of(p, slot);
		depart = nnp_fw_tx_fit(&p->model_tx, at, wire);
		mtx_unlock(&p->lock);
		/* No longer shared: the link went (or goes) down; copy. */
		if (!shared || !up)
			return nnp_fw_icl_remote_send(fw, op, port, tpl, at);
		st = slot == SLOTS ?
		     nnp_fw_icl_park_for_room(fw, op, port, wakes) :
		     NNP_STATUS_SUCCESS;
	} while (st == NNP_FW_SEND_AGAIN);
	if (st)
		return st;
	tpl->owner->lent++;
	if (!fw->host.icl_tx_lent(fw->host.opaque, port, tpl->epoch, tpl->seq,
				  depart + wire + fw->cfg.icl_latency_ns,
				  (uint64_t)(tpl->data - (uint8_t *)fw->cfg.mem),
				  tpl->len, tag)) {
		nnp_fw_icl_sent(fw, op, port, tpl->len, depart, wire);
		return NNP_STATUS_SUCCESS;
	}
	mtx_lock(&p->lock);
	p->errors++;
	/* Unless the link stopped being shared meanwhile and freed it. */
	if (p->lent && p->lent[slot].used && tag_of(p, slot) == tag)
		slot_free_locked(p, slot);
	mtx_unlock(&p->lock);
	nnp_fw_icl_wake(fw, port);
	return NNP_STATUS_LINK_DOWN;
}

/* The shared transport's out_locked: a slot of @op's up to @upto still used. */
static bool shared_out_locked(const struct nnp_fw_port *p,
			      const struct nnp_fw_op *op, uint32_t upto)
{
	uint32_t i;

	for (i = 0; p->lent && p->lent_out && i < SLOTS; i++)
		if (p->lent[i].used && p->lent[i].owner == op &&
		    p->lent[i].num <= upto)
			return true;
	return false;
}

/* Forget what @op lent on @p, with p->lock held: counted back now. */
static void forget_locked(struct nnp_fw_port *p, struct nnp_fw_op *op)
{
	uint32_t i;

	for (i = 0; i < SLOTS; i++) {
		if (p->lent[i].used && p->lent[i].owner == op) {
			atomic_fetch_add(&op->returned, 1);
			p->lent[i].owner = NULL;
		}
	}
	cnd_broadcast(&p->lent_back);
}

static void shared_reclaim(struct nnp_fw *fw, struct nnp_fw_op *op,
			   uint32_t port)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint32_t tags[SLOTS], i;
	struct timespec until;
	size_t n = 0;

	mtx_lock(&p->lock);
	for (i = 0; p->lent && i < SLOTS; i++)
		if (p->lent[i].used && p->lent[i].owner == op)
			tags[n++] = tag_of(p, i);
	mtx_unlock(&p->lock);
	if (n && fw->host.icl_reclaim)
		fw->host.icl_reclaim(fw->host.opaque, port, tags, n);

	timespec_get(&until, TIME_UTC);
	until.tv_nsec += NNP_FW_RECLAIM_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	mtx_lock(&p->lock);
	while (atomic_load(&op->returned) != op->lent &&
	       cnd_timedwait(&p->lent_back, &p->lock, &until) != thrd_timedout)
		;
	if (atomic_load(&op->returned) != op->lent && p->lent) {
		forget_locked(p, op);
		mtx_unlock(&p->lock);
		if (fw->host.warning)
			fw->host.warning(fw->host.opaque,
					 "the peer of a shared link did not give "
					 "lent chunks back in time: dropping the link");
		if (fw->host.icl_drop)
			fw->host.icl_drop(fw->host.opaque, port);
		return;
	}
	mtx_unlock(&p->lock);
}

const struct nnp_fw_transport nnp_fw_shared_transport = {
	.remote = true,
	.send = shared_send,
	.room_freed = nnp_fw_icl_room_freed_none,
	.reclaim = shared_reclaim,
	.out_locked = shared_out_locked,
};

/*
 * The peer's chunks queued on @p, dropped and so given back (all of them,
 * or the one of @tag), with p->lock held.
 */
static void drop_peer_chunks_locked(struct nnp_fw_port *p, bool all,
				    uint32_t tag)
{
	struct nnp_fw_packet **link = &p->rx_head, *prev = NULL;

	while (*link) {
		struct nnp_fw_packet *pk = *link;

		if (pk->desc && !pk->owner && (all || pk->tag == tag)) {
			nnp_fw_icl_drop_at(p, link, prev);
			if (!all)
				return;
			continue;
		}
		prev = pk;
		link = &pk->next;
	}
}

int nnp_fw_link_share_remote(struct nnp_fw *fw, unsigned int port, bool on)
{
	struct nnp_fw_port *p = nnp_fw_remote_port_lock(fw, port);
	uint32_t i;

	if (!p)
		return -1;
	if (on) {
		if (!p->lent)
			p->lent = lent_table_new();
		if (!p->desc_pool) {
			p->desc_pool = calloc(SLOTS, sizeof(*p->desc_pool));
			for (i = 0; p->desc_pool && i + 1 < SLOTS; i++)
				p->desc_pool[i].next = &p->desc_pool[i + 1];
			p->desc_free = p->desc_pool;
		}
		if (!p->lent || !p->desc_pool) {
			mtx_unlock(&p->lock);
			return -1;
		}
		p->tp = &nnp_fw_shared_transport;
		mtx_unlock(&p->lock);
		return 0;
	}
	p->tp = &nnp_fw_remote_transport;
	drop_peer_chunks_locked(p, true, 0);
	while (p->peer_reads)
		cnd_wait(&p->lent_back, &p->lock);
	/* A relay that could not forward its chunk yet queued it again. */
	drop_peer_chunks_locked(p, true, 0);
	for (i = 0; p->lent && i < SLOTS; i++)
		if (p->lent[i].used)
			slot_free_locked(p, i);
	mtx_unlock(&p->lock);
	/* Lenders waiting for room or for their chunks go on. */
	nnp_fw_icl_wake(fw, port);
	return 0;
}

int nnp_fw_icl_deliver_lent(struct nnp_fw *fw, unsigned int port,
			    uint64_t epoch, uint32_t seq, uint64_t model_ns,
			    const void *data, size_t len, uint32_t tag)
{
	struct nnp_fw_packet pk = {
		.epoch = epoch, .seq = seq,
		.model_ns = model_ns, .len = len,
		.data = data, .desc = true, .tag = tag,
	};
	struct nnp_fw_port *p;
	bool shared;

	if (port >= fw->cfg.num_ports)
		return -1;
	p = &fw->ports[port];
	mtx_lock(&p->lock);
	shared = p->tp == &nnp_fw_shared_transport;
	if (!shared)
		p->errors++;
	mtx_unlock(&p->lock);
	/* Queued as a copy of @pk into a slot of the pool. */
	if (shared && !nnp_fw_icl_rx_arrive(fw, port, &pk, true))
		return 0;
	mtx_lock(&p->lock);
	nnp_fw_icl_give_back_locked(p, &pk);
	mtx_unlock(&p->lock);
	return -1;
}

int nnp_fw_icl_given_back(struct nnp_fw *fw, unsigned int port, uint32_t tag)
{
	uint32_t slot = tag & (SLOTS - 1);
	struct nnp_fw_port *p;
	int ret = -1;

	if (port >= fw->cfg.num_ports)
		return -1;
	p = &fw->ports[port];
	mtx_lock(&p->lock);
	if (p->tp == &nnp_fw_shared_transport && p->lent &&
	    p->lent[slot].used && tag_of(p, slot) == tag) {
		slot_free_locked(p, slot);
		ret = 0;
	}
	mtx_unlock(&p->lock);
	if (!ret)
		nnp_fw_icl_wake(fw, port);
	return ret;
}

void nnp_fw_icl_reclaim_lent(struct nnp_fw *fw, unsigned int port,
			     uint32_t tag)
{
	if (port >= fw->cfg.num_ports)
		return;
	mtx_lock(&fw->ports[port].lock);
	drop_peer_chunks_locked(&fw->ports[port], false, tag);
	mtx_unlock(&fw->ports[port].lock);
}
