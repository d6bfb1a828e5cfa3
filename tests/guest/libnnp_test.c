// SPDX-License-Identifier: MIT
/*
 * libnnp against the real driver: enumeration (from sysfs, as a user who
 * may open no node, and through NNP_VISIBLE_DEVICES), open and the driver
 * version check, info, device memory left, result codes, last errors.
 *
 * In detail (docs/testing.md has the summary):
 * device count as uid 65534, who may open no node: all devices counted and
 * the open fails with PERMISSION naming the node; `NNP_VISIBLE_DEVICES=1`
 * and `1,0` renumbering to the real nodes, `0,99` one device, empty none;
 * `nnp_get_version()`; `nnp_mem_get_info()`: total the VM's size, a 1-byte
 * object takes a page, a MiB a MiB, host memory none, all back after free;
 * the last error of `/dev/null`; `NNP_DEBUG=INFO` into
 * `NNP_DEBUG_FILE=/tmp/nnp-info.%p` from a child: the WARN line of a 2-rank
 * communicator with no ring, naming rank 0 (chip 0) short of links, and the
 * INFO lines of a 1-rank one with its ring, node, ports and epoch, and the
 * topology its allreduces were given (`NNP_ALGO` auto, the ring:
 * COMM_TOPOLOGY taken by driver and device); a refused copy into read-only
 * memory in words: "NODE: stream command 1 failed: memory is read-only to
 * the device (status 0x12)"; `nnp_timestamp_async()` reading the modeled
 * clock at NNP-T's defaults: two back to back exactly 3000 ns apart (PCIe
 * latency + overhead), around a 1 MiB device FILL exactly 5852 ns (+ 852 ns
 * of HBM and the FILL's overhead), 8 bytes past the end and a NULL stream
 * INVALID_ARGUMENT with the exact message; `nnp_device_get_model()`: a FILL
 * of 1 MiB adds exactly 1 command, 852 ns of memory busy time and 2852 ns
 * of clock, a TIMESTAMP 1000 ns of host DMA and 3000 ns of clock, neither
 * any port's busy time; a NULL device or model INVALID_ARGUMENT with the
 * exact message
 */
#include <dlfcn.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "guest_env.h"
#include "kselftest_harness.h"

TEST(count_matches_the_vm)
{
	int count = -1;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_count(&count));
	EXPECT_EQ(GUEST_CHIPS, count);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_count(NULL));
}

TEST(open_each_device_in_node_order)
{
	int i, last_minor = -1;

	for (i = 0; i < GUEST_CHIPS; i++) {
		struct nnp_device_info in = { .size = sizeof(in) };
		nnp_device_t *dev = NULL;
		struct stat st;
		int minor;

		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(i, &dev));
		ASSERT_NE(NULL, dev);
		ASSERT_GE(nnp_device_fd(dev), 0);
		ASSERT_EQ(0, fstat(nnp_device_fd(dev), &st));
		EXPECT_TRUE(S_ISCHR(st.st_mode));
		ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &in));
		ASSERT_EQ(1, sscanf(in.path, "/dev/accel/accel%d", &minor));
		EXPECT_GT(minor, last_minor);
		last_minor = minor;
		EXPECT_EQ(GUEST_MEM_SIZE, in.mem_size);
		EXPECT_EQ(NNP_DEVICE_CAP_ADMIN_QUEUE | NNP_DEVICE_CAP_USER_QUEUES |
			  NNP_DEVICE_CAP_ICL | NNP_DEVICE_CAP_COLLECTIVES, in.caps);
		EXPECT_STREQ(GUEST_FW_BUILD, in.fw_build);
		EXPECT_EQ(1u, NNP_VERSION_MAJOR(in.fw_version));
		nnp_device_close(dev);
	}
}

TEST(open_by_path)
{
	struct nnp_device_info a = { .size = sizeof(a) }, b = { .size = sizeof(b) };
	nnp_device_t *dev;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &a));
	nnp_device_close(dev);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open_path(a.path, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &b));
	nnp_device_close(dev);
	EXPECT_EQ(a.chip_id, b.chip_id);
	EXPECT_STREQ(a.path, b.path);
}

