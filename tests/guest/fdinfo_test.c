// SPDX-License-Identifier: MIT
/*
 * What nnp.ko's fdinfo says of each open file (docs/uapi.md, "fdinfo"),
 * and `nnptool ps`, which reads it, checked against work whose cost is
 * known exactly.
 *
 * keys_and_client_ids: two opens of device 0 print drm-driver "nnp",
 * drm-pdev the device's PCI address, distinct drm-client-ids, each the
 * same on a second read and through a dup()ed descriptor; every engine
 * and memory key there, and 0 before any work.
 * memory_totals_exact: device objects of 1 MiB and 64 KiB, host objects
 * of 2 MiB and 4 KiB and 8 KiB of registered user memory make
 * drm-total-device and drm-total-host exactly their sums (bytes),
 * drm-resident-* the same, drm-shared-* 0; freeing one takes exactly its
 * size off; the other open's totals stay 0.
 * engine_times_exact: a 1 MiB device-to-device copy adds to
 * drm-engine-copy exactly what it adds to the device's modeled HBM busy
 * time, 2 MiB at NNP-T's 1.23 TB/s (1705 ns); a 1 MiB host-to-device copy
 * exactly its PCIe time (1000 + 33279 ns); a one-rank out-of-place
 * allreduce of 1 MiB adds exactly its HBM time to drm-engine-collective
 * and nothing to copy; the other open's engines stay 0; 50 reads during
 * a stream of copies never go down.
 * values_survive_a_reset: a file a reset took keeps showing the engine
 * times and memory it had: the firmware's counts start over, the file's
 * do not go backwards.
 * nnptool_ps_lists_this_process: `nnptool ps --json` and the table show
 * this process's two clients with its pid, command, node, PCI address,
 * client ids, memory and engine times exactly as fdinfo has them.
 * communicators_named: since driver interface 1.9 each communicator of
 * a file is a key of its fdinfo, "nnp-comm-ID: RANK/NRANKS NAME": one
 * made with a name by COMM_CREATE, one without, one by a caller built
 * before 1.9 (its shorter struct: no name), and one through libnnp's
 * nnp_comm_init_rank_config() named "tp.stage-1"; `nnptool ps` shows
 * them as NAME:0/1 or #ID:0/1, and in --json; a name with an escape, a
 * space, a newline, a tab, UTF-8 or a Latin-1 letter, or 32 bytes with
 * no NUL, is EINVAL and
 * makes no communicator; a destroyed one's key goes.
 * a_transit_shows_no_rank: a transit (driver 1.12) named "pp.relay" is
 * "-/2 pp.relay" in fdinfo, pp.relay:-/2 in `nnptool ps`, "-/2" in
 * `nnptool comms`, and rank null in both tools' JSON.
 * communicators_raced: two threads of one file make and destroy
 * communicators named with 31 bytes while a third reads its fdinfo:
 * every key read whole, no call failed, none left after.
 * nnptool_ps_escapes_other_users_names: a process of user 65534 holding
 * the device, named with a terminal title, a bell and a clear-screen
 * sequence, is a row of `nnptool ps` whose name shows those bytes as
 * \xHH, and the table has no control byte but its line ends.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>
#include <xf86drm.h>

#include "guest_env.h"
#include "kselftest_harness.h"

#define MiB		(1ull << 20)
/* NNP-T's modeled bandwidths and latency (firmware-sim/src/base/fw_clock.c). */
#define HBM_MBPS	1230000ull
#define PCIE_MBPS	31508ull
#define PCIE_LAT_NS	1000ull

struct fdinfo {
	char driver[16];
	char pdev[16];
	uint64_t client_id;
	uint64_t total[2], shared[2], resident[2];	/* device, host */
	uint64_t copy_ns, coll_ns;
	unsigned int keys;	/* lines with a drm- key */
};

