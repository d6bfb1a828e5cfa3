// SPDX-License-Identifier: MIT
/*
 * DRM_IOCTL_NNP_QUERY against nnp.ko: exact values for every device, every
 * documented errno, sysfs agreeing with the ioctl, and a device unbound
 * under an open file.
 *
 * In detail (docs/testing.md has the summary):
 * kselftest harness: exact values per device, every capability bit (0xf),
 * `DRM_IOCTL_VERSION` 1.6, `hw_version` 1.9, the ports answer read by
 * `entry_size` and libnnp's ports equal to it, `QUERY_MODEL`: 168 bytes,
 * `ENOSPC` a byte short with nothing written, 4 ports and zeros past them,
 * the clock and its counts never going back, every errno of the query
 * ioctl, sysfs, heartbeat, unbind under an open file gives ENODEV
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>

#include "guest_env.h"
#include "kselftest_harness.h"
#include "pci_bind.h"

#define GUARD 0xa5

static int query(int fd, uint32_t which, uint32_t flags, uint32_t reserved,
		 void *buf, uint32_t *size)
{
	struct drm_nnp_query q = {
		.query = which,
		.flags = flags,
		.size = *size,
		.reserved = reserved,
		.data = (uintptr_t)buf,
	};
	int ret = ioctl(fd, DRM_IOCTL_NNP_QUERY, &q);

	*size = q.size;
	return ret ? -errno : 0;
}

static int open_index(int i)
{
	nnp_device_t *dev;
	int fd;

	if (nnp_device_open(i, &dev) != NNP_SUCCESS)
		return -1;
	fd = dup(nnp_device_fd(dev));
	nnp_device_close(dev);
	return fd;
}

/* sysfs attribute @attr of the PCI device behind accel node @path. */
static void read_attr(const char *path, const char *attr, char *buf, size_t len)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "/sys/class/accel/%s/device/%s",
		 strrchr(path, '/') + 1, attr);
	buf[0] = '\0';
	f = fopen(p, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

FIXTURE(dev) {
	int fd;
	uint8_t buf[256];
};

FIXTURE_SETUP(dev)
{
	ASSERT_GT(GUEST_CHIPS, 0);
	self->fd = open_index(0);
	ASSERT_GE(self->fd, 0);
	memset(self->buf, GUARD, sizeof(self->buf));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST(every_device_reports_its_identity)
{
	unsigned int seen = 0;
	int i;

	ASSERT_GE(GUEST_CHIPS, 2);
	for (i = 0; i < GUEST_CHIPS; i++) {
		struct drm_nnp_device_info in;
		uint32_t size = sizeof(in);
		char serial[32];
		int fd = open_index(i);

		ASSERT_GE(fd, 0);
		memset(&in, GUARD, sizeof(in));
		ASSERT_EQ(0, query(fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 0, &in, &size));
		close(fd);
		EXPECT_EQ(DRM_NNP_DEVICE_INFO_SIZE_V2, size);
		ASSERT_LT(in.chip_id, (uint32_t)GUEST_CHIPS);
		EXPECT_FALSE(seen & (1u << in.chip_id));
		seen |= 1u << in.chip_id;
		EXPECT_EQ(GUEST_MEM_SIZE, in.mem_size);
		EXPECT_EQ(0x0001001bu, in.hw_version);
		EXPECT_EQ(0x00010200u, in.fw_version);
		EXPECT_EQ(GUEST_ICL_PORTS, in.num_icl_ports);
		EXPECT_EQ(GUEST_NUM_QUEUES, in.num_queues);
		/* Every bit of the device's CAPS register, none dropped. */
		EXPECT_EQ(DRM_NNP_CAP_ADMIN_QUEUE | DRM_NNP_CAP_USER_QUEUES |
			  DRM_NNP_CAP_ICL | DRM_NNP_CAP_COLLECTIVES, in.caps);
		EXPECT_EQ(0xfull, in.caps);
		snprintf(serial, sizeof(serial), "NNPSIM-%08x", in.chip_id);
		EXPECT_STREQ(serial, in.serial);
		EXPECT_STREQ(GUEST_FW_BUILD, in.fw_build);
	}
	EXPECT_EQ((1u << GUEST_CHIPS) - 1, seen);
}

/* DRM_IOCTL_VERSION: 1.13, thirteen additions since the first release. */
TEST_F(dev, driver_version_counts_uapi_additions)
{
	char name[16] = { 0 };
	struct drm_version v = {
		.name = name,
		.name_len = sizeof(name) - 1,
	};

	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VERSION, &v));
	EXPECT_STREQ(DRM_NNP_DRIVER_NAME, name);
	EXPECT_EQ(1, v.version_major);
	EXPECT_EQ(13, v.version_minor);
	EXPECT_EQ(DRM_NNP_DRIVER_MAJOR, v.version_major);
	EXPECT_EQ(DRM_NNP_DRIVER_MINOR, v.version_minor);
}

