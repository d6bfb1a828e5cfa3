// SPDX-License-Identifier: MIT
/*
 * Firmware simulator events (hw 1.17): what the driver would otherwise
 * learn only by polling, a communicator failing and a link going down or
 * coming up, queued in order for GET_EVENTS and announced with
 * NNP_INT_FW_EVENT. The queue is bounded: past NNP_HW_EVENTS the oldest
 * goes, and the next one taken says how many went.
 */
#include <string.h>

#include "fw_control.h"
#include "fw_le.h"

/* Queue @e with fw->lock held; a worker raises the interrupt. */
static void event_queue_locked(struct nnp_fw *fw, struct nnp_hw_event e)
{
	uint32_t tail;

	e.time_ns = fw->clock.now_ns;
	if (fw->ev_count == NNP_HW_EVENTS) {
		fw->ev_head = (fw->ev_head + 1) % NNP_HW_EVENTS;
		fw->ev_count--;
		fw->ev_dropped++;
	}
	tail = (fw->ev_head + fw->ev_count) % NNP_HW_EVENTS;
	fw->events[tail] = e;
	fw->ev_count++;
	atomic_store(&fw->ev_notify, true);
}

void nnp_fw_event_comm_failed_locked(struct nnp_fw *fw,
				     const struct nnp_fw_comm *m,
				     uint16_t status, uint32_t port)
{
	event_queue_locked(fw, (struct nnp_hw_event){
		.kind = NNP_HW_EVENT_COMM_FAILED,
		.status = status,
		.ctx = m->ctx,
		.comm = (uint32_t)(m - fw->comms),
		.port = (uint16_t)port,
	});
}

void nnp_fw_event_link(struct nnp_fw *fw, uint32_t port, uint32_t state)
{
	mtx_lock(&fw->lock);
	event_queue_locked(fw, (struct nnp_hw_event){
		.kind = NNP_HW_EVENT_LINK,
		.port = (uint16_t)port,
		.state = (uint16_t)state,
	});
	mtx_unlock(&fw->lock);
}

void nnp_fw_events_clear_locked(struct nnp_fw *fw)
{
	fw->ev_head = 0;
	fw->ev_count = 0;
	fw->ev_dropped = 0;
	atomic_store(&fw->ev_notify, false);
}

void nnp_fw_events_notify(struct nnp_fw *fw)
{
	bool irq;

	if (!atomic_exchange(&fw->ev_notify, false))
		return;
	mtx_lock(&fw->lock);
	irq = nnp_fw_int_latch_locked(fw, NNP_INT_FW_EVENT);
	mtx_unlock(&fw->lock);
	if (irq)
		fw->host.raise_irq(fw->host.opaque, NNP_VECTOR_ADMIN);
}

uint16_t nnp_fw_get_events(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			   uint32_t *result)
{
	struct nnp_hw_event out[NNP_HW_EVENTS];
	uint32_t n, i;

	if (!cmd->len || cmd->len % sizeof(out[0]))
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	n = fw->ev_count;
	if (n > cmd->len / sizeof(out[0]))
		n = cmd->len / sizeof(out[0]);
	for (i = 0; i < n; i++)
		out[i] = fw->events[(fw->ev_head + i) % NNP_HW_EVENTS];
	if (n) {
		out[0].lost = fw->ev_dropped;
		fw->ev_dropped = 0;
	}
	fw->ev_head = (fw->ev_head + n) % NNP_HW_EVENTS;
	fw->ev_count -= n;
	mtx_unlock(&fw->lock);
	for (i = 0; i < n; i++)
		fw_le_event(&out[i]);
	/* Taken is taken: a buffer the device cannot reach loses them. */
	if (n && fw->host.dma_write(fw->host.opaque, cmd->addr, out,
				    n * sizeof(out[0])))
		return NNP_STATUS_DMA_ERROR;
	*result = n * sizeof(out[0]);
	return NNP_STATUS_SUCCESS;
}