TEST(bad_arguments)
{
	nnp_device_t *dev = (nnp_device_t *)1;
	struct nnp_device_info in = { .size = sizeof(in) };

	EXPECT_EQ(NNP_ERROR_NO_DEVICE, nnp_device_open(GUEST_CHIPS, &dev));
	EXPECT_EQ(NULL, dev);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_open(-1, &dev));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_open(0, NULL));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_open_path(NULL, &dev));
	EXPECT_EQ(NNP_ERROR_NO_DEVICE, nnp_device_open_path("/dev/accel/none", &dev));
	/* A character device that is not an nnp node. */
	EXPECT_EQ(NNP_ERROR_NO_DEVICE, nnp_device_open_path("/dev/null", &dev));
	EXPECT_STREQ("/dev/null is not an nnp device (driver none)", nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_get_info(NULL, &in));
	EXPECT_EQ(-1, nnp_device_fd(NULL));
	nnp_device_close(NULL);
}

TEST(every_result_has_its_own_text)
{
	nnp_result_t r, s;

	for (r = NNP_SUCCESS; r <= NNP_IN_PROGRESS; r++) {
		ASSERT_NE(NULL, nnp_strerror(r));
		EXPECT_GT(strlen(nnp_strerror(r)), 4);
		for (s = NNP_SUCCESS; s < r; s++)
			EXPECT_STRNE(nnp_strerror(s), nnp_strerror(r));
	}
	EXPECT_STREQ("unknown nnp result code", nnp_strerror((nnp_result_t)1000));
	EXPECT_STREQ("success", nnp_strerror(NNP_SUCCESS));
}

/* The path of device @index, as libnnp numbers them now. */
static void path_of(int index, char *path)
{
	struct nnp_device_info in = { .size = sizeof(in) };
	nnp_device_t *dev;

	path[0] = '\0';
	if (nnp_device_open(index, &dev) != NNP_SUCCESS)
		return;
	if (nnp_device_get_info(dev, &in) == NNP_SUCCESS)
		strcpy(path, in.path);
	nnp_device_close(dev);
}

/*
 * Enumeration reads sysfs: a user who may open no accel node still counts
 * the devices, and learns at open that the node is not theirs.
 */
TEST(count_without_opening_a_node)
{
	char want[128], path[64];
	int status;
	pid_t pid;

	path_of(0, path);
	ASSERT_STRNE("", path);
	snprintf(want, sizeof(want), "cannot open %s: Permission denied", path);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		nnp_device_t *dev;
		int count = -1;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(10);
		if (nnp_device_count(&count) != NNP_SUCCESS || count != GUEST_CHIPS)
			_exit(11);
		if (nnp_device_open(0, &dev) != NNP_ERROR_PERMISSION)
			_exit(12);
		_exit(strcmp(nnp_get_last_error(), want) ? 13 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST(visible_devices_renumber)
{
	char first[64], second[64], p[64];
	int count = -1;

	ASSERT_LE(2, GUEST_CHIPS);
	path_of(0, first);
	path_of(1, second);
	ASSERT_STRNE("", first);
	setenv("NNP_VISIBLE_DEVICES", "1", 1);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_count(&count));
	EXPECT_EQ(1, count);
	path_of(0, p);
	EXPECT_STREQ(second, p);
	EXPECT_EQ(NNP_ERROR_NO_DEVICE, nnp_device_open(1, &(nnp_device_t *){ NULL }));
	EXPECT_STREQ("no nnp device 1: there are 1", nnp_get_last_error());
	setenv("NNP_VISIBLE_DEVICES", "1,0", 1);
	path_of(1, p);
	EXPECT_STREQ(first, p);
	/* Past the devices there are: the list ends there. */
	setenv("NNP_VISIBLE_DEVICES", "0,99", 1);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_count(&count));
	EXPECT_EQ(1, count);
	setenv("NNP_VISIBLE_DEVICES", "", 1);
	EXPECT_EQ(NNP_ERROR_NO_DEVICE, nnp_device_count(&count));
	unsetenv("NNP_VISIBLE_DEVICES");
}

