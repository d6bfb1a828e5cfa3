// SPDX-License-Identifier: MIT
/*
 * nnptool bench allreduce|broadcast|allgather|reduce_scatter|reduce|
 * alltoall|gather|scatter|sendrecv [--min SIZE]
 * [--max SIZE] [--step F] [--iters N] [--bytes SIZE] [--trials T]
 * [--peer P]: one float collective across every device of this host, or a
 * message from rank 0 to rank P (sendrecv; routed through the chips
 * between when their chips share no link), device memory to
 * device memory over the links, timed by size in nccl-tests' columns, out
 * of place and in place; the result of every iteration (warm-up and
 * timed) is checked and its wrong elements counted, into an output
 * poisoned before it, outside the timing. The time is the best of T
 * timings of N iterations each (fewer at large sizes with --bytes): on a
 * shared machine the best is the one least disturbed.
 *
 * As in nccl-tests, SIZE is the larger of a rank's input and output (the
 * output of allgather and gather, the input of reduce-scatter and scatter,
 * both of alltoall, which hold nranks parts of `count` elements), and
 * busbw = algbw * 2(n-1)/n for allreduce, (n-1)/n for allgather,
 * reduce-scatter, alltoall, gather and scatter, 1 for broadcast, reduce
 * (roots 0) and sendrecv.
 *
 * Next to the host's time, the device's: each rank's stream stamps its
 * chip's modeled clock (nnp_timestamp_async()) before and after the
 * collective, and its modeled time runs from the last rank's first stamp
 * to the last rank's second, less what the two stamps alone take,
 * averaged over the iterations. It is what the chips would take as
 * NNP-Ts, the same on every run whatever the host's load.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_out.h"
#include "nnptool.h"

#define MAXDEV 64

enum coll {
	ALLREDUCE, BROADCAST, ALLGATHER, REDUCE_SCATTER, REDUCE, ALLTOALL,
	GATHER, SCATTER, SENDRECV, NCOLL
};

static const char *const coll_name[NCOLL] = {
	"allreduce", "broadcast", "allgather", "reduce_scatter", "reduce",
	"alltoall", "gather", "scatter", "sendrecv",
};

struct ar {
	enum coll coll;
	int n;
	int peer;		/* sendrecv: rank 0's receiver */
	nnp_device_t *dev[MAXDEV];
	nnp_stream_t *s[MAXDEV];
	nnp_comm_t *comm[MAXDEV];
	nnp_mem_t *send[MAXDEV], *recv[MAXDEV];
	/* Host memory: every rank's inputs, written once; results read back. */
	nnp_mem_t *in[MAXDEV], *out[MAXDEV];
	float *want;		/* the whole expected output, all ranks' parts */
	/* Each rank's two clock stamps: on the device, then read back. */
	nnp_mem_t *stamp[MAXDEV], *stamp_host[MAXDEV];
	uint64_t bracket_ns;	/* two stamps with nothing between them */
};

/*
 * A timing: the host's and the devices' modeled seconds per collective;
 * of several trials, the best one's, and the worst trial's host seconds.
 */
struct timing {
	double wall, model, worst;
};

/* One size: the collective's count and each rank's input and output. */
struct shape {
	size_t count, in_n, out_n;
	bool in_place;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static float input(int rank, size_t i)
{
	return (float)((i * 3 + (size_t)rank) % 5);
}

static struct shape shape_of(const struct ar *a, size_t size, bool in_place)
{
	bool parts_out = a->coll == ALLGATHER || a->coll == GATHER ||
			 a->coll == ALLTOALL;
	bool parts_in = a->coll == REDUCE_SCATTER || a->coll == SCATTER ||
			a->coll == ALLTOALL;
	size_t count = size / sizeof(float) /
		       (parts_in || parts_out ? (size_t)a->n : 1);
	struct shape sh = { count, count, count, in_place };