/*
 * QUERY_PORTS: 8 header bytes, then DRM_NNP_MAX_PORTS entries entry_size
 * bytes apart; read by that stride they are the ports the device has.
 */
TEST_F(dev, ports_entries_by_entry_size)
{
	uint8_t raw[DRM_NNP_PORTS_SIZE_V1 + 64];
	struct drm_nnp_ports head;
	uint32_t size = 0, i;

	ASSERT_EQ(0, query(self->fd, DRM_NNP_QUERY_PORTS, 0, 0, NULL, &size));
	EXPECT_EQ(DRM_NNP_PORTS_SIZE_V1, size);
	memset(raw, GUARD, sizeof(raw));
	size = sizeof(raw);
	ASSERT_EQ(0, query(self->fd, DRM_NNP_QUERY_PORTS, 0, 0, raw, &size));
	EXPECT_EQ(DRM_NNP_PORTS_SIZE_V1, size);
	EXPECT_EQ(GUARD, raw[DRM_NNP_PORTS_SIZE_V1]);
	memcpy(&head, raw, offsetof(struct drm_nnp_ports, port));
	EXPECT_EQ(GUEST_ICL_PORTS, head.num_ports);
	ASSERT_EQ(DRM_NNP_PORT_SIZE_V1, head.entry_size);
	EXPECT_EQ(sizeof(struct drm_nnp_port), head.entry_size);
	EXPECT_EQ(DRM_NNP_PORTS_SIZE_V1,
		  offsetof(struct drm_nnp_ports, port) +
		  DRM_NNP_MAX_PORTS * head.entry_size);
	for (i = 0; i < DRM_NNP_MAX_PORTS; i++) {
		struct drm_nnp_port p;

		memcpy(&p, raw + offsetof(struct drm_nnp_ports, port) +
		       i * head.entry_size, sizeof(p));
		EXPECT_EQ(0u, p.reserved);
		if (i >= head.num_ports) {
			EXPECT_EQ(0u, p.state);
			EXPECT_EQ(0u, p.tx_packets);
			continue;
		}
		EXPECT_EQ(0u, p.state & ~(DRM_NNP_PORT_WIRED | DRM_NNP_PORT_UP));
	}
}

/* libnnp reads the entries by entry_size: it agrees with the raw answer. */
TEST_F(dev, libnnp_ports_match_the_query)
{
	struct nnp_port_info ports[NNP_MAX_PORTS] = { { .size = sizeof(ports[0]) } };
	struct drm_nnp_ports raw;
	uint32_t size = sizeof(raw);
	unsigned int n = 0, i;
	nnp_device_t *dev;

	ASSERT_EQ(0, query(self->fd, DRM_NNP_QUERY_PORTS, 0, 0, &raw, &size));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_ports(dev, ports, NNP_MAX_PORTS, &n));
	nnp_device_close(dev);
	ASSERT_EQ(raw.num_ports, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(raw.port[i].peer_chip, ports[i].peer_chip);
		EXPECT_EQ(raw.port[i].peer_port, ports[i].peer_port);
		EXPECT_EQ(raw.port[i].tx_bytes, ports[i].tx_bytes);
		EXPECT_EQ(raw.port[i].rx_bytes, ports[i].rx_bytes);
		EXPECT_EQ(raw.port[i].errors, ports[i].errors);
		EXPECT_EQ(!!(raw.port[i].state & DRM_NNP_PORT_WIRED),
			  !!(ports[i].state & NNP_LINK_WIRED));
	}
}

