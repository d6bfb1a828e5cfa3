// SPDX-License-Identifier: MIT
/*
 * nnptool job: where every rank of a job stands, asked of rank 0 at the
 * job's rendezvous address with the job's secret (nnp_job_view()), and
 * which ranks the others wait for: a rank behind on the collectives
 * started, one that failed, one gone or silent. The secret comes from
 * NNP_COMM_SECRET or a file, never the command line (ps shows that).
 * What the ranks say is another machine's text: it reaches the terminal
 * escaped.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "comm_text.h"
#include "json_out.h"
#include "nnptool.h"
#include "text_out.h"

/* The job's secret from the first line of @path into @buf. */
static int read_secret(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f) {
		perror(path);
		return NNPTOOL_EXIT_ERROR;
	}
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	buf[ok ? strcspn(buf, "\r\n") : 0] = '\0';
	return NNPTOOL_EXIT_OK;
}

static const char *heard_name(nnp_job_rank_heard_t h)
{
	return h == NNP_JOB_RANK_ANSWERED ? "answered" :
	       h == NNP_JOB_RANK_SILENT ? "silent" : "gone";
}

/* The most collectives any rank that answered has started. */
static uint32_t most_calls(const struct nnp_job_rank *r, unsigned int n)
{
	uint32_t most = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (r[i].has_comm && r[i].comm.known && r[i].comm.calls > most)
			most = r[i].comm.calls;
	return most;
}

/*
 * How much a reason for the others to wait weighs, most first: a rank
 * gone or mute is the cause of the failures it brings on the others
 * (a peer's abort, its leave), so the verdict names it first.
 */
enum wait_cause {
	CAUSE_NONE,
	CAUSE_BEHIND,
	CAUSE_FAILED_AFTER,	/* failed for another rank's failure or leave */
	CAUSE_FAILED,
	CAUSE_GONE,
};

/*
 * Why the others may wait for rank @r (@most: the most collectives a rank
 * started) into @buf, and how much it weighs; CAUSE_NONE if they need not.
 */
static enum wait_cause waited_for(const struct nnp_job_rank *r, uint32_t most,
				  char *buf, size_t len)
{
	const struct nnp_comm_state *c = &r->comm;

	if (r->heard == NNP_JOB_RANK_GONE)
		snprintf(buf, len, "gone: exited, killed, or destroyed its communicator");
	else if (r->heard == NNP_JOB_RANK_SILENT)
		snprintf(buf, len, "connected, but no answer in 2 s");
	else if (!r->has_comm)
		snprintf(buf, len, "its communicator is no longer on its device");
	else if (c->failed)
		snprintf(buf, len, "failed: %s", c->failed);
	else if (c->known && c->calls < most)
		snprintf(buf, len, "behind: started %" PRIu32 " collectives, the others %" PRIu32,
			 c->calls, most);
	else
		return CAUSE_NONE;
	if (r->heard != NNP_JOB_RANK_ANSWERED || !r->has_comm)
		return CAUSE_GONE;
	if (c->failed)
		return strcmp(c->failed, "aborted") && strcmp(c->failed, "peer_left") ?
		       CAUSE_FAILED : CAUSE_FAILED_AFTER;
	return CAUSE_BEHIND;
}

static void print_rank(const struct nnp_job_rank *r, uint32_t most)
{
	char host[sizeof(r->host) * 4], addr[sizeof(r->addr) * 4];
	char calls[24] = "-", op[96] = "-", wait[64] = "-", why[96];
	const struct nnp_comm_state *c = &r->comm;
	bool known = r->has_comm && c->known;

	text_for_terminal(r->host[0] ? r->host : "-", host, sizeof(host));
	text_for_terminal(r->addr[0] ? r->addr : "-", addr, sizeof(addr));
	if (known) {
		snprintf(calls, sizeof(calls), "%" PRIu32 "/%" PRIu32, c->calls_done,
			 c->calls);
		comm_op_text(c, op, sizeof(op));
		comm_wait_text(c, wait, sizeof(wait));
	}
	if (!waited_for(r, most, why, sizeof(why)))
		snprintf(why, sizeof(why), "%s", known ? "ok" : "?");
	printf("%-5" PRIu32 " %-16s %-22s %5" PRIu32 " %8" PRIu32 " %-10s %-34s %-28s %s\n",
	       r->rank, host, addr, r->chip, r->pid, calls, op, wait, why);
}

static void json_rank(struct json_object *arr, const struct nnp_job_rank *r,
		      uint32_t most)
{
	struct json_object *o = jo_obj(arr, NULL);
	char why[96];

	jo_u64(o, "rank", r->rank);
	jo_str(o, "heard", heard_name(r->heard));
	jo_str(o, "addr", r->addr);
	jo_u64(o, "chip", r->chip);
	if (r->heard == NNP_JOB_RANK_ANSWERED) {
		jo_str(o, "host", r->host);
		jo_u64(o, "pid", r->pid);
	}
	jo_str_or_null(o, "waited_for", waited_for(r, most, why, sizeof(why)) ?
			why : NULL);
	if (r->has_comm)
		comm_state_json(jo_obj(o, "comm"), &r->comm);
	else
		jo_null(o, "comm");
}

