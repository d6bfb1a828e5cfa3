// SPDX-License-Identifier: MIT
/*
 * nnptool bench allreduce|broadcast|allgather|reduce_scatter|reduce|
 * alltoall|gather|scatter|sendrecv [OPTIONS]: a collective across every
 * device of this host, or a message from rank 0 to rank P (sendrecv;
 * routed through the chips between when their chips share no link),
 * device memory to device memory over the links, timed by size in
 * nccl-tests' columns and options (-b -e -f -n -m -d -o -r), out of place
 * and in place, of each type (-d) and reduction (-o) asked for. Every
 * iteration's output is poisoned before it, outside the timing; the
 * result of the warm-up and of each timing's last iteration is checked
 * and its wrong elements counted. The iterations between run back to
 * back, as nccl-tests and Open MPI's own loop time theirs: a check reads
 * every output through the host, and the iteration after it found its
 * buffers out of the host's caches (a 1 MiB alltoall on 4 chips took
 * 1.7-2.9x as long). The time is the best of T timings of N iterations
 * each (fewer at large sizes with --bytes): on a shared machine the best
 * is the one least disturbed. With -m M each iteration is M collectives
 * in one group (nnp_group_start()), each in buffers of its own, and the
 * times are per collective, as nccl-tests' -m reports them.
 *
 * As in nccl-tests, SIZE is the larger of a rank's input and output (the
 * output of allgather and gather, the input of reduce-scatter and scatter,
 * both of alltoall, which hold nranks parts of `count` elements), and
 * busbw = algbw * 2(n-1)/n for allreduce, (n-1)/n for allgather,
 * reduce-scatter, alltoall, gather and scatter, 1 for broadcast, reduce
 * and sendrecv.
 *
 * Next to the host's time, the device's: each rank's stream stamps its
 * chip's modeled clock (nnp_timestamp_async()) before and after the
 * collective, and its modeled time runs from the last rank's first stamp
 * to the last rank's second, less what the two stamps alone take,
 * averaged over the iterations. It is what the chips would take as
 * NNP-Ts, the same on every run whatever the host's load.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_coll.h"
#include "coll_data.h"
#include "nnptool.h"

#define MAXDEV 64

/* Every rank's buffers, the type and reduction of the rows being run. */
struct ar {
	struct bench_setup b;
	int root;		/* b.root, or 0 where the collective has none */
	nnp_dtype_t t;
	nnp_redop_t op;		/* the inputs' (sum's where nothing reduces) */
	size_t slice;		/* bytes of each collective of a group: --max */
	nnp_device_t *dev[MAXDEV];
	nnp_stream_t *s[MAXDEV];
	nnp_comm_t *comm[MAXDEV];
	/* b.agg slices each, one for every collective of a group. */
	nnp_mem_t *send[MAXDEV], *recv[MAXDEV];
	/* Host memory: a rank's input, written once per type; results read back. */
	nnp_mem_t *in[MAXDEV], *out[MAXDEV];
	/* input() repeats every 9 elements: so does its reduction over the ranks. */
	double reduced[9];
	/* Each rank's two clock stamps: on the device, then read back. */
	nnp_mem_t *stamp[MAXDEV], *stamp_host[MAXDEV];
	uint64_t bracket_ns;	/* two stamps with nothing between them */
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

static struct shape shape_of(const struct ar *a, size_t size, bool in_place)
{
	enum coll c = a->b.coll;
	bool parts_out = c == ALLGATHER || c == GATHER || c == ALLTOALL;
	bool parts_in = c == REDUCE_SCATTER || c == SCATTER || c == ALLTOALL;
	size_t count = size / dtype_bytes(a->t) /
		       (parts_in || parts_out ? (size_t)a->b.n : 1);
	struct shape sh = { count, count, count, in_place };

