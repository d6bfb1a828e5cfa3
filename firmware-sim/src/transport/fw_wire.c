// SPDX-License-Identifier: MIT
/*
 * Firmware simulator wiring: a port joined to an in-process peer or
 * attached to a remote one, which chooses the transport it sends through
 * (fw_lend.c's local or remote one; a remote link may turn shared later,
 * fw_icl_shared.c). The top of the transport's files: it names the
 * transports, and nothing below it names it. See fw_transport.h.
 */
#include <stdlib.h>

#include "fw_transport.h"

static bool port_free(struct nnp_fw *fw, unsigned int port)
{
	bool ok;

	if (port >= fw->cfg.num_ports)
		return false;
	mtx_lock(&fw->ports[port].lock);
	ok = !fw->ports[port].tp;
	mtx_unlock(&fw->ports[port].lock);
	return ok;
}

/* The descriptor slots of a port that will have an in-process peer. */
static struct nnp_fw_packet *desc_pool_new(void)
{
	struct nnp_fw_packet *pool = calloc(NNP_FW_PORT_RX_PACKETS,
					    sizeof(*pool));
	uint32_t i;

	for (i = 0; pool && i + 1 < NNP_FW_PORT_RX_PACKETS; i++)
		pool[i].next = &pool[i + 1];
	return pool;
}

static void port_wire(struct nnp_fw *fw, unsigned int port, struct nnp_fw *peer,
		      unsigned int peer_port, struct nnp_fw_packet *pool)
{
	struct nnp_fw_port *p = &fw->ports[port];

	mtx_lock(&p->lock);
	p->tp = &nnp_fw_local_transport;
	p->peer = peer;
	p->peer_chip = peer->cfg.chip_id;
	p->peer_port = peer_port;
	p->up = true;
	/* Kept, all slots free, when a peer destroyed left the port free. */
	if (pool)
		p->desc_pool = p->desc_free = pool;
	mtx_unlock(&p->lock);
}

int nnp_fw_link_connect(struct nnp_fw *a, unsigned int pa, struct nnp_fw *b,
			unsigned int pb)
{
	struct nnp_fw_packet *pool_a, *pool_b;

	if ((a == b && pa == pb) || !port_free(a, pa) || !port_free(b, pb))
		return -1;
	pool_a = a->ports[pa].desc_pool ? NULL : desc_pool_new();
	pool_b = b->ports[pb].desc_pool ? NULL : desc_pool_new();
	if ((!pool_a && !a->ports[pa].desc_pool) ||
	    (!pool_b && !b->ports[pb].desc_pool)) {
		free(pool_a);
		free(pool_b);
		return -1;
	}
	port_wire(a, pa, b, pb, pool_a);
	port_wire(b, pb, a, pa, pool_b);
	return 0;
}

int nnp_fw_link_attach_remote(struct nnp_fw *fw, unsigned int port,
			      uint32_t peer_chip, unsigned int peer_port)
{
	struct nnp_fw_port *p;

	if (port >= fw->cfg.num_ports)
		return -1;
	p = &fw->ports[port];
	mtx_lock(&p->lock);
	if (p->peer) {
		mtx_unlock(&p->lock);
		return -1;
	}
	p->tp = &nnp_fw_remote_transport;
	p->peer_chip = peer_chip;
	p->peer_port = peer_port;
	p->up = false;
	mtx_unlock(&p->lock);
	nnp_fw_icl_wake(fw, port);
	return 0;
}
