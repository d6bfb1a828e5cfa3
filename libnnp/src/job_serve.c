// SPDX-License-Identifier: MIT
/*
 * The job's root once every rank is in (job_msg.h): it keeps each rank's
 * connection and the listening socket, and answers a client that holds
 * the job's secret with every rank's state, asked of them all at once.
 * One client at a time, each given NNP_JOB_OPEN_MS to say who it is, so
 * a stranger holds the view, never the job, that long. It ends when the
 * last rank's connection closes, or when a new rendezvous of this
 * process at the same address takes the socket over: an address serves
 * the newest job's view.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot_io.h"
#include "job_msg.h"
#include "job_serve.h"
#include "log.h"
#include "netif.h"

#define NNP_JOB_OPEN_MS		1000	/* a client's open and query */
#define SEND_MS			500	/* an ask, a view */

struct served_rank {
	int fd;			/* -1: gone */
	const struct nnp_boot_session *s;
	char addr[NNP_SOCKADDR_TEXT];
	uint32_t chip;		/* as it joined */
	uint64_t n;		/* the last ask sent */
	struct nnp_job_state st;	/* its answer to it */
	bool answered;
};

/*
 * A root serving a view, registered by its address so that a new
 * rendezvous at it can ask for its socket: it gives it up at its next
 * turn through its loop, woken through @wake.
 */
struct listener {
	struct listener *next;
	const char *where;
	int fd;
	int wake[2];
	bool asked, given, taken;
};

static pthread_mutex_t listeners_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t listeners_cond = PTHREAD_COND_INITIALIZER;
static struct listener *listeners;

struct served {
	struct listener *l;
	const char *where;
	const uint8_t *secret;
	uint64_t epoch;
	uint32_t nranks, live;
	struct served_rank *r;
};

static void rank_gone(struct served *v, uint32_t i)
{
	close(v->r[i].fd);
	v->r[i].fd = -1;
	v->live--;
	nnp_log(NNP_LOG_INFO, "job at %s: rank %u left (%u connected)", v->where, i,
		v->live);
}

/*
 * A rank's connection is readable: its state, answering the ask in
 * flight or one that came too late, or its end. A message that is no
 * sealed state of an ask of ours, or none, ends it.
 */
static void rank_readable(struct served *v, uint32_t i)
{
	struct served_rank *r = &v->r[i];
	struct nnp_job_state st;

	if (nnp_boot_recv(r->fd, &st, sizeof(st), nnp_now_ms() + SEND_MS) ||
	    !nnp_job_state_sealed(r->s, &st) || !st.n || st.n > r->n) {
		rank_gone(v, i);
		return;
	}
	if (st.n == r->n) {
		r->st = st;
		r->answered = true;
	}
}

/* Ask every rank connected where it stands, and wait NNP_JOB_ASK_MS at most. */
static void ask_all(struct served *v, struct pollfd *p)
{
	int64_t deadline = nnp_now_ms() + NNP_JOB_ASK_MS;
	uint32_t i;

	for (i = 0; i < v->nranks; i++) {
		struct served_rank *r = &v->r[i];
		struct nnp_job_ask a = { .n = ++r->n };

		r->answered = false;
		if (r->fd < 0)
			continue;
		nnp_job_seal_ask(r->s, &a);
		if (nnp_boot_send(r->fd, &a, sizeof(a), nnp_now_ms() + SEND_MS))
			rank_gone(v, i);
	}
	for (;;) {
		int64_t left = deadline - nnp_now_ms();
		uint32_t waiting = 0;

		for (i = 0; i < v->nranks; i++) {
			const struct served_rank *r = &v->r[i];

			p[i] = (struct pollfd){
				.fd = r->answered ? -1 : r->fd, .events = POLLIN,
			};
			waiting += p[i].fd >= 0;
		}
		if (!waiting || left <= 0)
			return;
		if (poll(p, v->nranks, (int)left) < 0 && errno != EINTR)
			return;
		for (i = 0; i < v->nranks; i++)
			if (p[i].fd >= 0 && p[i].revents)
				rank_readable(v, i);
	}
}

