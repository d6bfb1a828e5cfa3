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

#include "comm_text.h"
#include "json_out.h"
#include "nnptool.h"
#include "text_out.h"

static void print_json(struct json_object *arr, int dev,
		       const struct nnp_comm_state *s)
{
	struct json_object *o = jo_obj(arr, NULL);

	jo_int(o, "dev", dev);
	jo_int(o, "comm", s->comm_id);
	jo_u64(o, "pid", s->pid);
	jo_u64(o, "uid", s->uid);
	jo_str(o, "task", s->task);
	jo_str(o, "name", s->name);
	if (s->rank == NNP_COMM_STATE_NONE)
		jo_null(o, "rank");	/* a transit: no rank of its own */
	else
		jo_u64(o, "rank", s->rank);
	jo_u64(o, "nranks", s->nranks);
	comm_state_json(o, s);
}

static void print_row(int dev, const struct nnp_comm_state *s)
{
	char task[sizeof(s->task) * 4], name[sizeof(s->name) * 4];
	char rank[24], calls[24] = "-", op[96], wait[64];

	text_for_terminal(s->task, task, sizeof(task));
	text_for_terminal(s->name[0] ? s->name : "-", name, sizeof(name));
	if (s->rank == NNP_COMM_STATE_NONE)
		snprintf(rank, sizeof(rank), "-/%" PRIu32, s->nranks);
	else
		snprintf(rank, sizeof(rank), "%" PRIu32 "/%" PRIu32, s->rank, s->nranks);
	if (s->known)
		snprintf(calls, sizeof(calls), "%" PRIu32 "/%" PRIu32,
			 s->calls_done, s->calls);
	comm_op_text(s, op, sizeof(op));
	comm_wait_text(s, wait, sizeof(wait));
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
