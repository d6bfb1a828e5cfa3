// SPDX-License-Identifier: MIT
/*
 * The device coredump a watchdog reset leaves (uapi/drm/nnp_coredump.h),
 * driven with tests/vm/coredump.sh, which sets on the QEMU monitor each
 * fault this program asks for with a "FAULT nnpN SPEC" line. Two devices
 * in a ring, one communicator over both (all_devices.h); the job timeout
 * at 1000 ms, the watchdog at 400 ms.
 *
 * job_timeout: device 0's queue 0 is made stuck. A copy done before, a
 * fill at the SQ head and a copy after it: the one dump of device 0 (and
 * none of device 1) holds its header (reason job-timeout, the reset's
 * number, queue 0 stuck, the firmware asked), the three commands with
 * their exact fields and states (the fill's byte written 0), this
 * process as the queue's owner, the communicator as fdinfo shows it, the
 * ports as the device reported them, and the other process's queue. A
 * pattern that other process (another user) put in host and device memory
 * appears nowhere in it. The dump is root's only: nobody gets EACCES.
 * Before it, a read of an unknown register in another queue's doorbell
 * page made the firmware log a guest error: the dump's firmware log
 * (version 2) holds it, kind and text exact, its messages numbered one
 * after the other up to the device's count, each NUL-terminated.
 * `nnptool coredump` names the stuck queue, its owner and the fill at its
 * head, and the logged message; `--json` says the same.
 *
 * one_until_cleared: a second job timeout leaves the first dump as it
 * was; once cleared (`nnptool coredump --clear`), a firmware hang makes a
 * new one, for reason heartbeat, with neither the firmware's answers nor
 * ports.
 *
 * A kernel without devcoredump (the debug kernel, whose tinyconfig no
 * driver selects it in) keeps no dump: the faults and resets run all the
 * same, the capture under lockdep and KASAN, and the checks of the dumps
 * are skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "all_devices.h"
#include "guest_env.h"
#include "kselftest_harness.h"
#include "nnp_accel.h"
#include "nnp_coredump.h"
#include "nnp_hw.h"

#define BUF		(1u << 20)
#define CMD_LEN		4096u
#define JOB_TIMEOUT_MS	1000
#define WATCHDOG_MS	400
#define DUMP_MAX	(2 * NNP_COREDUMP_MAX_SIZE)
/* What the other user writes: bytes that must not leave its memory. */
#define PATTERN		"nnp-coredump-secret-payload-7f3a"

/* Ask the host for @spec on device @index (tests/vm/coredump.sh). */
static void fault(int index, const char *spec)
{
	printf("FAULT nnp%d %s\n", index, spec);
	fflush(stdout);
	/* The monitor's round trip, before the work it is for goes in. */
	usleep(700 * 1000);
}

/* The device coredumps now held for device @index, and one's path. */
static int dumps_of(int index, char *path, size_t len)
{
	char want[PATH_MAX], dev[PATH_MAX], link[PATH_MAX + 64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(link, sizeof(link), "/sys/class/accel/accel%d/device", index);
	if (!realpath(link, want))
		return -1;
	d = opendir("/sys/class/devcoredump");
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "devcd", 5))
			continue;
		snprintf(link, sizeof(link), "/sys/class/devcoredump/%s/failing_device",
			 e->d_name);
		if (!realpath(link, dev) || strcmp(dev, want))
			continue;
		snprintf(path, len, "/sys/class/devcoredump/%s/data", e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* The dump at @path into @buf (DUMP_MAX bytes): its size, or -1. */
static ssize_t read_dump(const char *path, void *buf)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, got = 0;

	if (fd < 0)
		return -1;
	while ((n = read(fd, (char *)buf + got, DUMP_MAX - got)) > 0)
		got += n;
	close(fd);
	return n < 0 ? -1 : got;
}

/* The records of a dump whose header passed. */
struct dump {
	const struct nnp_coredump_header *h;
	const struct nnp_coredump_queue *q;
	const struct nnp_coredump_comm *c;
	const struct nnp_coredump_port *p;
	const struct nnp_coredump_log *l;
};

static struct dump split(const void *buf)
{
	const struct nnp_coredump_header *h = buf;
	struct dump d = { .h = h };

	d.q = (const void *)(h + 1);
	d.c = (const void *)(d.q + h->num_queues);
	d.p = (const void *)(d.c + h->num_comms);
	d.l = (const void *)(d.p + h->num_ports);
	return d;
}

