// SPDX-License-Identifier: MIT
/*
 * libnnp devices: find nnp accel devices (sysfs names the driver behind
 * each, so no node is opened to look), open them, and query what they are.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xf86drm.h>
#include <nnp_accel.h>

#include "internal.h"
#include "log.h"

/* libnnp's own port table is the uapi's, which is the hardware's. */
_Static_assert(NNP_MAX_PORTS == DRM_NNP_MAX_PORTS, "NNP_MAX_PORTS");

static int accel_minor(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "accel", 5) != 0 || !name[5])
		return -1;
	n = strtol(name + 5, &end, 10);
	return *end || n < 0 || n > 255 ? -1 : (int)n;
}

/* Is accel device @minor bound to nnp.ko? sysfs's driver link says. */
static bool driven_by_nnp(const char *sysfs, int minor)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "%s/class/accel/accel%d/device/driver",
		 sysfs, minor);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	base = strrchr(target, '/');
	return !strcmp(base ? base + 1 : target, DRM_NNP_DRIVER_NAME);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Minors of the accel devices nnp.ko drives, ascending. */
static int list_nnp_minors(const char *sysfs, int *minors, int max)
{
	char dir[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/accel", sysfs);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		int m = accel_minor(de->d_name);

		if (m >= 0 && driven_by_nnp(sysfs, m))
			minors[n++] = m;
	}
	closedir(d);
	qsort(minors, n, sizeof(*minors), cmp_int);
	return n;
}

/*
 * Keep the @n devices of @paths that NNP_VISIBLE_DEVICES lists, in its
 * order; returns how many. The list ends at its first bad entry.
 */
static int pick_visible(char (*paths)[64], int n)
{
	const char *list = getenv("NNP_VISIBLE_DEVICES"), *s = list;
	char picked[NNP_MAX_DEVICES][64];
	bool taken[NNP_MAX_DEVICES] = { false };
	int k = 0;

	if (!list)
		return n;
	while (*s) {
		char *end = (char *)s;
		long i = -1;

		if (*s >= '0' && *s <= '9')
			i = strtol(s, &end, 10);
		if (i < 0 || i >= n || (*end && *end != ',') || taken[i]) {
			nnp_log(NNP_LOG_WARN,
				"NNP_VISIBLE_DEVICES=%s: '%.*s' is not the index of one of the %d devices, nor a new one; the list ends before it",
				list, (int)strcspn(s, ","), s, n);
			break;
		}
		taken[i] = true;
		memcpy(picked[k++], paths[i], sizeof(picked[0]));
		s = end + (*end == ',');
	}
	memcpy(paths, picked, (size_t)k * sizeof(picked[0]));
	return k;
}

nnp_result_t nnp_enumerate_at(const char *sysfs, const char *devdir,
			      char (*paths)[64], int max, int *count)
{
	int minors[NNP_MAX_DEVICES];
	int found = list_nnp_minors(sysfs, minors, NNP_MAX_DEVICES);
	char module[PATH_MAX];
	int i, nodes = 0, n;

	/*
	 * sysfs shows every device of the machine, also in a container
	 * that was given only some of their nodes: the others are not its.
	 */
	for (i = 0; i < found; i++) {
		snprintf(paths[nodes], sizeof(paths[nodes]), "%s/accel%d", devdir,
			 minors[i]);
		if (access(paths[nodes], F_OK) == 0)
			nodes++;
		else
			nnp_log(NNP_LOG_TRACE, "%s: no such node, not counted",
				paths[nodes]);
	}
	n = pick_visible(paths, nodes);
	*count = n < max ? n : max;
	if (*count)
		return NNP_SUCCESS;
	snprintf(module, sizeof(module), "%s/module/" DRM_NNP_DRIVER_NAME, sysfs);
	if (access(module, F_OK) != 0)
		return nnp_fail(NNP_ERROR_NO_DRIVER,
				"the nnp driver is not loaded (no %s)", module);
	if (found && !nodes)
		return nnp_fail(NNP_ERROR_NO_DEVICE,
				"no nnp device: none of the %d has a node in %s",
				found, devdir);
	return nnp_fail(NNP_ERROR_NO_DEVICE, "no nnp device%s",
			getenv("NNP_VISIBLE_DEVICES") ?
			" that NNP_VISIBLE_DEVICES lets through" : "");
}

