/* SPDX-License-Identifier: MIT */
/* The counters collective tests watch: host DMA bytes and link bytes sent. */
#ifndef NNP_DEVICE_COUNTERS_H
#define NNP_DEVICE_COUNTERS_H

#include <stdint.h>
#include <string.h>
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

/* Bytes sent on all of the device's ports. */
static inline uint64_t icl_tx(nnp_device_t *dev)
{
	struct nnp_port_info p[NNP_MAX_PORTS];
	unsigned int n = 0, i;
	uint64_t tx = 0;

	nnp_device_get_ports(dev, p, NNP_MAX_PORTS, &n);
	for (i = 0; i < n; i++)
		tx += p[i].tx_bytes;
	return tx;
}

#endif /* NNP_DEVICE_COUNTERS_H */