/* fd @fd's fdinfo; every nnp key is a plain number (bytes, or "N ns"). */
static int read_fdinfo(int fd, struct fdinfo *fi)
{
	static const char *const regions[] = { "device", "host" };
	char path[64], line[256], key[64];
	unsigned long long v;
	FILE *f;
	int r;

	memset(fi, 0, sizeof(*fi));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char sval[32] = "";

		if (strncmp(line, "drm-", 4))
			continue;
		fi->keys++;
		if (sscanf(line, "%63[^:]:%31s", key, sval) != 2)
			continue;
		if (!strcmp(key, "drm-driver"))
			snprintf(fi->driver, sizeof(fi->driver), "%s", sval);
		if (!strcmp(key, "drm-pdev"))
			snprintf(fi->pdev, sizeof(fi->pdev), "%s", sval);
		v = strtoull(sval, NULL, 10);
		if (!strcmp(key, "drm-client-id"))
			fi->client_id = v;
		if (!strcmp(key, "drm-engine-copy"))
			fi->copy_ns = v;
		if (!strcmp(key, "drm-engine-collective"))
			fi->coll_ns = v;
		for (r = 0; r < 2; r++) {
			char k[32];

			snprintf(k, sizeof(k), "drm-total-%s", regions[r]);
			if (!strcmp(key, k))
				fi->total[r] = v;
			snprintf(k, sizeof(k), "drm-shared-%s", regions[r]);
			if (!strcmp(key, k))
				fi->shared[r] = v;
			snprintf(k, sizeof(k), "drm-resident-%s", regions[r]);
			if (!strcmp(key, k))
				fi->resident[r] = v;
		}
	}
	fclose(f);
	return 0;
}

static struct nnp_device_model model(struct __test_metadata *_metadata,
				     nnp_device_t *dev)
{
	struct nnp_device_model m = { .size = sizeof(m) };

	EXPECT_EQ(NNP_SUCCESS, nnp_device_get_model(dev, &m));
	return m;
}

/* "0000:00:04.0" of device 0, from sysfs. */
static void pci_address(char *buf, size_t len)
{
	char link[256];
	ssize_t n = readlink("/sys/class/accel/accel0/device", link,
			     sizeof(link) - 1);

	link[n > 0 ? n : 0] = '\0';
	snprintf(buf, len, "%s", strrchr(link, '/') ? strrchr(link, '/') + 1 : "");
}

FIXTURE(two) {
	nnp_device_t *a, *b;
	nnp_stream_t *s;
	struct fdinfo fa, fb;
};

FIXTURE_SETUP(two)
{
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &self->a));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &self->b));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->a, &self->s));
}

FIXTURE_TEARDOWN(two)
{
	nnp_stream_destroy(self->s);
	nnp_device_close(self->b);
	nnp_device_close(self->a);
}

TEST_F(two, keys_and_client_ids)
{
	struct fdinfo again, dup_fi;
	char pci[32];
	int d;

	pci_address(pci, sizeof(pci));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &self->fa));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->b), &self->fb));
	EXPECT_STREQ("nnp", self->fa.driver);
	EXPECT_STREQ(pci, self->fa.pdev);
	EXPECT_STREQ(pci, self->fb.pdev);
	/* driver, client id, pdev, 2 engines, 3 keys for each of 2 regions */
	EXPECT_EQ(11, self->fa.keys);
	EXPECT_NE(0, self->fa.client_id);
	EXPECT_NE(self->fa.client_id, self->fb.client_id);
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &again));
	EXPECT_EQ(self->fa.client_id, again.client_id);
	d = dup(nnp_device_fd(self->a));
	ASSERT_LE(0, d);
	ASSERT_EQ(0, read_fdinfo(d, &dup_fi));
	close(d);
	EXPECT_EQ(self->fa.client_id, dup_fi.client_id);
	EXPECT_EQ(0, self->fb.copy_ns);
	EXPECT_EQ(0, self->fb.coll_ns);
	EXPECT_EQ(0, self->fb.total[0]);
	EXPECT_EQ(0, self->fb.total[1]);
}