nnp_result_t nnp_enumerate(char (*paths)[64], int max, int *count)
{
	return nnp_enumerate_at(NNP_SYSFS_DIR, NNP_ACCEL_DIR, paths, max, count);
}

nnp_result_t nnp_check_driver_version(const char *path, int major, int minor)
{
	if (major == DRM_NNP_DRIVER_MAJOR && minor >= NNP_DRIVER_MINOR_NEEDED)
		return NNP_SUCCESS;
	return nnp_fail(NNP_ERROR_VERSION,
			"%s: the nnp driver's interface is %d.%d, libnnp %d.%d.%d needs %d.%d or a later %d.x",
			path, major, minor, NNP_VERSION_MAJOR(NNP_VERSION_CODE),
			NNP_VERSION_MINOR(NNP_VERSION_CODE),
			NNP_VERSION_PATCH(NNP_VERSION_CODE), DRM_NNP_DRIVER_MAJOR,
			NNP_DRIVER_MINOR_NEEDED, DRM_NNP_DRIVER_MAJOR);
}

nnp_result_t nnp_device_count(int *count)
{
	char paths[NNP_MAX_DEVICES][64];

	if (!count)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_device_count: count is NULL");
	return nnp_enumerate(paths, NNP_MAX_DEVICES, count);
}

/*
 * Is the node open on @fd driven by nnp.ko, at an interface we speak?
 * *@minor gets the interface's minor: what the driver has added.
 */
static nnp_result_t check_node(int fd, const char *path, int *minor)
{
	drmVersionPtr ver = drmGetVersion(fd);
	nnp_result_t res;

	if (!ver || !ver->name || strcmp(ver->name, DRM_NNP_DRIVER_NAME)) {
		res = nnp_fail(NNP_ERROR_NO_DEVICE, "%s is not an nnp device (driver %s)",
			       path, ver && ver->name ? ver->name : "none");
	} else {
		res = nnp_check_driver_version(path, ver->version_major,
					       ver->version_minor);
		*minor = ver->version_minor;
		nnp_log(NNP_LOG_TRACE, "%s: nnp driver interface %d.%d.%d", path,
			ver->version_major, ver->version_minor,
			ver->version_patchlevel);
	}
	drmFreeVersion(ver);
	return res;
}

nnp_result_t nnp_device_open_path(const char *path, nnp_device_t **dev)
{
	struct nnp_device *d;
	nnp_result_t res;
	int fd, minor = 0;

	if (!path || !dev || strlen(path) >= sizeof(d->path))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_device_open_path: no device, or a path of %zu or more characters",
				sizeof(d->path));
	*dev = NULL;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		return nnp_fail(nnp_result_from_errno(err), "cannot open %s: %s",
				path, strerror(err));
	}
	res = check_node(fd, path, &minor);
	if (res != NNP_SUCCESS) {
		close(fd);
		return res;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no memory to open %s", path);
	}
	d->fd = fd;
	d->driver_minor = minor;
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
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_device_open: index %d, or no place for the device", index);
	*dev = NULL;
	r = nnp_enumerate(paths, NNP_MAX_DEVICES, &count);
	if (r != NNP_SUCCESS)
		return r;
	if (index >= count)
		return nnp_fail(NNP_ERROR_NO_DEVICE, "no nnp device %d: there are %d",
				index, count);
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

/* The structs' sizes when they gained their size members (0.9). */
#define INFO_SIZE_0_9		NNP_END_OF(struct nnp_device_info, fw_build)
#define PORT_SIZE_0_9		NNP_END_OF(struct nnp_port_info, errors)
#define COUNTERS_SIZE_0_9	NNP_END_OF(struct nnp_device_counters, mem_objects)
#define MODEL_SIZE_0_9		NNP_END_OF(struct nnp_device_model, port_tx_busy_ns)

