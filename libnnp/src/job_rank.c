// SPDX-License-Identifier: MIT
/*
 * A rank's side of the job's view (job_rank.h): a thread blocked on the
 * rank's connection to the root, answering each ask sealed for the
 * session of the rank's join, newer than the last, with what the rank
 * says of itself. Its end shuts the connection down, which wakes the
 * thread, and waits for it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot_io.h"
#include "job_rank.h"
#include "log.h"

#define ANSWER_MS	1000

struct nnp_job_link {
	int fd;
	struct nnp_boot_session s;
	uint8_t secret[NNP_BOOTSTRAP_SECRET_BYTES];
	uint64_t last;		/* the newest ask answered */
	nnp_job_fill_fn fill;
	struct nnp_job_source src;
	pthread_t thread;
	bool started;
};

struct nnp_job_link *nnp_job_link_new(int fd, const struct nnp_boot_session *s)
{
	struct nnp_job_link *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->fd = fd;
	memcpy(l->secret, s->secret, sizeof(l->secret));
	l->s = *s;
	l->s.secret = l->secret;
	return l;
}

static void *link_main(void *arg)
{
	struct nnp_job_link *l = arg;
	struct nnp_job_ask a;

	/* Waits as long as the job runs: its end shuts the socket down. */
	while (!nnp_boot_recv(l->fd, &a, sizeof(a), INT64_MAX)) {
		struct nnp_job_state st;

		if (!nnp_job_ask_sealed(&l->s, &a) || a.n <= l->last) {
			nnp_log(NNP_LOG_WARN, "job view: an ask not of the job's root; no more answers");
			break;
		}
		l->last = a.n;
		memset(&st, 0, sizeof(st));
		l->fill(&l->src, &st);
		st.n = a.n;
		nnp_job_seal_state(&l->s, &st);
		if (nnp_boot_send(l->fd, &st, sizeof(st), nnp_now_ms() + ANSWER_MS))
			break;
	}
	return NULL;
}

nnp_result_t nnp_job_link_start(struct nnp_job_link *l, nnp_job_fill_fn fill,
				const struct nnp_job_source *src)
{
	l->fill = fill;
	l->src = *src;
	if (pthread_create(&l->thread, NULL, link_main, l))
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no thread to answer the job's view");
	l->started = true;
	return NNP_SUCCESS;
}

void nnp_job_link_end(struct nnp_job_link *l)
{
	if (!l)
		return;
	shutdown(l->fd, SHUT_RDWR);
	if (l->started)
		pthread_join(l->thread, NULL);
	close(l->fd);
	memset(l->secret, 0, sizeof(l->secret));
	free(l);
}