	if (parts_out)
		sh.out_n *= a->n;
	if (parts_in)
		sh.in_n *= a->n;
	return sh;
}

/*
 * Whether rank @k has an output: a gather's or reduce's is root 0's, a
 * sendrecv's the peer's.
 */
static bool writes(const struct ar *a, int k)
{
	if (a->coll == SENDRECV)
		return k == a->peer;
	return k == 0 || (a->coll != GATHER && a->coll != REDUCE);
}

/*
 * Rank @k's input and output, in bytes into its buffers. In place, both
 * are in recv, in NCCL's layouts: the input (allgather) or the output
 * (reduce-scatter) is the rank's part of the other.
 */
static size_t in_off(const struct ar *a, const struct shape *sh, int k)
{
	if (sh->in_place && a->coll == ALLGATHER)
		return k * sh->count * sizeof(float);
	return 0;
}

static size_t out_off(const struct ar *a, const struct shape *sh, int k)
{
	if (sh->in_place && a->coll == REDUCE_SCATTER)
		return k * sh->count * sizeof(float);
	return 0;
}

static nnp_result_t issue(struct ar *a, const struct shape *sh, int k)
{
	nnp_mem_t *src = sh->in_place ? a->recv[k] : a->send[k];
	size_t so = in_off(a, sh, k), ro = out_off(a, sh, k);

	switch (a->coll) {
	case ALLREDUCE:
		return nnp_allreduce(src, so, a->recv[k], ro, sh->count, NNP_FLOAT32,
				     NNP_SUM, a->comm[k], a->s[k]);
	case BROADCAST:
		return nnp_broadcast(src, so, a->recv[k], ro, sh->count, NNP_FLOAT32,
				     0, a->comm[k], a->s[k]);
	case ALLGATHER:
		return nnp_allgather(src, so, a->recv[k], ro, sh->count, NNP_FLOAT32,
				     a->comm[k], a->s[k]);
	case REDUCE_SCATTER:
		return nnp_reduce_scatter(src, so, a->recv[k], ro, sh->count,
					  NNP_FLOAT32, NNP_SUM, a->comm[k], a->s[k]);
	case REDUCE:
		return nnp_reduce(src, so, a->recv[k], ro, sh->count, NNP_FLOAT32,
				  NNP_SUM, 0, a->comm[k], a->s[k]);
	case ALLTOALL:
		return nnp_alltoall(src, so, a->recv[k], ro, sh->count, NNP_FLOAT32,
				    a->comm[k], a->s[k]);
	case GATHER:
		return nnp_gather(src, so, a->recv[k], ro, sh->count, NNP_FLOAT32,
				  0, a->comm[k], a->s[k]);
	case SENDRECV:
		if (k == 0)
			return nnp_send(src, so, sh->count, NNP_FLOAT32, a->peer,
					a->comm[k], a->s[k]);
		if (k == a->peer)
			return nnp_recv(a->recv[k], ro, sh->count, NNP_FLOAT32, 0,
					a->comm[k], a->s[k]);
		return NNP_SUCCESS;
	default:
		return nnp_scatter(src, so, a->recv[k], ro, sh->count, NNP_FLOAT32,
				   0, a->comm[k], a->s[k]);
	}
}

/* Stamp every rank's modeled clock at byte @off of its stamp memory. */
static void stamp(struct ar *a, size_t off, nnp_result_t *r)
{
	int k;

	for (k = 0; k < a->n && *r == NNP_SUCCESS; k++)
		*r = nnp_timestamp_async(a->s[k], a->stamp[k], off);
}

/* Whether rank @k takes part: a sendrecv's are rank 0 and its peer. */
static bool takes_part(const struct ar *a, int k)
{
	return a->coll != SENDRECV || k == 0 || k == a->peer;
}

/*
 * The modeled ns from the last rank's first stamp to the last rank's
 * second, of the ranks that take part (an idle chip's clock says nothing). The chips' clocks are one time base (a packet carries its
 * arrival time), and a collective starts no earlier than its last rank: a
 * rank whose clock is behind (after work of its own, a chip's clock runs
 * ahead of the others') waits for it, which is not the collective's time.
 */
static uint64_t model_ns(struct ar *a, nnp_result_t *r)
{
	uint64_t start = 0, end = 0;
	int k;

	for (k = 0; k < a->n && *r == NNP_SUCCESS; k++) {
		const uint64_t *t;

		*r = nnp_memcpy_async(a->s[k], a->stamp_host[k], 0, a->stamp[k], 0,
				      2 * sizeof(*t));
		if (*r == NNP_SUCCESS)
			*r = nnp_stream_synchronize(a->s[k]);
		if (*r == NNP_SUCCESS)
			*r = nnp_mem_map(a->stamp_host[k], (void **)&t);
		if (*r == NNP_SUCCESS && takes_part(a, k)) {
			start = t[0] > start ? t[0] : start;
			end = t[1] > end ? t[1] : end;
		}
	}
	return end - start;
}

/* Inputs into every rank's device memory, by DMA from its host buffer. */
static nnp_result_t load(struct ar *a, const struct shape *sh)
{
	nnp_result_t r = NNP_SUCCESS;
	int k;

	for (k = 0; k < a->n && r == NNP_SUCCESS; k++) {
		nnp_mem_t *dst = sh->in_place ? a->recv[k] : a->send[k];

		r = nnp_memcpy_async(a->s[k], dst, in_off(a, sh, k), a->in[k], 0,
				     sh->in_n * sizeof(float));
		if (r == NNP_SUCCESS)
			r = nnp_stream_synchronize(a->s[k]);
	}
	return r;
}

/* The reductions: a->want, the sums (each rank's part of them for RS). */
static bool reduces(enum coll c)
{
	return c == ALLREDUCE || c == REDUCE_SCATTER || c == REDUCE;
}

static void expect(struct ar *a, const struct shape *sh)
{
	size_t len = a->coll == REDUCE_SCATTER ? sh->count * a->n : sh->count;
	size_t i;
	int j;

	for (i = 0; i < len && reduces(a->coll); i++) {
		float sum = 0;

		for (j = 0; j < a->n; j++)
			sum += input(j, i);
		a->want[i] = sum;
	}
}

/* Element @i of rank @k's output. */
static float want_at(const struct ar *a, const struct shape *sh, int k,
		     size_t i)
{
	size_t c = sh->count;

	switch (a->coll) {
	case BROADCAST:
	case SENDRECV:
		return input(0, i);
	case ALLGATHER:
	case GATHER:
		return input((int)(i / c), i % c);
	case ALLTOALL:
		return input((int)(i / c), k * c + i % c);
	case SCATTER:
		return input(0, k * c + i);
	case REDUCE_SCATTER:
		return a->want[k * c + i];
	default:
		return a->want[i];
	}
}

/* Wrong elements in the output of every rank. */
static long check(struct ar *a, const struct shape *sh, nnp_result_t *r)
{
	long wrong = 0;
	int k;

	for (k = 0; k < a->n && *r == NNP_SUCCESS; k++) {
		float *got;
		size_t i;

		if (!writes(a, k))
			continue;
		*r = nnp_memcpy_async(a->s[k], a->out[k], 0, a->recv[k],
				      out_off(a, sh, k), sh->out_n * sizeof(float));
		if (*r == NNP_SUCCESS)
			*r = nnp_stream_synchronize(a->s[k]);
		if (*r == NNP_SUCCESS)
			*r = nnp_mem_map(a->out[k], (void **)&got);
		for (i = 0; i < sh->out_n && *r == NNP_SUCCESS; i++)
			wrong += got[i] != want_at(a, sh, k, i);
	}
	return wrong;
}

/*
 * Before each collective, outside its timing: every rank's output poisoned
 * (0xff bytes, NaNs: no float is equal to one), so a collective that left
 * it alone fails the check, and in place its input loaded again, which the
 * collective before overwrote. Both are done before it returns: a memset
 * still queued when the clock starts would be timed with the collective.
 */
static nnp_result_t prepare(struct ar *a, const struct shape *sh)
{
	size_t n = sh->in_n > sh->out_n ? sh->in_n : sh->out_n;
	nnp_result_t r = NNP_SUCCESS;
	int k;

	for (k = 0; k < a->n && r == NNP_SUCCESS; k++)
		r = nnp_memset_async(a->s[k], a->recv[k], 0, 0xff, n * sizeof(float));
	for (k = 0; k < a->n && r == NNP_SUCCESS; k++)
		r = nnp_stream_synchronize(a->s[k]);
	if (r == NNP_SUCCESS && sh->in_place)
		r = load(a, sh);
	return r;
}

/*
 * @reps collectives on every rank, each timed by the host and the devices
 * and its result checked (its wrong elements added to @wrong); the times
 * are the collectives' alone, averaged.
 */
static struct timing run(struct ar *a, const struct shape *sh,
			 unsigned int reps, long *wrong, nnp_result_t *r)
{
	struct timing t = { 0, 0, 0 };
	unsigned int i;
	int k;

	for (i = 0; i < reps && *r == NNP_SUCCESS; i++) {
		double t0;

		*r = prepare(a, sh);
		stamp(a, 0, r);
		t0 = now_s();
		for (k = 0; k < a->n && *r == NNP_SUCCESS; k++)
			*r = issue(a, sh, k);
		/* The host's time is of whole collectives, synchronized. */
		for (k = 0; k < a->n && *r == NNP_SUCCESS; k++)
			*r = nnp_stream_synchronize(a->s[k]);
		t.wall += now_s() - t0;
		stamp(a, sizeof(uint64_t), r);
		t.model += (model_ns(a, r) - a->bracket_ns) / 1e9;
		*wrong += check(a, sh, r);
	}
	t.wall /= reps;
	t.model /= reps;
	return t;
}

/*
 * Load, run once (the warm-up), then the best of @trials timings of @reps
 * more; every result checked, the wrong elements of all in @wrong.
 */
static struct timing measure(struct ar *a, const struct shape *sh,
			     unsigned int reps, unsigned int trials, long *wrong,
			     nnp_result_t *r)
{
	struct timing best = { 0, 0, 0 };
	unsigned int i;

	*wrong = 0;
	*r = load(a, sh);
	if (*r == NNP_SUCCESS)
		run(a, sh, 1, wrong, r);
	for (i = 0; i < trials && *r == NNP_SUCCESS; i++) {
		struct timing t = run(a, sh, reps, wrong, r);
		double worst = i && best.worst > t.wall ? best.worst : t.wall;

		best = !i || t.wall < best.wall ? t : best;
		best.worst = worst;
	}
	return best;
}

struct sizes {
	size_t min, max, bytes;
	unsigned long step, iters, trials;
	unsigned long peer;	/* --peer: sendrecv's receiver */
};

/*
 * nccl-tests' columns and summary, or with --json one JSON object on one
 * line. The average bus bandwidth is nccl-tests': the mean busbw of every
 * pass, out of place and in place, of every size.
 */
struct report {
	struct json_object *doc;	/* --json: the document; else NULL */
	struct json_object *rows, *row;	/* its rows, and the one being made */
	double bus;			/* busbw / algbw */
	double busbw_sum;		/* of every pass reported */
	unsigned int passes;
};

static void report_head(struct report *rp, const struct ar *a,
			const struct sizes *z, bool reduces)
{
	if (rp->doc) {
		jo_str(rp->doc, "benchmark", coll_name[a->coll]);
		jo_int(rp->doc, "devices", a->n);
		if (a->coll == SENDRECV)
			jo_int(rp->doc, "peer", a->peer);
		jo_str(rp->doc, "type", "float");
		jo_str(rp->doc, "redop", reduces ? "sum" : "none");
		jo_u64(rp->doc, "iters", z->iters);
		jo_u64(rp->doc, "trials", z->trials);
		jo_u64(rp->doc, "bytes", z->bytes);
		rp->rows = jo_arr(rp->doc, "rows");
		return;
	}
	printf("# nnptool bench %s: %d devices, float%s, best of %lu x %lu iterations",
	       coll_name[a->coll], a->n, reduces ? " sum" : "", z->trials, z->iters);
	if (a->coll == SENDRECV)
		printf(", rank 0 to rank %d", a->peer);
	if (z->bytes)
		printf(" (fewer above %zu B: about %zu B per size)",
		       z->bytes / z->iters, z->bytes);
	printf("\n");
	printf("#%75s%52s\n", "out-of-place", "in-place");
	printf("# %10s %12s %6s %6s  %8s %7s %7s %7s %8s %8s  %8s %7s %7s %7s %8s %8s\n",
	       "size", "count", "type", "redop", "time", "algbw", "busbw",
	       "#wrong", "model", "mbusbw", "time", "algbw", "busbw", "#wrong",
	       "model", "mbusbw");
	printf("# %10s %12s %6s %6s  %8s %7s %7s %7s %8s %8s  %8s %7s %7s %7s %8s %8s\n",
	       "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
	       "(GB/s)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)");
}

static void report_row_start(struct report *rp, size_t bytes, bool reduces)
{
	if (rp->doc) {
		rp->row = jo_obj(rp->rows, NULL);
		jo_u64(rp->row, "size", bytes);
		jo_u64(rp->row, "count", bytes / sizeof(float));
	} else {
		printf("  %10zu %12zu %6s %6s", bytes, bytes / sizeof(float),
		       "float", reduces ? "sum" : "none");
	}
}

/* One pass of a row: out of place, then in place. */
static void report_pass(struct report *rp, bool in_place, size_t bytes,
			struct timing t, long wrong)
{
	double algbw = bytes / t.wall / 1e9, model = bytes / t.model / 1e9;
	struct json_object *p;

