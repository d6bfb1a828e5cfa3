// SPDX-License-Identifier: MIT
/*
 * Firmware simulator modeled clock: how long an NNP-T would take for what
 * the simulated chip does, whatever the host's speed or load.
 *
 * Each chip has a modeled time in ns. A command starts at the chip's time
 * plus a per-command overhead, and is charged for what it moves: host
 * DMA at the PCIe bandwidth after the PCIe latency, device-memory traffic
 * at the HBM bandwidth, and each ICL packet on its port's transmit
 * direction, which is busy until the packet is out, then arrives the ICL
 * latency later. The packet carries its modeled arrival (across the
 * socket transport too), and its receiver's command goes on from
 * max(own time, arrival). A command's end moves the chip's time on.
 *
 * The time of a link command lives in its nnp_fw_op, touched only by the
 * worker running it; a port's busy-until time is updated in the sender's
 * existing critical sections of the port. So a chunk costs a few integer
 * operations: no lock, no allocation, no call into the host. Every value
 * follows from the order of each command's own steps, which the host does
 * not change: the modeled times are the same at any host speed, as long
 * as each port carries one command's packets at a time.
 *
 * Not modeled: contention for the host's memory or the PCIe link between
 * queues, congestion beyond one port's transmit direction, credit return
 * (a receiver is assumed to have room), and compute inside the chip.
 */
#include <string.h>

#include "fw_base.h"

/*
 * Defaults from NNP-T 1000's public figures (docs/architecture.md): the
 * ICL's 3.58 Tb/s both ways over 4 ports is 112 GB/s a port, 56 GB/s each
 * direction; HBM2 1.23 TB/s (reads and writes share it); PCIe Gen4 x16,
 * 16 GT/s x 16 lanes with 128b/130b coding, 31.5 GB/s each direction.
 * The latencies and the command overhead are assumptions, not published.
 */
#define DEF_ICL_MBPS		56000u
#define DEF_ICL_LATENCY_NS	1000u
#define DEF_HBM_MBPS		1230000u
#define DEF_PCIE_MBPS		31508u
#define DEF_PCIE_LATENCY_NS	1000u
#define DEF_CMD_OVERHEAD_NS	2000u

static uint32_t or_default(uint32_t v, uint32_t def)
{
	return v ? v : def;
}

void nnp_fw_clock_init(struct nnp_fw *fw)
{
	struct nnp_fw_config *c = &fw->cfg;

	c->icl_mbps = or_default(c->icl_mbps, DEF_ICL_MBPS);
	c->icl_latency_ns = or_default(c->icl_latency_ns, DEF_ICL_LATENCY_NS);
	c->hbm_mbps = or_default(c->hbm_mbps, DEF_HBM_MBPS);
	c->pcie_mbps = or_default(c->pcie_mbps, DEF_PCIE_MBPS);
	c->pcie_latency_ns = or_default(c->pcie_latency_ns, DEF_PCIE_LATENCY_NS);
	c->cmd_overhead_ns = or_default(c->cmd_overhead_ns, DEF_CMD_OVERHEAD_NS);
}

void nnp_fw_clock_reset_locked(struct nnp_fw *fw)
{
	unsigned int i;

	fw->clock = (struct nnp_fw_clock){ 0 };
	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		mtx_lock(&fw->ports[i].lock);
		fw->ports[i].model_tx = (struct nnp_fw_tx_schedule){ 0 };
		fw->ports[i].model_busy_ns = 0;
		mtx_unlock(&fw->ports[i].lock);
	}
}

uint64_t nnp_fw_clock_begin(struct nnp_fw *fw)
{
	uint64_t t;

	mtx_lock(&fw->lock);
	t = fw->clock.now_ns + fw->cfg.cmd_overhead_ns;
	mtx_unlock(&fw->lock);
	return t;
}

uint64_t nnp_fw_clock_peer_bound(struct nnp_fw *fw, uint64_t model_ns)
{
	uint64_t limit;

	mtx_lock(&fw->lock);
	limit = fw->clock.now_ns + NNP_FW_PEER_AHEAD_NS;
	mtx_unlock(&fw->lock);
	return model_ns < limit ? model_ns : limit;
}

