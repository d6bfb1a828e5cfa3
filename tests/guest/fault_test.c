// SPDX-License-Identifier: MIT
/*
 * Faults on demand, detection, reset and recovery, driven with
 * tests/vm/faults.sh: for each fault this program prints
 * "FAULT nnpN SPEC" and the host sets it on the QEMU monitor. It checks
 * that the driver finds each fault within its bound, that the device comes
 * back with an exact reset count and reason (info query, sysfs, uevent),
 * that contexts open at a reset fail with ECANCELED (libnnp:
 * NNP_ERROR_DEVICE_LOST) and new ones work at once, and that another
 * process copying on device 1 all along sees every byte right.
 *
 * TAP on stdout; exit status 0 only if every check passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <nnp/nnp.h>
#include <xf86drm.h>

#include "guest_env.h"
#include "nnp_accel.h"

/* Module parameters the test sets: bounds that keep it short. */
#define WATCHDOG_MS	400
#define JOB_TIMEOUT_MS	1000
/* Fault printed to reset seen: the monitor's round trip, the bound, the reset. */
#define SLACK_MS	2500
#define BUF		(1u << 20)

static int checks, failures;
static int uevent_fd = -1;
static long worst_ms;

static void check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures += !ok;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		printf("# cannot write %s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void read_sysfs(int index, const char *attr, char *buf, size_t len)
{
	char path[128];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/%s",
		 index, attr);
	fd = open(path, O_RDONLY);
	if (fd >= 0)
		n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (fd >= 0)
		close(fd);
}

/* Ask the host for @spec on device @index (tests/vm/faults.sh). */
static void fault(int index, const char *spec)
{
	printf("FAULT nnp%d %s\n", index, spec);
	fflush(stdout);
}

static nnp_device_t *open_dev(int index)
{
	nnp_device_t *dev = NULL;
	nnp_result_t r = nnp_device_open(index, &dev);

	if (r != NNP_SUCCESS) {
		printf("# open %d: %s\n", index, nnp_strerror(r));
		exit(2);
	}
	return dev;
}

/* Resets of device @index and the last one's reason, from a new context. */
static uint32_t resets(int index, const char **reason)
{
	nnp_device_t *dev = open_dev(index);
	uint32_t n = 0;

	if (nnp_device_get_resets(dev, &n, reason) != NNP_SUCCESS)
		n = UINT32_MAX;
	nnp_device_close(dev);
	return n;
}

/* A fill of device memory and its copy back: the bytes must be @byte. */
static nnp_result_t fill_and_check(nnp_device_t *dev, uint8_t byte)
{
	nnp_mem_t *d = NULL, *h = NULL;
	nnp_stream_t *s = NULL;
	nnp_result_t r;

	r = nnp_mem_alloc(dev, NNP_MEM_DEVICE, BUF, 0, &d);
	if (!r)
		r = nnp_mem_alloc(dev, NNP_MEM_HOST, BUF, 0, &h);
	if (!r)
		r = nnp_stream_create(dev, &s);
	if (!r)
		r = guest_fill_check(s, d, h, byte, BUF);
	if (s)
		nnp_stream_destroy(s);
	nnp_mem_free(h);
	nnp_mem_free(d);
	return r;
}

/* The other process: copies on device 1 until told to stop; exit 0 if exact. */
static int other_device_worker(void)
{
	nnp_device_t *dev = open_dev(1);
	unsigned int loops = 0;

	while (getppid() != 1) {
		nnp_result_t r = fill_and_check(dev, (uint8_t)(0x11 + loops));

		if (r) {
			printf("# device 1, loop %u: %s\n", loops, nnp_strerror(r));
			return 1;
		}
		loops++;
		if (access("/tmp/fault_test.stop", F_OK) == 0)
			break;
	}
	printf("# device 1: %u exact loops next to the faults\n", loops);
	nnp_device_close(dev);
	return loops ? 0 : 1;
}

/*
 * Start a stream on device 0 whose next command will hang or fail, run
 * @spec, and wait: the synchronize must return @want within @bound_ms.
 */