	rp->busbw_sum += algbw * rp->bus;
	rp->passes++;
	if (!rp->doc) {
		printf("  %8.1f %7.3f %7.3f %7ld %8.1f %8.3f", t.wall * 1e6, algbw,
		       algbw * rp->bus, wrong, t.model * 1e6, model * rp->bus);
		return;
	}
	p = jo_obj(rp->row, in_place ? "in_place" : "out_of_place");
	jo_fixed(p, "time_us", t.wall * 1e6, 3);
	jo_fixed(p, "algbw_gbps", algbw, 6);
	jo_fixed(p, "busbw_gbps", algbw * rp->bus, 6);
	jo_int(p, "wrong", wrong);
	jo_fixed(p, "model_time_us", t.model * 1e6, 3);
	jo_fixed(p, "model_busbw_gbps", model * rp->bus, 6);
	jo_fixed(p, "worst_time_us", t.worst * 1e6, 3);
}

static void report_row_end(const struct report *rp)
{
	if (!rp->doc) {
		printf("\n");
		fflush(stdout);
	}
}

/* The verdict and the average bus bandwidth; or after a failure, what failed. */
static void report_end(const struct report *rp, long wrong, nnp_result_t r)
{
	double avg = rp->passes ? rp->busbw_sum / rp->passes : 0;

	if (!rp->doc) {
		/* As nccl-tests prints them, its empty verdict's space included. */
		if (r == NNP_SUCCESS)
			printf("# Out of bounds values : %ld %s\n"
			       "# Avg bus bandwidth    : %g \n#\n", wrong,
			       wrong ? "FAILED" : "OK", avg);
		return;
	}
	if (r != NNP_SUCCESS) {
		jo_str(rp->doc, "error", nnp_strerror(r));
	} else {
		jo_int(rp->doc, "wrong", wrong);
		jo_bool(rp->doc, "passed", !wrong);
		jo_fixed(rp->doc, "avg_busbw_gbps", avg, 6);
	}
	jo_line(stdout, rp->doc);
}

/* Iterations at @size: --iters, or fewer so each size moves about --bytes. */
static unsigned int reps_for(const struct sizes *z, size_t size)
{
	size_t reps = z->bytes ? z->bytes / size : z->iters;

	if (reps > z->iters)
		reps = z->iters;
	return reps ? (unsigned int)reps : 1;
}

static int bench(struct ar *a, const struct sizes *z, bool json)
{
	struct report rp = { .doc = json ? jo_obj(NULL, NULL) : NULL, .bus = 1 };
	nnp_result_t r = NNP_SUCCESS;
	long total_wrong = 0;
	size_t size;

	if (a->coll != BROADCAST && a->coll != REDUCE && a->coll != SENDRECV)
		rp.bus = (double)(a->n - 1) / a->n * (a->coll == ALLREDUCE ? 2 : 1);
	report_head(&rp, a, z, reduces(a->coll));
	for (size = z->min; size <= z->max && r == NNP_SUCCESS; size *= z->step) {
		struct shape sh = shape_of(a, size, false);
		size_t bytes = (sh.in_n > sh.out_n ? sh.in_n : sh.out_n) * sizeof(float);
		unsigned int reps = reps_for(z, size);
		int pass;

		if (!sh.count)
			continue;
		expect(a, &sh);
		report_row_start(&rp, bytes, reduces(a->coll));
		for (pass = 0; pass < 2 && r == NNP_SUCCESS; pass++) {
			struct timing t;
			long wrong;

			sh.in_place = pass;
			t = measure(a, &sh, reps, (unsigned int)z->trials, &wrong, &r);
			total_wrong += wrong;
			report_pass(&rp, pass, bytes, t, wrong);
		}
		report_row_end(&rp);
	}
	report_end(&rp, total_wrong, r);
	if (r != NNP_SUCCESS)
		return nnptool_fail(coll_name[a->coll], r);
	return total_wrong ? NNPTOOL_EXIT_ERROR : NNPTOOL_EXIT_OK;
}

/* getopt_long's values of the options: past every character. */
enum { OPT_MIN = 256, OPT_MAX, OPT_BYTES, OPT_STEP, OPT_ITERS, OPT_TRIALS,
       OPT_PEER };

static const struct option opts[] = {
	{ "min", required_argument, NULL, OPT_MIN },
	{ "max", required_argument, NULL, OPT_MAX },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "step", required_argument, NULL, OPT_STEP },
	{ "iters", required_argument, NULL, OPT_ITERS },
	{ "trials", required_argument, NULL, OPT_TRIALS },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ NULL, 0, NULL, 0 },
};

