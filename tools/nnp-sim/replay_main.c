// SPDX-License-Identifier: MIT
/* nnp-sim --replay: read, check, project, print; see replay.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "json_out.h"
#include "replay.h"

/* One chip count's projection, per step. */
struct row {
	unsigned int n;
	struct topo t;
	struct replay_time time;
	bool have_base;		/* the 1-chip time, for the efficiency */
	double base;
};

/* The shape of @n chips: one chip is one chip whatever the topology. */
static int shape(const struct replay_opts *o, unsigned int n, struct topo *t)
{
	if (n == 1)
		return topo_shape(t, TOPO_RING, 1, 0, 0);
	return topo_shape(t, o->kind, n, o->rows, o->chassis);
}

/* Whether every communicator smaller than the largest fits on @n chips. */
static bool fits(const struct trace_job *j, unsigned int n, bool quiet)
{
	size_t k;

	for (k = 0; k < j->nops; k++)
		if (j->ops[k].nranks > n && j->ops[k].nranks < j->nranks) {
			if (!quiet)
				fprintf(stderr, "nnp-sim: %s:%u: a communicator of %u ranks does not fit on %u chips\n",
					j->timeline->path, j->ops[k].line,
					j->ops[k].nranks, n);
			return false;
		}
	return true;
}

static int project(const struct replay_opts *o, const struct trace_job *j,
		   unsigned int n, const struct topo *t, struct replay_time *r)
{
	uint64_t *ns = calloc(j->nops + 1, sizeof(*ns));
	int bad = !ns || replay_device(j, t, n, o->algo, o->model, ns);

	if (!bad)
		replay_host(j, ns, o->compute_scale, r);
	free(ns);
	r->total /= o->steps;
	r->compute /= o->steps;
	r->comm /= o->steps;
	r->exposed /= o->steps;
	return bad ? -1 : 0;
}

/* The recorded communication is comparable: all ranks, as many chips. */
static bool recorded(const struct trace_job *j, unsigned int n)
{
	return j->all_ranks && n == j->nranks;
}

static void print_table(const struct replay_opts *o, const struct trace_job *j,
			const struct row *rows)
{
	unsigned int r;

	printf("# replay of %s: %zu operations, %zu skipped (status not ok), largest communicator %u ranks; %s, algo %s; per step of %u, compute x %g; model (0: NNP-T's figure): icl %u MB/s, latency %u ns, hbm %u MB/s, overhead %u ns\n",
	       o->files, j->nops, j->skipped, j->nranks, topo_kind_name(o->kind),
	       topo_algo_name(o->algo), o->steps, o->compute_scale,
	       o->model->icl_mbps, o->model->icl_latency_ns,
	       o->model->hbm_mbps, o->model->cmd_overhead_ns);
	printf("%6s %8s %12s %12s %12s %12s %12s %10s\n", "chips", "shape",
	       "step_us", "compute_us", "comm_us", "exposed_us", "overlap_us",
	       "efficiency");
	for (r = 0; r < o->nruns; r++) {
		const struct row *w = &rows[r];
		char sh[32], eff[16] = "-";

		snprintf(sh, sizeof(sh), "%ux%u", w->t.rows, w->t.cols);
		if (w->have_base)
			snprintf(eff, sizeof(eff), "%.4f", w->base / w->time.total);
		printf("%6u %8s %12.3f %12.3f %12.3f %12.3f %12.3f %10s\n", w->n,
		       sh, w->time.total / 1000, w->time.compute / 1000,
		       w->time.comm / 1000, w->time.exposed / 1000,
		       (w->time.comm - w->time.exposed) / 1000, eff);
		if (recorded(j, w->n))
			printf("# %u chips: communication recorded %.3f us, replayed %.3f us (whole trace), replayed / recorded %.4f\n",
			       w->n, j->recorded_comm_ns / 1000.0,
			       w->time.comm * o->steps / 1000,
			       j->recorded_comm_ns ? w->time.comm * o->steps /
				       (double)j->recorded_comm_ns : NAN);
	}
}

static uint64_t ns(double v)
{
	return (uint64_t)llround(v);
}

