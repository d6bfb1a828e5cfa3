// SPDX-License-Identifier: MIT
/*
 * nnptool bench's collective report: nccl-tests' columns and summary, or
 * with --json one JSON object on one line, or with --csv a header and a
 * line per pass. The average bus bandwidth is nccl-tests': the mean busbw
 * of every pass, out of place and in place, of every row.
 */
#include <stdio.h>

#include "bench_coll.h"

const char *const coll_name[NCOLL] = {
	"allreduce", "broadcast", "allgather", "reduce_scatter", "reduce",
	"alltoall", "gather", "scatter", "sendrecv",
};

/* nccl-tests' names of the types and reductions. */
const char *dtype_name(nnp_dtype_t t)
{
	static const char *const names[] = {
		[NNP_FLOAT32] = "float", [NNP_FLOAT16] = "half",
		[NNP_BFLOAT16] = "bfloat16", [NNP_INT32] = "int32",
		[NNP_FLOAT64] = "double", [NNP_INT64] = "int64",
	};

	return (size_t)t < sizeof(names) / sizeof(names[0]) ? names[t] : NULL;
}

const char *redop_name(nnp_redop_t op)
{
	static const char *const names[] = {
		[NNP_SUM] = "sum", [NNP_PROD] = "prod", [NNP_MIN] = "min",
		[NNP_MAX] = "max", [NNP_AVG] = "avg",
	};

	return (size_t)op < sizeof(names) / sizeof(names[0]) ? names[op] : NULL;
}

/* The row's reduction as the columns name it. */
static const char *row_redop(const struct bench_row *row)
{
	return row->reduces ? redop_name(row->op) : "none";
}

/* nccl-tests' root column: -1 where the collective has none. */
static long row_root(const struct report *rp)
{
	return rp->setup->root == (unsigned long)-1 ? -1 : (long)rp->setup->root;
}

static void head_json(struct report *rp)
{
	const struct bench_setup *b = rp->setup;

	jo_str(rp->doc, "benchmark", coll_name[b->coll]);
	jo_int(rp->doc, "devices", b->n);
	if (b->coll == SENDRECV)
		jo_int(rp->doc, "peer", b->peer);
	jo_str(rp->doc, "type", b->type_arg);
	jo_str(rp->doc, "redop", b->op_arg);
	jo_int(rp->doc, "root", row_root(rp));
	jo_u64(rp->doc, "agg", b->agg);
	jo_u64(rp->doc, "iters", b->iters);
	jo_u64(rp->doc, "trials", b->trials);
	jo_u64(rp->doc, "bytes", b->bytes);
	jo_bool(rp->doc, "check", b->check);
	rp->rows = jo_arr(rp->doc, "rows");
}

void report_head(struct report *rp)
{
	const struct bench_setup *b = rp->setup;

	if (b->coll != BROADCAST && b->coll != REDUCE && b->coll != SENDRECV)
		rp->bus = (double)(b->n - 1) / b->n * (b->coll == ALLREDUCE ? 2 : 1);
	else
		rp->bus = 1;
	if (rp->form == FORM_JSON) {
		head_json(rp);
		return;
	}
	if (rp->form == FORM_CSV) {
		printf("benchmark,devices,peer,type,redop,root,agg,size,count,in_place,"
		       "time_us,algbw_gbps,busbw_gbps,wrong,model_time_us,"
		       "model_busbw_gbps,worst_time_us\n");
		return;
	}
	printf("# nnptool bench %s: %d devices, best of %lu x %lu iterations",
	       coll_name[b->coll], b->n, b->trials, b->iters);
	if (b->coll == SENDRECV)
		printf(", rank 0 to rank %d", b->peer);
	if (b->agg > 1)
		printf(", %lu in a group (times per collective)", b->agg);
	if (b->bytes)
		printf(" (fewer above %zu B: about %zu B per size)",
		       b->bytes / b->iters, b->bytes);
	printf("\n");
	printf("#%84s%52s\n", "out-of-place", "in-place");
	printf("# %10s %12s %8s %6s %6s  %8s %7s %7s %7s %8s %8s  %8s %7s %7s %7s %8s %8s\n",
	       "size", "count", "type", "redop", "root", "time", "algbw", "busbw",
	       "#wrong", "model", "mbusbw", "time", "algbw", "busbw", "#wrong",
	       "model", "mbusbw");
	printf("# %10s %12s %8s %6s %6s  %8s %7s %7s %7s %8s %8s  %8s %7s %7s %7s %8s %8s\n",
	       "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
	       "(GB/s)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)");
}

