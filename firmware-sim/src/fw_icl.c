// SPDX-License-Identifier: MIT
/*
 * Firmware simulator inter-chip links: each port has a peer (chip, port), a
 * state, and a queue of packets received. Sending to a peer in this process
 * copies the payload into the peer's queue; a remote peer (another process)
 * is reached through the host's icl_tx, and what the host receives for us
 * comes in through nnp_fw_icl_deliver(). Receiving waits, bounded by the
 * collective timeout, for the packet with the wanted tag, and learns at
 * once when the link goes down.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fw_internal.h"

#define DEFAULT_COLL_TIMEOUT_MS 2000

void nnp_fw_ports_init(struct nnp_fw *fw)
{
	unsigned int i;

	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		mtx_init(&fw->ports[i].lock, mtx_plain);
		cnd_init(&fw->ports[i].cond);
	}
}

static void free_packets(struct nnp_fw_port *p)
{
	while (p->rx_head) {
		struct nnp_fw_packet *pk = p->rx_head;

		p->rx_head = pk->next;
		free(pk);
	}
	p->rx_tail = NULL;
}

void nnp_fw_ports_fini(struct nnp_fw *fw)
{
	unsigned int i;

	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		struct nnp_fw_port *p = &fw->ports[i];
		struct nnp_fw *peer;
		uint32_t pp;

		mtx_lock(&p->lock);
		peer = p->peer;
		pp = p->peer_port;
		p->peer = NULL;
		p->up = false;
		free_packets(p);
		mtx_unlock(&p->lock);
		if (peer) {
			mtx_lock(&peer->ports[pp].lock);
			peer->ports[pp].peer = NULL;
			peer->ports[pp].up = false;
			cnd_broadcast(&peer->ports[pp].cond);
			mtx_unlock(&peer->ports[pp].lock);
		}
		cnd_destroy(&p->cond);
		mtx_destroy(&p->lock);
	}
}

static bool port_free(struct nnp_fw *fw, unsigned int port)
{
	bool ok;

	if (port >= fw->cfg.num_ports)
		return false;
	mtx_lock(&fw->ports[port].lock);
	ok = !fw->ports[port].peer && !fw->ports[port].remote;
	mtx_unlock(&fw->ports[port].lock);
	return ok;
}

static void port_wire(struct nnp_fw *fw, unsigned int port, struct nnp_fw *peer,
		      unsigned int peer_port)
{
	struct nnp_fw_port *p = &fw->ports[port];

	mtx_lock(&p->lock);
	p->peer = peer;
	p->peer_port = peer_port;
	p->up = true;
	mtx_unlock(&p->lock);
}

int nnp_fw_link_connect(struct nnp_fw *a, unsigned int pa, struct nnp_fw *b,
			unsigned int pb)
{
	if ((a == b && pa == pb) || !port_free(a, pa) || !port_free(b, pb))
		return -1;
	port_wire(a, pa, b, pb);
	port_wire(b, pb, a, pa);
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
	p->remote = true;
	p->peer_chip = peer_chip;
	p->peer_port = peer_port;
	p->up = false;
	cnd_broadcast(&p->cond);
	mtx_unlock(&p->lock);
	return 0;
}

static void port_set(struct nnp_fw_port *p, bool up)
{
	mtx_lock(&p->lock);
	p->up = up && (p->peer || p->remote);
	cnd_broadcast(&p->cond);
	mtx_unlock(&p->lock);
}

void nnp_fw_link_set(struct nnp_fw *fw, unsigned int port, bool up)
{
	struct nnp_fw *peer;
	uint32_t pp;

	if (port >= NNP_FW_MAX_PORTS)
		return;
	mtx_lock(&fw->ports[port].lock);
	peer = fw->ports[port].peer;
	pp = fw->ports[port].peer_port;
	mtx_unlock(&fw->ports[port].lock);
	port_set(&fw->ports[port], up);
	if (peer)
		port_set(&peer->ports[pp], up);
}

static void count(struct nnp_fw *fw, uint64_t *counter, size_t len)
{
	mtx_lock(&fw->lock);
	*counter += len;
	mtx_unlock(&fw->lock);
}

static struct nnp_fw_packet *packet_new(uint64_t tag, bool abort,
				       const void *data, size_t len)
{
	struct nnp_fw_packet *pk = malloc(sizeof(*pk) + len);

	if (!pk)
		return NULL;
	pk->next = NULL;
	pk->tag = tag;
	pk->abort = abort;
	pk->len = len;
	if (len)
		memcpy(pk->data, data, len);
	return pk;
}

/* Queue @pk on @p, with p->lock held, and wake its waiters. */
static void rx_queue_locked(struct nnp_fw_port *p, struct nnp_fw_packet *pk)
{
	if (p->rx_tail)
		p->rx_tail->next = pk;
	else
		p->rx_head = pk;
	p->rx_tail = pk;
	p->rx_bytes += pk->len;
	p->rx_packets++;
	cnd_broadcast(&p->cond);
}