/* The driver speaks interface 1.x: every open passes the version check. */
TEST(versions)
{
	nnp_device_t *dev;
	int v = 0;

	ASSERT_EQ(NNP_SUCCESS, nnp_get_version(&v));
	EXPECT_EQ(NNP_VERSION_CODE, v);
	EXPECT_EQ(NNP_VERSION(0, 9, 0), v);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	nnp_device_close(dev);
}

TEST(mem_get_info_follows_allocations)
{
	uint64_t total = 0, before = 0, after = 0, page = (uint64_t)sysconf(_SC_PAGESIZE);
	nnp_mem_t *small, *big;
	nnp_device_t *dev;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_get_info(dev, &before, &total));
	EXPECT_EQ(GUEST_MEM_SIZE, total);
	EXPECT_GE(total, before);
	/* A byte takes a page; a MiB takes a MiB. */
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, 1, 0, &small));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_get_info(dev, &after, &total));
	EXPECT_EQ(before - page, after);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, 1 << 20, 0, &big));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_get_info(dev, &after, &total));
	EXPECT_EQ(before - page - (1 << 20), after);
	/* Host memory is not device memory. */
	nnp_mem_free(small);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_HOST, 1 << 20, 0, &small));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_get_info(dev, &after, &total));
	EXPECT_EQ(before - (1 << 20), after);
	nnp_mem_free(small);
	nnp_mem_free(big);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_get_info(dev, &after, &total));
	EXPECT_EQ(before, after);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_mem_get_info(dev, NULL, &total));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_mem_get_info(NULL, &after, &total));
	EXPECT_STREQ("nnp_mem_get_info: no device, free or total", nnp_get_last_error());
	nnp_device_close(dev);
}

/* The child of info_log_of_a_communicator: exit code says what failed. */
static int comm_child(void)
{
	nnp_device_t *dev[2];
	nnp_comm_t *comm[2];

	setenv("NNP_DEBUG", "INFO", 1);
	setenv("NNP_DEBUG_FILE", "/tmp/nnp-info.%p", 1);
	if (nnp_device_open(0, &dev[0]) || nnp_device_open(1, &dev[1]))
		return 20;
	/* The test VM's chips have no links: no ring of two. */
	if (nnp_comm_init_all(dev, 2, comm) != NNP_ERROR_NO_PATH)
		return 21;
	if (strcmp(nnp_get_last_error(),
		   "no ring over the 2 ranks: rank 0 (chip 0) has an up link to 0 other ranks, a ring needs 1"))
		return 22;
	if (nnp_comm_init_all(dev, 1, comm) != NNP_SUCCESS)
		return 23;
	nnp_comm_destroy(comm[0]);
	nnp_device_close(dev[0]);
	nnp_device_close(dev[1]);
	return 0;
}

/*
 * NNP_DEBUG=INFO: the ring, the ports and the epoch of a communicator, and
 * the topology its allreduces were given (COMM_TOPOLOGY taken).
 */
