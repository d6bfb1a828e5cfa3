// SPDX-License-Identifier: MIT
/*
 * libnnp job rendezvous over TCP. The root accepts one connection per
 * rank, each carrying a hello (job nonce, nranks, rank, chip and ports);
 * once all ranks are in it answers each with the status, the epoch and the
 * whole table, and is done. Everything is bounded by NNP_COMM_TIMEOUT_S.
 * Both ends are the same build of libnnp on machines of one byte order.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "internal.h"

#define ID_MAGIC	"nnpjob1"
#define MSG_MAGIC	0x6e6e7062u	/* "nnpb" */
#define DEFAULT_TIMEOUT_S 60
#define ANSWER_MS	5000	/* to send a rank the outcome */

/* The unique id's contents. */
struct job_id {
	char magic[8];
	uint64_t nonce;
	struct sockaddr_in root;
	uint8_t rank0_serves;	/* NNP_COMM_ID: rank 0 starts the root */
};

_Static_assert(sizeof(struct job_id) <= NNP_UNIQUE_ID_BYTES, "id fits");

struct hello {
	uint32_t magic;
	uint32_t nranks;
	uint32_t rank;
	uint32_t rsvd;
	uint64_t nonce;
	struct nnp_rank_info info;
};

struct reply {
	uint32_t magic;
	uint32_t status;	/* nnp_result_t */
	uint32_t epoch;
	uint32_t rsvd;
};

uint64_t nnp_random64(void)
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	return v;
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int64_t deadline_ms(void)
{
	const char *s = getenv("NNP_COMM_TIMEOUT_S");
	long v = s ? strtol(s, NULL, 10) : 0;

	return now_ms() + (v > 0 ? v : DEFAULT_TIMEOUT_S) * 1000;
}

/* Wait for @events on @fd until @deadline: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = deadline - now_ms();
		int n;

		if (left <= 0)
			return 0;
		n = poll(&p, 1, left > 1000 ? 1000 : (int)left);
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
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NNP_ERROR_IO;
		p += n;
		len -= (size_t)n;
	}
	return NNP_SUCCESS;
}

/* ---- root ---- */

struct root {
	int listen_fd;
	uint64_t nonce;
	int64_t deadline;
};

struct member {
	int fd;
	struct nnp_rank_info info;
};

static void answer(int fd, nnp_result_t status, uint32_t epoch,
		   const struct nnp_rank_info *table, uint32_t n, int64_t deadline)
{
	struct reply r = { .magic = MSG_MAGIC, .status = status, .epoch = epoch };

	if (xfer(fd, &r, sizeof(r), true, deadline) == NNP_SUCCESS && !status)
		xfer(fd, (void *)table, n * sizeof(*table), true, deadline);
}

/* Take one rank's hello; a bad one is answered and dropped. */
static void admit(struct root *rt, int fd, struct member **m, uint32_t *nranks,
		  uint32_t *joined)
{
	struct hello h;
	nnp_result_t st = xfer(fd, &h, sizeof(h), false, rt->deadline);

	if (st == NNP_SUCCESS && (h.magic != MSG_MAGIC || h.nonce != rt->nonce))
		st = NNP_ERROR_INVALID_ARGUMENT;
	if (st == NNP_SUCCESS && !*m) {
		*nranks = h.nranks;
		*m = calloc(h.nranks ? h.nranks : 1, sizeof(**m));
		if (!*m)
			st = NNP_ERROR_OUT_OF_MEMORY;
		for (uint32_t i = 0; *m && i < h.nranks; i++)
			(*m)[i].fd = -1;
	}
	if (st == NNP_SUCCESS && (h.nranks != *nranks || h.rank >= *nranks ||
				  (*m)[h.rank].fd >= 0))
		st = NNP_ERROR_INVALID_ARGUMENT;
	if (st != NNP_SUCCESS) {
		answer(fd, st, 0, NULL, 0, rt->deadline);
		close(fd);
		return;
	}
	(*m)[h.rank].fd = fd;
	(*m)[h.rank].info = h.info;
	(*joined)++;
}

static void *root_main(void *arg)
{
	struct root *rt = arg;
	struct member *m = NULL;
	struct nnp_rank_info *table = NULL;
	uint32_t nranks = 0, joined = 0, i, epoch;

	while (!m || joined < nranks) {
		int fd;

		if (wait_fd(rt->listen_fd, POLLIN, rt->deadline) <= 0)
			break;
		fd = accept(rt->listen_fd, NULL, NULL);
		if (fd >= 0)
			admit(rt, fd, &m, &nranks, &joined);
	}
	if (m && joined == nranks)
		table = calloc(nranks, sizeof(*table));
	do {
		epoch = (uint32_t)nnp_random64();
	} while (!epoch);
	for (i = 0; table && i < nranks; i++)
		table[i] = m[i].info;
	/*
	 * Everyone learns the outcome, even past the deadline: ranks still
	 * waiting see a timeout.
	 */
	for (i = 0; m && i < nranks; i++) {
		if (m[i].fd < 0)
			continue;
		answer(m[i].fd, table ? NNP_SUCCESS : NNP_ERROR_TIMEOUT, epoch,
		       table, nranks, now_ms() + ANSWER_MS);
		close(m[i].fd);
	}
	free(table);
	free(m);
	close(rt->listen_fd);
	free(rt);
	return NULL;
}