static const struct nnp_coredump_queue *queue_of(const struct dump *d,
						  uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < d->h->num_queues; i++)
		if (d->q[i].pid == pid)
			return &d->q[i];
	return NULL;
}

/*
 * Another user: its own context on device 0, as nobody, with PATTERN in
 * its host memory and copied to its device memory and back. Writes a byte
 * to @ready once done, then holds all of it until @hold is closed.
 */
static void other_user(int ready, int hold)
{
	nnp_mem_t *h = NULL, *d = NULL;
	nnp_device_t *dev = NULL;
	nnp_stream_t *s = NULL;
	char *p;
	size_t i;

	if (nnp_device_open(0, &dev) || setgid(65534) || setuid(65534) ||
	    nnp_mem_alloc(dev, NNP_MEM_HOST, 2 * CMD_LEN, 0, &h) ||
	    nnp_mem_alloc(dev, NNP_MEM_DEVICE, CMD_LEN, 0, &d) ||
	    nnp_stream_create(dev, &s) || nnp_mem_map(h, (void **)&p))
		_exit(1);
	for (i = 0; i + sizeof(PATTERN) - 1 <= CMD_LEN; i += sizeof(PATTERN) - 1)
		memcpy(p + i, PATTERN, sizeof(PATTERN) - 1);
	if (nnp_memcpy_async(s, d, 0, h, 0, CMD_LEN) ||
	    nnp_memcpy_async(s, h, CMD_LEN, d, 0, CMD_LEN) ||
	    nnp_stream_synchronize(s) || memcmp(p, p + CMD_LEN, CMD_LEN))
		_exit(1);
	if (write(ready, "r", 1) != 1 || read(hold, p, 1) != 0)
		_exit(1);
	_exit(0);
}

/* Whether nobody (uid 65534) is refused @path with EACCES. */
static bool nobody_refused(const char *path)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setuid(65534))
			_exit(2);
		_exit(open(path, O_RDONLY) < 0 && errno == EACCES ? 0 : 1);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	       WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Whether this kernel keeps device coredumps (CONFIG_DEV_COREDUMP). */
static bool have_devcoredump(void)
{
	return access("/sys/class/devcoredump", F_OK) == 0;
}

/* Wait up to 2 s for device @index to hold @n dumps. */
static int wait_dumps(int index, int n, char *path, size_t len)
{
	int i, got = -1;

	for (i = 0; i < 40 && got != n; i++) {
		got = dumps_of(index, path, len);
		if (got != n)
			usleep(50 * 1000);
	}
	return got;
}

FIXTURE(cd) {
	struct all_devices d;
	char *buf;
};

FIXTURE_SETUP(cd)
{
	const char *why;

	ASSERT_EQ(0, write_str("/sys/module/nnp/parameters/watchdog_ms", "400"));
	ASSERT_EQ(0, write_str("/sys/module/nnp/parameters/job_timeout_ms", "1000"));
	why = all_devices_open(&self->d, BUF);
	ASSERT_EQ(NULL, why) TH_LOG("%s", why);
	self->buf = malloc(DUMP_MAX);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(cd)
{
	all_devices_close(&self->d);
	free(self->buf);
}

/*
 * A guest error the firmware logs: a read of an unknown register of a
 * new queue's doorbell page, on a file of its own, closed after. Its
 * offset in BAR0 into *@reg; -1 if it could not be made.
 */
static int log_guest_error(int index, uint32_t *reg)
{
	struct drm_nnp_queue_create qc = { .depth = 8 };
	int fd = guest_open_fd(index), ret = -1;
	volatile uint32_t *db;

	if (fd < 0)
		return -1;
	if (!ioctl(fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc)) {
		db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
			  qc.doorbell_mmap_offset);
		if (db != MAP_FAILED) {
			(void)db[0xff0 / 4];
			*reg = NNP_REG_DOORBELL_BASE + qc.qid * NNP_REG_DOORBELL_STRIDE + 0xff0;
			munmap((void *)db, 4096);
			ret = 0;
		}
	}
	close(fd);
	return ret;
}