/*
 * Hand a packet to the host's transport, with no lock held: it may block
 * until the bytes are on their way.
 */
static uint16_t remote_send(struct nnp_fw *fw, uint32_t port, uint64_t tag,
			    bool abort, const void *data, size_t len)
{
	struct nnp_fw_port *p = &fw->ports[port];
	bool ok = fw->host.icl_tx && len <= NNP_FW_ICL_MAX_PACKET &&
		  !fw->host.icl_tx(fw->host.opaque, port, tag, abort, data, len);

	mtx_lock(&p->lock);
	if (ok) {
		p->tx_bytes += len;
		p->tx_packets++;
	} else {
		p->errors++;
	}
	mtx_unlock(&p->lock);
	if (!ok)
		return NNP_STATUS_LINK_DOWN;
	count(fw, &fw->counters.icl_tx_bytes, len);
	return NNP_STATUS_SUCCESS;
}

uint16_t nnp_fw_icl_send(struct nnp_fw *fw, uint32_t port, uint64_t tag,
			 bool abort, const void *data, size_t len)
{
	struct nnp_fw_port *p = &fw->ports[port];
	struct nnp_fw_packet *pk;
	struct nnp_fw *peer;
	uint32_t pp;
	bool up, remote;

	mtx_lock(&p->lock);
	peer = p->peer;
	pp = p->peer_port;
	up = p->up;
	remote = p->remote && up;
	if (up && peer) {
		p->tx_bytes += len;
		p->tx_packets++;
	} else if (!remote) {
		p->errors++;
	}
	mtx_unlock(&p->lock);
	if (remote)
		return remote_send(fw, port, tag, abort, data, len);
	if (!up || !peer)
		return NNP_STATUS_LINK_DOWN;

	pk = packet_new(tag, abort, data, len);
	if (!pk)
		return NNP_STATUS_NO_RESOURCES;

	p = &peer->ports[pp];
	mtx_lock(&p->lock);
	if (!p->up) {
		mtx_unlock(&p->lock);
		free(pk);
		return NNP_STATUS_LINK_DOWN;
	}
	rx_queue_locked(p, pk);
	mtx_unlock(&p->lock);
	count(fw, &fw->counters.icl_tx_bytes, len);
	count(peer, &peer->counters.icl_rx_bytes, len);
	return NNP_STATUS_SUCCESS;
}

int nnp_fw_icl_deliver(struct nnp_fw *fw, unsigned int port, uint64_t tag,
		       bool abort, const void *data, size_t len)
{
	struct nnp_fw_packet *pk = NULL;
	struct nnp_fw_port *p;

	if (port >= fw->cfg.num_ports)
		return -1;
	p = &fw->ports[port];
	if (len <= NNP_FW_ICL_MAX_PACKET)
		pk = packet_new(tag, abort, data, len);
	mtx_lock(&p->lock);
	if (!pk || !p->remote || !p->up) {
		p->errors++;
		mtx_unlock(&p->lock);
		free(pk);
		return -1;
	}
	rx_queue_locked(p, pk);
	mtx_unlock(&p->lock);
	count(fw, &fw->counters.icl_rx_bytes, len);
	return 0;
}

