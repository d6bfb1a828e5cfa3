// SPDX-License-Identifier: MIT
/*
 * Firmware simulator faults on demand: what a real chip does when its
 * firmware locks up, a queue engine stops, an interrupt or a DMA is lost,
 * the chip dies, or a link loses or delays packets. Tests and the QEMU
 * monitor set them at run time; docs/hw-interface.md says what the driver
 * sees of each.
 *
 * Lost interrupts and failed DMA are injected between the firmware and its
 * embedder: nnp_fw_create() hands the firmware wrappers of the host's
 * callbacks, so no other file knows about them. The others are one check
 * each where the firmware would do the work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fw_control.h"

/* Take one from a "next N" counter; true if it was nonzero. */
static bool take_one(atomic_uint *n)
{
	unsigned int v = atomic_load(n);

	while (v && !atomic_compare_exchange_weak(n, &v, v - 1))
		;
	return v != 0;
}

static int wrap_dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct nnp_fw *fw = opaque;

	if (take_one(&fw->faults.dma_fail))
		return -1;
	return fw->embedder.dma_read(fw->embedder.opaque, addr, buf, len);
}

static int wrap_dma_write(void *opaque, uint64_t addr, const void *buf,
			  size_t len)
{
	struct nnp_fw *fw = opaque;

	if (take_one(&fw->faults.dma_fail))
		return -1;
	return fw->embedder.dma_write(fw->embedder.opaque, addr, buf, len);
}

/*
 * A failing DMA is never mapped: the firmware falls back to dma_read or
 * dma_write, which takes the failure from the count.
 */
static void *wrap_dma_map(void *opaque, uint64_t addr, uint64_t *len,
			  bool write)
{
	struct nnp_fw *fw = opaque;

	if (atomic_load(&fw->faults.dma_fail))
		return NULL;
	return fw->embedder.dma_map(fw->embedder.opaque, addr, len, write);
}

static void wrap_dma_unmap(void *opaque, void *ptr, uint64_t len, bool write,
			   uint64_t done)
{
	struct nnp_fw *fw = opaque;

	fw->embedder.dma_unmap(fw->embedder.opaque, ptr, len, write, done);
}

static void wrap_raise_irq(void *opaque, unsigned int vector)
{
	struct nnp_fw *fw = opaque;

	if (!take_one(&fw->faults.msix_lost))
		fw->embedder.raise_irq(fw->embedder.opaque, vector);
}

static uint64_t wrap_now_ns(void *opaque)
{
	struct nnp_fw *fw = opaque;

	return fw->embedder.now_ns(fw->embedder.opaque);
}

static void wrap_guest_error(void *opaque, const char *msg)
{
	struct nnp_fw *fw = opaque;

	fw->embedder.guest_error(fw->embedder.opaque, msg);
}

static void wrap_warning(void *opaque, const char *msg)
{
	struct nnp_fw *fw = opaque;

	fw->embedder.warning(fw->embedder.opaque, msg);
}

static int wrap_icl_tx(void *opaque, unsigned int port, uint64_t epoch,
		       uint32_t seq, bool abort, uint64_t model_ns,
		       const void *data, size_t len)
{
	struct nnp_fw *fw = opaque;

	return fw->embedder.icl_tx(fw->embedder.opaque, port, epoch, seq, abort,
				   model_ns, data, len);
}

static int wrap_icl_tx_lent(void *opaque, unsigned int port, uint64_t epoch,
			    uint32_t seq, uint64_t model_ns, uint64_t offset,
			    size_t len, uint32_t tag)
{
	struct nnp_fw *fw = opaque;

	return fw->embedder.icl_tx_lent(fw->embedder.opaque, port, epoch, seq,
					model_ns, offset, len, tag);
}

static void wrap_icl_give_back(void *opaque, unsigned int port, uint32_t tag)
{
	struct nnp_fw *fw = opaque;

	fw->embedder.icl_give_back(fw->embedder.opaque, port, tag);
}

static void wrap_icl_reclaim(void *opaque, unsigned int port,
			     const uint32_t *tags, size_t n)
{
	struct nnp_fw *fw = opaque;

	fw->embedder.icl_reclaim(fw->embedder.opaque, port, tags, n);
}

