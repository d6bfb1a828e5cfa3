// SPDX-License-Identifier: MIT
/*
 * The rendezvous's sockets and clocks (boot_io.h): framed messages moved
 * whole by a deadline, random bits, and the cancellation of a thread's
 * joins. The job's root, its ranks and the job view's clients share them.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "boot_io.h"
#include "boot_msg.h"

/* Fill @len bytes at @buf from the kernel's random source. */
nnp_result_t nnp_random_fill(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NNP_ERROR_IO;
		p += n;
		len -= (size_t)n;
	}
	return NNP_SUCCESS;
}

uint64_t nnp_random64(void)
{
	uint64_t v;

	if (nnp_random_fill(&v, sizeof(v)) != NNP_SUCCESS)
		v = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	return v;
}

int64_t nnp_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Set by nnp_bootstrap_cancel_on() for this thread's joins. */
static _Thread_local const atomic_bool *cancel;

void nnp_bootstrap_cancel_on(const atomic_bool *flag)
{
	cancel = flag;
}

bool nnp_boot_cancelled(void)
{
	return cancel && atomic_load(cancel);
}

/*
 * Wait for @events on @fd until @deadline: 1 ready, 0 timed out (or the
 * join cancelled, looked at every CANCEL_POLL_MS), -1 error.
 */
#define CANCEL_POLL_MS	50
static int wait_fd(int fd, short events, int64_t deadline)
{
	int most = cancel ? CANCEL_POLL_MS : 1000;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = deadline - nnp_now_ms();
		int n;

		if (left <= 0 || nnp_boot_cancelled())
			return 0;
		n = poll(&p, 1, left > most ? most : (int)left);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

/* Move exactly @len bytes; NNP_ERROR_TIMEOUT or NNP_ERROR_IO otherwise. */
static nnp_result_t xfer(int fd, void *buf, size_t len, bool out, int64_t deadline)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n;
		int w = wait_fd(fd, out ? POLLOUT : POLLIN, deadline);

		if (w <= 0)
			return w ? NNP_ERROR_IO : NNP_ERROR_TIMEOUT;
		n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;	/* the root's sockets do not block */
		if (n <= 0)
			return NNP_ERROR_IO;
		p += n;
		len -= (size_t)n;
	}
	return NNP_SUCCESS;
}

/* Send @len bytes at @buf as one message. */
nnp_result_t nnp_boot_send(int fd, const void *buf, uint32_t len, int64_t deadline)
{
	struct nnp_boot_hdr h = { .magic = NNP_BOOT_MSG_MAGIC, .len = len };
	nnp_result_t res = xfer(fd, &h, sizeof(h), true, deadline);

	return res == NNP_SUCCESS ? xfer(fd, (void *)buf, len, true, deadline) : res;
}

/* Receive a message of exactly @len bytes into @buf; any other is refused. */
nnp_result_t nnp_boot_recv(int fd, void *buf, uint32_t len, int64_t deadline)
{
	struct nnp_boot_hdr h;
	nnp_result_t res = xfer(fd, &h, sizeof(h), false, deadline);

	if (res == NNP_SUCCESS)
		res = nnp_boot_hdr_check(&h, len);
	return res == NNP_SUCCESS ? xfer(fd, buf, len, false, deadline) : res;
}


/* Whether the peer closed @fd by @deadline without sending a byte. */
static bool hung_up(int fd, int64_t deadline)
{
	ssize_t n;
	char b;

	if (wait_fd(fd, POLLIN, deadline) <= 0)
		return false;
	n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno == ECONNRESET);
}

nnp_result_t nnp_boot_open_session(int fd, struct nnp_boot_session *s,
				   uint32_t kind, int64_t deadline,
				   enum nnp_boot_answer *answer)
{
	struct nnp_boot_open o = { .version = NNP_BOOT_VERSION, .kind = kind };
	struct nnp_boot_proof p;
	nnp_result_t res;

	*answer = NNP_BOOT_UNPROVEN;
	if (nnp_random_fill(o.nonce, sizeof(o.nonce)) != NNP_SUCCESS)
		return NNP_ERROR_IO;
	memcpy(s->rank_nonce, o.nonce, sizeof(o.nonce));
	res = nnp_boot_send(fd, &o, sizeof(o), deadline);
	if (res == NNP_SUCCESS && hung_up(fd, deadline)) {
		*answer = NNP_BOOT_HUNG_UP;
		return NNP_ERROR_IO;
	}
	if (res == NNP_SUCCESS)
		res = nnp_boot_recv(fd, &p, sizeof(p), deadline);
	if (res == NNP_SUCCESS && nnp_boot_root_proven(s, &p))
		*answer = NNP_BOOT_PROVEN;
	return res;
}

