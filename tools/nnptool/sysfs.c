// SPDX-License-Identifier: MIT
/*
 * nnptool: what the driver says about a device in sysfs (docs/ABI/testing/
 * sysfs-driver-nnp): its PCI address and NUMA node, memory in use, busy
 * time, resets, and its hwmon sensors.
 */
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnptool.h"

int dev_sysfs_dir(const char *node, char *dir, size_t len)
{
	const char *name = strrchr(node, '/');

	if (!name)
		return -1;
	snprintf(dir, len, "/sys/class/accel%s/device", name);
	return access(dir, F_OK) ? -1 : 0;
}

int sysfs_read_str(const char *dir, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int sysfs_read_u64(const char *dir, const char *attr, uint64_t *v)
{
	char buf[32], *end;

	if (sysfs_read_str(dir, attr, buf, sizeof(buf)))
		return -1;
	*v = strtoull(buf, &end, 10);
	return *buf && !*end ? 0 : -1;
}

int sysfs_link_name(const char *link, char *buf, size_t len)
{
	char target[PATH_MAX];
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	const char *base;

	if (n <= 0)
		return -1;
	target[n] = '\0';
	base = strrchr(target, '/');
	snprintf(buf, len, "%s", base ? base + 1 : target);
	return 0;
}

void dev_pci_address(const char *dir, char *buf, size_t len)
{
	if (sysfs_link_name(dir, buf, len))
		snprintf(buf, len, "unknown");
}

int dev_numa_node(const char *dir)
{
	char buf[16];

	if (sysfs_read_str(dir, "numa_node", buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

void dev_location(const char *node, char *pci, size_t len, int *numa)
{
	char dir[96];

	snprintf(pci, len, "unknown");
	*numa = -1;
	if (dev_sysfs_dir(node, dir, sizeof(dir)))
		return;
	dev_pci_address(dir, pci, len);
	*numa = dev_numa_node(dir);
}

int dev_hwmon_read(const char *dir, const char *attr, uint64_t *v)
{
	char hwdir[256], path[PATH_MAX];
	struct dirent *e;
	int ret = -1;
	DIR *d;

	snprintf(hwdir, sizeof(hwdir), "%s/hwmon", dir);
	d = opendir(hwdir);
	if (!d)
		return -1;
	while (ret && (e = readdir(d))) {
		if (strncmp(e->d_name, "hwmon", 5))
			continue;
		snprintf(path, sizeof(path), "%s/%s", hwdir, e->d_name);
		ret = sysfs_read_u64(path, attr, v);
	}
	closedir(d);
	return ret;
}

int dev_sample(int index, struct dev_sample *s)
{
	nnp_device_t *dev;
	nnp_result_t r;

	memset(s, 0, sizeof(*s));
	s->index = index;
	r = nnp_device_open(index, &dev);
	if (r != NNP_SUCCESS)
		return nnptool_fail("open", r);
	s->info.size = sizeof(s->info);
	s->ports[0].size = sizeof(s->ports[0]);
	r = nnp_device_get_info(dev, &s->info);
	if (r == NNP_SUCCESS)
		r = nnp_device_get_ports(dev, s->ports, NNP_MAX_PORTS, &s->nports);
	nnp_device_close(dev);
	if (r != NNP_SUCCESS)
		return nnptool_fail("device", r);
	if (s->nports > NNP_MAX_PORTS)
		s->nports = NNP_MAX_PORTS;
	if (dev_sysfs_dir(s->info.path, s->sysfs, sizeof(s->sysfs))) {
		fprintf(stderr, "nnptool: %s: no sysfs directory\n", s->info.path);
		return NNPTOOL_EXIT_ERROR;
	}
	sysfs_read_u64(s->sysfs, "mem_used", &s->mem_used);
	sysfs_read_u64(s->sysfs, "busy_ns", &s->busy_ns);
	sysfs_read_u64(s->sysfs, "reset_count", &s->resets);
	s->has_sensors = !dev_hwmon_read(s->sysfs, "temp1_input", &s->temp_mc) &&
			 !dev_hwmon_read(s->sysfs, "power1_input", &s->power_uw);
	return NNPTOOL_EXIT_OK;
}