static void stream_under_fault(const char *spec, nnp_result_t want,
			       long bound_ms, const char *what)
{
	nnp_device_t *dev = open_dev(0);
	nnp_mem_t *d = NULL, *h = NULL;
	nnp_stream_t *s = NULL;
	nnp_result_t r;
	long t0, ms;

	r = nnp_mem_alloc(dev, NNP_MEM_DEVICE, BUF, 0, &d);
	if (!r)
		r = nnp_mem_alloc(dev, NNP_MEM_HOST, BUF, 0, &h);
	if (!r)
		r = nnp_stream_create(dev, &s);
	if (r) {
		check(false, "%s: set up: %s", what, nnp_strerror(r));
		return;
	}
	fault(0, spec);
	t0 = now_ms();
	/* Let the monitor's command land before the work goes in. */
	usleep(700 * 1000);
	r = nnp_memcpy_async(s, h, 0, d, 0, BUF);
	if (!r)
		r = nnp_stream_synchronize(s);
	ms = now_ms() - t0;
	if (ms > worst_ms && want == NNP_ERROR_DEVICE_LOST)
		worst_ms = ms;
	check(r == want && ms <= bound_ms, "%s: %s after %ld ms (bound %ld)",
	      what, nnp_strerror(r), ms, bound_ms);
	if (want == NNP_ERROR_DEVICE_LOST) {
		struct nnp_device_info in = { .size = sizeof(in) };

		check(nnp_device_get_info(dev, &in) == NNP_ERROR_DEVICE_LOST,
		      "%s: the old handle's every call is DEVICE_LOST", what);
		check(nnp_memset_async(s, d, 0, 1, 64) != NNP_SUCCESS ||
		      nnp_stream_synchronize(s) == NNP_ERROR_DEVICE_LOST,
		      "%s: the old stream stays DEVICE_LOST", what);
	}
	nnp_stream_destroy(s);
	nnp_mem_free(h);
	nnp_mem_free(d);
	nnp_device_close(dev);
}

static void expect_resets(uint32_t want, const char *reason, const char *what)
{
	const char *got = "?";
	char buf[64], rbuf[64];
	nnp_device_t *dev;
	uint32_t n = resets(0, &got);

	read_sysfs(0, "reset_count", buf, sizeof(buf));
	read_sysfs(0, "last_reset_reason", rbuf, sizeof(rbuf));
	check(n == want && !strcmp(got, reason) && atoi(buf) == (int)want &&
	      !strcmp(rbuf, reason),
	      "%s: %u resets, last '%s' (info %u '%s', sysfs %s '%s')", what, want,
	      reason, n, got, buf, rbuf);
	dev = open_dev(0);
	check(fill_and_check(dev, 0x5a) == NNP_SUCCESS,
	      "%s: a new context works at once, bytes exact", what);
	nnp_device_close(dev);
}

/* Reset device 0 through sysfs, as nnptool reset does. */
static void sysfs_reset(void)
{
	write_file("/sys/class/accel/accel0/device/reset_device", "1");
}

/* ---- hostile: threads of one fd racing a reset ---- */

struct racer {
	int fd;
	volatile bool *stop;
	int bad;	/* results other than 0 and ECANCELED */
	int after;	/* ECANCELED seen */
	int bad_errno;	/* the first of them, and its call */
	const char *bad_call;
};

static void *race_ioctls(void *arg)
{
	struct racer *rc = arg;

	while (!*rc->stop) {
		struct drm_nnp_device_info di;
		struct drm_nnp_query q = {
			.query = DRM_NNP_QUERY_DEVICE_INFO, .size = sizeof(di),
			.data = (uintptr_t)&di,
		};
		struct drm_nnp_bo_create bc = {
			.size = 65536, .flags = DRM_NNP_BO_DEVICE,
		};
		const char *call = "QUERY";
		int r = drmIoctl(rc->fd, DRM_IOCTL_NNP_QUERY, &q);

		if (!r) {
			call = "BO_CREATE";
			r = drmIoctl(rc->fd, DRM_IOCTL_NNP_BO_CREATE, &bc);
		}
		if (!r) {
			struct drm_gem_close gc = { .handle = bc.handle };

			drmIoctl(rc->fd, DRM_IOCTL_GEM_CLOSE, &gc);
		} else if (errno == ECANCELED) {
			rc->after++;
		} else if (!rc->bad++) {
			rc->bad_errno = errno;
			rc->bad_call = call;
		}
	}
	return NULL;
}

