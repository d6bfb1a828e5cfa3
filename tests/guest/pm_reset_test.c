// SPDX-License-Identifier: MIT
/*
 * Resets the driver does not start itself: a function-level reset through
 * the PCI core's sysfs "reset" file (the driver's reset_prepare and
 * reset_done around it) and a system sleep (its suspend and resume), each
 * against `nnptool reset`, which they must look like to user space.
 *
 * In detail (docs/testing.md has the summary): for each way, another
 * process copying on device 0 (fill, copy back, compare, over and over)
 * gets exactly NNP_ERROR_DEVICE_LOST from its first failing call and
 * ECANCELED from a raw ioctl after, having made at least 3 exact loops;
 * reset_count goes up by exactly 1 with reason `user`, `pci` or `suspend`
 * in sysfs and from libnnp; the kernel log has one "reset N (REASON) done"
 * line; once that process has exited the device holds 0 bytes and 0
 * memory objects, no queue (debugfs `queues`) and no open file of it
 * (debugfs `clients`); a new process's fill and copy back are exact;
 * device 1 is reset only by the sleep. The PCI way sets `reset_method` to
 * `flr` first (the device must offer an FLR); the sleep is `freeze` with
 * `pm_test` at `devices` (devices suspended and resumed, the machine not
 * put to sleep), skipped on a kernel without PM_DEBUG.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>

#include "guest_env.h"
#include "kselftest_harness.h"
#include "pci_bind.h"

#define BUF		(1u << 20)
#define LOOPS_BEFORE	3	/* exact loops the worker makes before the reset */
#define WORKER_S	20	/* the worker gives up (and fails) after this */
#define PM_TEST		"/sys/power/pm_test"

/* What the worker saw, in memory it shares with the test. */
struct worker_result {
	volatile int loops;		/* exact loops so far */
	volatile int result;		/* its first failing call's nnp_result_t */
	volatile int query_errno;	/* a raw ioctl's errno after it */
	volatile int done;
};

/* A context of its own on device 0 with a device and a host object of BUF. */
struct work {
	nnp_device_t *dev;
	nnp_mem_t *d, *h;
	nnp_stream_t *s;
};

static nnp_result_t work_open(struct work *w)
{
	nnp_result_t r = nnp_device_open(0, &w->dev);

	if (!r)
		r = nnp_mem_alloc(w->dev, NNP_MEM_DEVICE, BUF, 0, &w->d);
	if (!r)
		r = nnp_mem_alloc(w->dev, NNP_MEM_HOST, BUF, 0, &w->h);
	if (!r)
		r = nnp_stream_create(w->dev, &w->s);
	return r;
}

/* A new process's fill and copy back on device 0: 0 if exact. */
static int fresh_process_exact(void)
{
	struct work w = { 0 };
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(work_open(&w) || guest_fill_check(w.s, w.d, w.h, 0xa5, BUF));
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) ?
	       WEXITSTATUS(status) : -1;
}

/*
 * The other process: copies on device 0 until a call fails (or WORKER_S
 * pass), then tells what failed and gives everything back.
 */
static void worker(struct worker_result *res)
{
	struct drm_nnp_query q = { 0 };
	time_t end = time(NULL) + WORKER_S;
	struct work w = { 0 };
	nnp_result_t r = work_open(&w);

	while (!r && time(NULL) < end) {
		r = guest_fill_check(w.s, w.d, w.h, (uint8_t)(0x11 + res->loops),
				     BUF);
		if (!r)
			res->loops++;
	}
	res->result = r;
	if (w.dev)
		res->query_errno = ioctl(nnp_device_fd(w.dev),
					 DRM_IOCTL_NNP_QUERY, &q) ? errno : 0;
	nnp_stream_destroy(w.s);
	nnp_mem_free(w.h);
	nnp_mem_free(w.d);
	nnp_device_close(w.dev);
	res->done = 1;
	_exit(0);
}

static void read_attr(int index, const char *attr, char *buf, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/%s",
		 index, attr);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

static int reset_count(int index)
{
	char buf[32];

	read_attr(index, "reset_count", buf, sizeof(buf));
	return buf[0] ? atoi(buf) : -1;
}

/* The whole of a small text file, or "" if it cannot be read. */
static void read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* Device 0's accel minor's debugfs directory. */
static void debugfs_dir(char *dir, size_t len)
{
	struct stat st;
	char pci[64];

	pci_addr_of(0, pci, sizeof(pci));
	snprintf(dir, len, "/sys/kernel/debug/accel/%s", pci);
	if (access(dir, F_OK) && !stat("/dev/accel/accel0", &st))
		snprintf(dir, len, "/sys/kernel/debug/accel/%u",
			 minor(st.st_rdev));
}

/* The three ways to reset device 0. */
static int reset_nnptool(void)
{
	return system("nnptool reset 0 >/dev/null") == 0 ? 0 : -1;
}

