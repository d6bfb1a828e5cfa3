// SPDX-License-Identifier: MIT
/*
 * What the driver shows of itself (docs/debugging.md): its debugfs files
 * for a known state, its tracepoints for known calls, and the dbg_mask
 * reason line for an EINVAL, there with the category on and absent with
 * it off. Runs alone: it expects no other queue or communicator on the
 * device, and sets dbg_mask and the trace events back when it is done.
 *
 * In detail (docs/testing.md has the summary):
 * the driver's debugfs files, exact: `admin_ring` one slot on after one raw
 * open, `queues` listing exactly the two queues made (depths 16 and 64,
 * qids 0 and 1) and then the one left, `comms` exactly the one
 * communicator, both empty after close; tracefs events
 * `nnp_admin_submit`/`nnp_admin_complete` of CTX_CREATE under one cid with
 * status 0, `nnp_queue_wait_begin`/`_end` with ETIMEDOUT; `dbg_mask`: with
 * QUEUE (0x2) on, a QUEUE_CREATE of depth 3 logs its reason line and a bad
 * BO_CREATE logs nothing, with 0 nothing, with GEM (0x4) the BO_CREATE's
 * reason
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <nnp_accel.h>
#include "nnp_hw.h"

#include "guest_env.h"
#include "kselftest_harness.h"

#define DBG_MASK	"/sys/module/nnp/parameters/dbg_mask"
#define TRACEFS		"/sys/kernel/tracing"

static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/* The whole of file @path into @buf (NUL-terminated); its length, or -1. */
static ssize_t read_text(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	return n < 0 ? -1 : len;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/*
 * Device 0, as libnnp finds it: a file of its own, the device node's path
 * (for files that must be opened raw) and its PCI name (debugfs names its
 * directory after it; trace lines name the device by it).
 */
struct dev0 {
	int fd;
	char node[64];
	char pci[64];
	char debugfs[PATH_MAX];
};

static int dev0_find(struct dev0 *d)
{
	char link[128], target[PATH_MAX], *base;
	struct stat st;

	d->fd = guest_open_fd(0);
	if (d->fd < 0 || fstat(d->fd, &st))
		return -1;
	snprintf(d->node, sizeof(d->node), "/dev/accel/accel%u", minor(st.st_rdev));
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device",
		 major(st.st_rdev), minor(st.st_rdev));
	if (!realpath(link, target))
		return -1;
	base = strrchr(target, '/');
	snprintf(d->pci, sizeof(d->pci), "%s", base + 1);
	/* The accel minor's debugfs directory: by PCI name, or by minor. */
	snprintf(d->debugfs, sizeof(d->debugfs), "/sys/kernel/debug/accel/%s",
		 d->pci);
	if (access(d->debugfs, F_OK))
		snprintf(d->debugfs, sizeof(d->debugfs),
			 "/sys/kernel/debug/accel/%u", minor(st.st_rdev));
	return 0;
}

static ssize_t read_debugfs(const struct dev0 *d, const char *name, char *buf,
			    size_t size)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", d->debugfs, name);
	return read_text(path, buf, size);
}

struct admin_ring {
	unsigned int sq_tail, cq_head, phase, next_cid, broken;
};

static int admin_ring_read(const struct dev0 *d, struct admin_ring *r)
{
	char buf[512];

	if (read_debugfs(d, "admin_ring", buf, sizeof(buf)) < 0)
		return -1;
	return sscanf(buf, "sq_tail %u\ncq_head %u\nphase %u\nnext_cid %u\nbroken %u\n",
		      &r->sq_tail, &r->cq_head, &r->phase, &r->next_cid,
		      &r->broken) == 5 ? 0 : -1;
}

FIXTURE(obs) {
	struct dev0 d;
};

FIXTURE_SETUP(obs)
{
	ASSERT_EQ(dev0_find(&self->d), 0);
}

FIXTURE_TEARDOWN(obs)
{
	close(self->d.fd);
}

