// SPDX-License-Identifier: MIT
/* nnp-sim: trace files as the ranks of one job; see trace.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* An operation of one of the files, for sorting by (comm, seq, rank). */
struct entry {
	const struct trace_file *f;
	const struct trace_op *op;
};

static int by_op(const void *a, const void *b)
{
	const struct trace_op *x = ((const struct entry *)a)->op;
	const struct trace_op *y = ((const struct entry *)b)->op;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static bool same_op(const struct trace_op *a, const struct trace_op *b)
{
	bool p2p = (a->kind == TRACE_SEND || a->kind == TRACE_RECV) &&
		   (b->kind == TRACE_SEND || b->kind == TRACE_RECV);

	return a->kind == b->kind || p2p;
}

static int not_one_job(const struct entry *a, const struct entry *b,
		       const char *why)
{
	fprintf(stderr, "nnp-sim: %s:%u and %s:%u are not the ranks of one job: %s (communicator %016llx, seq %llu)\n",
		a->f->path, a->op->line, b->f->path, b->op->line, why,
		(unsigned long long)a->op->comm, (unsigned long long)a->op->seq);
	return -1;
}

/* The file of the lowest rank in the largest communicator. */
static const struct trace_file *lowest(const struct trace_file *files,
				       unsigned int nfiles, uint32_t nranks)
{
	const struct trace_file *best = &files[0];
	uint32_t best_rank = UINT32_MAX;
	unsigned int i;
	size_t k;

	for (i = 0; i < nfiles; i++)
		for (k = 0; k < files[i].nops; k++)
			if (files[i].ops[k].nranks == nranks) {
				if (files[i].ops[k].rank < best_rank) {
					best_rank = files[i].ops[k].rank;
					best = &files[i];
				}
				break;
			}
	return best;
}

/*
 * Check the group @e[0..@n) of one (comm, seq); mark the timeline's op
 * in @j's copy (kept or not, the latest modeled times).
 */
static int group(const struct entry *e, size_t n, unsigned int nfiles,
		 struct trace_job *j, bool *keep)
{
	const struct trace_op *t = NULL;
	uint64_t start = 0, end = 0;
	bool ok = true;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct trace_op *op = e[i].op;

		if (i && op->rank == e[i - 1].op->rank)
			return not_one_job(&e[i - 1], &e[i], "the same rank");
		if (i && op->nranks != e[0].op->nranks)
			return not_one_job(&e[0], &e[i], "communicators of different sizes");
		if (i && !same_op(op, e[0].op))
			return not_one_job(&e[0], &e[i], "different operations");
		ok = ok && op->ok;
		if (op->ran && op->dev_start_ns > start)
			start = op->dev_start_ns;
		if (op->ran && op->dev_end_ns > end)
			end = op->dev_end_ns;
		if (e[i].f == j->timeline)
			t = op;
	}
	if (e[0].op->nranks == j->nranks && n != nfiles) {
		fprintf(stderr, "nnp-sim: the files are not the ranks of one job: %zu of the %u hold seq %llu of communicator %016llx (%s:%u)\n",
			n, nfiles, (unsigned long long)e[0].op->seq,
			(unsigned long long)e[0].op->comm, e[0].f->path,
			e[0].op->line);
		return -1;
	}
	if (t) {
		size_t k = (size_t)(t - j->timeline->ops);
		struct trace_op *mine = &j->ops[k];

		keep[k] = ok;
		mine->dev_start_ns = start;
		mine->dev_end_ns = end;
	}
	return 0;
}

int trace_job(const struct trace_file *files, unsigned int nfiles,
	      struct trace_job *j)
{
	size_t total = 0, n = 0, i, k, at;
	struct entry *e;
	bool *keep;
	int rc = 0;

	*j = (struct trace_job){ .nranks = 0 };
	for (i = 0; i < nfiles; i++) {
		total += files[i].nops;
		for (k = 0; k < files[i].nops; k++)
			if (files[i].ops[k].nranks > j->nranks)
				j->nranks = files[i].ops[k].nranks;
	}
	j->timeline = lowest(files, nfiles, j->nranks);
	j->all_ranks = nfiles == j->nranks;
	e = calloc(total ? total : 1, sizeof(*e));
	keep = calloc(j->timeline->nops + 1, sizeof(*keep));
	j->ops = calloc(j->timeline->nops + 1, sizeof(*j->ops));
	if (!e || !keep || !j->ops) {
		fputs("nnp-sim: out of memory\n", stderr);
		rc = -1;
		goto out;
	}
	for (i = 0; i < nfiles; i++)
		for (k = 0; k < files[i].nops; k++)
			e[n++] = (struct entry){ &files[i], &files[i].ops[k] };
	memcpy(j->ops, j->timeline->ops, j->timeline->nops * sizeof(*j->ops));
	qsort(e, n, sizeof(*e), by_op);
	for (i = 0; i < n && !rc; i = at) {
		for (at = i + 1; at < n && e[at].op->comm == e[i].op->comm &&
		     e[at].op->seq == e[i].op->seq; at++)
			;
		rc = group(&e[i], at - i, nfiles, j, keep);
	}
	/* The kept operations, in the timeline's order. */
	for (k = 0, n = 0; !rc && k < j->timeline->nops; k++) {
		if (!keep[k]) {
			j->skipped++;
			continue;
		}
		j->ops[n] = j->ops[k];
		j->recorded_comm_ns += j->ops[n].dev_end_ns - j->ops[n].dev_start_ns;
		n++;
	}
	j->nops = n;
out:
	free(e);
	free(keep);
	if (rc)
		trace_job_free(j);
	return rc;
}

void trace_job_free(struct trace_job *j)
{
	free(j->ops);
	j->ops = NULL;
	j->nops = 0;
}
