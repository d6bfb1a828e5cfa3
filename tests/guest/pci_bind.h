/* SPDX-License-Identifier: MIT */
/*
 * Unbinding a device from nnp.ko and binding it again through sysfs, for
 * the tests of what survives a rebind and of probe and remove themselves.
 */
#ifndef NNP_PCI_BIND_H
#define NNP_PCI_BIND_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "guest_env.h"

#define NNP_DRIVER_DIR	"/sys/bus/pci/drivers/nnp/"

/* The PCI address of device @index ("0000:00:03.0"), or "" if none. */
static inline void pci_addr_of(int index, char *addr, size_t len)
{
	char link[PATH_MAX], path[128];
	struct nnp_device_info in = { .size = sizeof(in) };
	nnp_device_t *dev;
	ssize_t n = -1;

	addr[0] = '\0';
	if (nnp_device_open(index, &dev) != NNP_SUCCESS)
		return;
	if (nnp_device_get_info(dev, &in) == NNP_SUCCESS) {
		snprintf(path, sizeof(path), "/sys/class/accel/%s/device",
			 strrchr(in.path, '/') + 1);
		n = readlink(path, link, sizeof(link) - 1);
	}
	nnp_device_close(dev);
	if (n > 0) {
		link[n] = '\0';
		snprintf(addr, len, "%s", strrchr(link, '/') + 1);
	}
}

static inline int unbind(const char *addr)
{
	return write_str(NNP_DRIVER_DIR "unbind", addr);
}

/* Whether nnp.ko drives the device at @addr now. */
static inline int bound(const char *addr)
{
	char path[128];

	snprintf(path, sizeof(path), NNP_DRIVER_DIR "%s", addr);
	return access(path, F_OK) == 0;
}

/* Wait until nnp.ko drives every device of the VM again. */
static inline int devices_back(void)
{
	int tries, count;

	for (tries = 0; tries < 50; tries++) {
		if (nnp_device_count(&count) == NNP_SUCCESS && count == GUEST_CHIPS)
			return 0;
		usleep(100 * 1000);
	}
	return -ETIMEDOUT;
}

/* Bind @addr again and wait until every device is back. */
static inline int rebind(const char *addr)
{
	int ret = write_str(NNP_DRIVER_DIR "bind", addr);

	return ret ? ret : devices_back();
}

#endif /* NNP_PCI_BIND_H */