/* Listen on @addr and serve one job from a detached thread. */
static nnp_result_t root_start(struct sockaddr_in *addr, uint64_t nonce)
{
	struct sockaddr_in bound = { .sin_family = AF_INET, .sin_port = addr->sin_port };
	socklen_t len = sizeof(bound);
	struct root *rt = calloc(1, sizeof(*rt));
	pthread_t thread;
	int one = 1;

	if (!rt)
		return NNP_ERROR_OUT_OF_MEMORY;
	rt->nonce = nonce;
	rt->deadline = deadline_ms();
	bound.sin_addr.s_addr = htonl(INADDR_ANY);
	rt->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (rt->listen_fd < 0 ||
	    setsockopt(rt->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(rt->listen_fd, (struct sockaddr *)&bound, sizeof(bound)) ||
	    listen(rt->listen_fd, 128) ||
	    getsockname(rt->listen_fd, (struct sockaddr *)&bound, &len) ||
	    pthread_create(&thread, NULL, root_main, rt)) {
		int err = errno;

		if (rt->listen_fd >= 0)
			close(rt->listen_fd);
		free(rt);
		return nnp_result_from_errno(err);
	}
	pthread_detach(thread);
	addr->sin_port = bound.sin_port;
	return NNP_SUCCESS;
}

/* ---- ids ---- */

/* An address other machines can reach us at: the first up IPv4 interface. */
static struct in_addr our_address(void)
{
	struct in_addr a = { .s_addr = htonl(INADDR_LOOPBACK) };
	struct ifaddrs *list, *i;

	if (getifaddrs(&list))
		return a;
	for (i = list; i; i = i->ifa_next) {
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK)) {
			a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
			break;
		}
	}
	freeifaddrs(list);
	return a;
}

/* NNP_COMM_ID=host:port, resolved to an IPv4 address. */
static nnp_result_t parse_comm_id(const char *s, struct sockaddr_in *addr)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char host[256];
	const char *colon = strrchr(s, ':');

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host))
		return NNP_ERROR_INVALID_ARGUMENT;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &res))
		return NNP_ERROR_INVALID_ARGUMENT;
	memcpy(addr, res->ai_addr, sizeof(*addr));
	freeaddrinfo(res);
	return addr->sin_port ? NNP_SUCCESS : NNP_ERROR_INVALID_ARGUMENT;
}

nnp_result_t nnp_bootstrap_new_id(nnp_unique_id_t *id)
{
	struct job_id j = { .magic = ID_MAGIC, .root.sin_family = AF_INET };
	const char *env = getenv("NNP_COMM_ID");
	nnp_result_t res;

	if (env) {
		/* Every process makes this same id itself. */
		res = parse_comm_id(env, &j.root);
		j.rank0_serves = 1;
	} else {
		j.nonce = nnp_random64();
		res = root_start(&j.root, j.nonce);
		j.root.sin_addr = our_address();
	}
	memset(id, 0, sizeof(*id));
	if (res == NNP_SUCCESS)
		memcpy(id->internal, &j, sizeof(j));
	return res;
}

/* ---- ranks ---- */

static int connect_root(const struct sockaddr_in *root, int64_t deadline)
{
	struct timespec nap = { 0, 50 * 1000000 };

	/* The root may not be listening yet: keep trying until the deadline. */
	do {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -1;
		if (!connect(fd, (const struct sockaddr *)root, sizeof(*root)))
			return fd;
		close(fd);
		nanosleep(&nap, NULL);
	} while (now_ms() < deadline);
	return -1;
}

nnp_result_t nnp_bootstrap_join(const nnp_unique_id_t *id, int nranks, int rank,
				const struct nnp_rank_info *mine,
				struct nnp_rank_info **all, uint32_t *epoch)
{
	struct hello h = {
		.magic = MSG_MAGIC, .nranks = (uint32_t)nranks,
		.rank = (uint32_t)rank, .info = *mine,
	};
	int64_t deadline = deadline_ms();
	struct reply r;
	struct job_id j;
	nnp_result_t res;
	int fd;

	memcpy(&j, id->internal, sizeof(j));
	if (memcmp(j.magic, ID_MAGIC, sizeof(j.magic)))
		return NNP_ERROR_INVALID_ARGUMENT;
	h.nonce = j.nonce;
	if (j.rank0_serves && rank == 0) {
		struct sockaddr_in at = j.root;

		res = root_start(&at, j.nonce);
		if (res != NNP_SUCCESS)
			return res;
	}
	fd = connect_root(&j.root, deadline);
	if (fd < 0)
		return NNP_ERROR_TIMEOUT;
	res = xfer(fd, &h, sizeof(h), true, deadline);
	if (res == NNP_SUCCESS)
		res = xfer(fd, &r, sizeof(r), false, deadline);
	if (res == NNP_SUCCESS && r.magic != MSG_MAGIC)
		res = NNP_ERROR_IO;
	if (res == NNP_SUCCESS)
		res = (nnp_result_t)r.status;
	if (res == NNP_SUCCESS) {
		*all = calloc((size_t)nranks, sizeof(**all));
		res = *all ? xfer(fd, *all, (size_t)nranks * sizeof(**all), false,
				  deadline) : NNP_ERROR_OUT_OF_MEMORY;
		if (res != NNP_SUCCESS) {
			free(*all);
			*all = NULL;
		}
	}
	if (res == NNP_SUCCESS)
		*epoch = r.epoch;
	close(fd);
	return res;
}
