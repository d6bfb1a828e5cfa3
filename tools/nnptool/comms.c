// SPDX-License-Identifier: MIT
/*
 * nnptool comms: every communicator on this machine's devices, for a job
 * that hangs: whose it is, rank of how many, the collective it is in and
 * whom that waits for (nnp_device_get_comms()). Collectives are numbered
 * alike on every rank, so the rank whose CALLS is behind the others' is
 * the one they wait for. A user sees their own processes' communicators;
 * root sees everyone's. Names and commands are another user's text: they
 * reach the terminal escaped.
 */
#include <inttypes.h>
#include <string.h>

#include "json_out.h"
#include "nnptool.h"
#include "text_out.h"

/* "allreduce f32 sum x1024", "send 4096 bytes to rank 3", or "-". */
static void op_text(const struct nnp_comm_state *s, char *buf, size_t len)
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

/* "rank 1 on port 1 for 2.5 s", "port 0 for 1.0 s", or "-". */
static void wait_text(const struct nnp_comm_state *s, char *buf, size_t len)
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

static void print_json(struct json_object *arr, int dev,
		       const struct nnp_comm_state *s)
{
	struct json_object *o = jo_obj(arr, NULL);
	char epoch[24];

	jo_int(o, "dev", dev);
	jo_int(o, "comm", s->comm_id);
	jo_u64(o, "pid", s->pid);
	jo_u64(o, "uid", s->uid);
	jo_str(o, "task", s->task);
	jo_str(o, "name", s->name);
	jo_u64(o, "rank", s->rank);
	jo_u64(o, "nranks", s->nranks);
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

static void print_row(int dev, const struct nnp_comm_state *s)
{
	char task[sizeof(s->task) * 4], name[sizeof(s->name) * 4];
	char rank[24], calls[24] = "-", op[96], wait[64];

	text_for_terminal(s->task, task, sizeof(task));
	text_for_terminal(s->name[0] ? s->name : "-", name, sizeof(name));
	snprintf(rank, sizeof(rank), "%" PRIu32 "/%" PRIu32, s->rank, s->nranks);
	if (s->known)
		snprintf(calls, sizeof(calls), "%" PRIu32 "/%" PRIu32,
			 s->calls_done, s->calls);
	op_text(s, op, sizeof(op));
	wait_text(s, wait, sizeof(wait));
	printf("%-3d %7" PRIu32 " %-15s %4d %-16s %-7s %-9s %-12s %-34s %s\n", dev,
	       s->pid, task, s->comm_id, name, rank, calls,
	       s->failed ? s->failed : (s->known ? "ok" : "?"), op, wait);
}

int cmd_comms(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct nnptool_cmd cmd = { .name = "comms", .args = "[--json]" };
	unsigned int hidden_all = 0;
	struct each_device e;
	nnp_result_t r;
	int d;

	d = nnptool_each_device_start(&cmd, o, argc, argv, "comms", &e);
	if (d >= 0)
		return d;
	if (!e.doc) {
		printf("%-3s %7s %-15s %4s %-16s %-7s %-9s %-12s %-34s %s\n", "DEV",
		       "PID", "TASK", "COMM", "NAME", "RANK", "DONE/CALLS",
		       "STATUS", "IN FLIGHT", "WAITS FOR");
	}
	for (d = 0; d < e.count; d++) {
		struct nnp_comm_state s[64] = { { .size = sizeof(s[0]) } };
		unsigned int n = 0, hidden = 0, i;
		nnp_device_t *dev;

		r = nnp_device_open(d, &dev);
		if (r == NNP_SUCCESS) {
			r = nnp_device_get_comms(dev, s, 64, &n, &hidden);
			nnp_device_close(dev);
		}
		if (r != NNP_SUCCESS) {
			if (e.doc)
				jo_line(stdout, e.doc);
			return nnptool_fail("comms", r);
		}
		for (i = 0; i < n && i < 64; i++) {
			if (e.arr)
				print_json(e.arr, d, &s[i]);
			else
				print_row(d, &s[i]);
		}
		hidden_all += hidden;
	}
	if (e.doc) {
		jo_u64(e.doc, "hidden", hidden_all);
		jo_line(stdout, e.doc);
	} else if (hidden_all) {
		printf("%u communicators of other users not shown (root sees them)\n",
		       hidden_all);
	}
	return NNPTOOL_EXIT_OK;
}
