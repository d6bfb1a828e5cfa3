/* SPDX-License-Identifier: MIT */
/* The counters collective tests watch: host DMA bytes and link bytes sent. */
#ifndef NNP_DEVICE_COUNTERS_H
#define NNP_DEVICE_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>

static inline uint64_t host_dma_bytes(nnp_device_t *dev)
{
	struct drm_nnp_counters c;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(c),
		.data = (uintptr_t)&c,
	};

	memset(&c, 0xee, sizeof(c));
	ioctl(nnp_device_fd(dev), DRM_IOCTL_NNP_QUERY, &q);
	return c.host_dma_bytes;
}

/* Bytes, or given @packets packets, sent on all of the device's ports. */
static inline uint64_t icl_sent(nnp_device_t *dev, bool packets)
{
	struct nnp_port_info p[NNP_MAX_PORTS] = { { .size = sizeof(p[0]) } };
	unsigned int n = 0, i;
	uint64_t tx = 0;

	nnp_device_get_ports(dev, p, NNP_MAX_PORTS, &n);
	for (i = 0; i < n; i++)
		tx += packets ? p[i].tx_packets : p[i].tx_bytes;
	return tx;
}

static inline uint64_t icl_tx(nnp_device_t *dev)
{
	return icl_sent(dev, false);
}

/*
 * Bytes one of @n ranks sends in an allreduce of @count elements of @es
 * bytes, at least *@lo and at most *@hi. On the ring (NNP_ALGO=ring)
 * every segment of the buffer but two, each count/n elements or one
 * more. Every other algorithm (auto, the default, included) may split
 * the buffer into up to 4 lanes (docs/architecture.md, "Allreduce
 * algorithms"), each an allreduce of its part on rings of its own, and
 * each pass of a lane rounds its own segments: a rank's share is
 * 2(n-1)/n of the buffer give or take 6 elements a lane (a torus lane:
 * 1 on its reduce-scatter, 4 on its middle allreduce of a segment itself
 * rounded, 1 on its allgather; a ring lane 2). The sum over the ranks
 * stays exactly 2(n-1) buffers: each lane's rings add up to it.
 */
static inline void allreduce_tx_bounds(uint64_t count, uint64_t es, int n,
				       uint64_t *lo, uint64_t *hi)
{
	const char *algo = getenv("NNP_ALGO");
	uint64_t share = 2 * count * (uint64_t)(n - 1) / (uint64_t)n;

	if (n == 1 || !count) {
		*lo = *hi = 0;
	} else if (algo && !strcasecmp(algo, "ring")) {
		*lo = (2 * count - 2 * (count / (uint64_t)n + 1)) * es;
		*hi = (2 * count - 2 * (count / (uint64_t)n)) * es;
	} else {
		*lo = (share > 4 * 6 ? share - 4 * 6 : 0) * es;
		*hi = (share + 1 + 4 * 6) * es;
	}
}

#endif /* NNP_DEVICE_COUNTERS_H */
