// SPDX-License-Identifier: MIT
/*
 * Allocation failures at every allocation of open() and of every nnp
 * ioctl (the debug kernel's fault injection; skipped on a kernel without
 * it; fail_nth.h). For n = 1, 2, ... the n-th allocation of the calling
 * thread fails until the call runs through without reaching it. Each
 * failure must give a documented errno (the cases' sets below), the same
 * call must then work, and once the file is
 * closed the device's memory counters are where they were and the kernel
 * log has no new warning. Leaked kernel objects are kmemleak's: the scan
 * guest-init.sh makes after the run fails it.
 *
 * In detail (docs/testing.md has the summary):
 * debug kernel only, skipped elsewhere: for `open()`, every nnp ioctl
 * (`BO_IMPORT` of the file's own exported device memory among them),
 * `GEM_CLOSE` and `PRIME_HANDLE_TO_FD` of host and device memory, the n-th allocation of the calling
 * thread fails (`/proc/thread-self/fail-nth`, failslab and fail_page_alloc
 * taking every allocation) for n = 1, 2, ... until the call no longer
 * reaches it: every failure `ENOMEM` (none for the calls documented to
 * allocate nothing), the same call then working, the device's memory
 * counters back to where they were, no new kernel warning
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>

#include "fail_nth.h"
#include "guest_env.h"
#include "kselftest_harness.h"

/* Far past the allocations of any call here: reaching it fails the test. */
#define MAX_NTH		3000

/* ---- the calls ---- */

/* What one call works on; a fresh one for every n. */
struct state {
	int fd;			/* a file of its own: a context of its own */
	uint32_t handle, qid, comm;
	int dmabuf;		/* PRIME_HANDLE_TO_FD's */
	char *buf;		/* user memory for USERPTR */
};

struct call {
	const char *name;
	int (*setup)(struct state *s);	/* after the file is open; may be NULL */
	int (*run)(struct state *s);	/* 0 or -errno */
	int expect;			/* what run gives with no failure */
	int errnos[2];			/* documented results of a failure, 0-ended */
};

static char dev_path[PATH_MAX];	/* device 0's node */

static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static int run_open(struct state *s)
{
	s->fd = open(dev_path, O_RDWR | O_CLOEXEC);
	return s->fd < 0 ? -errno : 0;
}

static int query(struct state *s, uint32_t which)
{
	static uint8_t data[sizeof(struct drm_nnp_comms)];
	struct drm_nnp_query q = {
		.query = which, .size = sizeof(data), .data = (uintptr_t)data,
	};

	return xioctl(s->fd, DRM_IOCTL_NNP_QUERY, &q);
}

static int run_query_info(struct state *s)
{
	return query(s, DRM_NNP_QUERY_DEVICE_INFO);
}

static int run_query_counters(struct state *s)
{
	return query(s, DRM_NNP_QUERY_COUNTERS);
}

static int run_query_ports(struct state *s)
{
	return query(s, DRM_NNP_QUERY_PORTS);
}

static int run_query_model(struct state *s)
{
	return query(s, DRM_NNP_QUERY_MODEL);
}

static int run_query_comms(struct state *s)
{
	return query(s, DRM_NNP_QUERY_COMMS);
}

static int bo_create(struct state *s, uint32_t flags, uint64_t size)
{
	struct drm_nnp_bo_create c = { .size = size, .flags = flags };
	int ret = xioctl(s->fd, DRM_IOCTL_NNP_BO_CREATE, &c);

	s->handle = c.handle;
	return ret;
}

static int run_bo_create_device(struct state *s)
{
	return bo_create(s, DRM_NNP_BO_DEVICE, 1 << 20);
}

static int run_bo_create_host(struct state *s)
{
	return bo_create(s, DRM_NNP_BO_HOST, 3 * 4096);
}

static int setup_userptr(struct state *s)
{
	s->buf = aligned_alloc(4096, 4 * 4096);
	if (!s->buf)
		return -ENOMEM;
	memset(s->buf, 0x5a, 4 * 4096);	/* faulted in: pinning allocates nothing */
	return 0;
}

static int run_bo_userptr(struct state *s)
{
	/* Unaligned, over three pages. */
	struct drm_nnp_bo_userptr u = {
		.user_ptr = (uintptr_t)s->buf + 100, .size = 2 * 4096 + 1,
	};
	int ret = xioctl(s->fd, DRM_IOCTL_NNP_BO_USERPTR, &u);

	s->handle = u.handle;
	return ret;
}

static int run_queue_create(struct state *s)
{
	struct drm_nnp_queue_create c = { .depth = 64 };
	int ret = xioctl(s->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &c);

	s->qid = c.qid;
	return ret;
}