/*
 * 0.9's versions of the calls whose structs gained a size: a program
 * built before binds to the old ones (compat_0_8.c).
 */
__asm__(".symver nnp_device_get_info, nnp_device_get_info@@@LIBNNP_0.9");
__asm__(".symver nnp_device_get_ports, nnp_device_get_ports@@@LIBNNP_0.9");
__asm__(".symver nnp_device_get_model, nnp_device_get_model@@@LIBNNP_0.9");
__asm__(".symver nnp_device_get_counters, nnp_device_get_counters@@@LIBNNP_0.9");

nnp_result_t nnp_device_get_info(nnp_device_t *dev,
				 struct nnp_device_info *info)
{
	struct drm_nnp_device_info di;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_DEVICE_INFO,
		.size = sizeof(di),
		.data = (uintptr_t)&di,
	};
	struct nnp_device_info in;

	if (!dev || !info)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_device_get_info: no device or no info");
	if (nnp_size_check(info->size, INFO_SIZE_0_9, sizeof(in), "nnp_device_get_info: info"))
		return NNP_ERROR_INVALID_ARGUMENT;
	memset(&di, 0, sizeof(di));
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q))
		return nnp_ioctl_failed(dev, "the device info query", errno);

	memset(&in, 0, sizeof(in));
	in.size = info->size;
	snprintf(in.path, sizeof(in.path), "%s", dev->path);
	in.chip_id = di.chip_id;
	in.hw_version = di.hw_version;
	in.fw_version = di.fw_version;
	in.num_icl_ports = di.num_icl_ports;
	in.mem_size = di.mem_size;
	in.caps = di.caps;
	in.num_queues = di.num_queues;
	in.fw_heartbeat = di.fw_heartbeat;
	memcpy(in.serial, di.serial, sizeof(in.serial));
	memcpy(in.fw_build, di.fw_build, sizeof(in.fw_build));
	in.serial[sizeof(in.serial) - 1] = '\0';
	in.fw_build[sizeof(in.fw_build) - 1] = '\0';
	memcpy(info, &in, info->size);
	return NNP_SUCCESS;
}

uint32_t nnp_device_hw_minor(nnp_device_t *dev)
{
	if (!dev->hw_version) {
		struct nnp_device_info info = { .size = sizeof(info) };

		if (nnp_device_get_info(dev, &info) != NNP_SUCCESS)
			return 0;
		dev->hw_version = info.hw_version;
	}
	return dev->hw_version & 0xffff;
}

/*
 * Ask for the ports block at its full size, so that a kernel whose port
 * entries grew sends them whole; *@size gets the bytes written.
 */
static nnp_result_t query_ports(const nnp_device_t *dev, unsigned char **buf,
				uint32_t *size)
{
	struct drm_nnp_query q = { .query = DRM_NNP_QUERY_PORTS };

	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q))
		return nnp_ioctl_failed(dev, "the ports query", errno);
	if (q.size < sizeof(struct drm_nnp_ports))
		q.size = sizeof(struct drm_nnp_ports);
	*buf = calloc(1, q.size);
	if (!*buf)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY,
				"no memory for the ports query (%u bytes)", q.size);
	q.data = (uintptr_t)*buf;
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q)) {
		free(*buf);
		return nnp_ioctl_failed(dev, "the ports query", errno);
	}
	*size = q.size;
	return NNP_SUCCESS;
}