/* The view of every rank, after an ask_all(). */
static void fill_table(const struct served *v, struct nnp_job_entry *t)
{
	uint32_t i;

	for (i = 0; i < v->nranks; i++) {
		const struct served_rank *r = &v->r[i];

		t[i] = (struct nnp_job_entry){
			.rank = i, .chip = r->chip,
			.heard = r->answered ? NNP_JOB_ANSWERED :
				 r->fd >= 0 ? NNP_JOB_SILENT : NNP_JOB_GONE,
		};
		memcpy(t[i].addr, r->addr, sizeof(t[i].addr));
		if (r->answered)
			t[i].state = r->st;
	}
}

/*
 * Serve the client on @fd: its open and query within NNP_JOB_OPEN_MS,
 * proven; then the view, sealed for it. A stranger is dropped unanswered.
 */
static void serve_client(struct served *v, int fd, struct pollfd *p,
			 struct nnp_job_entry *table)
{
	int64_t deadline = nnp_now_ms() + NNP_JOB_OPEN_MS;
	struct nnp_boot_session s = { .secret = v->secret };
	struct nnp_job_view view = { .nranks = v->nranks, .epoch = v->epoch };
	struct nnp_boot_open o;
	struct nnp_boot_proof pr;
	struct nnp_job_query q;

	if (nnp_boot_recv(fd, &o, sizeof(o), deadline) ||
	    o.version != NNP_BOOT_VERSION || o.kind != NNP_BOOT_VIEW ||
	    nnp_random_fill(s.root_nonce, sizeof(s.root_nonce)))
		return;
	memcpy(s.rank_nonce, o.nonce, sizeof(s.rank_nonce));
	memcpy(pr.nonce, s.root_nonce, sizeof(pr.nonce));
	nnp_boot_prove_root(&s, pr.mac);
	if (nnp_boot_send(fd, &pr, sizeof(pr), deadline) ||
	    nnp_boot_recv(fd, &q, sizeof(q), deadline) ||
	    !nnp_job_query_sealed(&s, &q))
		return;
	ask_all(v, p);
	fill_table(v, table);
	nnp_job_seal_view(&s, &view, table);
	deadline = nnp_now_ms() + SEND_MS;
	if (!nnp_boot_send(fd, &view, sizeof(view), deadline))
		nnp_boot_send(fd, table, v->nranks * (uint32_t)sizeof(*table),
			      deadline);
}

/* Whether the socket was asked for: then it is given, and serving ends. */
static bool give_up_asked(struct listener *l)
{
	char b;

	while (read(l->wake[0], &b, 1) > 0)
		;
	pthread_mutex_lock(&listeners_lock);
	if (l->asked) {
		l->given = true;
		pthread_cond_broadcast(&listeners_cond);
	}
	pthread_mutex_unlock(&listeners_lock);
	return l->given;
}

