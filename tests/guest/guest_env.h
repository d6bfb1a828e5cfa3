/* SPDX-License-Identifier: MIT */
/*
 * What a guest test knows about the VM it runs in: tools/nnp-vm exports the
 * number of chips and their memory size, and gives chip ids 0..N-1.
 */
#ifndef NNP_GUEST_ENV_H
#define NNP_GUEST_ENV_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>

static inline uint64_t guest_env_u64(const char *name)
{
	const char *v = getenv(name);

	return v ? strtoull(v, NULL, 0) : 0;
}

#define GUEST_CHIPS	((int)guest_env_u64("NNP_VM_CHIPS"))
#define GUEST_MEM_SIZE	guest_env_u64("NNP_VM_MEM_SIZE")

/* Properties every nnp device in the test VM has. */
#define GUEST_ICL_PORTS		4
#define GUEST_NUM_QUEUES	64
#define GUEST_FW_BUILD		"nnp-fwsim 1.2.0"

/*
 * A file of its own on device @index (a context of its own), for raw
 * ioctls: the device found as libnnp finds it; -1 if it cannot be opened.
 */
static inline int guest_open_fd(int index)
{
	nnp_device_t *dev;
	int fd;

	if (nnp_device_open(index, &dev) != NNP_SUCCESS)
		return -1;
	fd = dup(nnp_device_fd(dev));
	nnp_device_close(dev);
	return fd;
}

/* Write @s to sysfs, procfs or debugfs file @path: 0 or -errno. */
static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -errno;
}

/* Lines of the kernel log grep @opts (-F, -E) finds @pattern in; -1 on error. */
static inline int dmesg_grep_count(const char *opts, const char *pattern)
{
	char cmd[512];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "dmesg | grep -c %s '%s'", opts, pattern);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

/* The "Key:  N kB" line of /proc/self/status, or -1. */
static inline long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	size_t n = strlen(key);
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

/*
 * The first communicator fdinfo shows for @fd: its id (-1: none), and its
 * "rank/nranks name" into @text.
 */
/*
 * Whether command @cmd succeeds with a line of output that starts with
 * @start and holds @part.
 */
static inline bool guest_output_has(const char *cmd, const char *start,
				    const char *part)
{
	FILE *f = popen(cmd, "r");
	bool found = false;
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return false;
	/* Whole lines, however long: a JSON document is one. */
	while (getline(&line, &cap, f) > 0)
		found |= !strncmp(line, start, strlen(start)) && strstr(line, part);
	free(line);
	return pclose(f) == 0 && found;
}

static inline int guest_fdinfo_comm(int fd, char *text, size_t len)
{
	char path[64], line[256];
	int id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nnp-comm-%d:\t%255[^\n]", &id, line) == 2) {
			snprintf(text, len, "%s", line);
			break;
		}
	fclose(f);
	return id;
}

/* DRM_IOCTL_NNP_BO_CREATE on @fd: 0 or -errno; the answer in @out if given. */
static inline int guest_bo_create(int fd, uint32_t flags, uint64_t size,
				  struct drm_nnp_bo_create *out)
{
	struct drm_nnp_bo_create c = { .size = size, .flags = flags };
	int ret = ioctl(fd, DRM_IOCTL_NNP_BO_CREATE, &c) ? -errno : 0;

	if (out)
		*out = c;
	return ret;
}

/*
 * Fill device object @d with @byte, copy it into host object @h and
 * compare @len bytes: the first failure's result.
 */
static inline nnp_result_t guest_fill_check(nnp_stream_t *s, nnp_mem_t *d,
					    nnp_mem_t *h, uint8_t byte,
					    size_t len)
{
	nnp_result_t r = nnp_memset_async(s, d, 0, byte, len);
	uint8_t *p;
	size_t i;

	if (!r)
		r = nnp_memcpy_async(s, h, 0, d, 0, len);
	if (!r)
		r = nnp_stream_synchronize(s);
	if (!r)
		r = nnp_mem_map(h, (void **)&p);
	for (i = 0; !r && i < len; i++)
		if (p[i] != byte)
			r = NNP_ERROR_IO;
	return r;
}

/* Bytes that differ from their neighbours and between seeds. */
static inline void guest_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	for (; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed);
}

/* DRM_IOCTL_GEM_CLOSE of @handle: 0 or -errno. */
static inline int guest_gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c) ? -errno : 0;
}

#endif /* NNP_GUEST_ENV_H */