TEST(sysfs_matches_ioctl)
{
	int i;

	for (i = 0; i < GUEST_CHIPS; i++) {
		struct nnp_device_info in = { .size = sizeof(in) };
		nnp_device_t *dev;
		char buf[64], want[64];

		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(i, &dev));
		ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &in));
		nnp_device_close(dev);

		read_attr(in.path, "chip_id", buf, sizeof(buf));
		snprintf(want, sizeof(want), "%u", in.chip_id);
		EXPECT_STREQ(want, buf);
		read_attr(in.path, "mem_size", buf, sizeof(buf));
		snprintf(want, sizeof(want), "%llu", (unsigned long long)GUEST_MEM_SIZE);
		EXPECT_STREQ(want, buf);
		read_attr(in.path, "num_icl_ports", buf, sizeof(buf));
		EXPECT_STREQ("4", buf);
		read_attr(in.path, "hw_version", buf, sizeof(buf));
		EXPECT_STREQ("1.27", buf);
		read_attr(in.path, "fw_version", buf, sizeof(buf));
		EXPECT_STREQ("1.2.0", buf);
		read_attr(in.path, "serial", buf, sizeof(buf));
		EXPECT_STREQ(in.serial, buf);
	}
}

TEST(heartbeat_advances)
{
	struct drm_nnp_device_info a, b;
	uint32_t size = sizeof(a);
	int fd = open_index(0);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, query(fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 0, &a, &size));
	usleep(500 * 1000);
	ASSERT_EQ(0, query(fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 0, &b, &size));
	close(fd);
	EXPECT_GT(b.fw_heartbeat, a.fw_heartbeat);
}

TEST_F(dev, size_zero_asks_for_the_size)
{
	uint32_t size = 0;

	ASSERT_EQ(0, query(self->fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 0,
			   self->buf, &size));
	EXPECT_EQ(DRM_NNP_DEVICE_INFO_SIZE_V2, size);
	EXPECT_EQ(GUARD, self->buf[0]);
}

TEST_F(dev, larger_buffer_gets_v2_and_nothing_past_it)
{
	uint32_t size = sizeof(self->buf);
	int i;

	ASSERT_EQ(0, query(self->fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 0,
			   self->buf, &size));
	EXPECT_EQ(DRM_NNP_DEVICE_INFO_SIZE_V2, size);
	for (i = DRM_NNP_DEVICE_INFO_SIZE_V2; i < (int)sizeof(self->buf); i++)
		ASSERT_EQ(GUARD, self->buf[i]);
}

/* A caller built before the reset fields gets exactly what it knows. */
TEST_F(dev, v1_caller_gets_v1)
{
	uint32_t size = DRM_NNP_DEVICE_INFO_SIZE_V1;
	int i;

	ASSERT_EQ(0, query(self->fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 0,
			   self->buf, &size));
	EXPECT_EQ(DRM_NNP_DEVICE_INFO_SIZE_V1, size);
	for (i = DRM_NNP_DEVICE_INFO_SIZE_V1; i < (int)sizeof(self->buf); i++)
		ASSERT_EQ(GUARD, self->buf[i]);
}

/*
 * QUERY_MODEL (1.5): 168 bytes; the device's ports, their busy times and
 * nothing past them; a buffer shorter than the block ENOSPC, untouched;
 * the modeled clock and its counts never go back. libnnp_test checks
 * what a command adds to them.
 */
TEST_F(dev, model_answers_its_ports_and_a_clock_that_only_grows)
{
	struct drm_nnp_model m[2];
	uint32_t size = 0, i;

	ASSERT_EQ(0, query(self->fd, DRM_NNP_QUERY_MODEL, 0, 0, NULL, &size));
	EXPECT_EQ(DRM_NNP_MODEL_SIZE_V1, size);
	EXPECT_EQ(sizeof(m[0]), size);
	size = DRM_NNP_MODEL_SIZE_V1 - 1;
	EXPECT_EQ(-ENOSPC, query(self->fd, DRM_NNP_QUERY_MODEL, 0, 0,
				 self->buf, &size));
	EXPECT_EQ(GUARD, self->buf[0]);
	for (i = 0; i < 2; i++) {
		memset(&m[i], GUARD, sizeof(m[i]));
		size = sizeof(m[i]);
		ASSERT_EQ(0, query(self->fd, DRM_NNP_QUERY_MODEL, 0, 0, &m[i],
				   &size));
		EXPECT_EQ(sizeof(m[i]), size);
	}
	EXPECT_EQ(GUEST_ICL_PORTS, m[0].num_ports);
	EXPECT_EQ(0, m[0].reserved);
	for (i = m[0].num_ports; i < DRM_NNP_MAX_PORTS; i++)
		EXPECT_EQ(0, m[0].port_tx_busy_ns[i]);
	EXPECT_LE(m[0].now_ns, m[1].now_ns);
	EXPECT_LE(m[0].commands, m[1].commands);
	EXPECT_LE(m[0].hbm_busy_ns, m[1].hbm_busy_ns);
}