TEST_F(two, memory_totals_exact)
{
	const uint64_t dev_bytes = MiB + 64 * 1024, host_bytes = 2 * MiB + 4096;
	nnp_mem_t *d1, *d2, *h1, *h2, *u;
	void *user;

	ASSERT_EQ(0, posix_memalign(&user, 4096, 8192));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_DEVICE, MiB, 0, &d1));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_DEVICE, 64 * 1024, 0, &d2));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_HOST, 2 * MiB, 0, &h1));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_HOST, 4096, 0, &h2));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_register(self->a, user, 8192, 0, &u));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &self->fa));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->b), &self->fb));
	EXPECT_EQ(dev_bytes, self->fa.total[0]);
	EXPECT_EQ(host_bytes + 8192, self->fa.total[1]);
	EXPECT_EQ(dev_bytes, self->fa.resident[0]);
	EXPECT_EQ(host_bytes + 8192, self->fa.resident[1]);
	EXPECT_EQ(0, self->fa.shared[0]);
	EXPECT_EQ(0, self->fa.shared[1]);
	EXPECT_EQ(0, self->fb.total[0]);
	EXPECT_EQ(0, self->fb.total[1]);
	nnp_mem_free(d1);
	nnp_mem_free(h2);
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &self->fa));
	EXPECT_EQ(64 * 1024, self->fa.total[0]);
	EXPECT_EQ(2 * MiB + 8192, self->fa.total[1]);
	nnp_mem_free(u);
	nnp_mem_free(h1);
	nnp_mem_free(d2);
	free(user);
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &self->fa));
	EXPECT_EQ(0, self->fa.total[0]);
	EXPECT_EQ(0, self->fa.total[1]);
}

TEST_F(two, engine_times_exact)
{
	const uint64_t hbm_2mib = 2 * MiB * 1000 / HBM_MBPS;
	const uint64_t pcie_1mib = PCIE_LAT_NS + MiB * 1000 / PCIE_MBPS;
	struct nnp_device_model m0 = { .size = sizeof(m0) }, m1 = { .size = sizeof(m1) };
	nnp_mem_t *x, *y, *h;
	struct fdinfo f0, f1;
	nnp_comm_t *comm;
	uint64_t start;
	int i;

	ASSERT_EQ(1705, hbm_2mib);
	ASSERT_EQ(34279, pcie_1mib);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_DEVICE, MiB, 0, &x));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_DEVICE, MiB, 0, &y));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_HOST, MiB, 0, &h));

	/* Device to device: the copy engine, exactly its HBM time. */
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &f0));
	m0 = model(_metadata, self->a);
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, y, 0, x, 0, MiB));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &f1));
	m1 = model(_metadata, self->a);
	EXPECT_EQ(hbm_2mib, f1.copy_ns - f0.copy_ns);
	EXPECT_EQ(m1.hbm_busy_ns - m0.hbm_busy_ns, f1.copy_ns - f0.copy_ns);
	EXPECT_EQ(f0.coll_ns, f1.coll_ns);

	/* Host to device: exactly its PCIe time. */
	f0 = f1;
	m0 = m1;
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, x, 0, h, 0, MiB));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &f1));
	m1 = model(_metadata, self->a);
	EXPECT_EQ(pcie_1mib, f1.copy_ns - f0.copy_ns);
	EXPECT_EQ(m1.pcie_busy_ns - m0.pcie_busy_ns, f1.copy_ns - f0.copy_ns);

	/* A one-rank allreduce out of place: the collective engine. */
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(&self->a, 1, &comm));
	f0 = f1;
	m0 = model(_metadata, self->a);
	ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(x, 0, y, 0, MiB / 4, NNP_FLOAT32,
					     NNP_SUM, comm, self->s));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &f1));
	m1 = model(_metadata, self->a);
	EXPECT_EQ(hbm_2mib, f1.coll_ns - f0.coll_ns);
	EXPECT_EQ(m1.hbm_busy_ns - m0.hbm_busy_ns, f1.coll_ns - f0.coll_ns);
	EXPECT_EQ(f0.copy_ns, f1.copy_ns);
	nnp_comm_destroy(comm);

	/* The other file did none of it. */
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->b), &self->fb));
	EXPECT_EQ(0, self->fb.copy_ns);
	EXPECT_EQ(0, self->fb.coll_ns);

	/* Read while copies run: never less than the read before. */
	start = f1.copy_ns;
	for (i = 0; i < 50; i++) {
		f0 = f1;
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, y, 0, x, 0, MiB));
		ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &f1));
		ASSERT_LE(f0.copy_ns, f1.copy_ns);
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &f1));
	EXPECT_EQ(start + 50 * hbm_2mib, f1.copy_ns);
	nnp_mem_free(h);
	nnp_mem_free(y);
	nnp_mem_free(x);
}