/* One raw open is exactly one admin command (CTX_CREATE): one slot on. */
TEST_F(obs, admin_ring_moves_one_slot_per_command)
{
	struct admin_ring before, after;
	int fd;

	ASSERT_EQ(admin_ring_read(&self->d, &before), 0);
	EXPECT_EQ(before.sq_tail, before.cq_head);	/* idle */
	EXPECT_EQ(before.broken, 0);
	fd = open(self->d.node, O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(admin_ring_read(&self->d, &after), 0);
	close(fd);
	EXPECT_EQ(after.sq_tail, (before.sq_tail + 1) % 16);
	EXPECT_EQ(after.cq_head, after.sq_tail);
	EXPECT_EQ(after.next_cid, (before.next_cid + 1) & 0xffff);
	/* The phase flips each time the completion ring wraps to slot 0. */
	EXPECT_EQ(after.phase, after.cq_head ? before.phase : before.phase ^ 1);
	EXPECT_EQ(after.broken, 0);
}

/* Two queues and a communicator: the tables list exactly them. */
TEST_F(obs, queue_and_comm_tables_list_exactly_ours)
{
	struct drm_nnp_queue_create q[2] = { { .depth = 16 }, { .depth = 64 } };
	struct drm_nnp_comm_create cc = { .nranks = 1, .epoch = 0x0b5e };
	struct drm_nnp_comm_destroy cd = {};
	struct drm_nnp_queue_op op = {};
	char buf[1024], want[256];
	unsigned int comm, ctx;
	int i;

	ASSERT_EQ(read_debugfs(&self->d, "queues", buf, sizeof(buf)), 0);
	ASSERT_EQ(read_debugfs(&self->d, "comms", buf, sizeof(buf)), 0);

	for (i = 0; i < 2; i++)
		ASSERT_EQ(xioctl(self->d.fd, DRM_IOCTL_NNP_QUEUE_CREATE, &q[i]), 0);
	ASSERT_EQ(xioctl(self->d.fd, DRM_IOCTL_NNP_COMM_CREATE, &cc), 0);

	/* The context id is the driver's: learn it from the comm line. */
	ASSERT_GT(read_debugfs(&self->d, "comms", buf, sizeof(buf)), 0);
	ASSERT_EQ(sscanf(buf, "comm %u ctx %u\n", &comm, &ctx), 2);
	snprintf(want, sizeof(want), "comm %u ctx %u\n", cc.comm, ctx);
	EXPECT_STREQ(buf, want);
	EXPECT_NE(ctx, 0);

	ASSERT_GT(read_debugfs(&self->d, "queues", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want),
		 "qid %u depth 16 ready 1 fw_owned 1 dead 0 ctx %u\n"
		 "qid %u depth 64 ready 1 fw_owned 1 dead 0 ctx %u\n",
		 q[0].qid, ctx, q[1].qid, ctx);
	EXPECT_EQ(q[0].qid, 0);
	EXPECT_EQ(q[1].qid, 1);
	EXPECT_STREQ(buf, want);

	cd.comm = cc.comm;
	ASSERT_EQ(xioctl(self->d.fd, DRM_IOCTL_NNP_COMM_DESTROY, &cd), 0);
	op.qid = q[0].qid;
	ASSERT_EQ(xioctl(self->d.fd, DRM_IOCTL_NNP_QUEUE_DESTROY, &op), 0);
	ASSERT_GT(read_debugfs(&self->d, "queues", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want),
		 "qid %u depth 64 ready 1 fw_owned 1 dead 0 ctx %u\n",
		 q[1].qid, ctx);
	EXPECT_STREQ(buf, want);
	EXPECT_EQ(read_debugfs(&self->d, "comms", buf, sizeof(buf)), 0);

	/* Closing the file takes its last queue with it. */
	close(self->d.fd);
	self->d.fd = -1;
	EXPECT_EQ(read_debugfs(&self->d, "queues", buf, sizeof(buf)), 0);
}

/* tracefs, mounted if the guest has not. */
static int tracefs_ready(void)
{
	if (access(TRACEFS "/events", F_OK) &&
	    mount("nodev", TRACEFS, "tracefs", 0, NULL))
		return -1;
	return access(TRACEFS "/events/nnp", F_OK);
}

static int trace_events(const char *const *events, const char *on)
{
	char path[256];
	int i;

	for (i = 0; events[i]; i++) {
		snprintf(path, sizeof(path), TRACEFS "/events/nnp/%s/enable",
			 events[i]);
		if (write_text(path, on))
			return -1;
	}
	return 0;
}

static char trace_buf[1 << 20];

TEST_F(obs, tracepoints_show_admin_commands_and_waits)
{
	static const char *const events[] = {
		"nnp_admin_submit", "nnp_admin_complete",
		"nnp_queue_wait_begin", "nnp_queue_wait_end", NULL
	};
	struct drm_nnp_queue_create qc = { .depth = 8 };
	struct drm_nnp_queue_wait w = { .phase = 1, .timeout_ns = 0 };
	char want[256], *line;
	unsigned int cid, tail;
	int fd;

	ASSERT_EQ(tracefs_ready(), 0);
	ASSERT_EQ(write_text(TRACEFS "/trace", ""), 0);
	ASSERT_EQ(trace_events(events, "1"), 0);
	fd = open(self->d.node, O_RDWR);	/* CTX_CREATE */
	ASSERT_GE(fd, 0);
	ASSERT_EQ(xioctl(fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc), 0);
	w.qid = qc.qid;
	/* Nothing was submitted: the wait times out at once. */
	EXPECT_EQ(xioctl(fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w), -ETIMEDOUT);
	close(fd);
	ASSERT_EQ(trace_events(events, "0"), 0);
	ASSERT_GT(read_text(TRACEFS "/trace", trace_buf, sizeof(trace_buf)), 0);

	/* CTX_CREATE's submit and its completion, under one cid. */
	snprintf(want, sizeof(want), "nnp_admin_submit: %s opcode=0x%02x cid=",
		 self->d.pci, NNP_ADMIN_CTX_CREATE);
	line = strstr(trace_buf, want);
	ASSERT_NE(line, NULL) TH_LOG("no '%s' in:\n%s", want, trace_buf);
	ASSERT_EQ(sscanf(line + strlen(want), "%u tail=%u", &cid, &tail), 2);
	snprintf(want, sizeof(want),
		 "nnp_admin_complete: %s opcode=0x%02x cid=%u status=0 result=0 ret=0\n",
		 self->d.pci, NNP_ADMIN_CTX_CREATE, cid);
	EXPECT_NE(strstr(line, want), NULL) TH_LOG("no '%s'", want);

	snprintf(want, sizeof(want),
		 "nnp_queue_wait_begin: %s qid=%u cq_index=0 phase=1 timeout_ns=0\n",
		 self->d.pci, qc.qid);
	EXPECT_NE(strstr(trace_buf, want), NULL) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want),
		 "nnp_queue_wait_end: %s qid=%u cq_index=0 ret=%d\n",
		 self->d.pci, qc.qid, -ETIMEDOUT);
	EXPECT_NE(strstr(trace_buf, want), NULL) TH_LOG("no '%s'", want);
}

