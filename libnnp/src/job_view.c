// SPDX-License-Identifier: MIT
/*
 * The job's view, as a client asks for it (nnp_job_view(), job_msg.h):
 * rank 0's root proves it holds the job's secret before the client says
 * anything more than a nonce, so a wrong secret or another job's address
 * learns nothing; the view counts only sealed for this query.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot_io.h"
#include "internal.h"
#include "job_msg.h"
#include "log.h"
#include "netif.h"

/* The first release of struct nnp_job_rank (0.9): all of it. */
#define JOB_RANK_SIZE_0_9	sizeof(struct nnp_job_rank)

/* Connect to @a by @deadline: the socket, or -1 with errno set. */
static int connect_by(const union nnp_sockaddr *a, int64_t deadline)
{
	int fd = socket(a->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = 0;

	if (fd < 0)
		return -1;
	if (!connect(fd, &a->sa, nnp_sockaddr_len(a)))
		return fd;
	if (errno == EINPROGRESS) {
		int64_t left = deadline - nnp_now_ms();

		if (poll(&p, 1, left > 0 ? (int)left : 0) != 1)
			err = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
	} else {
		err = errno;
	}
	if (!err)
		return fd;
	close(fd);
	errno = err;
	return -1;
}

/* The secret as the ranks hold it: 16 to 64 characters, zero-padded. */
static nnp_result_t take_secret(const char *secret,
				uint8_t out[NNP_BOOTSTRAP_SECRET_BYTES])
{
	size_t len = secret ? strlen(secret) : 0;

	if (len < NNP_BOOTSTRAP_MIN_SECRET || len > NNP_BOOTSTRAP_SECRET_BYTES)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_job_view: the job's secret is %d to %d characters, as NNP_COMM_SECRET (not %zu)",
				NNP_BOOTSTRAP_MIN_SECRET, NNP_BOOTSTRAP_SECRET_BYTES, len);
	memset(out, 0, NNP_BOOTSTRAP_SECRET_BYTES);
	memcpy(out, secret, len);
	return NNP_SUCCESS;
}

/* Ask the root on @fd for the view: into *@table (free() it) and @v. */
static nnp_result_t ask(int fd, const char *where, struct nnp_boot_session *s,
			struct nnp_job_view *v, struct nnp_job_entry **table)
{
	int64_t deadline = nnp_now_ms() + NNP_JOB_VIEW_MS;
	struct nnp_job_query q;
	enum nnp_boot_answer said;
	nnp_result_t res;

	*table = NULL;
	res = nnp_boot_open_session(fd, s, NNP_BOOT_VIEW, deadline, &said);
	if (res == NNP_SUCCESS && said != NNP_BOOT_PROVEN)
		return nnp_fail(NNP_ERROR_IO, "nnp_job_view: the job at %s did not prove it holds this secret: a wrong secret, or another job's address",
				where);
	if (res == NNP_SUCCESS) {
		nnp_job_seal_query(s, &q);
		res = nnp_boot_send(fd, &q, sizeof(q), deadline);
	}
	if (res == NNP_SUCCESS)
		res = nnp_boot_recv(fd, v, sizeof(*v), deadline);
	if (res == NNP_SUCCESS &&
	    (!v->nranks || v->nranks > NNP_BOOTSTRAP_MAX_RANKS || v->zero))
		res = NNP_ERROR_IO;
	if (res == NNP_SUCCESS) {
		*table = calloc(v->nranks, sizeof(**table));
		res = *table ? nnp_boot_recv(fd, *table,
					     v->nranks * (uint32_t)sizeof(**table),
					     deadline) :
			       NNP_ERROR_OUT_OF_MEMORY;
	}
	if (res == NNP_SUCCESS && !nnp_job_view_sealed(s, v, *table))
		return nnp_fail(NNP_ERROR_IO, "nnp_job_view: the job at %s answered with a view not sealed for this query",
				where);
	if (res == NNP_ERROR_TIMEOUT)
		return nnp_fail(res, "nnp_job_view: no view from the job at %s within %d s",
				where, NNP_JOB_VIEW_MS / 1000);
	if (res != NNP_SUCCESS && res != NNP_ERROR_OUT_OF_MEMORY)
		return nnp_fail(res, "nnp_job_view: the job at %s closed the connection or spoke no view: its rendezvous is not over, or it is no nnp job",
				where);
	return res;
}

/* Entry @e as the caller's struct, its size this build's. */
static void rank_of(const struct nnp_job_entry *e, struct nnp_job_rank *r)
{
	*r = (struct nnp_job_rank){
		.size = sizeof(*r), .rank = e->rank, .chip = e->chip,
		.heard = e->heard == NNP_JOB_ANSWERED ? NNP_JOB_RANK_ANSWERED :
			 e->heard == NNP_JOB_SILENT ? NNP_JOB_RANK_SILENT :
						      NNP_JOB_RANK_GONE,
	};
	memcpy(r->addr, e->addr, sizeof(r->addr) - 1);
	if (r->heard != NNP_JOB_RANK_ANSWERED)
		return;
	memcpy(r->host, e->state.host, sizeof(r->host) - 1);
	r->pid = e->state.pid;
	r->has_comm = !!(e->state.flags & NNP_JOB_HAS_COMM);
	if (r->has_comm)
		nnp_comm_state_from_driver(&e->state.comm, &r->comm);
}

nnp_result_t nnp_job_view(const char *where, const char *secret,
			  struct nnp_job_rank *ranks, unsigned int max,
			  unsigned int *nranks, uint64_t *epoch)
{
	uint8_t key[NNP_BOOTSTRAP_SECRET_BYTES];
	struct nnp_boot_session s = { .secret = key };
	struct nnp_job_entry *table = NULL;
	union nnp_sockaddr a;
	struct nnp_job_view v;
	nnp_result_t res;
	size_t entry;
	unsigned int i;
	int fd;

	if (!where || !nranks || (max && !ranks))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_job_view: no address, nranks or ranks");
	entry = max ? ranks[0].size : sizeof(struct nnp_job_rank);
	if (nnp_size_check(entry, JOB_RANK_SIZE_0_9, sizeof(struct nnp_job_rank),
			   "nnp_job_view: ranks[0]"))
		return NNP_ERROR_INVALID_ARGUMENT;
	res = take_secret(secret, key);
	if (res == NNP_SUCCESS)
		res = nnp_parse_host_port(where, &a);
	if (res != NNP_SUCCESS)
		return res;
	fd = connect_by(&a, nnp_now_ms() + NNP_JOB_VIEW_MS);
	if (fd < 0) {
		res = nnp_fail(errno == ETIMEDOUT ? NNP_ERROR_TIMEOUT : NNP_ERROR_IO,
			       "nnp_job_view: cannot reach the job at %s: %s (the job ended, rank 0 went, or no job serves there)",
			       where, strerror(errno));
		memset(key, 0, sizeof(key));
		return res;
	}
	res = ask(fd, where, &s, &v, &table);
	close(fd);
	memset(key, 0, sizeof(key));
	if (res == NNP_SUCCESS) {
		*nranks = v.nranks;
		if (epoch)
			*epoch = v.epoch;
		for (i = 0; i < v.nranks && i < max; i++) {
			struct nnp_job_rank r;

			rank_of(&table[i], &r);
			r.size = entry;
			memcpy((char *)ranks + i * entry, &r, entry);
		}
	}
	free(table);
	return res;
}