TEST_F(two, values_survive_a_reset)
{
	struct fdinfo before, after;
	nnp_device_t *root;
	nnp_mem_t *x, *y;

	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_DEVICE, MiB, 0, &x));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_DEVICE, MiB, 0, &y));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, y, 0, x, 0, MiB));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &before));
	ASSERT_EQ(1705, before.copy_ns);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &root));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_reset(root));
	nnp_device_close(root);
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &after));
	EXPECT_EQ(before.client_id, after.client_id);
	EXPECT_EQ(1705, after.copy_ns);
	EXPECT_EQ(2 * MiB, after.total[0]);
	nnp_mem_free(y);
	nnp_mem_free(x);
}

/* The first line of `nnptool @args` that has @needle; "" if none. */
static void tool_line(const char *args, const char *needle, char *buf,
		      size_t len)
{
	char cmd[128];
	FILE *p;

	buf[0] = '\0';
	snprintf(cmd, sizeof(cmd), "nnptool %s", args);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(buf, (int)len, p) && !strstr(buf, needle))
		;
	if (!strstr(buf, needle))
		buf[0] = '\0';
	pclose(p);
}

TEST_F(two, nnptool_ps_lists_this_process)
{
	char pci[32], want[1024], line[1024], id[32];
	nnp_mem_t *x, *y, *h;

	pci_address(pci, sizeof(pci));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_DEVICE, MiB, 0, &x));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->a, NNP_MEM_DEVICE, MiB, 0, &y));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->b, NNP_MEM_HOST, 3 * MiB, 0, &h));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, y, 0, x, 0, MiB));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->a), &self->fa));
	ASSERT_EQ(0, read_fdinfo(nnp_device_fd(self->b), &self->fb));
	ASSERT_EQ(1705, self->fa.copy_ns);

	snprintf(want, sizeof(want),
		 "{\"pid\": %d, \"command\": \"fdinfo_test\", \"node\": "
		 "\"/dev/accel/accel0\", \"pci_address\": \"%s\", \"client_id\": %"
		 PRIu64 ", \"device_mem\": 2097152, \"host_mem\": 0, "
		 "\"copy_busy_ns\": 1705, \"collective_busy_ns\": 0, "
		 "\"communicators\": []}, "
		 "{\"pid\": %d, \"command\": \"fdinfo_test\", \"node\": "
		 "\"/dev/accel/accel0\", \"pci_address\": \"%s\", \"client_id\": %"
		 PRIu64 ", \"device_mem\": 0, \"host_mem\": 3145728, "
		 "\"copy_busy_ns\": 0, \"collective_busy_ns\": 0, "
		 "\"communicators\": []}",
		 getpid(), pci, self->fa.client_id, getpid(), pci,
		 self->fb.client_id);
	tool_line("ps --json", "{\"clients\": [", line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, want)) {
		TH_LOG("want %s\nin   %s", want, line);
	}

	snprintf(id, sizeof(id), " %6" PRIu64 " ", self->fa.client_id);
	tool_line("ps", id, line, sizeof(line));
	snprintf(want, sizeof(want),
		 "%-7d %-15s %-18s %-12s %6" PRIu64 " %12d %12d %12d %12d  -\n",
		 getpid(), "fdinfo_test", "/dev/accel/accel0", pci,
		 self->fa.client_id, 2048, 0, 1, 0);
	EXPECT_STREQ(want, line);
	nnp_mem_free(h);
	nnp_mem_free(y);
	nnp_mem_free(x);
}

/* COMM_CREATE of a one-rank communicator on @fd named @name; its id or -errno. */
static int comm_named(int fd, const char *name, size_t len, uint64_t epoch)
{
	struct drm_nnp_comm_create c = { .nranks = 1, .epoch = epoch };

	memcpy(c.name, name, len);
	return drmIoctl(fd, DRM_IOCTL_NNP_COMM_CREATE, &c) ? -errno : (int)c.comm;
}

/* fd @fd's fdinfo value of key "nnp-comm-@id"; "" if none. */
static void comm_key(int fd, int id, char *buf, size_t len)
{
	char path[64], line[256], key[32];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(key, sizeof(key), "nnp-comm-%d:\t", id);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			snprintf(buf, len, "%s", line + strlen(key));
	fclose(f);
}

