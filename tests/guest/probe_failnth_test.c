// SPDX-License-Identifier: MIT
/*
 * Probe and remove at every injected allocation failure (the debug
 * kernel's fail-nth, fail_nth.h; skipped elsewhere). Device 0 is unbound
 * from nnp.ko, then for n = 1, 2, ... bound again with the n-th allocation
 * of the binding thread failing, until the bind no longer reaches it: a
 * failed probe gives ENOMEM (or the PCI core's errno for the step, see
 * probe_errno()) and leaves the device unbound, a probe that
 * absorbed the failure leaves it working (but for a node devtmpfs could
 * not make, accel_nodes_missing()), and the next bind works either way. Remove likewise: unbind with the n-th allocation failing, then a
 * plain bind must give a working device. No kernel warning may appear
 * but the interrupt core's own, irq_proc_missing(); what was leaked is
 * kmemleak's, whose scan after the run fails it.
 *
 * In detail (docs/testing.md has the summary):
 * `-t probe_unwinds_in_hwmon`: debug kernel only: device 0 bound with each
 * allocation under `__hwmon_device_register()` failing in turn: each bind
 * `ENOMEM` and unbound, or working, and the device working after
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>

#include "fail_nth.h"
#include "guest_env.h"
#include "kselftest_harness.h"
#include "pci_bind.h"

/* Far past the allocations of a probe: reaching it fails the test. */
#define MAX_NTH		3000
/*
 * In 6.12, drm_minor_alloc() registers the release that put_device()s
 * minor->kdev before drm_sysfs_minor_alloc() sets it, so when that fails
 * the release puts an ERR_PTR and the guest oopses inside the DRM core,
 * before nnp_probe() has done anything of its own. Allocations made under
 * it are stepped over (fault injection's stack filter).
 */
#define DRM_UNWINDABLE	"drm_sysfs_minor_alloc"

/* The addresses [start, end) of kernel function @name, from kallsyms. */
static bool function_range(const char *name, unsigned long *start,
			   unsigned long *end)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long a;

	*start = 0;
	*end = ULONG_MAX;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %255s", &a, &type, sym) == 3 &&
		    !strcmp(sym, name))
			*start = a;
	rewind(f);
	while (*start && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx", &a) == 1 && a > *start && a < *end)
			*end = a;
	fclose(f);
	return *start && *end != ULONG_MAX;
}

/*
 * Fault injection's stack filter for both allocators: count and fail only
 * allocations made under [@req_start, @req_end) of the stack and not under
 * [@rej_start, @rej_end); 0, ULONG_MAX and 0, 0 for none.
 */
static int stack_filter(unsigned long req_start, unsigned long req_end,
			unsigned long rej_start, unsigned long rej_end)
{
	static const char *const attrs[] = { "failslab", "fail_page_alloc" };
	const struct { const char *name; unsigned long v; } knobs[] = {
		{ "require-start", req_start }, { "require-end", req_end },
		{ "reject-start", rej_start }, { "reject-end", rej_end },
	};
	char path[128], v[32];
	size_t i, k;
	int ret = 0;

	for (i = 0; i < 2; i++)
		for (k = 0; k < sizeof(knobs) / sizeof(knobs[0]); k++) {
			snprintf(path, sizeof(path), FAULT_DIR "%s/%s", attrs[i],
				 knobs[k].name);
			snprintf(v, sizeof(v), "0x%lx", knobs[k].v);
			ret = ret ?: write_str(path, v);
		}
	return ret;
}

/*
 * register_irq_proc() makes /proc/irq/N/ and its files when a handler is
 * first requested, and carries on without any file it could not make;
 * freeing the vector removes each by name, and remove_proc_entry() WARNs
 * "name 'FILE'" for each that is not there (6.12). A failure injected
 * there is absorbed by the interrupt core, not seen by the driver, and
 * its only trace is that warning at the next unbind: note the files
 * missing from @addr's MSI-X vectors as warnings to expect, and log them.
 */
static void irq_proc_missing(const char *addr, struct known_warns *known,
			     struct __test_metadata *_metadata)
{
	static const char *const files[] = {
		"smp_affinity", "affinity_hint", "smp_affinity_list", "node",
		"effective_affinity", "effective_affinity_list", "spurious",
	};
	char path[PATH_MAX];
	struct dirent *e;
	size_t i;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/msi_irqs", addr);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/irq/%s", e->d_name);
		if (access(path, F_OK))
			continue;	/* no directory: nothing is removed */
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(path, sizeof(path), "/proc/irq/%s/%s",
				 e->d_name, files[i]);
			if (!access(path, F_OK) || known->count == KNOWN_WARNS_MAX)
				continue;
			TH_LOG("%s was not made: the interrupt core WARNs at the unbind",
			       path);
			snprintf(known->msg[known->count++], sizeof(known->msg[0]),
				 "name '%s'", files[i]);
		}
	}
	closedir(d);
}

