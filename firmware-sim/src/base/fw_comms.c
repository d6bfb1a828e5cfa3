// SPDX-License-Identifier: MIT
/*
 * Firmware simulator communicator table: the lookups every layer makes on
 * it (the links label packets with a communicator's epoch, the link
 * commands run on one). Making, failing and destroying communicators is
 * the control plane's (fw_comm.c).
 */
#include "fw_base.h"

#define DEFAULT_TIMEOUT_MS 2000
#define NS_PER_MS 1000000ull

uint64_t nnp_fw_comm_timeout_ns(const struct nnp_fw *fw, uint32_t ms)
{
	if (ms == NNP_HW_COMM_TIMEOUT_NEVER)
		return UINT64_MAX;
	if (!ms)
		ms = fw->cfg.coll_timeout_ms ? fw->cfg.coll_timeout_ms :
		     DEFAULT_TIMEOUT_MS;
	return ms * NS_PER_MS;
}

struct nnp_fw_comm *nnp_fw_comm_slot_locked(struct nnp_fw *fw, uint32_t ctx,
					    uint32_t comm)
{
	/* Bounds first: not even the address of a slot past the table. */
	if (!comm || comm >= NNP_HW_MAX_COMMS || !ctx || fw->comms[comm].ctx != ctx)
		return NULL;
	return &fw->comms[comm];
}

struct nnp_fw_comm *nnp_fw_comm_of_locked(struct nnp_fw *fw, uint32_t ctx,
					  uint32_t comm)
{
	struct nnp_fw_comm *m = nnp_fw_comm_slot_locked(fw, ctx, comm);

	return m && !nnp_fw_comm_transit(m) ? m : NULL;
}

uint16_t nnp_fw_comm_missing_locked(const struct nnp_fw *fw, uint32_t ctx,
				    uint32_t comm)
{
	return comm && comm < NNP_HW_MAX_COMMS && ctx && !fw->comms[comm].ctx &&
	       fw->comms[comm].aborted_ctx == ctx ? NNP_STATUS_ABORTED :
	       NNP_STATUS_NOT_FOUND;
}

struct nnp_fw_comm *nnp_fw_comm_by_epoch_locked(struct nnp_fw *fw, uint64_t epoch)
{
	uint32_t i;

	for (i = 1; i < NNP_HW_MAX_COMMS; i++)
		if (fw->comms[i].ctx && fw->comms[i].epoch == epoch)
			return &fw->comms[i];
	return NULL;
}

/*
 * Remember @epoch as destroyed here (@gone), or forget it: a communicator
 * made again with it is not gone. With fw->lock held.
 */
void nnp_fw_epoch_gone_locked(struct nnp_fw *fw, uint64_t epoch, bool gone)
{
	uint32_t i;

	for (i = 0; i < NNP_FW_GONE_EPOCHS; i++)
		if (fw->gone_epochs[i] == epoch)
			fw->gone_epochs[i] = 0;
	if (gone && epoch)
		fw->gone_epochs[fw->gone_next++ % NNP_FW_GONE_EPOCHS] = epoch;
}

bool nnp_fw_epoch_is_gone_locked(const struct nnp_fw *fw, uint64_t epoch)
{
	uint32_t i;

	for (i = 0; epoch && i < NNP_FW_GONE_EPOCHS; i++)
		if (fw->gone_epochs[i] == epoch)
			return true;
	return false;
}

uint32_t nnp_fw_comm_ports(const struct nnp_fw_comm *m)
{
	return m->nranks > 1 ? 1u << m->send_port | 1u << m->recv_port |
			       m->ports : 0;
}

uint32_t nnp_fw_comm_route_ports(const struct nnp_fw_comm *m)
{
	uint32_t ports = 0, r;

	for (r = 0; m->routes && r < m->nranks && r < NNP_HW_MAX_ROUTED_RANKS; r++)
		if (m->routes[r] < NNP_FW_MAX_PORTS)
			ports |= 1u << m->routes[r];
	return ports;
}