TEST(info_log_of_a_communicator)
{
	char path[64], buf[4096], want[128];
	int status, fd;
	ssize_t n;
	pid_t pid;

	/* Before any libnnp call here: NNP_DEBUG is read at the first. */
	ASSERT_LE(2, GUEST_CHIPS);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(comm_child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	path_of(0, path);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	snprintf(buf, sizeof(buf), "/tmp/nnp-info.%d", (int)pid);
	fd = open(buf, O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_LT(0, n);
	buf[n] = '\0';
	EXPECT_NE(NULL, strstr(buf, " [-] NNP WARN no ring over the 2 ranks: rank 0 (chip 0) has an up link to 0 other ranks, a ring needs 1: the chips are not connected by a usable inter-chip link\n"));
	EXPECT_NE(NULL, strstr(buf, " NNP INFO ring of 1 ranks, epoch 0x"));
	snprintf(want, sizeof(want), " NNP INFO rank 0 of 1 on %s: communicator ", path);
	EXPECT_NE(NULL, strstr(buf, want));
	EXPECT_NE(NULL, strstr(buf, ", sends on port 0, receives on port 0, epoch 0x"));
	/* NNP_ALGO unset: auto, and the driver and device took the ring. */
	EXPECT_NE(NULL, strstr(buf, " NNP INFO NNP_ALGO=auto: a ring of 1 port pair, no torus\n"));
	EXPECT_NE(NULL, strstr(buf, " NNP INFO rank 0: allreduce auto on the ring: dim 0 1 chips at 0, ports 0/0; dim 1 0 chips at 0, ports 0/0\n"));
	if (_metadata->exit_code == KSFT_FAIL)
		fprintf(stderr, "%s", buf);
}

/* A size of a struct that libnnp does not know: refused, naming it. */
TEST(unknown_struct_sizes_refused)
{
	struct nnp_device_counters c = { .size = 0 };
	struct nnp_port_info p[2] = { { .size = sizeof(p[0]) + 8 } };
	struct nnp_device_info in = { .size = sizeof(in) - 1 };
	/* The size of 0.8's event, which had none. */
	nnp_event_t ev = { .size = 16 };
	unsigned int n;
	nnp_device_t *dev;
	nnp_stream_t *st;
	char want[160];

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_get_counters(dev, &c));
	EXPECT_STREQ("nnp_device_get_counters: counters size 0, not one libnnp 0.9 knows (56 to 64): set it to sizeof the struct",
		     nnp_get_last_error());
	/* 0.9's first layout, before peer_dma_bytes: filled up to its end. */
	memset(&c, 0xa5, sizeof(c));
	c.size = offsetof(struct nnp_device_counters, peer_dma_bytes);
	EXPECT_EQ(NNP_SUCCESS, nnp_device_get_counters(dev, &c));
	EXPECT_NE(0xa5a5a5a5a5a5a5a5ull, c.mem_objects);
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, c.peer_dma_bytes);
	c.size = 0;
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_get_ports(dev, p, 2, &n));
	snprintf(want, sizeof(want), "nnp_device_get_ports: ports[0] size %zu, not one libnnp 0.9 knows (64 to 64): set it to sizeof the struct",
		 sizeof(p[0]) + 8);
	EXPECT_STREQ(want, nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_get_info(dev, &in));
	/* Nothing was written: the size is as the caller left it. */
	EXPECT_EQ(sizeof(in) - 1, in.size);
	/* An event: its size is checked where it is filled and where read. */
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(dev, &st));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_event_record(st, &ev));
	EXPECT_STREQ("nnp_event_record: event size 16, not one libnnp 0.9 knows (24 to 24): set it to sizeof the struct",
		     nnp_get_last_error());
	EXPECT_EQ(NULL, ev.stream);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_event_query(&ev));
	EXPECT_STREQ("nnp_event_query: event size 16, not one libnnp 0.9 knows (24 to 24): set it to sizeof the struct",
		     nnp_get_last_error());
	ev.size = sizeof(ev);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_event_synchronize(&ev, 0));
	EXPECT_STREQ("nnp_event_synchronize: event not recorded", nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_event_query(NULL));
	EXPECT_STREQ("nnp_event_query: event is NULL", nnp_get_last_error());
	ASSERT_EQ(NNP_SUCCESS, nnp_event_record(st, &ev));
	EXPECT_EQ(NNP_SUCCESS, nnp_event_synchronize(&ev, 0));
	nnp_stream_destroy(st);
	nnp_device_close(dev);
}

/*
 * A program built against 0.8 calls the old symbol versions with the old
 * layouts, each 0.9's less the leading size: they fill exactly those
 * bytes (a canary after them stays), with what the 0.9 calls give.
 */
