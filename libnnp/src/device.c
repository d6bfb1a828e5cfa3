// SPDX-License-Identifier: MIT
/*
 * libnnp devices: find nnp accel nodes (libdrm tells us the driver behind
 * each node), open them, and query what they are.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xf86drm.h>
#include <nnp_accel.h>

#include "internal.h"

/* Is the node open on @fd driven by nnp.ko? */
static int is_nnp_node(int fd)
{
	drmVersionPtr ver = drmGetVersion(fd);
	int yes;

	if (!ver)
		return 0;
	yes = ver->name && strcmp(ver->name, DRM_NNP_DRIVER_NAME) == 0;
	drmFreeVersion(ver);
	return yes;
}

static int accel_minor(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "accel", 5) != 0 || !name[5])
		return -1;
	n = strtol(name + 5, &end, 10);
	return *end || n < 0 || n > 255 ? -1 : (int)n;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Accel minors present under /dev/accel, ascending. */
static int list_minors(int *minors, int max)
{
	DIR *d = opendir(NNP_ACCEL_DIR);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		int m = accel_minor(de->d_name);

		if (m >= 0)
			minors[n++] = m;
	}
	closedir(d);
	qsort(minors, n, sizeof(*minors), cmp_int);
	return n;
}

nnp_result_t nnp_enumerate(char (*paths)[64], int max, int *count)
{
	int minors[NNP_MAX_DEVICES];
	int n = list_minors(minors, NNP_MAX_DEVICES);
	int denied = 0;
	int i;

	*count = 0;
	for (i = 0; i < n && *count < max; i++) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), NNP_ACCEL_DIR "/accel%d", minors[i]);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			denied |= errno == EACCES || errno == EPERM;
			continue;
		}
		if (is_nnp_node(fd))
			memcpy(paths[(*count)++], path, sizeof(path));
		close(fd);
	}
	if (*count)
		return NNP_SUCCESS;
	if (denied)
		return NNP_ERROR_PERMISSION;
	if (access("/sys/module/nnp", F_OK) != 0)
		return NNP_ERROR_NO_DRIVER;
	return NNP_ERROR_NO_DEVICE;
}

nnp_result_t nnp_device_count(int *count)
{
	char paths[NNP_MAX_DEVICES][64];

	if (!count)
		return NNP_ERROR_INVALID_ARGUMENT;
	return nnp_enumerate(paths, NNP_MAX_DEVICES, count);
}

nnp_result_t nnp_device_open_path(const char *path, nnp_device_t **dev)
{
	struct nnp_device *d;
	int fd;

	if (!path || !dev || strlen(path) >= sizeof(d->path))
		return NNP_ERROR_INVALID_ARGUMENT;
	*dev = NULL;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return nnp_result_from_errno(errno);
	if (!is_nnp_node(fd)) {
		close(fd);
		return NNP_ERROR_NO_DEVICE;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return NNP_ERROR_OUT_OF_MEMORY;
	}
	d->fd = fd;
	snprintf(d->path, sizeof(d->path), "%s", path);
	*dev = d;
	return NNP_SUCCESS;
}

nnp_result_t nnp_device_open(int index, nnp_device_t **dev)
{
	char paths[NNP_MAX_DEVICES][64];
	nnp_result_t r;
	int count;

	if (!dev || index < 0)
		return NNP_ERROR_INVALID_ARGUMENT;
	*dev = NULL;
	r = nnp_enumerate(paths, NNP_MAX_DEVICES, &count);
	if (r != NNP_SUCCESS)
		return r;
	if (index >= count)
		return NNP_ERROR_NO_DEVICE;
	return nnp_device_open_path(paths[index], dev);
}

void nnp_device_close(nnp_device_t *dev)
{
	if (!dev)
		return;
	close(dev->fd);
	free(dev);
}

int nnp_device_fd(const nnp_device_t *dev)
{
	return dev ? dev->fd : -1;
}

nnp_result_t nnp_device_get_info(nnp_device_t *dev,
				 struct nnp_device_info *info)
{
	struct drm_nnp_device_info di;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_DEVICE_INFO,
		.size = sizeof(di),
		.data = (uintptr_t)&di,
	};

	if (!dev || !info)
		return NNP_ERROR_INVALID_ARGUMENT;
	memset(&di, 0, sizeof(di));
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q))
		return nnp_result_from_errno(errno);

	memset(info, 0, sizeof(*info));
	snprintf(info->path, sizeof(info->path), "%s", dev->path);
	info->chip_id = di.chip_id;
	info->hw_version = di.hw_version;
	info->fw_version = di.fw_version;
	info->num_icl_ports = di.num_icl_ports;
	info->mem_size = di.mem_size;
	info->caps = di.caps;
	info->num_queues = di.num_queues;
	info->fw_heartbeat = di.fw_heartbeat;
	memcpy(info->serial, di.serial, sizeof(info->serial));
	memcpy(info->fw_build, di.fw_build, sizeof(info->fw_build));
	info->serial[sizeof(info->serial) - 1] = '\0';
	info->fw_build[sizeof(info->fw_build) - 1] = '\0';
	return NNP_SUCCESS;
}

nnp_result_t nnp_device_get_ports(nnp_device_t *dev, struct nnp_port_info *ports,
				  unsigned int max, unsigned int *count)
{
	struct drm_nnp_ports p;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_PORTS,
		.size = sizeof(p),
		.data = (uintptr_t)&p,
	};
	unsigned int i;

	if (!dev || !count || (max && !ports))
		return NNP_ERROR_INVALID_ARGUMENT;
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q))
		return nnp_result_from_errno(errno);
	*count = p.num_ports;
	for (i = 0; i < p.num_ports && i < max; i++) {
		const struct drm_nnp_port *o = &p.port[i];

		ports[i] = (struct nnp_port_info){
			.state = (o->state & DRM_NNP_PORT_WIRED ? NNP_LINK_WIRED : 0) |
				 (o->state & DRM_NNP_PORT_UP ? NNP_LINK_UP : 0),
			.peer_chip = o->peer_chip,
			.peer_port = o->peer_port,
			.tx_bytes = o->tx_bytes,
			.rx_bytes = o->rx_bytes,
			.tx_packets = o->tx_packets,
			.rx_packets = o->rx_packets,
			.errors = o->errors,
		};
	}
	return NNP_SUCCESS;
}
