// SPDX-License-Identifier: MIT
/*
 * Events on the accel file (struct drm_nnp_event), driven with
 * tests/vm/events.sh, which sets each link change this program asks for
 * with a "LINK nnpN down|up PORT" line on the QEMU monitor. Two chips in
 * a ring, one communicator over both (all_devices.h).
 *
 * three_kinds_in_order: chip 0's allreduce waits for chip 1, which never
 * calls; chip 0's first wired port goes down. The handle with the
 * communicator gets, from nnp_device_next_event(), LINK (that port,
 * wired and down), then COMM_FAILED (nnp_comm_id() of its communicator,
 * as fdinfo names it, "link_down", no port); another file of chip 0
 * reads (read(), the driver's struct) only the LINK; a file of chip 1 its
 * own port's LINK. The port comes up: LINK up for each. A reset asked
 * through sysfs: RESET (user, its number) for both of chip 0, none for
 * chip 1's. No event lost; the handle then has none (NNP_ERROR_TIMEOUT
 * at once), and a wrong struct size is refused.
 *
 * unread_keep_newest: chip 0 is reset 40 times (a RESET and the LINKs
 * the reset changed, each time). A file that never reads keeps the
 * newest DRM_NNP_EVENTS_MAX of what another file that reads them all
 * got, in order, the oldest kept counting every one dropped, the newest
 * RESET the last reset's number.
 *
 * two_threads_one_handle: two threads wait in nnp_device_next_event() on
 * the handle with the communicator while chip 0 is reset 10 times: each
 * RESET reaches exactly one of them, none twice, none lost.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "all_devices.h"
#include "guest_env.h"
#include "kselftest_harness.h"
#include "nnp_accel.h"
#include "nnp_hw.h"

#define COUNT		1024
#define RESETS		40
#define WAIT_MS		5000

/*
 * The events @fd has, up to @max, waiting @ms for the first: how many
 * (-1 on a read that is no whole number of events).
 */
static int read_events(int fd, struct drm_nnp_event *ev, int max, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return 0;
	n = read(fd, ev, max * sizeof(*ev));
	if (n < 0 || n % sizeof(*ev))
		return -1;
	return n / sizeof(*ev);
}

/* Exactly @want events of @fd, within WAIT_MS, into @ev. */
static int read_n(int fd, struct drm_nnp_event *ev, int want)
{
	int got = 0, n;

	while (got < want) {
		n = read_events(fd, ev + got, want - got, WAIT_MS);
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* Ask the host for a link change (tests/vm/events.sh). */
static void link_set(int chip, bool up, unsigned int port)
{
	printf("LINK nnp%d %s %u\n", chip, up ? "up" : "down", port);
	fflush(stdout);
}

static void sysfs_reset(int chip)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/reset_device",
		 chip);
	write_str(path, "1");
}

#define EXPECT_EVENT(e, type_, reason_, count_, port_, state_) do {	\
	EXPECT_EQ((uint32_t)(type_), (e).base.type);			\
	EXPECT_EQ(sizeof(struct drm_nnp_event), (e).base.length);	\
	EXPECT_EQ((uint32_t)(reason_), (e).reason);			\
	EXPECT_EQ((uint32_t)(count_), (e).count);			\
	EXPECT_EQ((uint32_t)(port_), (e).port);				\
	EXPECT_EQ((uint32_t)(state_), (e).state);			\
	EXPECT_EQ(0, (e).lost);						\
} while (0)

FIXTURE(ev) {
	struct all_devices d;
	int other;		/* another file of chip 0 */
	int far;		/* a file of chip 1 */
	unsigned int port;	/* chip 0's first wired port */
	unsigned int peer_port;	/* its other end, on chip 1 */
	unsigned int wired;	/* chip 0's wired ports */
};

FIXTURE_SETUP(ev)
{
	struct nnp_port_info p[NNP_MAX_PORTS] = { { .size = sizeof(p[0]) } };
	const char *why = all_devices_open(&self->d, COUNT * sizeof(float));
	unsigned int n, i;

	ASSERT_EQ(NULL, why) TH_LOG("%s", why);
	ASSERT_EQ(0, nnp_device_get_ports(self->d.dev[0], p, NNP_MAX_PORTS, &n));
	self->wired = 0;
	for (i = n; i-- > 0;)
		if (p[i].state & NNP_LINK_WIRED) {
			self->port = i;
			self->peer_port = p[i].peer_port;
			self->wired++;
		}
	ASSERT_LT(0, self->wired);
	self->other = guest_open_fd(0);
	self->far = guest_open_fd(1);
	ASSERT_LE(0, self->other);
	ASSERT_LE(0, self->far);
}