TEST_F(dev, size_too_small_is_enospc)
{
	uint32_t sizes[] = { 1, 4, DRM_NNP_DEVICE_INFO_SIZE_V1 - 1 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t size = sizes[i];

		EXPECT_EQ(-ENOSPC, query(self->fd, DRM_NNP_QUERY_DEVICE_INFO,
					 0, 0, self->buf, &size));
		EXPECT_EQ(GUARD, self->buf[0]);
	}
}

TEST_F(dev, unknown_flags_are_einval)
{
	uint32_t flags[] = { 1, 0x80000000u, 0xffffffffu };
	unsigned int i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		uint32_t size = sizeof(self->buf);

		EXPECT_EQ(-EINVAL, query(self->fd, DRM_NNP_QUERY_DEVICE_INFO,
					 flags[i], 0, self->buf, &size));
	}
	EXPECT_EQ(GUARD, self->buf[0]);
}

TEST_F(dev, nonzero_reserved_is_einval)
{
	uint32_t size = sizeof(self->buf);

	EXPECT_EQ(-EINVAL, query(self->fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 1,
				 self->buf, &size));
	EXPECT_EQ(GUARD, self->buf[0]);
}

TEST_F(dev, unknown_query_is_eopnotsupp)
{
	uint32_t which[] = { 0, DRM_NNP_QUERY_COMMS + 1, 0xffffffffu };
	unsigned int i;

	for (i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		uint32_t size = sizeof(self->buf);

		EXPECT_EQ(-EOPNOTSUPP, query(self->fd, which[i], 0, 0,
					     self->buf, &size));
	}
	EXPECT_EQ(GUARD, self->buf[0]);
}

TEST_F(dev, bad_pointer_is_efault)
{
	uint32_t size = DRM_NNP_DEVICE_INFO_SIZE_V1;
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-EFAULT, query(self->fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 0,
				 NULL, &size));
	size = DRM_NNP_DEVICE_INFO_SIZE_V1;
	EXPECT_EQ(-EFAULT, query(self->fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 0,
				 (void *)(uintptr_t)-4096, &size));
	size = DRM_NNP_DEVICE_INFO_SIZE_V1;
	EXPECT_EQ(-EFAULT, query(self->fd, DRM_NNP_QUERY_DEVICE_INFO, 0, 0,
				 ro, &size));
	munmap(ro, 4096);
	/* The argument block itself unreadable: the DRM core's EFAULT. */
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NNP_QUERY, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, unknown_ioctl_numbers)
{
	struct drm_nnp_query q = { 0 };

	/* A driver ioctl number past our table: the DRM core's EINVAL. */
	EXPECT_EQ(-1, ioctl(self->fd,
			    DRM_IOWR(DRM_COMMAND_BASE + 1, struct drm_nnp_query), &q));
	EXPECT_EQ(EINVAL, errno);
	/* Not a DRM ioctl at all. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR('x', 0, struct drm_nnp_query), &q));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(dev, mmap_without_objects_fails_cleanly)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, 0);

	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
}

/* Runs last: it takes the last device away and gives it back. */
TEST(unbind_with_open_file_gives_enodev)
{
	char addr[64], node[64];
	struct nnp_device_info in = { .size = sizeof(in) };
	uint32_t size = sizeof(in);
	nnp_device_t *dev;

	pci_addr_of(GUEST_CHIPS - 1, addr, sizeof(addr));
	ASSERT_NE(0, addr[0]);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(GUEST_CHIPS - 1, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &in));
	snprintf(node, sizeof(node), "%s", in.path);
	ASSERT_EQ(0, unbind(addr));

	/* The open file outlives the device: every call is -ENODEV. */
	EXPECT_EQ(-ENODEV, query(nnp_device_fd(dev), DRM_NNP_QUERY_DEVICE_INFO,
				 0, 0, &in, &size));
	EXPECT_EQ(NNP_ERROR_DEVICE_LOST, nnp_device_get_info(dev, &in));
	EXPECT_NE(0, access(node, F_OK));
	nnp_device_close(dev);

	ASSERT_EQ(0, rebind(addr));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(GUEST_CHIPS - 1, &dev));
	EXPECT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &in));
	nnp_device_close(dev);
}

TEST_HARNESS_MAIN