static void wrap_icl_drop(void *opaque, unsigned int port)
{
	struct nnp_fw *fw = opaque;

	fw->embedder.icl_drop(fw->embedder.opaque, port);
}

static void wrap_icl_credit(void *opaque, unsigned int port, size_t len)
{
	struct nnp_fw *fw = opaque;

	fw->embedder.icl_credit(fw->embedder.opaque, port, len);
}

static void wrap_icl_chip_state(void *opaque, unsigned int port, bool up)
{
	struct nnp_fw *fw = opaque;

	fw->embedder.icl_chip_state(fw->embedder.opaque, port, up);
}

static void wrap_kick(void *opaque, unsigned int what)
{
	struct nnp_fw *fw = opaque;

	fw->embedder.kick(fw->embedder.opaque, what);
}

void nnp_fw_faults_init(struct nnp_fw *fw, const struct nnp_fw_host *host)
{
	fw->embedder = *host;
	fw->host = (struct nnp_fw_host){
		.opaque = fw,
		.dma_read = wrap_dma_read,
		.dma_write = wrap_dma_write,
		.raise_irq = wrap_raise_irq,
		.now_ns = wrap_now_ns,
		/* The optional ones stay absent when the embedder has none. */
		.dma_map = host->dma_map ? wrap_dma_map : NULL,
		.dma_unmap = host->dma_unmap ? wrap_dma_unmap : NULL,
		.guest_error = host->guest_error ? wrap_guest_error : NULL,
		.warning = host->warning ? wrap_warning : NULL,
		.icl_tx = host->icl_tx ? wrap_icl_tx : NULL,
		.icl_tx_lent = host->icl_tx_lent ? wrap_icl_tx_lent : NULL,
		.icl_give_back = host->icl_give_back ? wrap_icl_give_back : NULL,
		.icl_reclaim = host->icl_reclaim ? wrap_icl_reclaim : NULL,
		.icl_drop = host->icl_drop ? wrap_icl_drop : NULL,
		.icl_credit = host->icl_credit ? wrap_icl_credit : NULL,
		.icl_chip_state = host->icl_chip_state ? wrap_icl_chip_state : NULL,
		.kick = host->kick ? wrap_kick : NULL,
	};
}

bool nnp_fw_fault_hung(struct nnp_fw *fw)
{
	return atomic_load(&fw->faults.hang);
}

bool nnp_fw_fault_queue_stuck(struct nnp_fw *fw, uint32_t qid)
{
	return atomic_load(&fw->faults.stuck_queue) == qid + 1;
}

bool nnp_fw_fault_rx(struct nnp_fw *fw, uint32_t port)
{
	unsigned int ms = atomic_load(&fw->faults.delay_ms[port]);

	if (ms) {
		struct timespec ts = {
			.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000,
		};

		thrd_sleep(&ts, NULL);
	}
	return atomic_load(&fw->faults.drop_ports) >> port & 1;
}

void nnp_fw_links_take_down(struct nnp_fw *fw)
{
	struct nnp_hw_port_info info[NNP_FW_MAX_PORTS];
	unsigned int i, downed = 0;

	nnp_fw_icl_ports_info(fw, info);
	for (i = 0; i < fw->cfg.num_ports; i++) {
		/* A remote link's host takes it down at both ends. */
		if (nnp_fw_link_chip_state(fw, i, false))
			continue;
		if (info[i].state & NNP_PORT_UP)
			downed |= 1u << i;
	}
	/* All at once: no abort leaves over a link not down yet. */
	nnp_fw_links_set_down(fw, downed);
	atomic_fetch_or(&fw->faults.downed_ports, downed);
}

void nnp_fw_faults_reset(struct nnp_fw *fw)
{
	atomic_store(&fw->faults.hang, false);
	atomic_store(&fw->faults.stuck_queue, 0);
}

void nnp_fw_faults_revive(struct nnp_fw *fw)
{
	unsigned int ports = atomic_exchange(&fw->faults.downed_ports, 0);
	unsigned int i;

	for (i = 0; i < fw->cfg.num_ports; i++)
		if (!nnp_fw_link_chip_state(fw, i, true) && ports >> i & 1)
			nnp_fw_link_set(fw, i, true);
}