FIXTURE_TEARDOWN(ev)
{
	close(self->other);
	close(self->far);
	all_devices_close(&self->d);
}

/* The next event of @dev, as libnnp gives it, within WAIT_MS. */
static struct nnp_device_event next(nnp_device_t *dev)
{
	struct nnp_device_event ev = NNP_DEVICE_EVENT_INIT;

	if (nnp_device_next_event(dev, &ev, WAIT_MS) != NNP_SUCCESS)
		ev.kind = 0;
	return ev;
}

TEST_F_TIMEOUT(ev, three_kinds_in_order, 120)
{
	nnp_device_t *dev0 = self->d.dev[0];
	struct nnp_device_event ev, bad = { .size = sizeof(ev) - 8 };
	int comm = guest_fdinfo_comm(nnp_device_fd(dev0), (char[256]){ 0 }, 256);
	struct drm_nnp_event e[4];
	uint32_t resets = 0;
	const char *reason;

	ASSERT_LT(0, comm);
	EXPECT_EQ(comm, nnp_comm_id(self->d.comm[0]));
	ASSERT_EQ(0, nnp_device_get_resets(self->d.dev[0], &resets, &reason));
	/* Chip 1 never calls: chip 0's allreduce waits on the links. */
	ASSERT_EQ(0, nnp_allreduce(self->d.a[0], 0, self->d.b[0], 0, COUNT,
				   NNP_FLOAT32, NNP_SUM, self->d.comm[0],
				   self->d.s[0]));
	usleep(300 * 1000);
	link_set(0, false, self->port);
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_synchronize(self->d.s[0]));

	ev = next(dev0);
	EXPECT_EQ(NNP_DEVICE_EVENT_LINK, ev.kind);
	EXPECT_EQ(self->port, ev.port);
	EXPECT_EQ(NNP_LINK_WIRED, ev.link_state);
	EXPECT_EQ(0, ev.lost);
	ev = next(dev0);
	ASSERT_EQ(NNP_DEVICE_EVENT_COMM_FAILED, ev.kind);
	EXPECT_EQ(comm, ev.comm_id);
	EXPECT_STREQ("link_down", ev.why);
	EXPECT_EQ(NNP_EVENT_NO_PORT, ev.port);
	EXPECT_EQ(0, ev.lost);
	ASSERT_EQ(1, read_n(self->other, e, 1));
	EXPECT_EVENT(e[0], DRM_NNP_EVENT_LINK, 0, 0, self->port, DRM_NNP_PORT_WIRED);
	ASSERT_EQ(1, read_n(self->far, e, 1));
	EXPECT_EVENT(e[0], DRM_NNP_EVENT_LINK, 0, 0, self->peer_port,
		     DRM_NNP_PORT_WIRED);

	link_set(0, true, self->port);
	ev = next(dev0);
	EXPECT_EQ(NNP_DEVICE_EVENT_LINK, ev.kind);
	EXPECT_EQ(self->port, ev.port);
	EXPECT_EQ(NNP_LINK_WIRED | NNP_LINK_UP, ev.link_state);
	ASSERT_EQ(1, read_n(self->other, e, 1));
	EXPECT_EVENT(e[0], DRM_NNP_EVENT_LINK, 0, 0, self->port,
		     DRM_NNP_PORT_WIRED | DRM_NNP_PORT_UP);
	ASSERT_EQ(1, read_n(self->far, e, 1));
	EXPECT_EVENT(e[0], DRM_NNP_EVENT_LINK, 0, 0, self->peer_port,
		     DRM_NNP_PORT_WIRED | DRM_NNP_PORT_UP);

	/* A reset: first of all, it is told. */
	EXPECT_EQ(NNP_ERROR_TIMEOUT, nnp_device_next_event(dev0, &ev, 0));
	EXPECT_STREQ("/dev/accel/accel0: no event in 0 ms", nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_next_event(dev0, &bad, 0));
	sysfs_reset(0);
	ev = next(dev0);
	ASSERT_EQ(NNP_DEVICE_EVENT_RESET, ev.kind);
	EXPECT_EQ(resets + 1, ev.reset_count);
	EXPECT_STREQ("user", ev.reset_reason);
	ASSERT_EQ(1, read_n(self->other, e, 1));
	EXPECT_EVENT(e[0], DRM_NNP_EVENT_RESET, DRM_NNP_RESET_USER, resets + 1, 0, 0);
	/* Chip 1 hears of the links chip 0's reset took, not of the reset. */
	while (read_events(self->far, e, 1, 1000) == 1)
		EXPECT_EQ(DRM_NNP_EVENT_LINK, e[0].base.type);
}