TEST_F(two, communicators_named)
{
	/* What a caller built before 1.9 passes: the struct without @name. */
	struct old_create {
		__u32 nranks, rank, send_port, recv_port, flags, comm;
		__u64 epoch, ring;
		__u32 timeout_ms, pad;
	} old = { .nranks = 1, .epoch = 0x5eed0003 };
	static const char *const bad[] = {
		"tp\x1b[31m", "tp stage", "tp\n", "tp\tx", "caf\xc3\xa9", "tp\xe9",
	};
	nnp_comm_config_t cfg = NNP_COMM_CONFIG_INIT;
	char val[128], line[2048], want[512];
	int fd = nnp_device_fd(self->a), named, plain, i;
	char full[DRM_NNP_COMM_NAME_MAX];
	nnp_unique_id_t uid;
	nnp_comm_t *comm;

	named = comm_named(fd, "dp-0.x_y", 9, 0x5eed0001);
	plain = comm_named(fd, "", 0, 0x5eed0002);
	ASSERT_LT(0, named);
	ASSERT_LT(0, plain);
	ASSERT_EQ(0, drmIoctl(fd, _IOWR(DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_NNP_COMM_CREATE,
					struct old_create), &old));
	comm_key(fd, named, val, sizeof(val));
	EXPECT_STREQ("0/1 dp-0.x_y\n", val);
	comm_key(fd, plain, val, sizeof(val));
	EXPECT_STREQ("0/1\n", val);
	comm_key(fd, (int)old.comm, val, sizeof(val));
	EXPECT_STREQ("0/1\n", val);

	for (i = 0; i < 6; i++) {
		EXPECT_EQ(-EINVAL, comm_named(fd, bad[i], strlen(bad[i]) + 1, 0x5eed0010 + i))
			TH_LOG("name %d", i);
	}
	memset(full, 'a', sizeof(full));
	EXPECT_EQ(-EINVAL, comm_named(fd, full, sizeof(full), 0x5eed0020));

	/* Through libnnp: the config's name reaches the driver. */
	cfg.name = "tp.stage-1";
	ASSERT_EQ(NNP_SUCCESS, nnp_get_unique_id(&uid));
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_rank_config(&comm, 1, &uid, 0, self->b, &cfg))
		TH_LOG("%s", nnp_get_last_error());
	tool_line("ps", "dp-0.x_y", line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, "  dp-0.x_y:0/1,#")) TH_LOG("%s", line);
	tool_line("ps", "tp.stage-1", line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, "  tp.stage-1:0/1\n")) TH_LOG("%s", line);
	snprintf(want, sizeof(want),
		 "{\"id\": %d, \"name\": \"dp-0.x_y\", \"rank\": 0, \"nranks\": 1}", named);
	tool_line("ps --json", "{\"clients\": [", line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("want %s in %s", want, line);
	snprintf(want, sizeof(want),
		 "{\"id\": %d, \"name\": null, \"rank\": 0, \"nranks\": 1}", plain);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("want %s in %s", want, line);

	nnp_comm_destroy(comm);
	ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_NNP_COMM_DESTROY,
			      &(struct drm_nnp_comm_destroy){ .comm = (__u32)named }));
	comm_key(fd, named, val, sizeof(val));
	EXPECT_STREQ("", val);
}

/*
 * A transit (driver 1.12) named "pp.relay": its fdinfo value is
 * "-/2 pp.relay", and `nnptool ps` and `nnptool comms`, in the table and
 * in JSON, show it with no rank ("-", null), not a number.
 */
TEST_F(two, a_transit_shows_no_rank)
{
	struct drm_nnp_comm_create c = {
		.nranks = 2, .send_port = 0, .recv_port = 1,
		.flags = DRM_NNP_COMM_CREATE_TRANSIT, .epoch = 0x5eed0030,
		.name = "pp.relay",
	};
	int fd = nnp_device_fd(self->a);
	char val[128], line[2048], want[256];

	ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_NNP_COMM_CREATE, &c));
	comm_key(fd, (int)c.comm, val, sizeof(val));
	EXPECT_STREQ("-/2 pp.relay\n", val);
	tool_line("ps", "pp.relay", line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, "  pp.relay:-/2")) TH_LOG("%s", line);
	snprintf(want, sizeof(want),
		 "{\"id\": %u, \"name\": \"pp.relay\", \"rank\": null, \"nranks\": 2}",
		 c.comm);
	tool_line("ps --json", "{\"clients\": [", line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("want %s in %s", want, line);
	tool_line("comms", "pp.relay", line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, " -/2 ")) TH_LOG("%s", line);
	tool_line("comms --json", "pp.relay", line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, "\"name\": \"pp.relay\", \"rank\": null, \"nranks\": 2"))
		TH_LOG("%s", line);
	ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_NNP_COMM_DESTROY,
			      &(struct drm_nnp_comm_destroy){ .comm = c.comm }));
}