#define CANARY	0xa5
static bool canary_after(const uint8_t *buf, size_t len)
{
	return buf[len] == CANARY && buf[len + 1] == CANARY;
}

TEST(programs_built_against_0_8_get_the_old_layouts)
{
	struct nnp_device_info in = { .size = sizeof(in) };
	struct nnp_port_info p[2] = { { .size = sizeof(p[0]) } };
	struct nnp_device_counters c = { .size = sizeof(c) };
	struct nnp_device_model m = { .size = sizeof(m) };
	struct nnp_stream_error e = { .size = sizeof(e) };
	nnp_result_t (*info0)(nnp_device_t *, void *), (*counters0)(nnp_device_t *, void *);
	nnp_result_t (*model0)(nnp_device_t *, void *);
	nnp_result_t (*ports0)(nnp_device_t *, void *, unsigned int, unsigned int *);
	nnp_result_t (*error0)(const nnp_stream_t *, void *);
	nnp_result_t (*record0)(nnp_stream_t *, void *), (*query0)(const void *);
	nnp_result_t (*sync0)(const void *, int64_t);
	nnp_event_t ev = NNP_EVENT_INIT;
	uint8_t buf[512];
	nnp_mem_t *src, *ro;
	nnp_device_t *dev;
	nnp_stream_t *st;
	unsigned int n, n0;
	uint64_t u64;
	uint32_t u32;
	void *lib;

	lib = dlopen("libnnp.so.0", RTLD_NOW | RTLD_NOLOAD);
	ASSERT_NE(NULL, lib);
	info0 = dlvsym(lib, "nnp_device_get_info", "LIBNNP_0");
	ports0 = dlvsym(lib, "nnp_device_get_ports", "LIBNNP_0");
	model0 = dlvsym(lib, "nnp_device_get_model", "LIBNNP_0.5");
	counters0 = dlvsym(lib, "nnp_device_get_counters", "LIBNNP_0.6");
	error0 = dlvsym(lib, "nnp_stream_error", "LIBNNP_0");
	record0 = dlvsym(lib, "nnp_event_record", "LIBNNP_0");
	query0 = dlvsym(lib, "nnp_event_query", "LIBNNP_0");
	sync0 = dlvsym(lib, "nnp_event_synchronize", "LIBNNP_0");
	ASSERT_TRUE(info0 && ports0 && model0 && counters0 && error0);
	ASSERT_TRUE(record0 && query0 && sync0);
	ASSERT_EQ(dlvsym(lib, "nnp_event_record", "LIBNNP_0.9"), (void *)nnp_event_record);
	/* And the default versions are 0.9's, which take the sizes. */
	ASSERT_EQ(dlvsym(lib, "nnp_device_get_info", "LIBNNP_0.9"),
		  (void *)nnp_device_get_info);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));

	/* 0.8's nnp_device_info: 152 bytes, path first, chip_id at 64. */
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &in));
	memset(buf, CANARY, sizeof(buf));
	ASSERT_EQ(NNP_SUCCESS, info0(dev, buf));
	EXPECT_STREQ(in.path, (const char *)buf);
	memcpy(&u32, buf + 64, 4);
	EXPECT_EQ(in.chip_id, u32);
	memcpy(&u64, buf + 80, 8);
	EXPECT_EQ(in.mem_size, u64);
	EXPECT_STREQ(in.fw_build, (const char *)buf + 120);
	EXPECT_TRUE(canary_after(buf, 152));

	/* 0.8's nnp_port_info: 56 bytes each, peer_chip at 4, errors at 48. */
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_ports(dev, p, 2, &n));
	memset(buf, CANARY, sizeof(buf));
	ASSERT_EQ(NNP_SUCCESS, ports0(dev, buf, 2, &n0));
	EXPECT_EQ(n, n0);
	EXPECT_EQ(p[1].size, sizeof(p[1]));
	memcpy(&u32, buf + 56, 4);
	EXPECT_EQ(p[1].state, u32);
	memcpy(&u32, buf + 56 + 4, 4);
	EXPECT_EQ(p[1].peer_chip, u32);
	EXPECT_TRUE(canary_after(buf, 2 * 56));

	/* 0.8's counters: 48 bytes, mem_objects last. */
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_counters(dev, &c));
	memset(buf, CANARY, sizeof(buf));
	ASSERT_EQ(NNP_SUCCESS, counters0(dev, buf));
	memcpy(&u64, buf + 40, 8);
	EXPECT_EQ(c.mem_objects, u64);
	EXPECT_TRUE(canary_after(buf, 48));

	/* 0.8's model: 168 bytes, num_ports at 32. */
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_model(dev, &m));
	memset(buf, CANARY, sizeof(buf));
	ASSERT_EQ(NNP_SUCCESS, model0(dev, buf));
	memcpy(&u32, buf + 32, 4);
	EXPECT_EQ(m.num_ports, u32);
	EXPECT_TRUE(canary_after(buf, 168));

	/* 0.8's stream error: 24 bytes, status at 8, what at 16. */
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, 4096, 0, &src));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_HOST, 4096, NNP_MEM_READ_ONLY, &ro));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(dev, &st));

	/* 0.8's event: 16 bytes, the stream then the point in it. */
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(st, src, 0, 7, 4096));
	ASSERT_EQ(NNP_SUCCESS, nnp_event_record(st, &ev));
	memset(buf, CANARY, sizeof(buf));
	ASSERT_EQ(NNP_SUCCESS, record0(st, buf));
	EXPECT_EQ(0, memcmp(buf, &ev.stream, 16));
	EXPECT_TRUE(canary_after(buf, 16));
	EXPECT_EQ(NNP_SUCCESS, sync0(buf, -1));
	EXPECT_EQ(NNP_SUCCESS, query0(buf));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, query0(NULL));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, record0(st, NULL));

	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(st, ro, 0, src, 0, 4096));
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_synchronize(st));
	/* A point after the failure: read from the old layout, it failed. */
	ASSERT_EQ(NNP_SUCCESS, record0(st, buf));
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, query0(buf));
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, sync0(buf, -1));
	ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(st, &e));
	memset(buf, CANARY, sizeof(buf));
	ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, error0(st, buf));
	memcpy(&u64, buf, 8);
	EXPECT_EQ(e.seq, u64);
	EXPECT_EQ(0x12, buf[8]);
	EXPECT_EQ(0, memcmp(buf + 16, &e.what, sizeof(e.what)));
	EXPECT_TRUE(canary_after(buf, 24));
	nnp_stream_destroy(st);
	nnp_mem_free(ro);
	nnp_mem_free(src);
	nnp_device_close(dev);
}