/* The fields an event's two copies share: all but the time and @lost. */
static bool same_event(const struct drm_nnp_event *a,
		       const struct drm_nnp_event *b)
{
	return a->base.type == b->base.type && a->reason == b->reason &&
	       a->count == b->count && a->comm == b->comm &&
	       a->port == b->port && a->state == b->state;
}

TEST_F_TIMEOUT(ev, unread_keep_newest, 300)
{
	static struct drm_nnp_event all[RESETS * (2 + 2 * NNP_MAX_PORTS)];
	struct drm_nnp_event e[DRM_NNP_EVENTS_MAX + 1];
	int quiet = guest_open_fd(0), total = 0, i, n, resets_seen = 0;
	nnp_device_t *dev = NULL;
	uint32_t resets = 0;
	const char *reason;

	ASSERT_LE(0, quiet);
	/*
	 * Another file of the chip reads every event: what the quiet one was
	 * sent. The last reset's are all read, however late its links.
	 */
	for (i = 0; i <= RESETS; i++) {
		if (i < RESETS)
			sysfs_reset(0);
		while ((n = read_events(self->other, all + total,
					(int)(sizeof(all) / sizeof(all[0])) - total,
					i < RESETS ? 200 : 1000)) > 0)
			total += n;
	}
	ASSERT_EQ(0, nnp_device_open(0, &dev));
	ASSERT_EQ(0, nnp_device_get_resets(dev, &resets, &reason));
	nnp_device_close(dev);
	for (i = 0; i < total; i++) {
		EXPECT_EQ(0, all[i].lost);
		resets_seen += all[i].base.type == DRM_NNP_EVENT_RESET;
	}
	ASSERT_EQ(RESETS, resets_seen);
	ASSERT_LT(DRM_NNP_EVENTS_MAX, total);

	n = read_events(quiet, e, DRM_NNP_EVENTS_MAX + 1, 0);
	ASSERT_EQ(DRM_NNP_EVENTS_MAX, n);
	EXPECT_EQ((uint32_t)(total - n), e[0].lost);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(same_event(&all[total - n + i], &e[i]))
			TH_LOG("event %d of the newest: type %x, want %x", i,
			       e[i].base.type, all[total - n + i].base.type);
		if (i)
			EXPECT_EQ(0, e[i].lost);
	}
	EXPECT_EQ(0, read_events(quiet, e, 1, 0));
	/* The newest RESET kept is the last reset. */
	for (i = n - 1; i >= 0 && e[i].base.type != DRM_NNP_EVENT_RESET; i--)
		;
	ASSERT_LE(0, i);
	EXPECT_EQ(resets, e[i].count);
	close(quiet);
}

/* What a thread waiting on a handle's events saw of its resets. */
struct taker {
	nnp_device_t *dev;
	atomic_bool *done;	/* set once every reset is over */
	uint32_t counts[64];	/* the RESETs' numbers, in the order taken */
	int n;
	uint32_t lost;
};

/*
 * Takes events until the resets are over and none comes for 500 ms: a
 * slow reset only makes it wait longer.
 */
static void *take_events(void *arg)
{
	struct taker *t = arg;
	struct nnp_device_event ev = NNP_DEVICE_EVENT_INIT;

	for (;;) {
		bool over = atomic_load(t->done);

		if (nnp_device_next_event(t->dev, &ev, 500) != NNP_SUCCESS) {
			if (over)
				break;
			continue;
		}
		t->lost += ev.lost;
		if (ev.kind == NNP_DEVICE_EVENT_RESET && t->n < 64)
			t->counts[t->n++] = ev.reset_count;
	}
	return NULL;
}

TEST_F_TIMEOUT(ev, two_threads_one_handle, 120)
{
	atomic_bool done = false;
	struct taker t[2] = {
		{ .dev = self->d.dev[0], .done = &done },
		{ .dev = self->d.dev[0], .done = &done },
	};
	bool seen[11] = { false };
	uint32_t first = 0;
	const char *reason;
	pthread_t th[2];
	int i, k;

	ASSERT_EQ(0, nnp_device_get_resets(self->d.dev[0], &first, &reason));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, take_events, &t[i]));
	for (i = 0; i < 10; i++)
		sysfs_reset(0);
	atomic_store(&done, true);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	EXPECT_EQ(10, t[0].n + t[1].n);
	EXPECT_EQ(0, t[0].lost + t[1].lost);
	for (i = 0; i < 2; i++)
		for (k = 0; k < t[i].n; k++) {
			uint32_t r = t[i].counts[k] - first;

			ASSERT_TRUE(r >= 1 && r <= 10) TH_LOG("reset %u", t[i].counts[k]);
			EXPECT_FALSE(seen[r]) TH_LOG("reset %u taken twice", t[i].counts[k]);
			seen[r] = true;
		}
}

TEST_HARNESS_MAIN
