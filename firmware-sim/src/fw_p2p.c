// SPDX-License-Identifier: MIT
/*
 * Firmware simulator point-to-point messages between the chips of one job:
 * device memory out of one ICL port, into device memory at the other end,
 * in 64 KiB packets tagged with the communicator's epoch and the message's
 * number on that port, so that both ends count the same messages and
 * nothing of another job is ever taken.
 */
#include <stdlib.h>

#include "fw_internal.h"

#define CHUNK_BYTES (64u * 1024)

/* Take the message's number on its port; NNP_STATUS_* if @cmd is bad. */
static uint16_t p2p_begin(struct nnp_fw *fw, uint32_t ctx,
			  const struct nnp_hw_queue_cmd *cmd, uint64_t *tag)
{
	uint32_t comm = NNP_P2P_COMM(cmd->value), port = NNP_P2P_PORT(cmd->value);
	struct nnp_fw_comm *m = &fw->comms[comm];
	uint16_t st = NNP_STATUS_SUCCESS;

	if (port >= fw->cfg.num_ports)
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	if (!comm || comm >= NNP_HW_MAX_COMMS || m->ctx != ctx)
		st = NNP_STATUS_NOT_FOUND;
	else if (cmd->opcode == NNP_CMD_SEND)
		*tag = nnp_fw_tag(m->epoch, m->p2p_sent[port]++, true);
	else
		*tag = nnp_fw_tag(m->epoch, m->p2p_received[port]++, true);
	mtx_unlock(&fw->lock);
	return st;
}

uint16_t nnp_fw_p2p(struct nnp_fw *fw, uint32_t ctx,
		    const struct nnp_hw_queue_cmd *cmd)
{
	bool send = cmd->opcode == NNP_CMD_SEND;
	uint32_t port = NNP_P2P_PORT(cmd->value);
	struct nnp_fw_span span;
	uint64_t tag, off = 0;
	uint8_t *mem;
	uint16_t st;

	st = p2p_begin(fw, ctx, cmd, &tag);
	if (st)
		return st;
	st = send ? nnp_fw_key_resolve(fw, ctx, cmd->src_key, cmd->src_off,
				       cmd->len, NNP_KEY_READ, &span) :
		    nnp_fw_key_resolve(fw, ctx, cmd->dst_key, cmd->dst_off,
				       cmd->len, NNP_KEY_WRITE, &span);
	/* Device memory to device memory only: never through the host. */
	if (!st && span.type != NNP_KEY_TYPE_DEVICE)
		st = NNP_STATUS_INVALID_FIELD;
	/* Every message is at least one packet, so the ends count alike. */
	if (!st) {
		mem = (uint8_t *)fw->cfg.mem + span.dev_base + span.start;
		do {
			uint64_t n = cmd->len - off < CHUNK_BYTES ?
				     cmd->len - off : CHUNK_BYTES;

			st = send ? nnp_fw_icl_send(fw, port, tag, false, mem + off, n) :
				    nnp_fw_icl_recv(fw, port, tag, mem + off, n);
			off += n;
		} while (!st && off < cmd->len);
	}
	if (st && st != NNP_STATUS_ABORTED)
		nnp_fw_guest_error(fw, "%s on port %u failed: status 0x%x",
				   send ? "send" : "receive", port, st);
	/* The receiver learns at once that this message will not come. */
	if (st && send)
		nnp_fw_icl_send(fw, port, tag, true, NULL, 0);
	return st;
}