/* A command the device refuses: the last error names it and why. */
TEST(refused_command_in_words)
{
	struct nnp_device_info in = { .size = sizeof(in) };
	nnp_mem_t *src, *ro;
	nnp_stream_t *st;
	nnp_device_t *dev;
	char want[160];

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &in));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, 4096, 0, &src));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_HOST, 4096, NNP_MEM_READ_ONLY, &ro));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(dev, &st));
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(st, src, 0, 1, 4096));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(st, ro, 0, src, 0, 4096));
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_synchronize(st));
	snprintf(want, sizeof(want),
		 "%s: stream command 1 failed: memory is read-only to the device (status 0x12)",
		 in.path);
	EXPECT_STREQ(want, nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_memcpy_async(st, ro, 1, src, 0, 4096));
	EXPECT_STREQ("nnp_memcpy_async of 4096 bytes: no stream, or a buffer not of its device or too small",
		     nnp_get_last_error());
	nnp_stream_destroy(st);
	nnp_mem_free(ro);
	nnp_mem_free(src);
	nnp_device_close(dev);
}

/*
 * nnp_timestamp_async() reads the modeled clock at NNP-T's defaults
 * (docs/architecture.md): a TIMESTAMP into host memory costs the PCIe
 * latency (1000 ns; its 8 bytes at 31508 MB/s round down to 0), every
 * command starts 2000 ns of overhead after the one before, and a FILL
 * of 1 MiB of device memory costs 1048576 B at 1.23 TB/s = 852 ns.
 */