static int run_queue_destroy(struct state *s)
{
	struct drm_nnp_queue_op op = { .qid = s->qid };

	return xioctl(s->fd, DRM_IOCTL_NNP_QUEUE_DESTROY, &op);
}

static int run_queue_reset(struct state *s)
{
	struct drm_nnp_queue_op op = { .qid = s->qid };

	return xioctl(s->fd, DRM_IOCTL_NNP_QUEUE_RESET, &op);
}

static int run_queue_wait(struct state *s)
{
	/* Nothing was submitted: slot 0 never completes. */
	struct drm_nnp_queue_wait w = { .qid = s->qid, .phase = 1 };

	return xioctl(s->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w);
}

static int run_comm_create(struct state *s)
{
	static uint64_t epoch = 0x6661696c6e7468;	/* new for every call */
	uint32_t ring[1] = { 0 };
	struct drm_nnp_comm_create c = {
		.nranks = 1, .epoch = ++epoch, .ring = (uintptr_t)ring,
	};
	int ret = xioctl(s->fd, DRM_IOCTL_NNP_COMM_CREATE, &c);

	s->comm = c.comm;
	return ret;
}

static int run_comm_destroy(struct state *s)
{
	struct drm_nnp_comm_destroy d = { .comm = s->comm };

	return xioctl(s->fd, DRM_IOCTL_NNP_COMM_DESTROY, &d);
}

static int run_comm_status(struct state *s)
{
	struct drm_nnp_comm_status st = { .comm = s->comm };

	return xioctl(s->fd, DRM_IOCTL_NNP_COMM_STATUS, &st);
}

static int run_comm_topology(struct state *s)
{
	/* The 1-rank communicator's ring: one chip, no link to name. */
	struct drm_nnp_comm_topology t = {
		.comm = s->comm, .algo = DRM_NNP_ALGO_RING,
		.dim[0] = { .n = 1, .pairs = 1 },
	};

	return xioctl(s->fd, DRM_IOCTL_NNP_COMM_TOPOLOGY, &t);
}

static int run_comm_routes(struct state *s)
{
	/* The 1-rank communicator's routes: none, to itself. */
	uint8_t r = DRM_NNP_ROUTE_NONE;
	struct drm_nnp_comm_routes t = {
		.comm = s->comm, .nranks = 1, .routes = (uintptr_t)&r,
	};

	return xioctl(s->fd, DRM_IOCTL_NNP_COMM_ROUTES, &t);
}

static int run_gem_close(struct state *s)
{
	struct drm_gem_close c = { .handle = s->handle };

	return xioctl(s->fd, DRM_IOCTL_GEM_CLOSE, &c);
}

static int run_prime_export(struct state *s)
{
	struct drm_prime_handle p = { .handle = s->handle, .flags = DRM_CLOEXEC };
	int ret = xioctl(s->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	if (!ret)
		s->dmabuf = p.fd;
	return ret;
}

/* A device object of the file, exported: what BO_IMPORT takes. */
static int setup_device_export(struct state *s)
{
	int ret = run_bo_create_device(s);

	return ret ? ret : run_prime_export(s);
}

static int run_bo_import(struct state *s)
{
	struct drm_nnp_bo_import im = { .fd = s->dmabuf };

	return xioctl(s->fd, DRM_IOCTL_NNP_BO_IMPORT, &im);
}

/* What the call works on, made without any failure. */
static int open_and_setup(const struct call *c, struct state *s)
{
	int ret;

	*s = (struct state){ .fd = -1, .dmabuf = -1 };
	if (c->run == run_open)
		return 0;
	ret = run_open(s);
	if (ret)
		return ret;
	return c->setup ? c->setup(s) : 0;
}

static void teardown(struct state *s)
{
	if (s->dmabuf >= 0)
		close(s->dmabuf);
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
}

static bool documented(const struct call *c, int err)
{
	return err < 0 && (-err == c->errnos[0] || -err == c->errnos[1]);
}

struct counters {
	uint64_t mem_used, mem_objects;
};

static struct counters counters(int fd)
{
	struct drm_nnp_counters c;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(c),
		.data = (uintptr_t)&c,
	};

	memset(&c, 0xee, sizeof(c));
	ioctl(fd, DRM_IOCTL_NNP_QUERY, &q);
	return (struct counters){ c.mem_used, c.mem_objects };
}

/*
 * The sweep: fail the n-th allocation of @c's call for n = 1, 2, ... until
 * the call no longer reaches it.
 */