/*
 * device_add() makes the node in /dev through devtmpfs_create_node() and
 * ignores its failure (6.12): when the node's name cannot be allocated
 * (accel_devnode()), the bind works and the device is in sysfs with no
 * node to open until it is bound again. The driver never sees it. Log
 * each accel device of sysfs with no node; true if there was one.
 */
static bool accel_nodes_missing(struct __test_metadata *_metadata)
{
	char path[PATH_MAX];
	bool missing = false;
	struct dirent *e;
	DIR *d = opendir("/sys/class/accel");

	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "accel", 5))
			continue;
		snprintf(path, sizeof(path), "/dev/accel/%s", e->d_name);
		if (!access(path, F_OK))
			continue;
		TH_LOG("%s was not made: devtmpfs's failure is not the driver's",
		       path);
		missing = true;
	}
	if (d)
		closedir(d);
	return missing;
}

/*
 * Every device answers a query and gives a page of device memory; what
 * did not is said on stderr.
 */
static bool devices_work(void)
{
	int i, fd, count;

	if (nnp_device_count(&count) != NNP_SUCCESS || count != GUEST_CHIPS) {
		fprintf(stderr, "# devices_work: %d devices, not %d\n", count,
			GUEST_CHIPS);
		return false;
	}
	for (i = 0; i < count; i++) {
		struct drm_nnp_device_info info;
		struct drm_nnp_query q = {
			.query = DRM_NNP_QUERY_DEVICE_INFO, .size = sizeof(info),
			.data = (uintptr_t)&info,
		};
		struct drm_nnp_bo_create c = {
			.size = 4096, .flags = DRM_NNP_BO_DEVICE,
		};
		bool ok;

		fd = guest_open_fd(i);
		if (fd < 0) {
			fprintf(stderr, "# devices_work: device %d does not open\n", i);
			return false;
		}
		ok = !ioctl(fd, DRM_IOCTL_NNP_QUERY, &q) &&
		     !ioctl(fd, DRM_IOCTL_NNP_BO_CREATE, &c);
		if (!ok)
			fprintf(stderr, "# devices_work: device %d: %s\n", i,
				strerror(errno));
		close(fd);
		if (!ok)
			return false;
	}
	return true;
}

/*
 * What a bind that ran out of memory gives: ENOMEM, or what the PCI core
 * makes of its own failures: EBUSY when it could not claim a BAR, ENODEV
 * when it could not set up the MSI-X interrupt domain, ENOSPC when it
 * could not allocate a single MSI-X vector.
 */
static bool probe_errno(int ret)
{
	return ret == -ENOMEM || ret == -EBUSY || ret == -ENODEV ||
	       ret == -ENOSPC;
}

/* pwrite @addr to the driver's bind or unbind file @fd: 0 or -errno. */
static int write_addr(int fd, const char *addr)
{
	ssize_t len = strlen(addr);

	return pwrite(fd, addr, len, 0) == len ? 0 : -errno;
}

FIXTURE(sweep) {
	char addr[64];
	int fail_fd, bind_fd, unbind_fd, kmsg_fd;
};

FIXTURE_SETUP(sweep)
{
	self->fail_fd = self->bind_fd = self->unbind_fd = self->kmsg_fd = -1;
	if (!fault_injection_ready())
		SKIP(return, "no fault injection (not the debug kernel)");
	pci_addr_of(0, self->addr, sizeof(self->addr));
	ASSERT_NE(0, self->addr[0]);
	self->fail_fd = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	self->bind_fd = open(NNP_DRIVER_DIR "bind", O_WRONLY | O_CLOEXEC);
	self->unbind_fd = open(NNP_DRIVER_DIR "unbind", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, self->fail_fd);
	ASSERT_LE(0, self->bind_fd);
	ASSERT_LE(0, self->unbind_fd);
	self->kmsg_fd = kmsg_open_at_end();
	ASSERT_LE(0, self->kmsg_fd);
}