/* Device 0's stream: a copy done, the fault, a fill stuck, a copy queued. */
static nnp_result_t stuck_stream(struct all_devices *d)
{
	nnp_result_t r;

	r = nnp_memcpy_async(d->s[0], d->host[0], 0, d->a[0], 0, CMD_LEN);
	if (!r)
		r = nnp_stream_synchronize(d->s[0]);
	if (r)
		return r;
	fault(0, "queue-stuck=0");
	r = nnp_memset_async(d->s[0], d->a[0], 64, 0xa5, CMD_LEN);
	if (!r)
		r = nnp_memcpy_async(d->s[0], d->host[0], 128, d->a[0], 64, CMD_LEN);
	return r ? r : nnp_stream_synchronize(d->s[0]);
}

TEST_F_TIMEOUT(cd, job_timeout, 120)
{
	struct nnp_port_info ports[NNP_MAX_PORTS] = { { .size = sizeof(ports[0]) } };
	const struct nnp_coredump_queue *q, *o;
	const struct nnp_coredump_cmd *c;
	char path[PATH_MAX], comm_text[256], name[40], logged[64];
	unsigned int nports, i, found = 0;
	uint32_t reg = 0;
	const char *reason;
	uint32_t resets = 0;
	int ready[2], hold[2], comm_id, status;
	struct dump d;
	struct stat st;
	pid_t other;
	ssize_t len;

	ASSERT_EQ(0, nnp_device_get_resets(self->d.dev[0], &resets, &reason));
	ASSERT_EQ(0, nnp_device_get_ports(self->d.dev[0], ports, NNP_MAX_PORTS,
					  &nports));
	comm_id = guest_fdinfo_comm(nnp_device_fd(self->d.dev[0]), comm_text,
				    sizeof(comm_text));
	ASSERT_LT(0, comm_id);
	ASSERT_EQ(0, log_guest_error(0, &reg));
	snprintf(logged, sizeof(logged), "read of unknown doorbell register 0x%x", reg);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(hold));
	other = fork();
	if (other == 0) {
		close(ready[0]);
		close(hold[1]);
		other_user(ready[1], hold[0]);
	}
	close(ready[1]);
	close(hold[0]);
	ASSERT_EQ(1, read(ready[0], name, 1));

	/* The dump is taken: the other user may go. */
	ASSERT_EQ(NNP_ERROR_DEVICE_LOST, stuck_stream(&self->d));
	close(hold[1]);
	close(ready[0]);
	ASSERT_EQ(other, waitpid(other, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!have_devcoredump())
		SKIP(return, "this kernel keeps no device coredump");
	ASSERT_EQ(1, dumps_of(0, path, sizeof(path)));
	EXPECT_EQ(0, dumps_of(1, name, sizeof(name)));
	len = read_dump(path, self->buf);

	/* The header. */
	ASSERT_LE((ssize_t)sizeof(*d.h), len);
	d = split(self->buf);
	ASSERT_EQ(0, memcmp(d.h->magic, NNP_COREDUMP_MAGIC, 8));
	EXPECT_EQ(NNP_COREDUMP_VERSION, d.h->version);
	EXPECT_EQ(sizeof(struct nnp_coredump_header), d.h->header_size);
	EXPECT_EQ(sizeof(struct nnp_coredump_queue), d.h->queue_size);
	EXPECT_EQ(sizeof(struct nnp_coredump_comm), d.h->comm_size);
	EXPECT_EQ(sizeof(struct nnp_coredump_port), d.h->port_size);
	EXPECT_EQ(sizeof(struct nnp_coredump_log), d.h->log_size);
	ASSERT_EQ(len, (ssize_t)(sizeof(*d.h) + d.h->num_queues * sizeof(*d.q) +
				 d.h->num_comms * sizeof(*d.c) +
				 d.h->num_ports * sizeof(*d.p) +
				 d.h->num_log * sizeof(*d.l)));
	EXPECT_EQ(DRM_NNP_RESET_JOB_TIMEOUT, d.h->reason);
	EXPECT_EQ(resets + 1, d.h->reset_count);
	EXPECT_EQ(0, d.h->stuck_qid);
	EXPECT_EQ(NNP_COREDUMP_FW_ASKED, d.h->flags);
	EXPECT_EQ(0, d.h->aq_broken);
	EXPECT_EQ(NNP_FW_STATUS_READY, d.h->fw_status);
	EXPECT_STREQ(GUEST_FW_BUILD, d.h->fw_build);

	/* This process's queue: the three commands, exactly. */
	ASSERT_EQ(2, d.h->num_queues);
	q = queue_of(&d, getpid());
	ASSERT_NE(NULL, q);
	EXPECT_EQ(0, q->qid);
	EXPECT_STREQ("coredump_test", q->task);
	EXPECT_LE(JOB_TIMEOUT_MS, q->idle_ms);
	ASSERT_EQ(3, q->num_cmds);
	c = q->cmds;
	EXPECT_EQ(NNP_COREDUMP_CMD_DONE, c[0].state);
	EXPECT_EQ(NNP_COREDUMP_CMD_RUNNING, c[1].state);
	EXPECT_EQ(NNP_COREDUMP_CMD_QUEUED, c[2].state);
	EXPECT_EQ(q->sq_head, c[1].slot);
	/* libnnp queues through the shadow doorbell, ringing when it must. */
	EXPECT_EQ((c[1].slot + 2) % q->depth, q->shadow_tail);
	EXPECT_EQ((c[1].slot + q->depth - 1) % q->depth, c[0].slot);
	EXPECT_EQ(NNP_CMD_COPY, c[0].opcode);
	EXPECT_EQ(NNP_CMD_FILL, c[1].opcode);
	EXPECT_EQ(NNP_CMD_COPY, c[2].opcode);
	/* The fill's byte (0xa5) is data: written 0. */
	EXPECT_EQ(0, c[1].value);
	EXPECT_EQ(64, c[1].dst_off);
	EXPECT_EQ(CMD_LEN, c[1].len);
	EXPECT_EQ(0, c[0].src_off);
	EXPECT_EQ(64, c[2].src_off);
	EXPECT_EQ(128, c[2].dst_off);
	EXPECT_EQ(CMD_LEN, c[2].len);
	/* a[0] is the first copy's source, the fill's target, the last's source. */
	EXPECT_NE(0, c[1].dst_key);
	EXPECT_EQ(c[1].dst_key, c[0].src_key);
	EXPECT_EQ(c[1].dst_key, c[2].src_key);
	EXPECT_EQ(c[0].dst_key, c[2].dst_key);
	EXPECT_NE(c[0].src_key, c[0].dst_key);

	/* The other user's queue: its copies done, its owner named. */
	o = queue_of(&d, other);
	ASSERT_NE(NULL, o);
	EXPECT_NE(q->ctx, o->ctx);
	EXPECT_EQ(o->sq_head, o->shadow_tail);
	ASSERT_EQ(2, o->num_cmds);
	EXPECT_EQ(NNP_COREDUMP_CMD_DONE, o->cmds[1].state);
	EXPECT_EQ(CMD_LEN, o->cmds[1].len);

	/* The communicator as fdinfo shows it. */
	ASSERT_EQ(1, d.h->num_comms);
	EXPECT_EQ((uint32_t)comm_id, d.c[0].id);
	EXPECT_EQ(q->ctx, d.c[0].ctx);
	EXPECT_EQ((uint32_t)getpid(), d.c[0].pid);
	EXPECT_EQ(0, d.c[0].status);
	snprintf(name, sizeof(name), "%u/%u%s%.32s", d.c[0].rank, d.c[0].nranks,
		 d.c[0].name[0] ? " " : "", d.c[0].name);
	EXPECT_STREQ(comm_text, name);

	/* The ports as the device reported them before. */
	ASSERT_EQ(nports, d.h->num_ports);
	for (i = 0; i < nports; i++) {
		EXPECT_EQ(i, d.p[i].port);
		EXPECT_EQ(ports[i].state, d.p[i].state);
		if (ports[i].state & NNP_LINK_WIRED)
			EXPECT_EQ(NNP_PORT_PEER(ports[i].peer_chip, ports[i].peer_port),
				  d.p[i].peer);
		EXPECT_LE(ports[i].tx_bytes, d.p[i].tx_bytes);
	}

	/* The firmware's log: the newest, in order, the guest error among them. */
	ASSERT_LT(0, d.h->num_log);
	ASSERT_GE(d.h->log_seq, d.h->num_log);
	for (i = 0; i < d.h->num_log; i++) {
		EXPECT_EQ(d.h->log_seq - d.h->num_log + i, d.l[i].seq);
		EXPECT_NE(NULL, memchr(d.l[i].msg, '\0', sizeof(d.l[i].msg)));
		if (!strcmp(d.l[i].msg, logged)) {
			EXPECT_EQ(NNP_COREDUMP_LOG_GUEST_ERROR, d.l[i].kind);
			found = d.l[i].seq + 1;
		}
	}
	ASSERT_NE(0, found) TH_LOG("no \"%s\" in the dump's log", logged);

	/* Nothing of the other user's bytes, nothing for nobody to read. */
	EXPECT_EQ(NULL, memmem(self->buf, len, PATTERN, 8));
	EXPECT_EQ(NULL, memmem(self->buf, len, PATTERN + 8, 8));
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
	EXPECT_EQ(0, st.st_uid);
	EXPECT_TRUE(nobody_refused(path));

	/* Decoded: the stuck queue, its owner, the command at its head. */
	snprintf(name, sizeof(name), "queue 0 STUCK ctx %u pid %d ", q->ctx, getpid());
	EXPECT_TRUE(guest_output_has("nnptool coredump", name, " task coredump_test "));
	snprintf(name, sizeof(name), "  slot %u RUNNING fill ", c[1].slot);
	EXPECT_TRUE(guest_output_has("nnptool coredump", name, " len 4096 value 0x0"));
	EXPECT_TRUE(guest_output_has("nnptool coredump", "version 2 reason job-timeout ", ""));
	snprintf(name, sizeof(name), "log %u time ", found - 1);
	EXPECT_TRUE(guest_output_has("nnptool coredump", name, logged));
	EXPECT_TRUE(guest_output_has("nnptool coredump --json", "{",
			       "\"stuck_qid\": 0, \"queues\": [{\"qid\": 0, \"stuck\": true"));
}