static void sweep(struct __test_metadata *_metadata, const struct call *c)
{
	int watch = guest_open_fd(0), fail_fd, warnings = kernel_warnings();
	struct counters base, now;
	unsigned int n;

	ASSERT_LE(0, watch);
	fail_fd = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fail_fd);
	base = counters(watch);
	for (n = 1;; n++) {
		struct state s;
		bool hit;
		int ret;

		ASSERT_GT(MAX_NTH, n);
		ASSERT_EQ(0, open_and_setup(c, &s));
		fail_nth_arm(fail_fd, n);
		ret = c->run(&s);
		hit = fail_nth_hit(fail_fd);
		if (!hit) {
			/* The call made fewer than n allocations: done. */
			EXPECT_EQ(c->expect, ret);
			teardown(&s);
			break;
		}
		if (ret != c->expect) {
			if (!documented(c, ret))
				TH_LOG("%s: allocation %u failed: %s", c->name, n,
				       strerror(-ret));
			ASSERT_TRUE(documented(c, ret));
			/* Nothing is left half done: the same call works. */
			ASSERT_EQ(c->expect, c->run(&s));
		}
		teardown(&s);
		now = counters(watch);
		ASSERT_EQ(base.mem_used, now.mem_used);
		ASSERT_EQ(base.mem_objects, now.mem_objects);
	}
	close(fail_fd);
	close(watch);
	EXPECT_EQ(warnings, kernel_warnings());
	TH_LOG("%s: %u allocations, each failed once", c->name, n - 1);
}

/* Device 0's node, and the fault injection set up; false: skip. */
static bool ready(void)
{
	struct nnp_device_info in = { .size = sizeof(in) };
	nnp_device_t *dev;

	if (!fault_injection_ready())
		return false;
	if (nnp_device_open(0, &dev) != NNP_SUCCESS)
		return false;
	if (nnp_device_get_info(dev, &in) == NNP_SUCCESS)
		snprintf(dev_path, sizeof(dev_path), "%s", in.path);
	nnp_device_close(dev);
	return dev_path[0];
}

#define TIMEOUT_S	900	/* every allocation, on the debug kernel under TCG */

FIXTURE(call) {};
FIXTURE_SETUP(call) {}
FIXTURE_TEARDOWN(call) {}
FIXTURE_VARIANT(call) {
	struct call c;
};

/* One variant per call: its name, setup, call, result and errnos. */
#define CALL(id, setup, run, expect, ...) \
	FIXTURE_VARIANT_ADD(call, id) { \
		.c = { #id, setup, run, expect, { __VA_ARGS__ } }, \
	}

CALL(open, NULL, run_open, 0, ENOMEM);
CALL(query_device_info, NULL, run_query_info, 0, 0);
CALL(query_counters, NULL, run_query_counters, 0, ENOMEM);
CALL(query_ports, NULL, run_query_ports, 0, ENOMEM);
CALL(query_model, NULL, run_query_model, 0, ENOMEM);
CALL(query_comms, NULL, run_query_comms, 0, ENOMEM);
CALL(bo_create_device, NULL, run_bo_create_device, 0, ENOMEM);
CALL(bo_create_host, NULL, run_bo_create_host, 0, ENOMEM);
CALL(bo_userptr, setup_userptr, run_bo_userptr, 0, ENOMEM);
CALL(queue_create, NULL, run_queue_create, 0, ENOMEM);
CALL(queue_destroy, run_queue_create, run_queue_destroy, 0, 0);
CALL(queue_reset, run_queue_create, run_queue_reset, 0, 0);
CALL(queue_wait, run_queue_create, run_queue_wait, -ETIMEDOUT, 0);
CALL(comm_create, NULL, run_comm_create, 0, ENOMEM);
CALL(comm_destroy, run_comm_create, run_comm_destroy, 0, 0);
CALL(comm_status, run_comm_create, run_comm_status, 0, 0);
CALL(comm_topology, run_comm_create, run_comm_topology, 0, ENOMEM);
CALL(comm_routes, run_comm_create, run_comm_routes, 0, ENOMEM);
CALL(gem_close, run_bo_create_device, run_gem_close, 0, 0);
CALL(prime_handle_to_fd, run_bo_create_host, run_prime_export, 0, ENOMEM);
CALL(prime_handle_to_fd_device, run_bo_create_device, run_prime_export, 0, ENOMEM);
CALL(bo_import, setup_device_export, run_bo_import, 0, ENOMEM);

TEST_F_TIMEOUT(call, fails_cleanly_at_every_allocation, TIMEOUT_S)
{
	if (!ready())
		SKIP(return, "no fault injection (not the debug kernel)");
	sweep(_metadata, &variant->c);
}

TEST_HARNESS_MAIN
