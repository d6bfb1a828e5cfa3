// SPDX-License-Identifier: MIT
/*
 * libnnp job rendezvous over TCP. The root takes one connection per
 * rank, each opening with a nonce, to which the root answers with its own
 * and its proof that it holds the job's secret; then comes a hello (nranks,
 * rank, chip and ports) sealed with the secret. It serves many connections
 * at once, each with its own short deadline; once all ranks are in it
 * answers each with the status, the epoch and the whole table, sealed for
 * that connection, and is done. The job is bounded by NNP_COMM_TIMEOUT_S.
 * The wire format is in bootstrap.h.
 * Both ends are the same build of libnnp on machines of one byte order.
 */
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "boot_io.h"
#include "boot_msg.h"
#include "job_rank.h"
#include "job_serve.h"
#include "bootstrap.h"
#include "internal.h"
#include "log.h"

/*
 * An id begins with "nnpjob" and its format's version, one digit: an id
 * of another version (another libnnp made it) is refused by that name.
 */
#define ID_FAMILY	"nnpjob"
#define ID_MAGIC	ID_FAMILY "2"
#define DEFAULT_TIMEOUT_S 60
#define ANSWER_MS	5000	/* to send a rank the outcome */

/* NNP_COMM_TIMEOUT_S, in seconds. */
static long timeout_s(void)
{
	const char *s = getenv("NNP_COMM_TIMEOUT_S");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 ? v : DEFAULT_TIMEOUT_S;
}

static int64_t deadline_ms(void)
{
	return nnp_now_ms() + timeout_s() * 1000;
}

/* ---- root ---- */

/*
 * The root serves every connection at once: a stranger that connects and
 * says nothing holds one slot until its own short deadline, not the job.
 */
#define MAX_PENDING	64	/* connections not yet admitted as ranks */
#define HELLO_MS	5000	/* for a connection to say who it is */
/*
 * Past the job's deadline, for the hellos already under way: a rank that
 * connected just before it hears the timeout, not a closed connection.
 */
#define LATE_HELLO_MS	1000

/* A connection whose hello is still coming in. */
struct conn {
	int fd;
	int64_t deadline;
	size_t got;		/* bytes of in */
	struct nnp_boot_in in;
	struct nnp_boot_session s;	/* once the open is in */
};

struct root {
	int listen_fd;
	char where[NNP_SOCKADDR_TEXT];	/* its address, for messages */
	uint8_t secret[NNP_BOOTSTRAP_SECRET_BYTES];
	uint64_t epoch;		/* for every rank, never 0 */
	int64_t deadline;
	bool view;		/* serve the job's view once it is whole */
	struct conn pending[MAX_PENDING];
	unsigned int npending;
	struct nnp_boot_roster ranks;
};

/* Answer the rank on @fd in session @s: @table (@n entries) on success. */
static void answer(int fd, const struct nnp_boot_session *s, nnp_result_t status,
		   uint64_t epoch, uint32_t missing,
		   const struct nnp_rank_info *table, uint32_t n, int64_t deadline)
{
	struct nnp_boot_reply r = {
		.status = status, .missing = missing, .epoch = epoch,
	};

	if (status)
		n = 0;
	nnp_boot_seal_reply(s, &r, table, n);
	if (nnp_boot_send(fd, &r, sizeof(r), deadline) == NNP_SUCCESS && !status)
		nnp_boot_send(fd, table, n * (uint32_t)sizeof(*table), deadline);
}

/* Tell a rank of the job why it cannot join, and let it go. */
static void refuse(struct conn *c, nnp_result_t status)
{
	answer(c->fd, &c->s, status, 0, 0, NULL, 0, nnp_now_ms() + ANSWER_MS);
	close(c->fd);
}

/*
 * Answer @c's open with the root's nonce and its proof of the secret
 * over both nonces; false if that cannot be done (@c's fd is then left).
 */