static int reset_pci(void)
{
	char pci[64], path[128];
	int ret;

	pci_addr_of(0, pci, sizeof(pci));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset_method", pci);
	ret = write_str(path, "flr");
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", pci);
	return write_str(path, "1");
}

/* Devices suspended and resumed; the machine itself does not sleep. */
static int reset_suspend(void)
{
	int ret = write_str(PM_TEST, "devices");

	if (!ret) {
		write_str("/sys/module/suspend/parameters/pm_test_delay", "1");
		ret = write_str("/sys/power/state", "freeze");
		write_str(PM_TEST, "none");
	}
	return ret;
}

FIXTURE(dev0) {
	char debugfs[PATH_MAX];
};

FIXTURE_VARIANT(dev0) {
	int (*reset)(void);
	const char *reason;
	int dev1_resets;	/* a sleep is every device's */
};

FIXTURE_VARIANT_ADD(dev0, nnptool_reset) {
	.reset = reset_nnptool,
	.reason = "user",
};

FIXTURE_VARIANT_ADD(dev0, pci_flr) {
	.reset = reset_pci,
	.reason = "pci",
};

FIXTURE_VARIANT_ADD(dev0, suspend_resume) {
	.reset = reset_suspend,
	.reason = "suspend",
	.dev1_resets = 1,
};

FIXTURE_SETUP(dev0)
{
	ASSERT_EQ(2, GUEST_CHIPS);
	if (variant->reset == reset_suspend && access(PM_TEST, W_OK))
		SKIP(return, "the kernel has no %s (PM_DEBUG)", PM_TEST);
	debugfs_dir(self->debugfs, sizeof(self->debugfs));
	ASSERT_EQ(0, access(self->debugfs, F_OK));
}

FIXTURE_TEARDOWN(dev0)
{
}

TEST_F_TIMEOUT(dev0, mid_work_is_device_lost_then_works, 90)
{
	struct worker_result *res;
	char buf[4096], line[64], path[PATH_MAX + 16], pci[64], logline[128];
	const char *reason = "?";
	int base = reset_count(0), base1 = reset_count(1), i, status, ret, logged;
	nnp_device_t *dev;
	uint32_t count = 0;
	struct drm_nnp_counters c;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(c),
		.data = (uintptr_t)&c,
	};
	pid_t pid;

	ASSERT_LE(0, base);
	pci_addr_of(0, pci, sizeof(pci));
	snprintf(logline, sizeof(logline), "%s: [drm] reset %d (%s) done in",
		 pci, base + 1, variant->reason);
	logged = dmesg_grep_count("-F", logline);
	ASSERT_LE(0, logged);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	memset(res, 0, sizeof(*res));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		worker(res);
	for (i = 0; i < 200 && res->loops < LOOPS_BEFORE && !res->done; i++)
		usleep(50 * 1000);
	ASSERT_LE(LOOPS_BEFORE, res->loops);

	ret = variant->reset();
	EXPECT_EQ(0, ret);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && res->done);
	TH_LOG("the worker made %d exact loops, then: %s", res->loops,
	       nnp_strerror(res->result));
	EXPECT_EQ(NNP_ERROR_DEVICE_LOST, res->result);
	EXPECT_EQ(ECANCELED, res->query_errno);

	/* One reset, for this reason, told everywhere. */
	EXPECT_EQ(base + 1, reset_count(0));
	read_attr(0, "last_reset_reason", line, sizeof(line));
	EXPECT_STREQ(variant->reason, line);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	EXPECT_EQ(NNP_SUCCESS, nnp_device_get_resets(dev, &count, &reason));
	EXPECT_EQ((uint32_t)base + 1, count);
	EXPECT_STREQ(variant->reason, reason);
	EXPECT_EQ(logged + 1, dmesg_grep_count("-F", logline));

	/* The lost process gave everything back. */
	memset(&c, 0xee, sizeof(c));
	EXPECT_EQ(0, ioctl(nnp_device_fd(dev), DRM_IOCTL_NNP_QUERY, &q));
	EXPECT_EQ(0, c.mem_used);
	EXPECT_EQ(0, c.mem_objects);
	nnp_device_close(dev);
	snprintf(path, sizeof(path), "%s/queues", self->debugfs);
	read_text(path, buf, sizeof(buf));
	EXPECT_STREQ("", buf);
	snprintf(path, sizeof(path), "%s/clients", self->debugfs);
	read_text(path, buf, sizeof(buf));
	snprintf(line, sizeof(line), " %d ", pid);
	EXPECT_EQ(NULL, strstr(buf, line));

	EXPECT_EQ(0, fresh_process_exact());
	EXPECT_EQ(base1 + variant->dev1_resets, reset_count(1));
	munmap(res, sizeof(*res));
}

TEST_HARNESS_MAIN