TEST(timestamp_is_the_modeled_clock)
{
	nnp_mem_t *dmem, *host;
	nnp_stream_t *st;
	nnp_device_t *dev;
	uint64_t *t;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, 1 << 20, 0, &dmem));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_HOST, 4096, 0, &host));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(dev, &st));
	ASSERT_EQ(NNP_SUCCESS, nnp_timestamp_async(st, host, 0));
	ASSERT_EQ(NNP_SUCCESS, nnp_timestamp_async(st, host, 8));
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(st, dmem, 0, 7, 1 << 20));
	ASSERT_EQ(NNP_SUCCESS, nnp_timestamp_async(st, host, 4088));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(st));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(host, (void **)&t));
	EXPECT_EQ(1000 + 2000, t[1] - t[0]);
	EXPECT_EQ(1000 + 2000 + 852 + 2000, t[511] - t[1]);
	/* 8 bytes must fit: none past the end, nor a NULL stream. */
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_timestamp_async(st, host, 4089));
	EXPECT_STREQ("nnp_timestamp_async: no stream, or a buffer not of its device or without 8 bytes at 4089",
		     nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_timestamp_async(NULL, host, 0));
	nnp_stream_destroy(st);
	nnp_mem_free(host);
	nnp_mem_free(dmem);
	nnp_device_close(dev);
}

/*
 * nnp_device_get_model() adds up what each command costs on the modeled
 * clock, at the defaults above: a FILL of 1 MiB keeps device memory busy
 * 852 ns and moves the clock on by its overhead and that; a TIMESTAMP
 * into host memory is 1000 ns of host DMA. Neither sends on a port.
 */
TEST(model_adds_each_commands_busy_time)
{
	struct nnp_device_model m[3] = {
		{ .size = sizeof(m[0]) }, { .size = sizeof(m[0]) }, { .size = sizeof(m[0]) },
	};
	nnp_mem_t *dmem, *host;
	nnp_stream_t *st;
	nnp_device_t *dev;
	unsigned int i;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, 1 << 20, 0, &dmem));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_HOST, 4096, 0, &host));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(dev, &st));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_model(dev, &m[0]));
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(st, dmem, 0, 7, 1 << 20));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(st));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_model(dev, &m[1]));
	ASSERT_EQ(NNP_SUCCESS, nnp_timestamp_async(st, host, 0));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(st));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_model(dev, &m[2]));

	EXPECT_EQ(m[0].commands + 1, m[1].commands);
	EXPECT_EQ(m[0].now_ns + 2000 + 852, m[1].now_ns);
	EXPECT_EQ(m[0].hbm_busy_ns + 852, m[1].hbm_busy_ns);
	EXPECT_EQ(m[0].pcie_busy_ns, m[1].pcie_busy_ns);
	EXPECT_EQ(m[1].commands + 1, m[2].commands);
	EXPECT_EQ(m[1].now_ns + 2000 + 1000, m[2].now_ns);
	EXPECT_EQ(m[1].hbm_busy_ns, m[2].hbm_busy_ns);
	EXPECT_EQ(m[1].pcie_busy_ns + 1000, m[2].pcie_busy_ns);
	EXPECT_EQ(GUEST_ICL_PORTS, m[2].num_ports);
	for (i = 0; i < m[2].num_ports; i++)
		EXPECT_EQ(m[0].port_tx_busy_ns[i], m[2].port_tx_busy_ns[i]);

	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_get_model(NULL, &m[0]));
	EXPECT_STREQ("nnp_device_get_model: no device or model", nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_get_model(dev, NULL));
	nnp_stream_destroy(st);
	nnp_mem_free(host);
	nnp_mem_free(dmem);
	nnp_device_close(dev);
}

TEST_HARNESS_MAIN