static void test_race_reset(void)
{
	int fd = open("/dev/accel/accel0", O_RDWR);
	struct drm_nnp_queue_create qc = { .depth = 64 };
	volatile bool stop = false;
	struct racer rc[3];
	pthread_t t[3];
	void *db, *db2;
	int i, bad = 0, after = 0, r;

	if (fd < 0 || drmIoctl(fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc)) {
		check(false, "race: open and queue: %s", strerror(errno));
		return;
	}
	db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  qc.doorbell_mmap_offset);
	for (i = 0; i < 3; i++) {
		rc[i] = (struct racer){ .fd = fd, .stop = &stop };
		pthread_create(&t[i], NULL, race_ioctls, &rc[i]);
	}
	usleep(200 * 1000);
	sysfs_reset();
	usleep(200 * 1000);
	stop = true;
	for (i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		bad += rc[i].bad;
		after += rc[i].after;
		if (rc[i].bad)
			printf("# race: thread %d: %d other, the first %s: %s\n",
			       i, rc[i].bad, rc[i].bad_call, strerror(rc[i].bad_errno));
	}
	check(!bad && after > 0,
	      "race: ioctls of 3 threads across a reset: only 0 or ECANCELED (%d ECANCELED, %d other)",
	      after, bad);
	r = ioctl(fd, DRM_IOCTL_NNP_QUERY, &(struct drm_nnp_query){ 0 });
	check(r < 0 && errno == ECANCELED, "race: the lost fd's query is ECANCELED");
	/* The old doorbell mapping takes stores (a dummy page), no SIGBUS. */
	if (db != MAP_FAILED)
		((volatile uint32_t *)db)[0] = 1;
	check(db != MAP_FAILED, "race: a store to the old doorbell mapping completes");
	db2 = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   qc.doorbell_mmap_offset);
	check(db2 == MAP_FAILED && errno == ECANCELED,
	      "race: mmap of the doorbell after the reset: ECANCELED");
	if (db != MAP_FAILED)
		munmap(db, 4096);
	check(close(fd) == 0, "race: close after the reset");
}

/* Commands in flight on device 0 when it is reset: no warning, no hang. */
static void test_reset_mid_dma(void)
{
	nnp_device_t *dev = open_dev(0);
	nnp_mem_t *d = NULL, *h = NULL;
	nnp_stream_t *s = NULL;
	nnp_result_t r;
	int i;

	r = nnp_mem_alloc(dev, NNP_MEM_DEVICE, 16 * BUF, 0, &d);
	if (!r)
		r = nnp_mem_alloc(dev, NNP_MEM_HOST, 16 * BUF, 0, &h);
	if (!r)
		r = nnp_stream_create(dev, &s);
	for (i = 0; !r && i < 32; i++)
		r = nnp_memcpy_async(s, d, 0, h, 0, 16 * BUF);
	sysfs_reset();
	if (!r)
		r = nnp_stream_synchronize(s);
	check(r == NNP_ERROR_DEVICE_LOST,
	      "reset with 512 MiB of copies queued: %s", nnp_strerror(r));
	nnp_stream_destroy(s);
	nnp_mem_free(h);
	nnp_mem_free(d);
	nnp_device_close(dev);
}

