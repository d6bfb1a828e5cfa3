// SPDX-License-Identifier: MIT
/*
 * libnnp device events: the driver's struct drm_nnp_event (uapi 1.10),
 * read from the device's file, as struct nnp_device_event.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"
#include "names.h"
#include "nnp_accel.h"

/* The driver's fields into @ev, by kind; false for a kind not known. */
static bool event_from_driver(const struct drm_nnp_event *e,
			      struct nnp_device_event *ev)
{
	const char *why;

	*ev = (struct nnp_device_event){
		.size = sizeof(*ev), .lost = e->lost, .time_ns = e->time_ns,
		.comm_id = -1, .port = e->port,
	};
	switch (e->base.type) {
	case DRM_NNP_EVENT_RESET:
		ev->kind = NNP_DEVICE_EVENT_RESET;
		ev->reset_count = e->count;
		ev->reset_reason = nnp_reset_reason_name(e->reason);
		if (!ev->reset_reason)
			ev->reset_reason = "unknown";
		ev->port = 0;
		return true;
	case DRM_NNP_EVENT_COMM_FAILED:
		why = nnp_status_name(e->reason);
		ev->kind = NNP_DEVICE_EVENT_COMM_FAILED;
		ev->comm_id = (int)e->comm;
		ev->why = why ? why : "error";
		return true;
	case DRM_NNP_EVENT_LINK:
		ev->kind = NNP_DEVICE_EVENT_LINK;
		ev->link_state = e->state;
		return true;
	}
	return false;
}

/*
 * One event of @dev's file, not waiting: 1, 0 if none is there (another
 * thread may have taken the one poll() saw), or -errno.
 */
static int read_one(nnp_device_t *dev, struct drm_nnp_event *e)
{
	ssize_t n = read(dev->fd, e, sizeof(*e));

	if (n == (ssize_t)sizeof(*e))
		return 1;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	return -EPROTO;
}

nnp_result_t nnp_device_next_event(nnp_device_t *dev,
				   struct nnp_device_event *ev, int timeout_ms)
{
	struct pollfd p = { .events = POLLIN };
	struct drm_nnp_event e;
	nnp_result_t res;
	int flags, ret;

	if (!dev || !ev)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_device_next_event: no device or no event");
	res = nnp_size_check(ev->size, sizeof(*ev), sizeof(*ev),
			     "nnp_device_next_event: event");
	if (res != NNP_SUCCESS)
		return res;
	if (dev->driver_minor < 10)
		return nnp_fail(NNP_ERROR_NOT_SUPPORTED,
				"%s: the driver (interface 1.%d) has no events: 1.10 or later",
				dev->path, dev->driver_minor);
	/* A read must never wait: poll() does, for as long as asked. */
	flags = fcntl(dev->fd, F_GETFL);
	if (flags < 0 || (!(flags & O_NONBLOCK) &&
			  fcntl(dev->fd, F_SETFL, flags | O_NONBLOCK)))
		return nnp_fail(nnp_result_from_errno(errno),
				"%s: events: %s", dev->path, strerror(errno));
	p.fd = dev->fd;
	for (;;) {
		ret = read_one(dev, &e);
		if (ret < 0)
			return nnp_fail(nnp_result_from_errno(-ret),
					"%s: reading an event: %s", dev->path,
					strerror(-ret));
		/* A kind this libnnp does not know is passed over. */
		if (ret && event_from_driver(&e, ev))
			return NNP_SUCCESS;
		if (ret)
			continue;
		ret = poll(&p, 1, timeout_ms);
		if (ret < 0 && errno != EINTR)
			return nnp_fail(nnp_result_from_errno(errno),
					"%s: waiting for an event: %s", dev->path,
					strerror(errno));
		if (ret == 0)
			return nnp_fail(NNP_ERROR_TIMEOUT,
					"%s: no event in %d ms", dev->path,
					timeout_ms);
	}
}