static void print_json(const struct replay_opts *o, const struct trace_job *j,
		       const struct row *rows)
{
	struct json_object *doc = jo_obj(NULL, NULL), *m, *runs;
	unsigned int r;

	jo_str(doc, "files", o->files);
	jo_u64(doc, "ops", j->nops);
	jo_u64(doc, "skipped", j->skipped);
	jo_u64(doc, "nranks", j->nranks);
	jo_str(doc, "topo", topo_kind_name(o->kind));
	jo_str(doc, "algo", topo_algo_name(o->algo));
	jo_u64(doc, "steps", o->steps);
	jo_fixed(doc, "compute_scale", o->compute_scale, 3);
	m = jo_obj(doc, "model");
	jo_u64(m, "icl_mbps", o->model->icl_mbps);
	jo_u64(m, "icl_latency_ns", o->model->icl_latency_ns);
	jo_u64(m, "hbm_mbps", o->model->hbm_mbps);
	jo_u64(m, "cmd_overhead_ns", o->model->cmd_overhead_ns);
	runs = jo_arr(doc, "runs");
	for (r = 0; r < o->nruns; r++) {
		const struct row *w = &rows[r];
		struct json_object *x = jo_obj(runs, NULL);

		jo_u64(x, "chips", w->n);
		jo_u64(x, "rows", w->t.rows);
		jo_u64(x, "cols", w->t.cols);
		jo_u64(x, "step_ns", ns(w->time.total));
		jo_u64(x, "compute_ns", ns(w->time.compute));
		jo_u64(x, "comm_ns", ns(w->time.comm));
		jo_u64(x, "exposed_ns", ns(w->time.exposed));
		jo_u64(x, "overlapped_ns", ns(w->time.comm - w->time.exposed));
		if (w->have_base)
			jo_fixed(x, "efficiency", w->base / w->time.total, 4);
		else
			jo_null(x, "efficiency");
		if (recorded(j, w->n)) {
			jo_u64(x, "recorded_comm_ns", j->recorded_comm_ns);
			jo_u64(x, "replayed_comm_ns", ns(w->time.comm * o->steps));
			if (j->recorded_comm_ns)
				jo_fixed(x, "comm_ratio", w->time.comm * o->steps /
					 (double)j->recorded_comm_ns, 4);
			else
				jo_null(x, "comm_ratio");
		}
	}
	jo_line(stdout, doc);
}

/* Check every chip count, then project each (and one chip, the base). */
static int run(const struct replay_opts *o, const struct trace_job *j)
{
	struct row rows[MAX_RUNS];
	struct replay_time one = { 0 };
	struct topo t1;
	bool have_base;
	unsigned int r;

	for (r = 0; r < o->nruns; r++) {
		rows[r] = (struct row){ .n = o->chips[r] };
		if (shape(o, rows[r].n, &rows[r].t) || !fits(j, rows[r].n, false))
			return 2;
	}
	/* Weak scaling against one chip, when the job fits on one. */
	have_base = fits(j, 1, true);
	if (have_base && (shape(o, 1, &t1) || project(o, j, 1, &t1, &one)))
		return 1;
	for (r = 0; r < o->nruns; r++) {
		if (rows[r].n == 1)
			rows[r].time = one;
		else if (project(o, j, rows[r].n, &rows[r].t, &rows[r].time))
			return 1;
		rows[r].have_base = have_base && rows[r].time.total > 0;
		rows[r].base = one.total;
	}
	if (o->json)
		print_json(o, j, rows);
	else
		print_table(o, j, rows);
	return 0;
}

int replay_main(const struct replay_opts *o)
{
	struct trace_file files[MAX_CHIPS];
	char *list = strdup(o->files), *tok, *save = NULL;
	unsigned int nfiles = 0, i;
	struct trace_job j;
	int rc = list ? 0 : 1;

	for (tok = list ? strtok_r(list, ",", &save) : NULL; tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		if (nfiles == MAX_CHIPS) {
			fprintf(stderr, "nnp-sim: %u trace files at most\n", MAX_CHIPS);
			rc = 2;
		} else if (trace_read(tok, &files[nfiles])) {
			rc = 2;
		} else {
			nfiles++;
		}
	}
	if (!rc && !nfiles) {
		fputs("nnp-sim: --replay names no file\n", stderr);
		rc = 2;
	}
	if (!rc && trace_job(files, nfiles, &j))
		rc = 2;
	if (!rc) {
		rc = run(o, &j);
		trace_job_free(&j);
	}
	for (i = 0; i < nfiles; i++)
		trace_free(&files[i]);
	free(list);
	return rc;
}