static void serve_loop(struct served *v, struct pollfd *p,
		       struct nnp_job_entry *table)
{
	while (v->live) {
		uint32_t i;
		int fd;

		p[0] = (struct pollfd){ .fd = v->l->fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = v->l->wake[0], .events = POLLIN };
		for (i = 0; i < v->nranks; i++)
			p[i + 2] = (struct pollfd){ .fd = v->r[i].fd, .events = POLLIN };
		if (poll(p, v->nranks + 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[1].revents && give_up_asked(v->l))
			return;
		for (i = 0; i < v->nranks; i++)
			if (p[i + 2].fd >= 0 && p[i + 2].revents)
				rank_readable(v, i);
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(v->l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve_client(v, fd, p, table);
		close(fd);
	}
}

/*
 * Serving ends: the socket goes to a new rendezvous that asked for it
 * meanwhile, or is closed; @l is unlisted and freed once nobody reads it.
 */
static void listener_end(struct listener *l)
{
	struct listener **pp;

	pthread_mutex_lock(&listeners_lock);
	if (l->asked) {
		l->given = true;
		pthread_cond_broadcast(&listeners_cond);
		while (!l->taken)
			pthread_cond_wait(&listeners_cond, &listeners_lock);
	} else {
		for (pp = &listeners; *pp != l; pp = &(*pp)->next)
			;
		*pp = l->next;
		close(l->fd);
	}
	pthread_mutex_unlock(&listeners_lock);
	close(l->wake[0]);
	close(l->wake[1]);
	free(l);
}

int nnp_job_serve_take(const union nnp_sockaddr *addr)
{
	char where[NNP_SOCKADDR_TEXT];
	struct listener **pp, *l;
	int fd = -1;

	nnp_sockaddr_text(addr, where);
	pthread_mutex_lock(&listeners_lock);
	for (pp = &listeners; *pp && strcmp((*pp)->where, where); pp = &(*pp)->next)
		;
	l = *pp;
	if (l && !l->asked) {
		l->asked = true;
		if (write(l->wake[1], "", 1) < 0)
			nnp_log(NNP_LOG_WARN, "job at %s: cannot wake its view", where);
		while (!l->given)
			pthread_cond_wait(&listeners_cond, &listeners_lock);
		*pp = l->next;
		fd = l->fd;
		l->taken = true;
		pthread_cond_broadcast(&listeners_cond);
		nnp_log(NNP_LOG_INFO, "job at %s: a new rendezvous takes over its address",
			where);
	}
	pthread_mutex_unlock(&listeners_lock);
	return fd;
}

/* Listed under @where with @fd; NULL if there is no memory or pipe. */
static struct listener *listener_new(int fd, const char *where)
{
	struct listener *l = calloc(1, sizeof(*l));

	if (!l || pipe2(l->wake, O_CLOEXEC | O_NONBLOCK)) {
		free(l);
		return NULL;
	}
	l->fd = fd;
	l->where = where;
	pthread_mutex_lock(&listeners_lock);
	l->next = listeners;
	listeners = l;
	pthread_mutex_unlock(&listeners_lock);
	return l;
}

void nnp_job_serve(int listen_fd, const char *where, const uint8_t *secret,
		   uint64_t epoch, struct nnp_boot_roster *ranks)
{
	struct served v = {
		.where = where, .secret = secret, .epoch = epoch,
		.nranks = ranks->nranks,
	};
	struct nnp_job_entry *table = calloc(ranks->nranks, sizeof(*table));
	struct pollfd *p = calloc(ranks->nranks + 2, sizeof(*p));
	uint32_t i;

	v.r = calloc(ranks->nranks, sizeof(*v.r));
	v.l = v.r && table && p ? listener_new(listen_fd, where) : NULL;
	for (i = 0; i < ranks->nranks; i++) {
		union nnp_sockaddr a;
		socklen_t len = sizeof(a);

		if (!v.l) {
			close(ranks->m[i].fd);
			continue;
		}
		v.r[i].fd = ranks->m[i].fd;
		v.r[i].s = &ranks->m[i].s;
		v.r[i].chip = ranks->m[i].info.chip;
		if (!getpeername(v.r[i].fd, &a.sa, &len))
			nnp_sockaddr_text(&a, v.r[i].addr);
		v.live++;
	}
	if (v.l) {
		nnp_log(NNP_LOG_INFO, "job at %s: serving its view while a rank is connected",
			where);
		serve_loop(&v, p, table);
		listener_end(v.l);
	} else {
		close(listen_fd);
	}
	for (i = 0; v.r && i < v.nranks; i++)
		if (v.r[i].fd >= 0)
			close(v.r[i].fd);
	free(v.r);
	free(table);
	free(p);
}