/* Unlink and return the first packet tagged @tag, with p->lock held. */
static struct nnp_fw_packet *take(struct nnp_fw_port *p, uint64_t tag)
{
	struct nnp_fw_packet **link = &p->rx_head, *prev = NULL;

	while (*link) {
		struct nnp_fw_packet *pk = *link;

		if (pk->tag == tag) {
			*link = pk->next;
			if (p->rx_tail == pk)
				p->rx_tail = prev;
			return pk;
		}
		prev = pk;
		link = &pk->next;
	}
	return NULL;
}

uint16_t nnp_fw_icl_recv(struct nnp_fw *fw, uint32_t port, uint64_t tag,
			 void *buf, size_t len)
{
	struct nnp_fw_port *p = &fw->ports[port];
	uint32_t ms = fw->cfg.coll_timeout_ms ? fw->cfg.coll_timeout_ms :
		      DEFAULT_COLL_TIMEOUT_MS;
	struct nnp_fw_packet *pk;
	struct timespec deadline;
	uint16_t status = NNP_STATUS_SUCCESS;

	timespec_get(&deadline, TIME_UTC);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (long)(ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}

	mtx_lock(&p->lock);
	for (;;) {
		pk = take(p, tag);
		if (pk)
			break;
		if (!p->up) {
			status = NNP_STATUS_LINK_DOWN;
			break;
		}
		if (cnd_timedwait(&p->cond, &p->lock, &deadline) == thrd_timedout) {
			pk = take(p, tag);
			if (!pk)
				status = NNP_STATUS_PEER_TIMEOUT;
			break;
		}
	}
	mtx_unlock(&p->lock);
	if (!pk)
		return status;
	if (pk->abort)
		status = NNP_STATUS_ABORTED;
	else if (pk->len != len)
		status = NNP_STATUS_INVALID_FIELD;	/* ranks disagree on the call */
	else
		memcpy(buf, pk->data, len);
	free(pk);
	return status;
}

void nnp_fw_icl_ports_info(struct nnp_fw *fw, struct nnp_hw_port_info *info)
{
	unsigned int i;

	for (i = 0; i < fw->cfg.num_ports; i++) {
		struct nnp_fw_port *p = &fw->ports[i];

		memset(&info[i], 0, sizeof(info[i]));
		mtx_lock(&p->lock);
		if (p->peer || p->remote) {
			uint32_t chip = p->peer ? p->peer->cfg.chip_id : p->peer_chip;

			info[i].state = NNP_PORT_WIRED | (p->up ? NNP_PORT_UP : 0);
			info[i].peer = NNP_PORT_PEER(chip, p->peer_port);
		}
		info[i].tx_bytes = p->tx_bytes;
		info[i].rx_bytes = p->rx_bytes;
		info[i].tx_packets = p->tx_packets;
		info[i].rx_packets = p->rx_packets;
		info[i].errors = p->errors;
		mtx_unlock(&p->lock);
	}
}

void nnp_fw_icl_purge(struct nnp_fw *fw, uint32_t port, uint32_t epoch,
		      uint64_t below)
{
	struct nnp_fw_port *p = &fw->ports[port];
	struct nnp_fw_packet **link, *prev = NULL;

	mtx_lock(&p->lock);
	link = &p->rx_head;
	while (*link) {
		struct nnp_fw_packet *pk = *link;

		if (pk->tag >> 32 == epoch && (uint32_t)pk->tag < below) {
			*link = pk->next;
			if (p->rx_tail == pk)
				p->rx_tail = prev;
			free(pk);
			continue;
		}
		prev = pk;
		link = &pk->next;
	}
	mtx_unlock(&p->lock);
}
