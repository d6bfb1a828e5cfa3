// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what libnnp's rendezvous reads from the network, with
 * the code that reads it (libnnp/src/boot_msg.c) and what a rank then does
 * with its peers' chips and ports (nnp_comm_plan()).
 *
 * Input: a 2-byte length R, then R bytes of what connections send the
 * root: records of a byte (its low bits a connection number, 0 to
 * CONNS - 1; its top bit: the sender holds the job's secret), a length
 * and that many bytes, taken part by part as the root's recv() does
 * (never past the open, the header or the hello). The root answers a good
 * open with its nonce, here a counter; a hello whose last byte comes in a
 * record of a sender with the secret is sealed for its session before the
 * root checks it, as that rank would have. A connection the root drops or
 * answers starts afresh. Every hello must be admitted exactly when the
 * rules allow (1 to NNP_BOOTSTRAP_MAX_RANKS ranks, a rank inside the
 * job, the first hello's job size, a rank not taken), its rank's chip and
 * ports kept byte for byte, and no connection without a good open and a
 * hello sealed with the job's secret may get so far. The rest is a
 * rank's side: a byte, the job size it asked for (1 + its low 6 bits %
 * MAX_TABLE), whether the root's proof is made with the secret (the top
 * bit) and whether its reply is sealed with it for the session (the next
 * bit: a man in the middle relays the one and forges the other), then
 * what its root answers (a proof message, a reply message, and on success
 * the table message), each length checked before the bytes are read, the
 * table planned into a ring. The rank must take the root's proof and
 * reply exactly when made with the secret, and its result must be one
 * nnp_comm_init_rank() documents.
 *
 * In detail (docs/testing.md has the summary):
 * a connection without a version 2 open and a hello sealed with the job's
 * secret never gets its hello admitted, and a sealed one is never dropped;
 * the rank takes a proof and a reply exactly when made with the secret for
 * its session; a hello is admitted exactly when the rules allow (1 to 65535
 * ranks, a rank inside the job, the first hello's size, a rank not taken)
 * and kept byte for byte; the first missing rank is the first not admitted;
 * every length checked before its bytes are read, the table in a buffer of
 * exactly its size; the rank's result one `nnp_comm_init_rank()` documents
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot_msg.h"
#include "comm.h"
#include "fuzz_stream.h"

#define CONNS		8
#define MAX_TABLE	16
/* The most hellos the root's part of an input (64 KiB at most) holds. */
#define MAX_HELLOS	(0xffff / sizeof(struct nnp_boot_in) + 1)

static const uint8_t job_secret[NNP_BOOTSTRAP_SECRET_BYTES] = "fuzz the rendezvous";
static unsigned long long opens, hellos, admitted, strangers, replies, impostors;

static void report(void)
{
	fprintf(stderr, "fuzz_bootstrap: %llu opens, %llu hellos (%llu admitted), %llu strangers dropped, %llu replies read, %llu impostors left\n",
		opens, hellos, admitted, strangers, replies, impostors);
}

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_bootstrap: %s\n", what);
	abort();
}

/* The job as the rules make it: its size and the ranks taken, in order. */
struct job {
	uint32_t nranks;	/* 0 until a hello is admitted */
	uint32_t taken[MAX_HELLOS];
	uint32_t ntaken;
	bool opened[CONNS];	/* the connection's open was taken */
	uint64_t root_nonces;	/* the root's nonces so far: the next one */
};

static bool is_taken(const struct job *j, uint32_t rank)
{
	uint32_t i;

	for (i = 0; i < j->ntaken; i++)
		if (j->taken[i] == rank)
			return true;
	return false;
}

static bool may_join(const struct job *j, const struct nnp_boot_hello *h)
{
	if (h->nranks < 1 || h->nranks > NNP_BOOTSTRAP_MAX_RANKS || h->rank >= h->nranks)
		return false;
	return !j->nranks || (h->nranks == j->nranks && !is_taken(j, h->rank));
}