void nnp_fw_clock_end(struct nnp_fw *fw, uint32_t ctx, unsigned int engine,
		      uint64_t start, uint64_t end, uint64_t hbm_ns,
		      uint64_t pcie_ns)
{
	mtx_lock(&fw->lock);
	if (end > fw->clock.now_ns)
		fw->clock.now_ns = end;
	fw->clock.hbm_busy_ns += hbm_ns;
	fw->clock.pcie_busy_ns += pcie_ns;
	fw->clock.commands++;
	/* A queue runs only for a valid context: @ctx is in range. */
	if (ctx < NNP_HW_MAX_CONTEXTS && engine < NNP_HW_ENGINES && end > start)
		fw->clock.ctx_busy_ns[ctx][engine] += end - start;
	mtx_unlock(&fw->lock);
}

void nnp_fw_clock_end_op(struct nnp_fw *fw, uint32_t ctx,
			 const struct nnp_fw_op *op)
{
	nnp_fw_clock_end(fw, ctx, NNP_HW_ENGINE_COLL, op->start_ns,
			 nnp_fw_max_ns(op->t_ns, op->tx_end_ns), op->hbm_ns, 0);
}

void nnp_fw_ctx_usage_get(struct nnp_fw *fw, uint32_t ctx, uint64_t *busy_ns)
{
	mtx_lock(&fw->lock);
	memcpy(busy_ns, fw->clock.ctx_busy_ns[ctx],
	       sizeof(fw->clock.ctx_busy_ns[ctx]));
	mtx_unlock(&fw->lock);
}

/* The first period of @tx that ends after @t (tx->n if none). */
static uint32_t tx_after(const struct nnp_fw_tx_schedule *tx, uint64_t t)
{
	uint32_t lo = 0, hi = tx->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (tx->busy[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t nnp_fw_tx_fit(const struct nnp_fw_tx_schedule *tx, uint64_t t,
		       uint64_t wire)
{
	uint64_t s = nnp_fw_max_ns(t, tx->floor);
	uint32_t i;

	for (i = tx_after(tx, s); i < tx->n && s + wire > tx->busy[i].start; i++)
		s = nnp_fw_max_ns(s, tx->busy[i].end);
	return s;
}

void nnp_fw_tx_take(struct nnp_fw_tx_schedule *tx, uint64_t start,
		    uint64_t wire)
{
	uint64_t end = start + wire;
	uint32_t i, j, old;

	if (!wire)
		return;
	/* Periods that end where it starts join it too. */
	i = start ? tx_after(tx, start - 1) : 0;
	/* The periods it touches, i .. j - 1, become one with it. */
	for (j = i; j < tx->n && tx->busy[j].start <= end; j++) {
		if (tx->busy[j].start < start)
			start = tx->busy[j].start;
		end = nnp_fw_max_ns(end, tx->busy[j].end);
	}
	memmove(&tx->busy[i + 1], &tx->busy[j],
		(tx->n - j) * sizeof(tx->busy[0]));
	tx->n = tx->n - (j - i) + 1;
	tx->busy[i].start = start;
	tx->busy[i].end = end;
	/* Full: the older half's gaps are given up, at once. */
	if (tx->n == NNP_FW_TX_PERIODS) {
		old = NNP_FW_TX_PERIODS / 2;
		tx->floor = tx->busy[old - 1].end;
		tx->n -= old;
		memmove(&tx->busy[0], &tx->busy[old],
			tx->n * sizeof(tx->busy[0]));
	}
}

void nnp_fw_clock_hbm(struct nnp_fw *fw, struct nnp_fw_op *op, uint64_t bytes)
{
	uint64_t ns = nnp_fw_hbm_ns(fw, bytes);

	op->t_ns += ns;
	op->hbm_ns += ns;
}

void nnp_fw_model_get(struct nnp_fw *fw, struct nnp_fw_model *m)
{
	unsigned int i;

	mtx_lock(&fw->lock);
	m->now_ns = fw->clock.now_ns;
	m->hbm_busy_ns = fw->clock.hbm_busy_ns;
	m->pcie_busy_ns = fw->clock.pcie_busy_ns;
	m->commands = fw->clock.commands;
	mtx_unlock(&fw->lock);
	for (i = 0; i < NNP_FW_MAX_PORTS; i++) {
		mtx_lock(&fw->ports[i].lock);
		m->port_busy_ns[i] = fw->ports[i].model_busy_ns;
		mtx_unlock(&fw->ports[i].lock);
	}
}