/* -1 to go on, or the exit code: help, a bad command line. */
static int parse(const struct nnptool_cmd *cmd, struct nnptool_opts *o,
		 int argc, char **argv, struct sizes *z)
{
	int c;

	while ((c = nnptool_getopt(cmd, o, argc, argv)) > 0) {
		size_t *to = c == OPT_MIN ? &z->min : c == OPT_MAX ? &z->max :
			     c == OPT_BYTES ? &z->bytes : NULL;
		unsigned long *num = c == OPT_STEP ? &z->step :
				     c == OPT_ITERS ? &z->iters :
				     c == OPT_PEER ? &z->peer : &z->trials;
		unsigned long least = c == OPT_STEP ? 2 : 1;
		char *end;

		if (to && (parse_size(optarg, to) || *to < sizeof(float)))
			return nnptool_bad_value(cmd, "SIZE", optarg);
		if (to)
			continue;
		*num = strtoul(optarg, &end, 0);
		if (*end || *num < least || *num > 100000)
			return nnptool_bad_value(cmd, c == OPT_STEP ? "F (2 to 100000)" :
						 c == OPT_PEER ? "P (1 to 100000)" :
						 "N (1 to 100000)", optarg);
	}
	return c == NNPTOOL_OPTS_DONE ? -1 : nnptool_opts_exit(c);
}