/* Everything the kernel log holds now. */
static char klog_buf[1 << 20];

static const char *klog(void)
{
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, klog_buf,
			sizeof(klog_buf) - 1);

	klog_buf[n > 0 ? n : 0] = 0;
	return klog_buf;
}

TEST_F(obs, dbg_mask_gives_the_einval_reason_for_its_category_only)
{
	struct drm_nnp_queue_create qc = { .depth = 3 };
	struct drm_nnp_bo_create bc = {
		.size = 4096, .flags = DRM_NNP_BO_DEVICE | DRM_NNP_BO_HOST
	};
	char mask[32];

	ASSERT_GT(read_text(DBG_MASK, mask, sizeof(mask)), 0);
	ASSERT_EQ(strcmp(mask, "0\n"), 0);	/* off by default */

	/* QUEUE on: the reason for a bad depth is logged... */
	ASSERT_EQ(write_text(DBG_MASK, "0x2"), 0);
	EXPECT_EQ(xioctl(self->d.fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc), -EINVAL);
	/* ... but GEM is off: no reason for a bad memory object. */
	EXPECT_EQ(xioctl(self->d.fd, DRM_IOCTL_NNP_BO_CREATE, &bc), -EINVAL);
	/* All off: nothing for another bad depth. */
	ASSERT_EQ(write_text(DBG_MASK, "0"), 0);
	qc = (struct drm_nnp_queue_create){ .depth = 5 };
	EXPECT_EQ(xioctl(self->d.fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc), -EINVAL);

	EXPECT_NE(strstr(klog(), "[QUEUE] queue_create: depth 3 not a power of 2 in 2..32768\n"),
		  NULL);
	EXPECT_EQ(strstr(klog_buf, "bo_create: flags 0x3"), NULL);
	EXPECT_EQ(strstr(klog_buf, "queue_create: depth 5"), NULL);

	/* GEM on: now the memory object's reason is there. */
	ASSERT_EQ(write_text(DBG_MASK, "0x4"), 0);
	EXPECT_EQ(xioctl(self->d.fd, DRM_IOCTL_NNP_BO_CREATE, &bc), -EINVAL);
	ASSERT_EQ(write_text(DBG_MASK, "0"), 0);
	EXPECT_NE(strstr(klog(), "[GEM] bo_create: flags 0x3 name not exactly one of DEVICE and HOST\n"),
		  NULL);
}

TEST_HARNESS_MAIN