/*
 * The ranks the others wait for, one line each, the weightiest causes
 * first; "no rank" if none.
 */
static void print_verdict(const struct nnp_job_rank *r, unsigned int n,
			  uint32_t most)
{
	char host[sizeof(r->host) * 4], why[96];
	unsigned int i, named = 0;
	int cause;

	for (cause = CAUSE_GONE; cause > CAUSE_NONE; cause--) {
		for (i = 0; i < n; i++) {
			if (waited_for(&r[i], most, why, sizeof(why)) !=
			    (enum wait_cause)cause)
				continue;
			text_for_terminal(r[i].host[0] ? r[i].host : r[i].addr,
					  host, sizeof(host));
			printf("%s rank %" PRIu32 " (%s%s, chip %" PRIu32 "): %s\n",
			       named++ ? "          " : "waits for:", r[i].rank,
			       r[i].host[0] ? "" : "at ", host, r[i].chip, why);
		}
	}
	if (!named)
		printf("waits for: no rank: every rank has started %" PRIu32 " collectives\n",
		       most);
}

/*
 * The view of the job at @where into a new *@r (free() it) of *@n ranks:
 * room for most jobs first, and asked again for a larger one.
 */
static nnp_result_t view(const char *where, const char *secret,
			 struct nnp_job_rank **r, unsigned int *n, uint64_t *epoch)
{
	unsigned int room = 1024;
	nnp_result_t res;

	for (;;) {
		*r = calloc(room, sizeof(**r));
		if (!*r)
			return NNP_ERROR_OUT_OF_MEMORY;
		(*r)[0].size = sizeof(**r);
		res = nnp_job_view(where, secret, *r, room, n, epoch);
		if (res != NNP_SUCCESS || *n <= room)
			break;
		free(*r);
		room = *n;
	}
	if (res != NNP_SUCCESS) {
		free(*r);
		*r = NULL;
	}
	return res;
}

int cmd_job(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "secret-file", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nnptool_cmd cmd = {
		"job", "[--json] [--secret-file FILE] [HOST:PORT]", NULL, longopts, 0, 1,
	};
	struct nnp_job_rank *r = NULL;
	const char *where, *secret = getenv("NNP_COMM_SECRET");
	char file_secret[128];
	unsigned int n = 0, i;
	uint64_t epoch = 0;
	nnp_result_t res;
	uint32_t most;
	int c;

	while ((c = nnptool_getopt(&cmd, o, argc, argv)) == 's') {
		if (read_secret(optarg, file_secret, sizeof(file_secret)))
			return NNPTOOL_EXIT_ERROR;
		secret = file_secret;
	}
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	where = optind < argc ? argv[optind] : getenv("NNP_COMM_ID");
	if (!where) {
		fprintf(stderr, "nnptool: job: give the job's HOST:PORT, or set NNP_COMM_ID as its ranks had it\n");
		return NNPTOOL_EXIT_USAGE;
	}
	if (!secret) {
		fprintf(stderr, "nnptool: job: set NNP_COMM_SECRET, or give --secret-file, as the job's ranks had it\n");
		return NNPTOOL_EXIT_USAGE;
	}
	res = view(where, secret, &r, &n, &epoch);
	memset(file_secret, 0, sizeof(file_secret));
	if (res == NNP_ERROR_OUT_OF_MEMORY)
		return nnptool_fail("job", res);
	if (res != NNP_SUCCESS) {
		/* Its own words: no device is involved. */
		fprintf(stderr, "nnptool: job: %s\n", nnp_get_last_error());
		return NNPTOOL_EXIT_ERROR;
	}
	most = most_calls(r, n);
	if (o->json) {
		struct json_object *doc = jo_obj(NULL, NULL), *arr;
		char e[24];

		snprintf(e, sizeof(e), "%#" PRIx64, epoch);
		jo_str(doc, "address", where);
		jo_str(doc, "epoch", e);
		jo_u64(doc, "nranks", n);
		jo_u64(doc, "most_calls", most);
		arr = jo_arr(doc, "ranks");
		for (i = 0; i < n; i++)
			json_rank(arr, &r[i], most);
		jo_line(stdout, doc);
	} else {
		printf("job at %s, epoch %#" PRIx64 ", %u ranks\n", where, epoch, n);
		printf("%-5s %-16s %-22s %5s %8s %-10s %-34s %-28s %s\n", "RANK", "HOST",
		       "ADDRESS", "CHIP", "PID", "DONE/CALLS", "IN FLIGHT",
		       "WAITS FOR", "STATUS");
		for (i = 0; i < n; i++)
			print_rank(&r[i], most);
		print_verdict(r, n, most);
	}
	free(r);
	return NNPTOOL_EXIT_OK;
}
