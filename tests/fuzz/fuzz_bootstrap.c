// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what libnnp's rendezvous reads from the network, with
 * the code that reads it (libnnp/src/boot_msg.c) and what a rank then does
 * with its peers' chips and ports (nnp_comm_plan()).
 *
 * Input: a 2-byte length R, then R bytes of what connections send the
 * root: records of a connection number (0 to CONNS - 1), a length and
 * that many bytes, taken part by part as the root's recv() does (never
 * past the secret, the header or the hello). A connection the root drops
 * or answers starts afresh. Every hello must be admitted exactly when the
 * rules allow (1 to NNP_BOOTSTRAP_MAX_RANKS ranks, a rank inside the
 * job, the first hello's job size, a rank not taken), its rank's chip and
 * ports kept byte for byte, and no connection without the job's secret
 * may get so far. The rest is a rank's side: the job size it asked for
 * (1 + byte % MAX_TABLE), then what its root answers (a reply message,
 * and on success the table message), each length checked before the
 * bytes are read, the table planned into a ring. The rank's result must
 * be one nnp_comm_init_rank() documents.
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
static unsigned long long hellos, admitted, strangers, replies;

static void report(void)
{
	fprintf(stderr, "fuzz_bootstrap: %llu hellos (%llu admitted), %llu strangers dropped, %llu replies read\n",
		hellos, admitted, strangers, replies);
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
	bool secret_seen[CONNS];	/* the connection sent the whole secret */
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
		     const struct nnp_boot_hello *h)
{
	bool may = may_join(j, h);
	nnp_result_t st;

	hellos++;
	if (!j->secret_seen[k])
		fail("a hello read from a connection that never sent the secret");
	st = nnp_boot_admit(r, h, (int)(100 + hellos % 1000));
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
	    memcmp(&r->m[h->rank].info, &h->info, sizeof(h->info)))
		fail("the roster does not hold what was admitted");
}

/* Feed @len bytes to connection @k as the root's conn_read() would. */
static void conn_feed(struct nnp_boot_roster *r, struct job *j, struct nnp_boot_in *in,
		      size_t *got, unsigned int k, const uint8_t *p, size_t len)
{
	while (len) {
		size_t end = nnp_boot_in_part_end(*got);
		size_t n = len < end - *got ? len : end - *got;

		memcpy((uint8_t *)in + *got, p, n);
		*got += n;
		p += n;
		len -= n;
		if (*got < end)
			return;
		switch (nnp_boot_in_check(in, *got, job_secret)) {
		case NNP_BOOT_IN_MORE:
			j->secret_seen[k] = true;
			continue;
		case NNP_BOOT_IN_STRANGER:
			if (!memcmp(in->secret, job_secret, sizeof(job_secret)))
				fail("the job's secret taken for a stranger's");
			strangers++;
			break;
		case NNP_BOOT_IN_MALFORMED:
			if (in->hdr.magic == NNP_BOOT_MSG_MAGIC &&
			    in->hdr.len == sizeof(in->hello))
				fail("a good hello header refused");
			break;
		case NNP_BOOT_IN_HELLO:
			hello_in(r, j, k, &in->hello);
			break;
		}
		/* Dropped or answered: the next bytes are a new connection's. */
		*got = 0;
		j->secret_seen[k] = false;
		return;
	}
}

static void root_side(struct fuzz_stream *s)
{
	static struct nnp_boot_in in[CONNS];
	size_t got[CONNS] = { 0 };
	static struct job j;
	struct nnp_boot_roster r = { 0 };
	const uint8_t *rec, *bytes;
	uint32_t missing;

	memset(&j, 0, sizeof(j));
	while ((rec = fuzz_take(s, 2))) {
		size_t n = rec[1] < s->left ? rec[1] : s->left;
		unsigned int k = rec[0] % CONNS;

		bytes = fuzz_take(s, n);
		conn_feed(&r, &j, &in[k], &got[k], k, bytes, n);
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

static void rank_side(struct fuzz_stream *s)
{
	const uint8_t *b = fuzz_take(s, 1);
	struct nnp_rank_info *all;
	struct nnp_boot_reply r;
	struct nnp_ring ring;
	nnp_result_t res;
	uint32_t n;

	if (!b)
		return;
	n = 1 + b[0] % MAX_TABLE;
	res = recv_msg(s, &r, sizeof(r));
	if (res == NNP_SUCCESS) {
		replies++;
		res = nnp_boot_reply_status(&r);
	}
	if (!documented(res))
		fail("a root's reply gives a result nnp_comm_init_rank() does not document");
	if (res != NNP_SUCCESS)
		return;
	/* Exactly the table's size, so that a read past it is ASan's. */
	all = malloc(n * sizeof(*all));
	if (!all)
		return;
	res = recv_msg(s, all, n * (uint32_t)sizeof(*all));
	if (res == NNP_SUCCESS) {
		res = nnp_comm_plan(all, n, r.epoch, &ring);
		if (res == NNP_SUCCESS)
			nnp_ring_free(&ring);
	}
	free(all);
	if (!documented(res))
		fail("a table of peers gives a result nnp_comm_init_rank() does not document");
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