static void hello_in(struct nnp_boot_roster *r, struct job *j, unsigned int k,
		     const struct nnp_boot_hello *h, const struct nnp_boot_session *s)
{
	bool may = may_join(j, h);
	nnp_result_t st;

	hellos++;
	if (!j->opened[k])
		fail("a hello read from a connection that never opened");
	st = nnp_boot_admit(r, h, (int)(100 + hellos % 1000), s);
	if (st == NNP_ERROR_OUT_OF_MEMORY)
		return;
	if ((st == NNP_SUCCESS) != may)
		fail(may ? "a hello the rules let in was refused" :
			   "a hello the rules refuse was admitted");
	if (st != NNP_SUCCESS) {
		if (st != NNP_ERROR_INVALID_ARGUMENT)
			fail("a refusal other than INVALID_ARGUMENT");
		return;
	}
	admitted++;
	j->nranks = h->nranks;
	j->taken[j->ntaken++] = h->rank;
	if (r->nranks != j->nranks || r->joined != j->ntaken ||
	    memcmp(&r->m[h->rank].info, &h->info, sizeof(h->info)) ||
	    memcmp(&r->m[h->rank].s, s, sizeof(*s)))
		fail("the roster does not hold what was admitted");
}

/* The root's side of a good open on connection @k: its session. */
static void open_session(struct job *j, const struct nnp_boot_in *in,
			 struct nnp_boot_session *s)
{
	opens++;
	s->secret = job_secret;
	memcpy(s->rank_nonce, in->open.nonce, sizeof(s->rank_nonce));
	memset(s->root_nonce, 0, sizeof(s->root_nonce));
	memcpy(s->root_nonce, &j->root_nonces, sizeof(j->root_nonces));
	j->root_nonces++;
}

/* A connection: what it sent so far, and its session once opened. */
struct conn {
	struct nnp_boot_in in;
	size_t got;
	struct nnp_boot_session s;
};

/*
 * Feed @len bytes to connection @k as the root's conn_read() would; a
 * hello they end is sealed first if @holds_secret.
 */
static void conn_feed(struct nnp_boot_roster *r, struct job *j, struct conn *c,
		      unsigned int k, bool holds_secret, const uint8_t *p, size_t len)
{
	struct nnp_boot_in *in = &c->in;

	while (len) {
		size_t end = nnp_boot_in_part_end(c->got);
		size_t n = len < end - c->got ? len : end - c->got;
		enum nnp_boot_in_step step;

		memcpy((uint8_t *)in + c->got, p, n);
		c->got += n;
		p += n;
		len -= n;
		if (c->got < end)
			return;
		if (c->got == sizeof(*in) && holds_secret)
			nnp_boot_seal_hello(&c->s, &in->hello);
		step = nnp_boot_in_check(in, c->got, &c->s);
		switch (step) {
		case NNP_BOOT_IN_OPENED:
			if (in->open.version != NNP_BOOT_VERSION)
				fail("an open of another version taken");
			open_session(j, in, &c->s);
			j->opened[k] = true;
			continue;
		case NNP_BOOT_IN_MORE:
			continue;
		case NNP_BOOT_IN_STRANGER:
			if (c->got == sizeof(*in) && holds_secret)
				fail("a hello sealed with the job's secret dropped");
			strangers++;
			break;
		case NNP_BOOT_IN_MALFORMED:
			if (in->hdr.magic == NNP_BOOT_MSG_MAGIC &&
			    in->hdr.len == sizeof(in->hello))
				fail("a good hello header refused");
			break;
		case NNP_BOOT_IN_HELLO:
			if (!holds_secret)
				fail("a hello not sealed with the job's secret taken");
			hello_in(r, j, k, &in->hello, &c->s);
			break;
		}
		/* Dropped or answered: the next bytes are a new connection's. */
		c->got = 0;
		j->opened[k] = false;
		return;
	}
}

static void root_side(struct fuzz_stream *s)
{
	static struct conn conns[CONNS];
	static struct job j;
	struct nnp_boot_roster r = { 0 };
	const uint8_t *rec, *bytes;
	uint32_t missing;

	memset(&j, 0, sizeof(j));
	memset(conns, 0, sizeof(conns));
	while ((rec = fuzz_take(s, 2))) {
		size_t n = rec[1] < s->left ? rec[1] : s->left;
		unsigned int k = (rec[0] & 0x7f) % CONNS;

		bytes = fuzz_take(s, n);
		conn_feed(&r, &j, &conns[k], k, rec[0] & 0x80, bytes, n);
	}
	if (!r.m)
		return;
	for (missing = 0; missing < j.nranks && is_taken(&j, missing); missing++)
		;
	if (nnp_boot_first_missing(&r) != missing)
		fail("the first rank missing is not the first one not admitted");
	free(r.m);
}