/* Resets device 0 announced by uevents since the start, with @reasons in order. */
static void check_uevents(const char *const *reasons, int n)
{
	char buf[4096];
	int seen = 0, in_order = 1;
	ssize_t len;

	while ((len = recv(uevent_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		const char *p = buf;
		const char *reason = NULL;
		bool change = false, ours = false;

		buf[len] = '\0';
		for (; p < buf + len; p += strlen(p) + 1) {
			if (!strcmp(p, "ACTION=change"))
				change = true;
			if (!strncmp(p, "NNP_RESET_REASON=", 17))
				reason = p + 17;
			if (!strcmp(p, "DEVNAME=accel/accel0"))
				ours = true;
		}
		if (!change || !reason || !ours)
			continue;
		if (seen < n && strcmp(reason, reasons[seen]))
			in_order = 0;
		seen++;
	}
	check(seen == n && in_order,
	      "uevents: %d KOBJ_CHANGE with the reasons in order (saw %d)", n, seen);
}

static void open_uevents(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int size = 1 << 20;

	uevent_fd = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT);
	setsockopt(uevent_fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (uevent_fd < 0 || bind(uevent_fd, (struct sockaddr *)&sa, sizeof(sa)))
		printf("# no uevent socket: %s\n", strerror(errno));
}

/* Device memory in use and memory objects alive on device @index. */
static bool leaks(int index, uint64_t *used, uint64_t *objects)
{
	nnp_device_t *dev = open_dev(index);
	struct drm_nnp_counters c = { 0 };
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(c),
		.data = (uintptr_t)&c,
	};

	drmIoctl(nnp_device_fd(dev), DRM_IOCTL_NNP_QUERY, &q);
	nnp_device_close(dev);
	*used = c.mem_used;
	*objects = c.mem_objects;
	return c.mem_used || c.mem_objects;
}

/*
 * make stress: @n faults of random kinds on device 0 at random moments
 * of a stream of copies; each must be found and recovered within its
 * bound, with the reset count exact and nothing left over.
 */
static int stress(int n)
{
	static const char *const kinds[] = { "hang", "queue-stuck=0", "die", "user" };
	static const long bounds[] = {
		WATCHDOG_MS + WATCHDOG_MS / 4 + SLACK_MS,
		JOB_TIMEOUT_MS + WATCHDOG_MS / 4 + SLACK_MS,
		WATCHDOG_MS + WATCHDOG_MS / 4 + SLACK_MS,
		SLACK_MS,
	};
	int i, recovered = 0, late = 0, leaked = 0;

	srand((unsigned int)time(NULL));
	for (i = 1; i <= n; i++) {
		int kind = rand() % 4;
		/*
		 * Counted from this loop's start: a fault the host set too
		 * late for its own loop costs that loop, not every later one.
		 */
		uint32_t base = resets(0, &(const char *){ NULL });
		nnp_device_t *dev = open_dev(0);
		nnp_mem_t *d = NULL, *h = NULL;
		nnp_stream_t *s = NULL;
		uint64_t used, objects;
		const char *reason;
		long t0, ms = -1;

		if (nnp_mem_alloc(dev, NNP_MEM_DEVICE, BUF, 0, &d) ||
		    nnp_mem_alloc(dev, NNP_MEM_HOST, BUF, 0, &h) ||
		    nnp_stream_create(dev, &s))
			return 2;
		/* A random moment of a stream of copies. */
		t0 = now_ms() + rand() % 300;
		while (now_ms() < t0)
			nnp_memcpy_async(s, d, 0, h, 0, BUF / 4);
		if (kind == 3)
			printf("# loop %d: user reset\n", i);
		else
			fault(0, kinds[kind]);
		t0 = now_ms();
		if (kind == 3)
			sysfs_reset();
		/* Keep work coming, so a stuck queue has some. */
		while (now_ms() - t0 < 4 * bounds[kind]) {
			if (resets(0, &reason) == base + 1) {
				ms = now_ms() - t0;
				break;
			}
			nnp_memcpy_async(s, d, 0, h, 0, 4096);
			usleep(20 * 1000);
		}
		nnp_stream_synchronize(s);
		nnp_stream_destroy(s);
		nnp_mem_free(h);
		nnp_mem_free(d);
		nnp_device_close(dev);
		if (ms >= 0)
			recovered++;
		if (ms < 0 || ms > bounds[kind])
			late++;
		if (ms > worst_ms)
			worst_ms = ms;
		if (leaks(0, &used, &objects))
			leaked++;
		printf("# loop %d: %s found and recovered in %ld ms (bound %ld), %llu bytes and %llu objects left\n",
		       i, kinds[kind], ms, bounds[kind], (unsigned long long)used,
		       (unsigned long long)objects);
		fflush(stdout);
	}
	printf("STRESS loops=%d faults=%d recoveries=%d late=%d leaks=%d worst_detection_ms=%ld\n",
	       n, n, recovered, late, leaked, worst_ms);
	return recovered == n && !late && !leaked ? 0 : 1;
}

/*
 * tests/vm/device_del.sh: a queue of device @index made before the host
 * unplugs it, its doorbell not rung yet. Once the device node is gone,
 * a copy rings it: DRM's unplug contract wants the store to complete (no
 * SIGBUS), and the stream to say the device is lost.
 */
static int unplug_wait(int index)
{
	nnp_device_t *dev = open_dev(index);
	nnp_mem_t *a = NULL, *b = NULL;
	nnp_stream_t *s = NULL;
	char node[64];
	nnp_result_t r;
	int i;

	if (nnp_mem_alloc(dev, NNP_MEM_DEVICE, 4096, 0, &a) ||
	    nnp_mem_alloc(dev, NNP_MEM_DEVICE, 4096, 0, &b) ||
	    nnp_stream_create(dev, &s))
		return 2;
	snprintf(node, sizeof(node), "/dev/accel/accel%d", index);
	printf("UNPLUG-READY\n");
	fflush(stdout);
	for (i = 0; i < 3000 && access(node, F_OK) == 0; i++)
		usleep(100 * 1000);
	r = nnp_memcpy_async(s, b, 0, a, 0, 4096);
	if (r == NNP_SUCCESS)
		r = nnp_stream_synchronize(s);
	printf("UNPLUG-RESULT %s\n", nnp_strerror(r));
	nnp_stream_destroy(s);
	nnp_mem_free(b);
	nnp_mem_free(a);
	nnp_device_close(dev);
	return r == NNP_ERROR_DEVICE_LOST ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const char *const reasons[] = {
		"heartbeat", "job-timeout", "heartbeat", "user", "user", "user",
	};
	const char *reason;
	char buf[64];
	pid_t other;
	int status;

	write_file("/sys/module/nnp/parameters/watchdog_ms", "400");
	write_file("/sys/module/nnp/parameters/job_timeout_ms", "1000");
	if (argc == 3 && !strcmp(argv[1], "--stress"))
		return stress(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "--unplug-wait"))
		return unplug_wait(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "--leaks")) {
		uint64_t used, objects;
		int i, bad = 0;

		for (i = 0; i < 2; i++) {
			bad |= leaks(i, &used, &objects);
			printf("device %d: %llu bytes, %llu objects\n", i,
			       (unsigned long long)used, (unsigned long long)objects);
		}
		return bad;
	}
	unlink("/tmp/fault_test.stop");
	open_uevents();
	printf("TAP version 13\n");
	check(resets(0, &reason) == 0 && !strcmp(reason, "none"),
	      "no reset yet, reason 'none'");
	other = fork();
	if (other == 0)
		exit(other_device_worker());

	stream_under_fault("hang", NNP_ERROR_DEVICE_LOST,
			   WATCHDOG_MS + WATCHDOG_MS / 4 + SLACK_MS, "hang");
	expect_resets(1, "heartbeat", "hang");

	stream_under_fault("queue-stuck=0", NNP_ERROR_DEVICE_LOST,
			   JOB_TIMEOUT_MS + WATCHDOG_MS / 4 + SLACK_MS, "queue stuck");
	expect_resets(2, "job-timeout", "queue stuck");

	stream_under_fault("msix-lost=1", NNP_SUCCESS,
			   WATCHDOG_MS / 4 + 1000, "lost MSI-X");
	stream_under_fault("dma-fail=1", NNP_ERROR_COMMAND_FAILED, 1000,
			   "failed DMA");
	expect_resets(2, "job-timeout", "lost MSI-X and failed DMA: no reset");

	stream_under_fault("die", NNP_ERROR_DEVICE_LOST,
			   WATCHDOG_MS + WATCHDOG_MS / 4 + SLACK_MS, "chip dies");
	expect_resets(3, "heartbeat", "chip dies");

	test_race_reset();
	expect_resets(4, "user", "race");
	test_reset_mid_dma();
	expect_resets(5, "user", "reset mid-DMA");

	/* Resets on demand: root only. */
	if (fork() == 0) {
		int fd;

		if (setuid(65534))
			exit(2);
		fd = open("/sys/class/accel/accel0/device/reset_device", O_WRONLY);
		exit(fd < 0 && errno == EACCES ? 0 : 1);
	}
	wait(&status);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the sysfs reset file is root's only (EACCES for nobody)");
	check(system("nnptool reset 0") == 0, "nnptool reset as root");
	check(system("nnptool info 0 | grep -q 'resets:        6 (last: user)'") == 0,
	      "nnptool info shows 6 resets, last 'user'");
	expect_resets(6, "user", "nnptool reset");
	read_sysfs(1, "reset_count", buf, sizeof(buf));
	check(!strcmp(buf, "0"), "device 1 was never reset (%s)", buf);
	check_uevents(reasons, 6);

	close(open("/tmp/fault_test.stop", O_CREAT | O_WRONLY, 0600));
	waitpid(other, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "another process's copies on device 1: all exact");
	printf("# worst detection (fault asked to the waiter's DEVICE_LOST): %ld ms\n",
	       worst_ms);
	printf("1..%d\n", checks);
	printf("FAULTTEST %s\n", failures ? "failed" : "passed");
	return failures ? 1 : 0;
}