static bool prove_root(struct root *rt, struct conn *c)
{
	struct nnp_boot_proof p;

	c->s.secret = rt->secret;
	memcpy(c->s.rank_nonce, c->in.open.nonce, sizeof(c->s.rank_nonce));
	if (nnp_random_fill(c->s.root_nonce, sizeof(c->s.root_nonce)) != NNP_SUCCESS)
		return false;
	memcpy(p.nonce, c->s.root_nonce, sizeof(p.nonce));
	nnp_boot_prove_root(&c->s, p.mac);
	return nnp_boot_send(c->fd, &p, sizeof(p), c->deadline) == NNP_SUCCESS;
}

/* Make @c's sender its rank, or answer why not; @c's fd is taken either way. */
static void admit(struct root *rt, struct conn *c)
{
	const struct nnp_boot_hello *h = &c->in.hello;
	const struct nnp_boot_roster *r = &rt->ranks;
	nnp_result_t st = nnp_boot_admit(&rt->ranks, h, c->fd, &c->s);

	if (st != NNP_SUCCESS) {
		nnp_log(NNP_LOG_WARN, "rendezvous at %s: refused rank %u of %u (job of %u ranks%s)",
			rt->where, h->rank, h->nranks, r->nranks,
			r->m && h->rank < r->nranks && r->m[h->rank].fd >= 0 ?
			", rank taken" : "");
		refuse(c, st);
		return;
	}
	nnp_log(NNP_LOG_TRACE, "rendezvous at %s: rank %u of %u in", rt->where,
		h->rank, h->nranks);
}

/*
 * Read what @c has sent so far, never past the part being read, and check
 * each part once it is whole; false once @c is done with (fd taken).
 */
static bool conn_read(struct root *rt, struct conn *c)
{
	size_t end = nnp_boot_in_part_end(c->got);
	ssize_t n = recv(c->fd, (uint8_t *)&c->in + c->got, end - c->got, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		close(c->fd);
		return false;
	}
	c->got += (size_t)n;
	if (c->got < end)
		return true;
	switch (nnp_boot_in_check(&c->in, c->got, &c->s)) {
	case NNP_BOOT_IN_MORE:
		return true;
	case NNP_BOOT_IN_OPENED:
		if (prove_root(rt, c))
			return true;
		close(c->fd);
		return false;
	case NNP_BOOT_IN_STRANGER:
		close(c->fd);	/* dropped unheard and unanswered */
		return false;
	case NNP_BOOT_IN_MALFORMED:
		refuse(c, NNP_ERROR_INVALID_ARGUMENT);
		return false;
	default:
		admit(rt, c);
		return false;
	}
}

static void forget(struct root *rt, unsigned int i)
{
	rt->pending[i] = rt->pending[--rt->npending];
}

