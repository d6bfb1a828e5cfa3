/* SPDX-License-Identifier: MIT */
/*
 * Firmware simulator byte order. Every field of nnp_hw.h is little-endian
 * in guest memory, and the firmware works on host integers: each DMA of a
 * hardware structure converts it here, on its way in and on its way out.
 * A swap is its own inverse, so one function converts either way; on a
 * little-endian host every one of them is the identity and compiles to
 * nothing.
 *
 * An admin command's argument words stay little-endian after the fetch:
 * some opcodes lay a structure with 64-bit fields over them, which must
 * be copied out of the raw bytes before it is converted.
 */
#ifndef FW_LE_H
#define FW_LE_H

#include <stdint.h>
#include <string.h>

#include "nnp_hw.h"

#define FW_HOST_LE	(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

static inline uint16_t fw_le16(uint16_t v)
{
	return FW_HOST_LE ? v : __builtin_bswap16(v);
}

static inline uint32_t fw_le32(uint32_t v)
{
	return FW_HOST_LE ? v : __builtin_bswap32(v);
}

static inline uint64_t fw_le64(uint64_t v)
{
	return FW_HOST_LE ? v : __builtin_bswap64(v);
}

/* A little-endian field at @p, whatever its alignment. */
static inline uint16_t fw_load_le16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return fw_le16(v);
}

static inline uint32_t fw_load_le32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return fw_le32(v);
}

static inline uint64_t fw_load_le64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return fw_le64(v);
}

/* Store @v as a little-endian field at @p, whatever its alignment. */
static inline void fw_store_le16(void *p, uint16_t v)
{
	v = fw_le16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void fw_store_le32(void *p, uint32_t v)
{
	v = fw_le32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void fw_store_le64(void *p, uint64_t v)
{
	v = fw_le64(v);
	memcpy(p, &v, sizeof(v));
}

/* Argument word @i of an admin command, as a host integer. */
static inline uint32_t fw_admin_arg(const struct nnp_hw_admin_cmd *c,
				    unsigned int i)
{
	return fw_le32(c->args[i]);
}

/* The header of an admin command; its argument words stay as they came. */
static inline void fw_le_admin_cmd(struct nnp_hw_admin_cmd *c)
{
	c->cid = fw_le16(c->cid);
	c->rsvd0 = fw_le32(c->rsvd0);
	c->addr = fw_le64(c->addr);
	c->len = fw_le32(c->len);
	c->rsvd1 = fw_le32(c->rsvd1);
}

static inline void fw_le_queue_cmd(struct nnp_hw_queue_cmd *c)
{
	c->cid = fw_le16(c->cid);
	c->rsvd0 = fw_le32(c->rsvd0);
	c->src_key = fw_le32(c->src_key);
	c->dst_key = fw_le32(c->dst_key);
	c->src_off = fw_le64(c->src_off);
	c->dst_off = fw_le64(c->dst_off);
	c->len = fw_le64(c->len);
	c->value = fw_le64(c->value);
	c->rsvd1 = fw_le64(c->rsvd1);
	c->rsvd2 = fw_le64(c->rsvd2);
}

static inline void fw_le_cqe(struct nnp_hw_cqe *c)
{
	c->result = fw_le32(c->result);
	c->sq_head = fw_le16(c->sq_head);
	c->cid = fw_le16(c->cid);
	c->status = fw_le16(c->status);
	c->phase = fw_le16(c->phase);
	c->rsvd = fw_le32(c->rsvd);
}

static inline void fw_le_key_args(struct nnp_hw_key_args *a)
{
	a->ctx = fw_le32(a->ctx);
	a->type = fw_le32(a->type);
	a->rights = fw_le32(a->rights);
	a->page_offset = fw_le32(a->page_offset);
	a->length = fw_le64(a->length);
	a->dev_base = fw_le64(a->dev_base);
}

static inline void fw_le_queue_args(struct nnp_hw_queue_args *a)
{
	a->ctx = fw_le32(a->ctx);
	a->qid = fw_le32(a->qid);
	a->depth = fw_le32(a->depth);
	a->vector = fw_le32(a->vector);
	a->sq_base = fw_le64(a->sq_base);
	a->cq_base = fw_le64(a->cq_base);
	a->irq_arm = fw_le64(a->irq_arm);
}

static inline void fw_le_comm_args(struct nnp_hw_comm_args *a)
{
	a->ctx = fw_le32(a->ctx);
	a->comm = fw_le32(a->comm);
	a->nranks = fw_le32(a->nranks);
	a->rank = fw_le32(a->rank);
	a->send_port = fw_le32(a->send_port);
	a->recv_port = fw_le32(a->recv_port);
	a->epoch = fw_le64(a->epoch);
	a->timeout_ms = fw_le32(a->timeout_ms);
	a->flags = fw_le32(a->flags);
}

static inline void fw_le_identify(struct nnp_hw_identify *id)
{
	id->magic = fw_le32(id->magic);
	id->hw_version = fw_le32(id->hw_version);
	id->fw_version = fw_le32(id->fw_version);
	id->chip_id = fw_le32(id->chip_id);
	id->mem_size = fw_le64(id->mem_size);
	id->caps = fw_le32(id->caps);
	id->num_ports = fw_le16(id->num_ports);
	id->num_queues = fw_le16(id->num_queues);
	id->num_vectors = fw_le16(id->num_vectors);
}

static inline void fw_le_counters(struct nnp_hw_counters *c)
{
	c->host_dma_bytes = fw_le64(c->host_dma_bytes);
	c->local_bytes = fw_le64(c->local_bytes);
	c->cmds_completed = fw_le64(c->cmds_completed);
	c->cmds_failed = fw_le64(c->cmds_failed);
	c->icl_tx_bytes = fw_le64(c->icl_tx_bytes);
	c->icl_rx_bytes = fw_le64(c->icl_rx_bytes);
	c->icl_dropped = fw_le64(c->icl_dropped);
	c->icl_held_bytes = fw_le64(c->icl_held_bytes);
	c->peer_dma_bytes = fw_le64(c->peer_dma_bytes);
}

static inline void fw_le_port_info(struct nnp_hw_port_info *p)
{
	p->state = fw_le32(p->state);
	p->peer = fw_le32(p->peer);
	p->tx_bytes = fw_le64(p->tx_bytes);
	p->rx_bytes = fw_le64(p->rx_bytes);
	p->tx_packets = fw_le64(p->tx_packets);
	p->rx_packets = fw_le64(p->rx_packets);
	p->errors = fw_le64(p->errors);
}

static inline void fw_le_event(struct nnp_hw_event *e)
{
	e->kind = fw_le16(e->kind);
	e->status = fw_le16(e->status);
	e->ctx = fw_le32(e->ctx);
	e->comm = fw_le32(e->comm);
	e->port = fw_le16(e->port);
	e->state = fw_le16(e->state);
	e->lost = fw_le32(e->lost);
	e->time_ns = fw_le64(e->time_ns);
}

#endif /* FW_LE_H */