	if (parts_out)
		sh.out_n *= a->b.n;
	if (parts_in)
		sh.in_n *= a->b.n;
	return sh;
}

/*
 * Whether rank @k has an output: a gather's or reduce's is the root's, a
 * sendrecv's the peer's.
 */
static bool writes(const struct ar *a, int k)
{
	if (a->b.coll == SENDRECV)
		return k == a->b.peer;
	return k == a->root || (a->b.coll != GATHER && a->b.coll != REDUCE);
}

/*
 * Rank @k's input and output, in bytes into its buffers. In place, both
 * are in recv, in NCCL's layouts: the input (allgather, the root's of a
 * gather) or the output (reduce-scatter, the root's of a scatter) is the
 * rank's part of the other.
 */
static size_t in_off(const struct ar *a, const struct shape *sh, int k)
{
	if (sh->in_place && (a->b.coll == ALLGATHER ||
			     (a->b.coll == GATHER && k == a->root)))
		return k * sh->count * dtype_bytes(a->t);
	return 0;
}

static size_t out_off(const struct ar *a, const struct shape *sh, int k)
{
	if (sh->in_place && (a->b.coll == REDUCE_SCATTER ||
			     (a->b.coll == SCATTER && k == a->root)))
		return k * sh->count * dtype_bytes(a->t);
	return 0;
}

/* Rank @k's collective @j of a group, in slice @j of its buffers. */
static nnp_result_t issue(struct ar *a, const struct shape *sh, int k, unsigned int j)
{
	nnp_mem_t *src = sh->in_place ? a->recv[k] : a->send[k], *dst = a->recv[k];
	size_t so = j * a->slice + in_off(a, sh, k), ro = j * a->slice + out_off(a, sh, k);
	size_t c = sh->count;
	nnp_comm_t *comm = a->comm[k];
	nnp_stream_t *s = a->s[k];

	switch (a->b.coll) {
	case ALLREDUCE:
		return nnp_allreduce(src, so, dst, ro, c, a->t, a->op, comm, s);
	case BROADCAST:
		return nnp_broadcast(src, so, dst, ro, c, a->t, a->root, comm, s);
	case ALLGATHER:
		return nnp_allgather(src, so, dst, ro, c, a->t, comm, s);
	case REDUCE_SCATTER:
		return nnp_reduce_scatter(src, so, dst, ro, c, a->t, a->op, comm, s);
	case REDUCE:
		return nnp_reduce(src, so, dst, ro, c, a->t, a->op, a->root, comm, s);
	case ALLTOALL:
		return nnp_alltoall(src, so, dst, ro, c, a->t, comm, s);
	case GATHER:
		return nnp_gather(src, so, dst, ro, c, a->t, a->root, comm, s);
	case SENDRECV:
		if (k == 0)
			return nnp_send(src, so, c, a->t, a->b.peer, comm, s);
		if (k == a->b.peer)
			return nnp_recv(dst, ro, c, a->t, 0, comm, s);
		return NNP_SUCCESS;
	default:
		return nnp_scatter(src, so, dst, ro, c, a->t, a->root, comm, s);
	}
}

/* Every rank's collectives, b.agg of them in one group if more than one. */
static nnp_result_t issue_all(struct ar *a, const struct shape *sh)
{
	bool group = a->b.agg > 1;
	nnp_result_t r = group ? nnp_group_start() : NNP_SUCCESS, end;
	unsigned int j;
	int k;

	if (r != NNP_SUCCESS)
		return r;
	for (k = 0; k < a->b.n && r == NNP_SUCCESS; k++)
		for (j = 0; j < a->b.agg && r == NNP_SUCCESS; j++)
			r = issue(a, sh, k, j);
	/* A refused collective failed the group: its end launches nothing. */
	end = group ? nnp_group_end() : NNP_SUCCESS;
	return r == NNP_SUCCESS ? end : r;
}

/* Stamp every rank's modeled clock at byte @off of its stamp memory. */
static void stamp(struct ar *a, size_t off, nnp_result_t *r)
{
	int k;

	for (k = 0; k < a->b.n && *r == NNP_SUCCESS; k++)
		*r = nnp_timestamp_async(a->s[k], a->stamp[k], off);
}

/* Whether rank @k takes part: a sendrecv's are rank 0 and its peer. */
static bool takes_part(const struct ar *a, int k)
{
	return a->b.coll != SENDRECV || k == 0 || k == a->b.peer;
}

/*
 * The modeled ns from the last rank's first stamp to the last rank's
 * second, of the ranks that take part (an idle chip's clock says
 * nothing). The chips' clocks are one time base (a packet carries its
 * arrival time), and a collective starts no earlier than its last rank: a
 * rank whose clock is behind (after work of its own, a chip's clock runs
 * ahead of the others') waits for it, which is not the collective's time.
 */
static uint64_t model_ns(struct ar *a, nnp_result_t *r)
{
	uint64_t start = 0, end = 0;
	int k;

	for (k = 0; k < a->b.n && *r == NNP_SUCCESS; k++) {
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

/*
 * Every rank's input in this row's type into its host buffer, and the
 * answers of a reduction. input() depends on the element's index modulo
 * 9 alone, so 9 elements are written and the rest copied from them: the
 * buffers of --max hold millions, each a conversion.
 */
static nnp_result_t fill_inputs(struct ar *a)
{
	size_t esize = dtype_bytes(a->t), len = a->slice / esize * esize, done;
	nnp_result_t r = NNP_SUCCESS;
	int k;
	size_t i;

	for (i = 0; i < 9; i++)
		a->reduced[i] = reduced(a->op, a->b.n, i);
	for (k = 0; k < a->b.n && r == NNP_SUCCESS; k++) {
		uint8_t *h;

		r = nnp_mem_map(a->in[k], (void **)&h);
		for (i = 0; r == NNP_SUCCESS && i < 9 && i * esize < len; i++)
			put(a->t, h, i, input(k, i, a->op));
		for (done = 9 * esize; r == NNP_SUCCESS && done < len; done *= 2)
			memcpy(h + done, h, done < len - done ? done : len - done);
	}
	return r;
}

/* Inputs into every slice of every rank's device memory, by DMA. */
static nnp_result_t load(struct ar *a, const struct shape *sh)
{
	nnp_result_t r = NNP_SUCCESS;
	unsigned int j;
	int k;

	for (k = 0; k < a->b.n && r == NNP_SUCCESS; k++) {
		nnp_mem_t *dst = sh->in_place ? a->recv[k] : a->send[k];

		for (j = 0; j < a->b.agg && r == NNP_SUCCESS; j++)
			r = nnp_memcpy_async(a->s[k], dst, j * a->slice + in_off(a, sh, k),
					     a->in[k], 0, sh->in_n * dtype_bytes(a->t));
		if (r == NNP_SUCCESS)
			r = nnp_stream_synchronize(a->s[k]);
	}
	return r;
}

/* Element @i of rank @k's output: an input, or a reduction of them all. */
static double want_at(const struct ar *a, const struct shape *sh, int k,
		      size_t i)
{
	size_t c = sh->count;

	switch (a->b.coll) {
	case BROADCAST:
		return input(a->root, i, a->op);
	case SENDRECV:
		return input(0, i, a->op);
	case ALLGATHER:
	case GATHER:
		return input((int)(i / c), i % c, a->op);
	case ALLTOALL:
		return input((int)(i / c), k * c + i % c, a->op);
	case SCATTER:
		return input(a->root, k * c + i, a->op);
	case REDUCE_SCATTER:
		return a->reduced[(k * c + i) % 9];
	default:
		return a->reduced[i % 9];
	}
}

/* Wrong elements in slice @j of rank @k's output. */
static long check_slice(struct ar *a, const struct shape *sh, int k,
			unsigned int j, nnp_result_t *r)
{
	const void *got;
	long wrong = 0;
	size_t i;

	*r = nnp_memcpy_async(a->s[k], a->out[k], 0, a->recv[k],
			      j * a->slice + out_off(a, sh, k),
			      sh->out_n * dtype_bytes(a->t));
	if (*r == NNP_SUCCESS)
		*r = nnp_stream_synchronize(a->s[k]);
	if (*r == NNP_SUCCESS)
		*r = nnp_mem_map(a->out[k], (void **)&got);
	for (i = 0; i < sh->out_n && *r == NNP_SUCCESS; i++) {
		double v = get(a->t, got, i), want = want_at(a, sh, k, i);

		if (coll_reduces(a->b.coll))
			wrong += !reduction_matches(a->t, a->op, a->b.n, want, v);
		else
			wrong += v != want;
	}
	return wrong;
}

/* Wrong elements in the outputs of every rank, every slice. */
static long check(struct ar *a, const struct shape *sh, nnp_result_t *r)
{
	long wrong = 0;
	unsigned int j;
	int k;

	for (k = 0; k < a->b.n && *r == NNP_SUCCESS; k++)
		for (j = 0; j < a->b.agg && writes(a, k) && *r == NNP_SUCCESS; j++)
			wrong += check_slice(a, sh, k, j, r);
	return wrong;
}

/*
 * Before each collective, outside its timing: every rank's output poisoned
 * (0x7f bytes: in every type a value no input or answer is, NaN in half),
 * so a collective that left it alone fails the check, and in place its
 * input loaded again, which the collective before overwrote. Both are
 * done before it returns: a memset still queued when the clock starts
 * would be timed with the collective.
 */
static nnp_result_t prepare(struct ar *a, const struct shape *sh)
{
	size_t n = sh->in_n > sh->out_n ? sh->in_n : sh->out_n;
	nnp_result_t r = NNP_SUCCESS;
	unsigned int j;
	int k;

	for (k = 0; k < a->b.n && r == NNP_SUCCESS; k++)
		for (j = 0; j < a->b.agg && r == NNP_SUCCESS; j++)
			r = nnp_memset_async(a->s[k], a->recv[k], j * a->slice, 0x7f,
					     n * dtype_bytes(a->t));
	for (k = 0; k < a->b.n && r == NNP_SUCCESS; k++)
		r = nnp_stream_synchronize(a->s[k]);
	if (r == NNP_SUCCESS && sh->in_place)
		r = load(a, sh);
	return r;
}

/*
 * @reps rounds of every rank's collectives (b.agg in a group), each timed
 * by the host and the devices, the last checked (the wrong elements added
 * to @wrong); the times are per collective, averaged.
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
		if (*r == NNP_SUCCESS)
			*r = issue_all(a, sh);
		/* The host's time is of whole collectives, synchronized. */
		for (k = 0; k < a->b.n && *r == NNP_SUCCESS; k++)
			*r = nnp_stream_synchronize(a->s[k]);
		t.wall += now_s() - t0;
		stamp(a, sizeof(uint64_t), r);
		t.model += (model_ns(a, r) - a->bracket_ns) / 1e9;
		if (a->b.check && i + 1 == reps)
			*wrong += check(a, sh, r);
	}
	t.wall /= (double)reps * a->b.agg;
	t.model /= (double)reps * a->b.agg;
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


/*
 * Iterations at @size: --iters, or fewer so each size moves about --bytes
 * (a group's collectives together).
 */
static unsigned int reps_for(const struct ar *a, size_t size)
{
	size_t reps = a->b.bytes ? a->b.bytes / size / a->b.agg : a->b.iters;

	if (reps > a->b.iters)
		reps = a->b.iters;
	return reps ? (unsigned int)reps : 1;
}

/* Every size of one type and reduction: a row each. */
static long bench_rows(struct ar *a, const struct bench_args *z, struct report *rp,
		       nnp_result_t *r)
{
	long total_wrong = 0;
	size_t size;

	*r = fill_inputs(a);
	for (size = z->min; size <= z->max && *r == NNP_SUCCESS; size *= z->step) {
		struct shape sh = shape_of(a, size, false);
		size_t esize = dtype_bytes(a->t);
		struct bench_row row = {
			(sh.in_n > sh.out_n ? sh.in_n : sh.out_n) * esize,
			sh.in_n > sh.out_n ? sh.in_n : sh.out_n, a->t, a->op,
			coll_reduces(a->b.coll),
		};
		unsigned int reps = reps_for(a, size);
		int pass;

		if (!sh.count)
			continue;
		report_row_start(rp, &row);
		for (pass = 0; pass < 2 && *r == NNP_SUCCESS; pass++) {
			struct timing t;
			long wrong;

			sh.in_place = pass;
			t = measure(a, &sh, reps, (unsigned int)a->b.trials, &wrong, r);
			total_wrong += wrong;
			report_pass(rp, pass, t, wrong);
		}
		report_row_end(rp);
	}
	return total_wrong;
}

static int bench(struct ar *a, const struct bench_args *z, enum bench_form form)
{
	struct report rp = { .form = form, .setup = &a->b };
	int t0 = z->type < 0 ? 0 : z->type, t1 = z->type < 0 ? NNP_INT64 : z->type;
	int o0 = z->op < 0 ? 0 : z->op, o1 = z->op < 0 ? NNP_AVG : z->op;
	nnp_result_t r = NNP_SUCCESS;
	long total_wrong = 0;
	int t, op;

	if (form == FORM_JSON)
		rp.doc = jo_obj(NULL, NULL);
	report_head(&rp);
	for (t = t0; t <= t1 && r == NNP_SUCCESS; t++) {
		for (op = o0; op <= o1 && r == NNP_SUCCESS; op++) {
			a->t = (nnp_dtype_t)t;
			a->op = (nnp_redop_t)op;
			total_wrong += bench_rows(a, z, &rp, &r);
		}
	}
	report_end(&rp, total_wrong, r);
	if (r != NNP_SUCCESS)
		return nnptool_fail(coll_name[a->b.coll], r);
	return total_wrong ? NNPTOOL_EXIT_ERROR : NNPTOOL_EXIT_OK;
}

/*
 * Every device's stream, buffers (the send and receive ones of b.agg
 * slices of @max), the communicator of them all, and the stamps' cost.
 */
static nnp_result_t setup(struct ar *a, size_t max)
{
	nnp_result_t r = nnp_device_count(&a->b.n);
	size_t group = max * a->b.agg;
	int k;

	if (r == NNP_SUCCESS && a->b.n > MAXDEV)
		a->b.n = MAXDEV;
	a->slice = max;
	for (k = 0; k < a->b.n && r == NNP_SUCCESS; k++) {
		r = nnp_device_open(k, &a->dev[k]);
		if (r == NNP_SUCCESS)
			r = nnp_stream_create(a->dev[k], &a->s[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a->dev[k], NNP_MEM_DEVICE, group, 0, &a->send[k]);
		if (r == NNP_SUCCESS)
			r = nnp_mem_alloc(a->dev[k], NNP_MEM_DEVICE, group, 0, &a->recv[k]);
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
	}
	if (r == NNP_SUCCESS)
		r = nnp_comm_init_all(a->dev, a->b.n, a->comm);
	/* The stamps' own cost (a command's overhead), taken off each timing. */
	stamp(a, 0, &r);
	stamp(a, sizeof(uint64_t), &r);
	a->bracket_ns = model_ns(a, &r);
	return r;
}

static void teardown(struct ar *a)
{
	int k;

	for (k = 0; k < a->b.n; k++) {
		nnp_comm_destroy(a->comm[k]);
		nnp_mem_free(a->stamp_host[k]);
		nnp_mem_free(a->stamp[k]);
		nnp_mem_free(a->out[k]);
		nnp_mem_free(a->in[k]);
		nnp_mem_free(a->recv[k]);
		nnp_mem_free(a->send[k]);
		nnp_stream_destroy(a->s[k]);
		nnp_device_close(a->dev[k]);
	}
}

/* A root or peer past the ranks: said; exit code 2. */
static int past_ranks(const struct nnptool_cmd *cmd, const char *what,
		      unsigned long v, int least, int n)
{
	fprintf(stderr, "nnptool: %s: %s %lu: one of ranks %d to %d\n",
		cmd->name, what, v, least, n - 1);
	return NNPTOOL_EXIT_USAGE;
}

int cmd_bench_coll(struct nnptool_opts *o, int argc, char **argv)
{
	static char name[32];
	const struct nnptool_cmd cmd = {
		name, BENCH_ARGS_USAGE, BENCH_ARGS_SHORT, bench_long_opts, 0, 0,
	};
	struct bench_args z = { 8, 4u << 20, 2, NNP_FLOAT32, NNP_SUM, NULL, NULL, NULL,
			   0, 1, false };
	struct ar a = { .b = { .type_arg = "float", .op_arg = "sum", .agg = 1,
			       .iters = 5, .trials = 1, .check = true } };
	nnp_result_t r;
	int ret;

	for (a.b.coll = 0; a.b.coll < NCOLL; a.b.coll++)
		if (!strcmp(argv[0], coll_name[a.b.coll]))
			break;
	if (a.b.coll == NCOLL) {
		fprintf(stderr, "nnptool: bench: unknown benchmark '%s' (nnptool bench --help)\n",
			argv[0]);
		return NNPTOOL_EXIT_USAGE;
	}
	snprintf(name, sizeof(name), "bench %s", coll_name[a.b.coll]);
	ret = bench_parse(&cmd, o, argc, argv, &a.b, &z);
	if (ret >= 0)
		return ret;
	if (!coll_reduces(a.b.coll)) {
		a.b.op_arg = "none";
		z.op = NNP_SUM;
	}
	a.b.root = coll_has_root(a.b.coll) ? z.root : (unsigned long)-1;
	a.root = coll_has_root(a.b.coll) ? (int)z.root : 0;
	a.b.peer = (int)z.peer;
	r = setup(&a, z.max);
	if (r == NNP_SUCCESS && a.b.coll == SENDRECV && a.b.peer >= a.b.n)
		ret = past_ranks(&cmd, "--peer", z.peer, 1, a.b.n);
	else if (r == NNP_SUCCESS && coll_has_root(a.b.coll) && z.root >= (unsigned long)a.b.n)
		ret = past_ranks(&cmd, "-r", z.root, 0, a.b.n);
	else
		ret = r == NNP_SUCCESS ? bench(&a, &z, o->json ? FORM_JSON : z.csv ?
					       FORM_CSV : FORM_TEXT) :
		      nnptool_fail(coll_name[a.b.coll], r);
	teardown(&a);
	return ret;
}