FIXTURE_TEARDOWN(sweep)
{
	if (self->fail_fd < 0)
		return;
	if (!bound(self->addr))
		rebind(self->addr);
	EXPECT_TRUE(devices_work());
	EXPECT_EQ(0, kmsg_new_warnings(self->kmsg_fd, NULL));
	EXPECT_EQ(0, stack_filter(0, ULONG_MAX, 0, 0));
	close(self->kmsg_fd);
	close(self->unbind_fd);
	close(self->bind_fd);
	close(self->fail_fd);
}

#define TIMEOUT_S	4500	/* a bind a failure, some 3 s each on the debug kernel under TCG */

/*
 * Bind device 0 with the n-th allocation (of those the stack filter lets
 * through) failing, for n = 1, 2, ... until the bind no longer reaches it;
 * from n = NNP_FAILNTH_FROM instead, to look again at one found.
 */
static void probe_sweep(FIXTURE_DATA(sweep) *self,
			struct __test_metadata *_metadata)
{
	struct known_warns known = { .count = 0 };
	unsigned int n = guest_env_u64("NNP_FAILNTH_FROM") ?: 1;
	int ret;

	ASSERT_EQ(0, unbind(self->addr));
	for (;; n++) {
		ASSERT_GT(MAX_NTH, n);
		known.count = 0;
		fail_nth_arm(self->fail_fd, n);
		ret = write_addr(self->bind_fd, self->addr);
		if (!fail_nth_hit(self->fail_fd)) {
			ASSERT_EQ(0, ret);
			break;
		}
		if (ret) {
			if (!probe_errno(ret))
				TH_LOG("allocation %u: bind gave %s", n, strerror(-ret));
			ASSERT_TRUE(probe_errno(ret));
			ASSERT_FALSE(bound(self->addr));
		} else {
			/* The probe did without it: all of it must work. */
			ASSERT_EQ(0, devices_back()) {
				TH_LOG("allocation %u of the probe", n);
			}
			if (!accel_nodes_missing(_metadata))
				ASSERT_TRUE(devices_work()) {
					TH_LOG("allocation %u of the probe", n);
				}
			irq_proc_missing(self->addr, &known, _metadata);
			ASSERT_EQ(0, unbind(self->addr));
		}
		ASSERT_EQ(0, kmsg_new_warnings(self->kmsg_fd, &known)) {
			TH_LOG("allocation %u of the probe", n);
		}
	}
	ASSERT_EQ(0, devices_back());
	ASSERT_TRUE(devices_work());
	TH_LOG("probe: %u allocations, each failed once", n - 1);
}


TEST_F_TIMEOUT(sweep, probe_unwinds_at_every_allocation, TIMEOUT_S)
{
	unsigned long start, end;

	ASSERT_TRUE(function_range(DRM_UNWINDABLE, &start, &end));
	ASSERT_EQ(0, stack_filter(0, ULONG_MAX, start, end));
	probe_sweep(self, _metadata);
}

/*
 * The hwmon device alone, a bind a failure: short enough for every debug
 * run. In 6.12 __hwmon_device_register() ignores a failed dev_set_name(),
 * and device_add() then says EINVAL for what was an allocation.
 */
TEST_F_TIMEOUT(sweep, probe_unwinds_in_hwmon, 600)
{
	unsigned long start, end;

	ASSERT_TRUE(function_range("__hwmon_device_register", &start, &end));
	ASSERT_EQ(0, stack_filter(start, end, 0, 0));
	probe_sweep(self, _metadata);
}

TEST_F_TIMEOUT(sweep, remove_survives_every_allocation, TIMEOUT_S)
{
	unsigned int n;
	int ret;

	for (n = 1;; n++) {
		ASSERT_GT(MAX_NTH, n);
		fail_nth_arm(self->fail_fd, n);
		ret = write_addr(self->unbind_fd, self->addr);
		if (!fail_nth_hit(self->fail_fd)) {
			ASSERT_EQ(0, ret);
			break;
		}
		/* A failure before the unbind began leaves it bound. */
		ASSERT_TRUE(ret == 0 || ret == -ENOMEM);
		ASSERT_EQ(ret == 0, !bound(self->addr));
		ASSERT_EQ(0, kmsg_new_warnings(self->kmsg_fd, NULL)) {
			TH_LOG("allocation %u of the remove", n);
		}
		if (!ret)
			ASSERT_EQ(0, rebind(self->addr));
		ASSERT_TRUE(devices_work()) {
			TH_LOG("allocation %u of the remove", n);
		}
	}
	ASSERT_EQ(0, rebind(self->addr));
	ASSERT_TRUE(devices_work());
	TH_LOG("remove: %u allocations, each failed once", n - 1);
}

TEST_HARNESS_MAIN