nnp_result_t nnp_device_get_ports(nnp_device_t *dev, struct nnp_port_info *ports,
				  unsigned int max, unsigned int *count)
{
	const size_t first = offsetof(struct drm_nnp_ports, port);
	struct drm_nnp_ports head;
	unsigned char *buf = NULL;
	uint32_t size = 0, stride;
	size_t entry;
	nnp_result_t r;
	unsigned int i;

	if (!dev || !count || (max && !ports))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_device_get_ports: no device, count or ports");
	entry = max ? ports[0].size : sizeof(struct nnp_port_info);
	if (nnp_size_check(entry, PORT_SIZE_0_9, sizeof(struct nnp_port_info),
			   "nnp_device_get_ports: ports[0]"))
		return NNP_ERROR_INVALID_ARGUMENT;
	r = query_ports(dev, &buf, &size);
	if (r != NNP_SUCCESS)
		return r;
	memcpy(&head, buf, first);
	/* entry_size is new in 1.3: an older driver's entries are v1's. */
	stride = head.entry_size ? head.entry_size : DRM_NNP_PORT_SIZE_V1;
	*count = head.num_ports;
	for (i = 0; i < head.num_ports && i < max &&
		    first + (i + 1) * (size_t)stride <= size; i++) {
		struct drm_nnp_port o = { 0 };

		struct nnp_port_info p;

		memcpy(&o, buf + first + i * (size_t)stride,
		       stride < sizeof(o) ? stride : sizeof(o));
		p = (struct nnp_port_info){
			.size = entry,
			.state = (o.state & DRM_NNP_PORT_WIRED ? NNP_LINK_WIRED : 0) |
				 (o.state & DRM_NNP_PORT_UP ? NNP_LINK_UP : 0),
			.peer_chip = o.peer_chip,
			.peer_port = o.peer_port,
			.tx_bytes = o.tx_bytes,
			.rx_bytes = o.rx_bytes,
			.tx_packets = o.tx_packets,
			.rx_packets = o.rx_packets,
			.errors = o.errors,
		};
		memcpy((char *)ports + i * entry, &p, entry);
	}
	free(buf);
	return NNP_SUCCESS;
}

nnp_result_t nnp_device_get_counters(nnp_device_t *dev,
				     struct nnp_device_counters *counters)
{
	struct drm_nnp_counters c = { 0 };
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(c),
		.data = (uintptr_t)&c,
	};

	struct nnp_device_counters out;

	if (!dev || !counters)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_device_get_counters: no device or counters");
	if (nnp_size_check(counters->size, COUNTERS_SIZE_0_9, sizeof(out),
			   "nnp_device_get_counters: counters"))
		return NNP_ERROR_INVALID_ARGUMENT;
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q))
		return nnp_ioctl_failed(dev, "the counters query", errno);
	out = (struct nnp_device_counters){
		.size = counters->size,
		.host_dma_bytes = c.host_dma_bytes,
		.local_bytes = c.local_bytes,
		.cmds_completed = c.cmds_completed,
		.cmds_failed = c.cmds_failed,
		.mem_used = c.mem_used,
		.mem_objects = c.mem_objects,
		.peer_dma_bytes = c.peer_dma_bytes,
	};
	memcpy(counters, &out, counters->size);
	return NNP_SUCCESS;
}

nnp_result_t nnp_device_get_model(nnp_device_t *dev,
				  struct nnp_device_model *model)
{
	struct drm_nnp_model m = { 0 };
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_MODEL, .size = sizeof(m),
		.data = (uintptr_t)&m,
	};
	struct nnp_device_model out;
	unsigned int i;

	if (!dev || !model)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_device_get_model: no device or model");
	if (nnp_size_check(model->size, MODEL_SIZE_0_9, sizeof(out),
			   "nnp_device_get_model: model"))
		return NNP_ERROR_INVALID_ARGUMENT;
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q)) {
		if (errno == EOPNOTSUPP)
			return nnp_fail(NNP_ERROR_NOT_SUPPORTED,
					"%s: no modeled clock: the driver predates interface 1.5 or the device hardware interface 1.8",
					dev->path);
		return nnp_ioctl_failed(dev, "the model query", errno);
	}
	out = (struct nnp_device_model){
		.size = model->size,
		.now_ns = m.now_ns,
		.commands = m.commands,
		.hbm_busy_ns = m.hbm_busy_ns,
		.pcie_busy_ns = m.pcie_busy_ns,
		.num_ports = m.num_ports < NNP_MAX_PORTS ? m.num_ports : NNP_MAX_PORTS,
	};
	for (i = 0; i < out.num_ports; i++)
		out.port_tx_busy_ns[i] = m.port_tx_busy_ns[i];
	memcpy(model, &out, model->size);
	return NNP_SUCCESS;
}