int nnp_fw_fault_set(struct nnp_fw *fw, enum nnp_fw_fault fault, uint32_t arg)
{
	switch (fault) {
	case NNP_FW_FAULT_NONE:
		nnp_fw_faults_reset(fw);
		atomic_store(&fw->faults.msix_lost, 0);
		atomic_store(&fw->faults.dma_fail, 0);
		atomic_store(&fw->faults.drop_ports, 0);
		for (unsigned int i = 0; i < NNP_FW_MAX_PORTS; i++)
			atomic_store(&fw->faults.delay_ms[i], 0);
		return 0;
	case NNP_FW_FAULT_HANG:
		atomic_store(&fw->faults.hang, true);
		return 0;
	case NNP_FW_FAULT_QUEUE_STUCK:
		if (arg >= NNP_HW_MAX_QUEUES)
			return -1;
		atomic_store(&fw->faults.stuck_queue, arg + 1);
		return 0;
	case NNP_FW_FAULT_MSIX_LOST:
		atomic_store(&fw->faults.msix_lost, arg);
		return 0;
	case NNP_FW_FAULT_DMA_FAIL:
		atomic_store(&fw->faults.dma_fail, arg);
		return 0;
	case NNP_FW_FAULT_DIE:
		atomic_store(&fw->faults.hang, true);
		nnp_fw_links_take_down(fw);
		return 0;
	case NNP_FW_FAULT_LINK_DROP:
		if (arg >= fw->cfg.num_ports)
			return -1;
		atomic_fetch_or(&fw->faults.drop_ports, 1u << arg);
		return 0;
	case NNP_FW_FAULT_LINK_DELAY:
		if ((arg >> 16) >= fw->cfg.num_ports ||
		    (arg & 0xffff) > NNP_FW_FAULT_MAX_DELAY_MS)
			return -1;
		atomic_store(&fw->faults.delay_ms[arg >> 16], arg & 0xffff);
		return 0;
	}
	return -1;
}

/* "NAME" or "NAME=N" (or "link-delay=PORT:MS") of nnp_fw_fault_parse(). */
static const struct {
	const char *name;
	enum nnp_fw_fault fault;
	bool has_arg;
} fault_names[] = {
	{ "none", NNP_FW_FAULT_NONE, false },
	{ "hang", NNP_FW_FAULT_HANG, false },
	{ "die", NNP_FW_FAULT_DIE, false },
	{ "queue-stuck", NNP_FW_FAULT_QUEUE_STUCK, true },
	{ "msix-lost", NNP_FW_FAULT_MSIX_LOST, true },
	{ "dma-fail", NNP_FW_FAULT_DMA_FAIL, true },
	{ "link-drop", NNP_FW_FAULT_LINK_DROP, true },
	{ "link-delay", NNP_FW_FAULT_LINK_DELAY, true },
};

static bool parse_u32(const char *s, char stop, uint32_t *v, const char **end)
{
	char *e;
	unsigned long n;

	if (*s < '0' || *s > '9')
		return false;
	n = strtoul(s, &e, 10);
	if (*e != stop || n > UINT32_MAX)
		return false;
	*v = (uint32_t)n;
	*end = e;
	return true;
}

int nnp_fw_fault_parse(struct nnp_fw *fw, const char *spec,
		       enum nnp_fw_fault *fault)
{
	size_t i;

	for (i = 0; i < sizeof(fault_names) / sizeof(fault_names[0]); i++) {
		size_t n = strlen(fault_names[i].name);
		const char *end;
		uint32_t arg = 0, ms;

		if (strncmp(spec, fault_names[i].name, n))
			continue;
		if (!fault_names[i].has_arg) {
			if (spec[n])
				return -1;
		} else if (spec[n] != '=') {
			return -1;
		} else if (fault_names[i].fault == NNP_FW_FAULT_LINK_DELAY) {
			if (!parse_u32(spec + n + 1, ':', &arg, &end) ||
			    !parse_u32(end + 1, '\0', &ms, &end) ||
			    arg > 0xffff || ms > 0xffff)
				return -1;
			arg = arg << 16 | ms;
		} else if (!parse_u32(spec + n + 1, '\0', &arg, &end)) {
			return -1;
		}
		if (fault)
			*fault = fault_names[i].fault;
		return nnp_fw_fault_set(fw, fault_names[i].fault, arg);
	}
	return -1;
}