void report_row_start(struct report *rp, const struct bench_row *row)
{
	rp->cur = row;
	if (rp->form == FORM_JSON) {
		rp->row = jo_obj(rp->rows, NULL);
		jo_u64(rp->row, "size", row->bytes);
		jo_u64(rp->row, "count", row->count);
		jo_str(rp->row, "type", dtype_name(row->type));
		jo_str(rp->row, "redop", row_redop(row));
		jo_int(rp->row, "root", row_root(rp));
	} else if (rp->form == FORM_TEXT) {
		printf("  %10zu %12zu %8s %6s %6ld", row->bytes, row->count,
		       dtype_name(row->type), row_redop(row), row_root(rp));
	}
}

static void pass_json(struct report *rp, bool in_place, struct timing t,
		      long wrong, double algbw, double model)
{
	struct json_object *p = jo_obj(rp->row, in_place ? "in_place" : "out_of_place");

	jo_fixed(p, "time_us", t.wall * 1e6, 3);
	jo_fixed(p, "algbw_gbps", algbw, 6);
	jo_fixed(p, "busbw_gbps", algbw * rp->bus, 6);
	if (rp->setup->check)
		jo_int(p, "wrong", wrong);
	else
		jo_null(p, "wrong");
	jo_fixed(p, "model_time_us", t.model * 1e6, 3);
	jo_fixed(p, "model_busbw_gbps", model * rp->bus, 6);
	jo_fixed(p, "worst_time_us", t.worst * 1e6, 3);
}

/* @wrong as text, or @unchecked where -c 0 checked nothing. */
static const char *wrong_text(const struct report *rp, long wrong,
			      const char *unchecked)
{
	static char text[24];

	if (!rp->setup->check)
		return unchecked;
	snprintf(text, sizeof(text), "%ld", wrong);
	return text;
}

void report_pass(struct report *rp, bool in_place, struct timing t, long wrong)
{
	const struct bench_setup *b = rp->setup;
	const struct bench_row *row = rp->cur;
	double algbw = row->bytes / t.wall / 1e9, model = row->bytes / t.model / 1e9;

	rp->busbw_sum += algbw * rp->bus;
	rp->passes++;
	if (rp->form == FORM_JSON)
		pass_json(rp, in_place, t, wrong, algbw, model);
	else if (rp->form == FORM_CSV)
		printf("%s,%d,%d,%s,%s,%ld,%lu,%zu,%zu,%d,%.3f,%.6f,%.6f,%s,%.3f,%.6f,%.3f\n",
		       coll_name[b->coll], b->n, b->coll == SENDRECV ? b->peer : -1,
		       dtype_name(row->type), row_redop(row), row_root(rp), b->agg,
		       row->bytes, row->count, in_place, t.wall * 1e6, algbw,
		       algbw * rp->bus, wrong_text(rp, wrong, ""), t.model * 1e6,
		       model * rp->bus, t.worst * 1e6);
	else
		printf("  %8.1f %7.3f %7.3f %7s %8.1f %8.3f", t.wall * 1e6, algbw,
		       algbw * rp->bus, wrong_text(rp, wrong, "N/A"), t.model * 1e6,
		       model * rp->bus);
}

void report_row_end(const struct report *rp)
{
	if (rp->form == FORM_TEXT)
		printf("\n");
	fflush(stdout);
}

void report_end(const struct report *rp, long wrong, nnp_result_t r)
{
	double avg = rp->passes ? rp->busbw_sum / rp->passes : 0;

	if (rp->form == FORM_TEXT) {
		/* As nccl-tests prints them, its empty verdict's space included. */
		if (r == NNP_SUCCESS)
			printf("# Out of bounds values : %s %s\n"
			       "# Avg bus bandwidth    : %g \n#\n",
			       wrong_text(rp, wrong, "N/A"),
			       !rp->setup->check ? "(-c 0)" : wrong ? "FAILED" : "OK",
			       avg);
		return;
	}
	if (rp->form == FORM_CSV)
		return;
	if (r != NNP_SUCCESS) {
		jo_str(rp->doc, "error", nnp_strerror(r));
	} else {
		if (rp->setup->check) {
			jo_int(rp->doc, "wrong", wrong);
			jo_bool(rp->doc, "passed", !wrong);
		} else {
			jo_null(rp->doc, "wrong");
			jo_null(rp->doc, "passed");
		}
		jo_fixed(rp->doc, "avg_busbw_gbps", avg, 6);
	}
	jo_line(stdout, rp->doc);
}