static bool documented(nnp_result_t res)
{
	return res == NNP_SUCCESS || res == NNP_ERROR_INVALID_ARGUMENT ||
	       res == NNP_ERROR_TIMEOUT || res == NNP_ERROR_IO ||
	       res == NNP_ERROR_OUT_OF_MEMORY || res == NNP_ERROR_NO_PATH;
}

/* A message of exactly @len bytes, as the rank's recv_msg(): copied out. */
static nnp_result_t recv_msg(struct fuzz_stream *s, void *buf, uint32_t len)
{
	struct nnp_boot_hdr h;
	const uint8_t *p = fuzz_take(s, sizeof(h));
	nnp_result_t res;

	if (!p)
		return NNP_ERROR_IO;
	memcpy(&h, p, sizeof(h));
	res = nnp_boot_hdr_check(&h, len);
	if (res != NNP_SUCCESS)
		return res;
	p = fuzz_take(s, len);
	if (!p)
		return NNP_ERROR_IO;
	memcpy(buf, p, len);
	return NNP_SUCCESS;
}

/*
 * The root's proof, as the rank's open_session() takes it; made first as
 * a root with the secret would if @proves. Is it taken?
 */
static bool proof_in(struct fuzz_stream *s, struct nnp_boot_session *ss,
		     bool proves)
{
	struct nnp_boot_proof p;
	bool proven;

	if (recv_msg(s, &p, sizeof(p)) != NNP_SUCCESS)
		return false;
	if (proves) {
		memcpy(ss->root_nonce, p.nonce, sizeof(p.nonce));
		nnp_boot_prove_root(ss, p.mac);
	}
	proven = nnp_boot_root_proven(ss, &p);
	if (proven != proves)
		fail(proves ? "a root with the job's secret not taken" :
			      "a root without the job's secret taken");
	impostors += !proven;
	return proven;
}

static void rank_side(struct fuzz_stream *s)
{
	const uint8_t *b = fuzz_take(s, 1);
	struct nnp_boot_session ss = { .secret = job_secret };
	struct nnp_rank_info *all = NULL;
	struct nnp_boot_reply r;
	struct nnp_ring ring;
	bool seals;
	nnp_result_t res;
	uint32_t n;

	if (!b)
		return;
	n = 1 + (b[0] & 0x3f) % MAX_TABLE;
	seals = b[0] & 0x40;
	memset(ss.rank_nonce, 0x5a, sizeof(ss.rank_nonce));
	if (!proof_in(s, &ss, b[0] & 0x80))
		return;
	res = recv_msg(s, &r, sizeof(r));
	if (res != NNP_SUCCESS)
		return;
	replies++;
	/* Exactly the table's size, so that a read past it is ASan's. */
	if (r.status == NNP_SUCCESS) {
		all = malloc(n * sizeof(*all));
		if (!all || recv_msg(s, all, n * (uint32_t)sizeof(*all)) != NNP_SUCCESS) {
			free(all);
			return;
		}
	}
	if (seals)
		nnp_boot_seal_reply(&ss, &r, all, all ? n : 0);
	if (nnp_boot_reply_sealed(&ss, &r, all, all ? n : 0) != seals)
		fail(seals ? "a reply sealed for the session refused" :
			     "a reply not sealed with the job's secret taken");
	if (!seals) {
		impostors++;
		free(all);
		return;
	}
	res = nnp_boot_reply_status(&r);
	if (res == NNP_SUCCESS) {
		res = nnp_comm_plan(all, n, r.epoch, &ring);
		if (res == NNP_SUCCESS)
			nnp_ring_free(&ring);
	}
	free(all);
	if (!documented(res))
		fail("a root's answer gives a result nnp_comm_init_rank() does not document");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* The ring is printed at INFO: format it too, into nothing. */
	setenv("NNP_DEBUG", "INFO", 1);
	setenv("NNP_DEBUG_FILE", "/dev/null", 1);
	atexit(report);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_stream s = { data, size }, root;
	const uint8_t *len = fuzz_take(&s, 2);
	size_t rlen;

	if (!len)
		return 0;
	rlen = (size_t)(len[0] | len[1] << 8);
	if (rlen > s.left)
		rlen = s.left;
	root = (struct fuzz_stream){ fuzz_take(&s, rlen), rlen };
	root_side(&root);
	rank_side(&s);
	return 0;
}
