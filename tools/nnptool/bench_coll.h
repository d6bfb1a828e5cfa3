/* SPDX-License-Identifier: MIT */
/*
 * nnptool bench's collectives: the command line (bench_args.c), and what
 * the runner (bench_coll.c) hands its report (bench_report.c), which
 * writes nccl-tests' columns, one JSON object (--json) or CSV rows (--csv).
 */
#ifndef NNPTOOL_BENCH_COLL_H
#define NNPTOOL_BENCH_COLL_H

#include <stdbool.h>
#include <stddef.h>

#include <nnp/nnp.h>

#include "json_out.h"
#include "nnptool.h"

enum coll {
	ALLREDUCE, BROADCAST, ALLGATHER, REDUCE_SCATTER, REDUCE, ALLTOALL,
	GATHER, SCATTER, SENDRECV, NCOLL
};

enum bench_form { FORM_TEXT, FORM_JSON, FORM_CSV };

/* What one run of the benchmark measures, as its command line says. */
struct bench_setup {
	enum coll coll;
	int n;			/* ranks: one per device */
	int peer;		/* sendrecv: rank 0's receiver */
	const char *type_arg, *op_arg;	/* -d and -o as given: "all" too */
	unsigned long root;	/* -r; -1: the collective has none */
	unsigned long agg;	/* -m: collectives in one group */
	unsigned long iters, trials;
	size_t bytes;		/* --bytes: fewer iterations above it */
	bool check;		/* -c 1 (the default): every result checked */
};

/*
 * A timing: the host's and the devices' modeled seconds per collective;
 * of several trials, the best one's, and the worst trial's host seconds.
 */
struct timing {
	double wall, model, worst;
};

/* One row: a size of one type, reduction and root. */
struct bench_row {
	size_t bytes, count;
	nnp_dtype_t type;
	nnp_redop_t op;
	bool reduces;		/* else the reduction is "none" */
};

struct report {
	enum bench_form form;
	const struct bench_setup *setup;
	struct json_object *doc;	/* --json: the document; else NULL */
	struct json_object *rows, *row;	/* its rows, and the one being made */
	const struct bench_row *cur;	/* the row being reported */
	double bus;			/* busbw / algbw */
	double busbw_sum;		/* of every pass reported */
	unsigned int passes;
};

static inline bool coll_reduces(enum coll c)
{
	return c == ALLREDUCE || c == REDUCE_SCATTER || c == REDUCE;
}

static inline bool coll_has_root(enum coll c)
{
	return c == BROADCAST || c == REDUCE || c == GATHER || c == SCATTER;
}

/* The command line's sizes and choices, before they are checked. */
struct bench_args {
	size_t min, max;
	unsigned long step;
	int type, op;		/* -1: all of them */
	const char *op_arg, *root_arg, *peer_arg;	/* NULL: not given */
	unsigned long root, peer;
	bool csv;
};

#define BENCH_ARGS_USAGE "[--json|--csv] [-b|--min SIZE] [-e|--max SIZE] " \
	"[-f|--step F] [-n|--iters N] [-m|--agg N] [-d|--type TYPE] [-o|--op OP] " \
	"[-r|--root ROOT] [-c|--check 0|1] [--bytes SIZE] [--trials T] [--peer P]"
#define BENCH_ARGS_SHORT "b:e:f:n:m:d:o:r:c:"
extern const struct option bench_long_opts[];

/*
 * The command line into @b and @z (bench_args.c): -1 to go on, or the
 * exit code (help, a bad command line, said on stderr).
 */
int bench_parse(const struct nnptool_cmd *cmd, struct nnptool_opts *o,
		int argc, char **argv, struct bench_setup *b, struct bench_args *z);

extern const char *const coll_name[NCOLL];
const char *dtype_name(nnp_dtype_t t);
const char *redop_name(nnp_redop_t op);

void report_head(struct report *rp);
void report_row_start(struct report *rp, const struct bench_row *row);
/* One pass of a row: out of place, then in place. */
void report_pass(struct report *rp, bool in_place, struct timing t, long wrong);
void report_row_end(const struct report *rp);
/* The verdict and the average bus bandwidth; or after a failure, what failed. */
void report_end(const struct report *rp, long wrong, nnp_result_t r);

#endif /* NNPTOOL_BENCH_COLL_H */