TEST_F_TIMEOUT(cd, one_until_cleared, 120)
{
	char path[PATH_MAX];
	nnp_device_t *dev = NULL;
	nnp_stream_t *s = NULL;
	nnp_mem_t *mem = NULL;
	uint32_t first;
	nnp_result_t r;
	struct dump d;
	ssize_t len;

	if (!have_devcoredump()) {
		ASSERT_EQ(NNP_ERROR_DEVICE_LOST, stuck_stream(&self->d));
		SKIP(return, "this kernel keeps no device coredump");
	}
	ASSERT_EQ(1, dumps_of(0, path, sizeof(path)));
	ASSERT_LT(0, read_dump(path, self->buf));
	first = split(self->buf).h->reset_count;

	ASSERT_EQ(NNP_ERROR_DEVICE_LOST, stuck_stream(&self->d));
	ASSERT_EQ(1, dumps_of(0, path, sizeof(path)));
	ASSERT_LT(0, read_dump(path, self->buf));
	EXPECT_EQ(first, split(self->buf).h->reset_count);

	ASSERT_EQ(0, system("nnptool coredump --clear >/dev/null"));
	ASSERT_EQ(0, wait_dumps(0, 0, path, sizeof(path)));
	/*
	 * A new context, its fill done: the device is back from the last
	 * reset, so the hang is not taken for a boot that never ends.
	 */
	ASSERT_EQ(0, nnp_device_open(0, &dev));
	ASSERT_EQ(0, nnp_mem_alloc(dev, NNP_MEM_DEVICE, CMD_LEN, 0, &mem));
	ASSERT_EQ(0, nnp_stream_create(dev, &s));
	ASSERT_EQ(0, nnp_memset_async(s, mem, 0, 1, CMD_LEN));
	ASSERT_EQ(0, nnp_stream_synchronize(s));
	fault(0, "hang");
	r = nnp_memset_async(s, mem, 0, 2, CMD_LEN);
	EXPECT_EQ(NNP_ERROR_DEVICE_LOST, r ? r : nnp_stream_synchronize(s));
	nnp_stream_destroy(s);
	nnp_mem_free(mem);
	nnp_device_close(dev);
	ASSERT_EQ(1, wait_dumps(0, 1, path, sizeof(path)));
	len = read_dump(path, self->buf);
	ASSERT_LE((ssize_t)sizeof(*d.h), len);
	d = split(self->buf);
	EXPECT_EQ(DRM_NNP_RESET_HEARTBEAT, d.h->reason);
	EXPECT_EQ(first + 2, d.h->reset_count);
	EXPECT_EQ(NNP_COREDUMP_NONE, d.h->stuck_qid);
	EXPECT_EQ(0, d.h->flags);
	EXPECT_LE(WATCHDOG_MS, d.h->heartbeat_idle_ms);
	EXPECT_EQ(0, d.h->num_ports);
	ASSERT_EQ(1, d.h->num_comms);
	EXPECT_EQ(NNP_COREDUMP_NONE, d.c[0].status);
	ASSERT_EQ(0, write_str(path, "1"));
	ASSERT_EQ(0, wait_dumps(0, 0, path, sizeof(path)));
}

TEST_HARNESS_MAIN
