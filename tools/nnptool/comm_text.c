// SPDX-License-Identifier: MIT
/*
 * A communicator's state (struct nnp_comm_state) as nnptool comms and
 * nnptool job print it: the operation in flight, what it waits for, and
 * the JSON fields of both.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "comm_text.h"
#include "json_out.h"

void comm_op_text(const struct nnp_comm_state *s, char *buf, size_t len)
{
	int n;

	if (!s->op) {
		snprintf(buf, len, "-");
		return;
	}
	if (!strcmp(s->op, "send") || !strcmp(s->op, "recv"))
		n = snprintf(buf, len, "%s %" PRIu64 " bytes", s->op, s->count);
	else if (!strcmp(s->op, "group"))
		n = snprintf(buf, len, "group of %" PRIu64, s->count);
	else
		n = snprintf(buf, len, "%s %s%s%s x%" PRIu64, s->op,
			     s->dtype ? s->dtype : "?", s->redop ? " " : "",
			     s->redop ? s->redop : "", s->count);
	if (s->peer != NNP_COMM_STATE_NONE && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " %s %" PRIu32,
			 !strcmp(s->op, "send") || !strcmp(s->op, "recv") ?
			 "peer" : "root", s->peer);
}

void comm_wait_text(const struct nnp_comm_state *s, char *buf, size_t len)
{
	char rank[24] = "";

	if (s->wait_port == NNP_COMM_STATE_NONE) {
		snprintf(buf, len, "-");
		return;
	}
	if (s->wait_rank != NNP_COMM_STATE_NONE)
		snprintf(rank, sizeof(rank), "rank %" PRIu32 " on ", s->wait_rank);
	snprintf(buf, len, "%sport %" PRIu32 " for %.1f s", rank, s->wait_port,
		 s->wait_ns / 1e9);
}

void comm_state_json(struct json_object *o, const struct nnp_comm_state *s)
{
	char epoch[24];

	jo_bool(o, "known", s->known);
	if (!s->known)
		return;
	snprintf(epoch, sizeof(epoch), "%#" PRIx64, s->epoch);
	jo_str(o, "epoch", epoch);
	jo_str_or_null(o, "failed", s->failed);
	jo_u64(o, "calls", s->calls);
	jo_u64(o, "calls_done", s->calls_done);
	jo_u64(o, "messages", s->messages);
	jo_u64(o, "bytes", s->bytes);
	jo_str_or_null(o, "op", s->op);
	jo_str_or_null(o, "dtype", s->dtype);
	jo_str_or_null(o, "redop", s->redop);
	jo_u64(o, "count", s->count);
	if (s->peer == NNP_COMM_STATE_NONE)
		jo_null(o, "peer");
	else
		jo_u64(o, "peer", s->peer);
	if (s->wait_port == NNP_COMM_STATE_NONE) {
		jo_null(o, "wait_port");
	} else {
		jo_u64(o, "wait_port", s->wait_port);
		jo_u64(o, "wait_ns", s->wait_ns);
	}
	if (s->wait_rank == NNP_COMM_STATE_NONE)
		jo_null(o, "wait_rank");
	else
		jo_u64(o, "wait_rank", s->wait_rank);
}