static nnp_result_t setup(struct ar *a, size_t max)
{
	nnp_result_t r = nnp_device_count(&a->n);
	int k;

	if (r == NNP_SUCCESS && a->n > MAXDEV)
		a->n = MAXDEV;
	a->want = malloc(max);
	if (!a->want)
		return NNP_ERROR_OUT_OF_MEMORY;
	for (k = 0; k < a->n && r == NNP_SUCCESS; k++) {
		float *h;
		size_t i;

		r = nnp_device_open(k, &a->dev[k]);
		if (r == NNP_SUCCESS)
			r = nnp_stream_create(a->dev[k], &a->s[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a->dev[k], NNP_MEM_DEVICE, max, 0, &a->send[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a->dev[k], NNP_MEM_DEVICE, max, 0, &a->recv[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a->dev[k], NNP_MEM_HOST, max, 0, &a->in[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a->dev[k], NNP_MEM_HOST, max, 0, &a->out[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a->dev[k], NNP_MEM_DEVICE, 2 * sizeof(uint64_t),
					  0, &a->stamp[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a->dev[k], NNP_MEM_HOST, 2 * sizeof(uint64_t),
					  0, &a->stamp_host[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_map(a->in[k], (void **)&h);
		for (i = 0; r == NNP_SUCCESS && i < max / sizeof(float); i++)
			h[i] = input(k, i);
	}
	if (r == NNP_SUCCESS)
		r = nnp_comm_init_all(a->dev, a->n, a->comm);
	/* The stamps' own cost (a command's overhead), taken off each timing. */
	stamp(a, 0, &r);
	stamp(a, sizeof(uint64_t), &r);
	a->bracket_ns = model_ns(a, &r);
	return r;
}

int cmd_bench_coll(struct nnptool_opts *o, int argc, char **argv)
{
	static char name[32];
	const struct nnptool_cmd cmd = {
		name, "[--json] [--min SIZE] [--max SIZE] [--step F] [--iters N] "
		"[--bytes SIZE] [--trials T] [--peer P]", NULL, opts, 0, 0,
	};
	struct sizes z = { 8, 4u << 20, 0, 2, 5, 1, 0 };
	struct ar a = { 0 };
	nnp_result_t r;
	int k, ret;

	for (a.coll = 0; a.coll < NCOLL; a.coll++)
		if (!strcmp(argv[0], coll_name[a.coll]))
			break;
	if (a.coll == NCOLL) {
		fprintf(stderr, "nnptool: bench: unknown benchmark '%s' (nnptool bench --help)\n",
			argv[0]);
		return NNPTOOL_EXIT_USAGE;
	}
	snprintf(name, sizeof(name), "bench %s", coll_name[a.coll]);
	ret = parse(&cmd, o, argc, argv, &z);
	if (ret >= 0)
		return ret;
	if (z.peer && a.coll != SENDRECV) {
		fprintf(stderr, "nnptool: %s: --peer is sendrecv's\n", name);
		return NNPTOOL_EXIT_USAGE;
	}
	a.peer = z.peer ? (int)z.peer : 1;
	r = setup(&a, z.max);
	if (r == NNP_SUCCESS && a.coll == SENDRECV && a.peer >= a.n) {
		fprintf(stderr, "nnptool: %s: --peer %d: rank 0's peer is one of ranks 1 to %d\n",
			name, a.peer, a.n - 1);
		ret = NNPTOOL_EXIT_USAGE;
	} else {
		ret = r == NNP_SUCCESS ? bench(&a, &z, o->json) :
		      nnptool_fail(coll_name[a.coll], r);
	}
	for (k = 0; k < a.n; k++) {
		nnp_comm_destroy(a.comm[k]);
		nnp_mem_free(a.stamp_host[k]);
		nnp_mem_free(a.stamp[k]);
		nnp_mem_free(a.out[k]);
		nnp_mem_free(a.in[k]);
		nnp_mem_free(a.recv[k]);
		nnp_mem_free(a.send[k]);
		nnp_stream_destroy(a.s[k]);
		nnp_device_close(a.dev[k]);
	}
	free(a.want);
	return ret;
}