/* Take a new connection; when all slots are busy the oldest one goes. */
static void take_conn(struct root *rt)
{
	int fd = accept4(rt->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int64_t deadline = nnp_now_ms() + HELLO_MS;
	unsigned int i, oldest = 0;

	if (fd < 0)
		return;
	if (rt->npending == MAX_PENDING) {
		for (i = 1; i < rt->npending; i++)
			if (rt->pending[i].deadline < rt->pending[oldest].deadline)
				oldest = i;
		close(rt->pending[oldest].fd);
		forget(rt, oldest);
	}
	rt->pending[rt->npending++] = (struct conn){
		.fd = fd,
		.deadline = deadline < rt->deadline + LATE_HELLO_MS ? deadline :
			    rt->deadline + LATE_HELLO_MS,
	};
}

/*
 * Serve hellos until every rank is in, or the job's deadline passes and
 * the hellos under way then are in or given up.
 */
static void gather(struct root *rt)
{
	struct pollfd p[MAX_PENDING + 1];

	while (!rt->ranks.m || rt->ranks.joined < rt->ranks.nranks) {
		int64_t now = nnp_now_ms(), next = rt->deadline;
		bool late = now >= rt->deadline;
		unsigned int i;
		int wait;

		if (late && !rt->npending)
			return;
		if (late)
			next = rt->deadline + LATE_HELLO_MS;
		/* No new connection once the deadline is past. */
		p[0] = (struct pollfd){ .fd = rt->listen_fd,
					.events = late ? 0 : POLLIN };
		for (i = 0; i < rt->npending; i++) {
			p[i + 1] = (struct pollfd){ .fd = rt->pending[i].fd, .events = POLLIN };
			if (rt->pending[i].deadline < next)
				next = rt->pending[i].deadline;
		}
		wait = next - now > 1000 ? 1000 : next > now ? (int)(next - now) : 0;
		if (poll(p, rt->npending + 1, wait) < 0 && errno != EINTR)
			return;
		now = nnp_now_ms();
		/* Backwards: forget() moves the last entry, already seen, here. */
		for (i = rt->npending; i-- > 0;) {
			struct conn *c = &rt->pending[i];

			if (p[i + 1].revents && !conn_read(rt, c)) {
				forget(rt, i);
			} else if (now >= c->deadline) {
				close(c->fd);
				forget(rt, i);
			}
		}
		if (p[0].revents & POLLIN)
			take_conn(rt);
	}
}

static void *root_main(void *arg)
{
	struct root *rt = arg;
	struct nnp_boot_roster *r = &rt->ranks;
	struct nnp_rank_info *table = NULL;
	uint32_t i, missing = 0;

	gather(rt);
	if (r->m)
		missing = nnp_boot_first_missing(r);
	if (r->m && missing < r->nranks)
		nnp_log(NNP_LOG_WARN, "rendezvous at %s: %u of %u ranks in after %ld s, rank %u never joined",
			rt->where, r->joined, r->nranks, timeout_s(), missing);
	else if (r->m)
		nnp_log(NNP_LOG_INFO, "rendezvous at %s: all %u ranks in, epoch %#llx",
			rt->where, r->nranks, (unsigned long long)rt->epoch);
	while (rt->npending)
		close(rt->pending[--rt->npending].fd);
	if (r->m && r->joined == r->nranks)
		table = calloc(r->nranks, sizeof(*table));
	for (i = 0; table && i < r->nranks; i++)
		table[i] = r->m[i].info;
	/*
	 * Everyone learns the outcome, even past the deadline: ranks still
	 * waiting see a timeout.
	 */
	for (i = 0; r->m && i < r->nranks; i++) {
		if (r->m[i].fd < 0)
			continue;
		answer(r->m[i].fd, &r->m[i].s, table ? NNP_SUCCESS : NNP_ERROR_TIMEOUT,
		       rt->epoch, missing, table, r->nranks, nnp_now_ms() + ANSWER_MS);
		if (!table || !rt->view)
			close(r->m[i].fd);
	}
	/* A whole job: its view, with the socket and the ranks' connections. */
	if (table && rt->view) {
		nnp_job_serve(rt->listen_fd, rt->where, rt->secret, rt->epoch, r);
		rt->listen_fd = -1;
	}
	free(table);
	free(r->m);
	if (rt->listen_fd >= 0)
		close(rt->listen_fd);
	free(rt);
	return NULL;
}

/* A random nonzero epoch: it names the job's communicators on the links. */
static nnp_result_t new_epoch(uint64_t *epoch)
{
	nnp_result_t res;

	do {
		res = nnp_random_fill(epoch, sizeof(*epoch));
	} while (res == NNP_SUCCESS && !*epoch);
	return res;
}

/* A socket listening on @a; -1 with errno set. */
static int listen_at(const union nnp_sockaddr *a)
{
	int fd = socket(a->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, &a->sa, nnp_sockaddr_len(a)) || listen(fd, 128)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/*
 * Listen on @addr, that address only (port 0: any free one, set here), and
 * serve one job from a detached thread; with @view, its view after, while
 * a rank is connected (job_serve.h).
 */
static nnp_result_t root_start(union nnp_sockaddr *addr, const uint8_t *secret,
			       bool view)
{
	union nnp_sockaddr bound = *addr;
	socklen_t len = nnp_sockaddr_len(&bound);
	struct root *rt = calloc(1, sizeof(*rt));
	pthread_t thread;

	if (!rt)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no memory for a rendezvous");
	if (new_epoch(&rt->epoch) != NNP_SUCCESS) {
		free(rt);
		return nnp_fail(NNP_ERROR_IO, "no random bits for the job's epoch");
	}
	memcpy(rt->secret, secret, sizeof(rt->secret));
	rt->deadline = deadline_ms();
	rt->view = view;
	/* The address may serve an earlier job's view, in this process. */
	rt->listen_fd = view ? nnp_job_serve_take(addr) : -1;
	if (rt->listen_fd < 0)
		rt->listen_fd = listen_at(&bound);
	if (rt->listen_fd < 0 || getsockname(rt->listen_fd, &bound.sa, &len) ||
	    pthread_create(&thread, NULL, root_main, rt)) {
		int err = errno;
		char where[NNP_SOCKADDR_TEXT];

		if (rt->listen_fd >= 0)
			close(rt->listen_fd);
		free(rt);
		return nnp_fail(nnp_result_from_errno(err),
				"cannot serve the rendezvous at %s: %s",
				nnp_sockaddr_text(addr, where), strerror(err));
	}
	nnp_sockaddr_text(&bound, rt->where);
	nnp_log(NNP_LOG_INFO, "serving the rendezvous at %s", rt->where);
	pthread_detach(thread);
	nnp_sockaddr_set_port(addr, nnp_sockaddr_port(&bound));
	return NNP_SUCCESS;
}

/* ---- ids ---- */

/*
 * NNP_COMM_ID's ranks share NNP_COMM_SECRET into @secret: without one
 * anyone who reaches the port could join, so it is required.
 */
static nnp_result_t secret_from_env(uint8_t *secret)
{
	const char *s = getenv("NNP_COMM_SECRET");
	size_t len = s ? strlen(s) : 0;

	if (len < NNP_BOOTSTRAP_MIN_SECRET || len > NNP_BOOTSTRAP_SECRET_BYTES) {
		nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
			 "NNP_COMM_ID needs NNP_COMM_SECRET, the job's secret of %d to %d characters (not %zu), the same on every rank",
			 NNP_BOOTSTRAP_MIN_SECRET, NNP_BOOTSTRAP_SECRET_BYTES, len);
		/* On stderr even without NNP_DEBUG: a setup mistake to fix. */
		fprintf(stderr, "libnnp: %s\n", nnp_get_last_error());
		return NNP_ERROR_INVALID_ARGUMENT;
	}
	memcpy(secret, s, len);
	return NNP_SUCCESS;
}

nnp_result_t nnp_bootstrap_new_id(nnp_unique_id_t *id)
{
	struct nnp_job_id j = { .magic = ID_MAGIC };
	const char *env = getenv("NNP_COMM_ID");
	char where[NNP_SOCKADDR_TEXT];
	nnp_result_t res;

	if (env) {
		/* Every process makes this same id itself. */
		res = secret_from_env(j.secret);
		if (res == NNP_SUCCESS)
			res = nnp_parse_host_port(env, &j.root);
		if (res == NNP_SUCCESS)
			nnp_log(NNP_LOG_INFO, "job rendezvous at NNP_COMM_ID=%s (%s), served by rank 0",
				env, nnp_sockaddr_text(&j.root, where));
		j.rank0_serves = 1;
	} else {
		res = nnp_pick_address(&j.root);
		if (res == NNP_SUCCESS && nnp_random_fill(j.secret, sizeof(j.secret)))
			res = nnp_fail(NNP_ERROR_IO, "no random bits for the job's secret");
		if (res == NNP_SUCCESS)
			res = root_start(&j.root, j.secret, false);
	}
	memset(id, 0, sizeof(*id));
	if (res == NNP_SUCCESS)
		memcpy(id->internal, &j, sizeof(j));
	return res;
}

/* ---- ranks ---- */

/* Between two tries at reaching the root. */
static void nap(void)
{
	nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000 }, NULL);
}