/* One thread of communicators_raced: @rounds of COMM_CREATE and DESTROY. */
struct racer {
	int fd, base, rounds, bad;
	const char *name;
};

static void *create_destroy(void *arg)
{
	struct racer *r = arg;
	int i;

	for (i = 0; i < r->rounds; i++) {
		int id = comm_named(r->fd, r->name, strlen(r->name) + 1,
				    0x7ace0000ull + (uint64_t)r->base + (uint64_t)i);

		r->bad += id <= 0 || drmIoctl(r->fd, DRM_IOCTL_NNP_COMM_DESTROY,
					      &(struct drm_nnp_comm_destroy){ .comm = (__u32)id });
	}
	return NULL;
}

/*
 * Two threads of one file make and destroy communicators with names of
 * the longest length (31 bytes and the NUL) while this one reads the
 * file's fdinfo: every nnp-comm key read is whole ("0/1 NAME" of one of
 * the two names), no call fails, and none is left at the end.
 */
TEST_F(two, communicators_raced)
{
	static const char a31[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char b31[] = "b.b-b_bbbbbbbbbbbbbbbbbbbbbbbbb";
	int fd = nnp_device_fd(self->a), i, torn = 0, seen = 0;
	struct racer r[2] = {
		{ fd, 0, 300, 0, a31 }, { fd, 100000, 300, 0, b31 },
	};
	char path[64], line[256];
	pthread_t t[2];

	ASSERT_EQ(31, strlen(a31));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, create_destroy, &r[i]));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	for (i = 0; i < 300; i++) {
		FILE *f = fopen(path, "r");

		ASSERT_NE(NULL, f);
		while (fgets(line, sizeof(line), f)) {
			char *v = strchr(line, '\t');

			if (strncmp(line, "nnp-comm-", 9) || !v)
				continue;
			seen++;
			torn += strcmp(v + 1, "0/1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n") &&
				strcmp(v + 1, "0/1 b.b-b_bbbbbbbbbbbbbbbbbbbbbbbbb\n");
		}
		fclose(f);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, r[0].bad);
	EXPECT_EQ(0, r[1].bad);
	EXPECT_EQ(0, torn) TH_LOG("%d torn of %d keys read", torn, seen);
	for (i = 1; i < 64; i++) {
		char val[128];

		comm_key(fd, i, val, sizeof(val));
		EXPECT_STREQ("", val) {
			TH_LOG("comm %d left", i);
		}
	}
}

/*
 * Another user's process, named to rewrite root's terminal (its title, a
 * bell, a cleared screen), holding this device: `nnptool ps` prints its
 * name with every such byte as \xHH, and no control byte but the line
 * ends.
 */
TEST_F(two, nnptool_ps_escapes_other_users_names)
{
	static const char name[] = "\x1b]0;pwn\x07\x1b[2J";
	char out[8192], row[64];
	int ready[2], i;
	size_t n;
	FILE *p;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* It keeps the fixture's device files, as a child would. */
		if (prctl(PR_SET_NAME, name) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(1);
		(void)!write(ready[1], "r", 1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], row, 1));
	close(ready[0]);
	p = popen("nnptool ps", "r");
	ASSERT_NE(NULL, p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	for (i = 0; out[i]; i++)
		if (out[i] != '\n' && (out[i] < 0x20 || out[i] >= 0x7f))
			break;
	EXPECT_EQ('\0', out[i]) {
		TH_LOG("byte 0x%02x at %d of:\n%s", out[i] & 0xff, i, out);
	}
	snprintf(row, sizeof(row), "\n%-7d \\x1b]0;pwn\\x07\\x1b[2J ", pid);
	EXPECT_NE(NULL, strstr(out, row)) {
		TH_LOG("want a row starting %s in:\n%s", row + 1, out);
	}
}

TEST_HARNESS_MAIN