static int connect_root(const union nnp_sockaddr *root, int64_t deadline)
{
	/* The root may not be listening yet: keep trying until the deadline. */
	do {
		int fd = socket(root->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -1;
		if (!connect(fd, &root->sa, nnp_sockaddr_len(root)))
			return fd;
		close(fd);
		nap();
	} while (nnp_now_ms() < deadline && !nnp_boot_cancelled());
	return -1;
}

/*
 * A connection to the root at @root whose open it answered, in *@fd
 * (-1: none by @deadline, NNP_ERROR_TIMEOUT). A connection closed before
 * any answer is no root's word: an earlier job's view still holding the
 * address until this job's rank 0 takes it over (job_serve.h), or a root
 * whose slots were all busy. It is dialled again until the deadline, as
 * a root not listening yet is.
 */
static nnp_result_t open_root(const union nnp_sockaddr *root,
			      struct nnp_boot_session *s, int64_t deadline,
			      int *fd, enum nnp_boot_answer *said)
{
	nnp_result_t res;

	for (;;) {
		*fd = connect_root(root, deadline);
		if (*fd < 0)
			return NNP_ERROR_TIMEOUT;
		res = nnp_boot_open_session(*fd, s, NNP_BOOT_JOIN, deadline, said);
		if (*said != NNP_BOOT_HUNG_UP || nnp_now_ms() >= deadline ||
		    nnp_boot_cancelled())
			return res;
		close(*fd);
		nap();
	}
}

/* Say why rank @rank could not join at @where, the root's answer @r. */
static nnp_result_t join_failed(nnp_result_t res, int rank, int nranks,
				const char *where, const struct nnp_boot_reply *r)
{
	if (r && res == NNP_ERROR_TIMEOUT)
		return nnp_fail(res, "rank %u never joined the rendezvous at %s after %ld s",
				r->missing, where, timeout_s());
	if (r && res == NNP_ERROR_IO)
		return nnp_fail(res, "rank %d: the rendezvous at %s answered status %u, which no root sends",
				rank, where, r->status);
	if (r && res == NNP_ERROR_INVALID_ARGUMENT)
		return nnp_fail(res, "rank %d: the rendezvous at %s refused rank %d of %d (taken already, or not the job's size)",
				rank, where, rank, nranks);
	if (res == NNP_ERROR_TIMEOUT)
		return nnp_fail(res, "rank %d: no answer from the rendezvous at %s within %ld s",
				rank, where, timeout_s());
	if (r)
		return nnp_fail(res, "rank %d: the rendezvous at %s answered: %s",
				rank, where, nnp_strerror(res));
	return nnp_fail(res, "rank %d: the rendezvous at %s dropped the connection (not this job's secret?)",
			rank, where);
}

/*
 * The root's answer in session @s: its reply into @r and, if that claims
 * success, the table of @n ranks into *@all (NULL otherwise). *@sealed
 * says whether the root sealed both for @s; only then do they count.
 */
static nnp_result_t read_answer(int fd, const struct nnp_boot_session *s,
				uint32_t n, int64_t deadline, struct nnp_boot_reply *r,
				struct nnp_rank_info **all, bool *sealed)
{
	nnp_result_t res = nnp_boot_recv(fd, r, sizeof(*r), deadline);

	*all = NULL;
	*sealed = false;
	if (res == NNP_SUCCESS && r->status == NNP_SUCCESS) {
		*all = calloc(n, sizeof(**all));
		res = *all ? nnp_boot_recv(fd, *all, n * (uint32_t)sizeof(**all), deadline) :
			     NNP_ERROR_OUT_OF_MEMORY;
	}
	if (res == NNP_SUCCESS)
		*sealed = nnp_boot_reply_sealed(s, r, *all, *all ? n : 0);
	if (res != NNP_SUCCESS || !*sealed) {
		free(*all);
		*all = NULL;
	}
	return res;
}

/* Say that the root at @where failed to show the job's secret, in @what. */
static nnp_result_t not_the_root(int rank, const char *where, const char *what)
{
	return nnp_fail(NNP_ERROR_IO, "rank %d: the rendezvous at %s %s, so it is not the job's root (another job's secret, or an impostor)",
			rank, where, what);
}

nnp_result_t nnp_bootstrap_join(const nnp_unique_id_t *id, int nranks, int rank,
				const struct nnp_rank_info *mine,
				struct nnp_rank_info **all, uint64_t *epoch,
				struct nnp_job_link **link)
{
	struct nnp_boot_hello h = {
		.nranks = (uint32_t)nranks, .rank = (uint32_t)rank, .info = *mine,
	};
	int64_t deadline = deadline_ms();
	char where[NNP_SOCKADDR_TEXT];
	struct nnp_boot_session s;
	enum nnp_boot_answer said;
	struct nnp_boot_reply r;
	struct nnp_job_id j;
	nnp_result_t res;
	bool sealed;
	char version;
	int fd;

	memcpy(&j, id->internal, sizeof(j));
	version = j.magic[strlen(ID_FAMILY)];
	if (!memcmp(j.magic, ID_FAMILY, strlen(ID_FAMILY)) &&
	    isdigit((unsigned char)version) &&
	    version != ID_MAGIC[strlen(ID_FAMILY)])
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"rank %d: the unique id is of format %c, this libnnp reads format %s: make it with the libnnp the ranks use",
				rank, version, ID_MAGIC + strlen(ID_FAMILY));
	if (memcmp(j.magic, ID_MAGIC, sizeof(j.magic)))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"rank %d: the unique id was not made by nnp_get_unique_id()",
				rank);
	nnp_sockaddr_text(&j.root, where);
	nnp_log(NNP_LOG_INFO, "rank %d of %d joining the rendezvous at %s", rank,
		nranks, where);
	if (j.rank0_serves && rank == 0) {
		union nnp_sockaddr at = j.root;

		res = root_start(&at, j.secret, true);
		if (res != NNP_SUCCESS)
			return res;
	}
	s.secret = j.secret;
	res = open_root(&j.root, &s, deadline, &fd, &said);
	if (fd < 0)
		return nnp_fail(NNP_ERROR_TIMEOUT,
				"rank %d could not reach the rendezvous at %s in %ld s",
				rank, where, timeout_s());
	if (res == NNP_SUCCESS && said != NNP_BOOT_PROVEN) {
		close(fd);
		return not_the_root(rank, where, "did not prove it holds the job's secret");
	}
	if (res == NNP_SUCCESS) {
		nnp_boot_seal_hello(&s, &h);
		res = nnp_boot_send(fd, &h, sizeof(h), deadline);
	}
	/*
	 * The root tells every rank the outcome at its own deadline, which
	 * may be a little after ours: wait for its word (who is missing).
	 */
	if (res == NNP_SUCCESS)
		res = read_answer(fd, &s, (uint32_t)nranks, deadline + ANSWER_MS,
				  &r, all, &sealed);
	if (res == NNP_SUCCESS && sealed && nnp_boot_reply_status(&r) == NNP_SUCCESS &&
	    link && j.rank0_serves) {
		/* Kept, to answer the job's view (job_msg.h). */
		*link = nnp_job_link_new(fd, &s);
		if (!*link)
			close(fd);
	} else {
		close(fd);
	}
	if (res != NNP_SUCCESS)
		return join_failed(res, rank, nranks, where, NULL);
	if (!sealed)
		return not_the_root(rank, where, "answered with a reply not sealed for this rank");
	res = nnp_boot_reply_status(&r);
	if (res != NNP_SUCCESS)
		return join_failed(res, rank, nranks, where, &r);
	*epoch = r.epoch;
	return NNP_SUCCESS;
}
