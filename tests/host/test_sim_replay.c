// SPDX-License-Identifier: MIT
/*
 * nnp-sim --replay (tools/nnp-sim/trace_*.c, replay*.c): recorded jobs,
 * written here as trace files, projected on nnp-sim's chips against the
 * modeled clock's formulas; the host's timeline exact; the traces and
 * topologies it refuses, each with its message and exit status 2.
 *
 * In detail (docs/testing.md has the summary):
 * blocking allreduces of 2, 1 and 2 MiB with 10 and 20 us of compute
 * between them on a ring of 4 (algo ring): each device time within 1% of
 * the ring's alpha-beta formula of docs/architecture.md at NNP-T's figures
 * (test_fw_clock's derivation; 59213 and 31133 ns), the step the compute
 * plus those times within 1%, and exactly the compute plus the replayed
 * device times; --compute-scale 0.5 halves the compute part exactly; one
 * allreduce of 256 MiB on a 4x4 torus within 1% of four ports' bandwidth
 * bound, 2(n-1)/n S / 224 GB/s; an allreduce issued, C ns of compute,
 * then waited for: exposed max(0, T - C), overlapped the rest, the step
 * max(T, C), to the ns; DDP's buckets, allreduces of 2, 1 and 2 MiB
 * issued 1 us apart on a busy device, each started when the one before
 * ends (149559 ns), a later one on the idle device at its issue, the step
 * exactly 280692 ns; a send of 1 MiB on 2 chips within 1% of one link's
 * time; every kind the reader knows alone on a ring of 4 (algo ring, 1
 * MiB a rank) against its own figure from the model's parameters: exact
 * for allreduce 31133, broadcast 28718, reduce 29357, allgather 60971,
 * reduce_scatter 59479, send and recv 21773, scatter 48047 ns; gather
 * within a hop above 40661, alltoall within 20% above the busiest port's
 * 61090; no kind's time in another's range (send and recv one rule); a
 * recorded FSDP job of 4 ranks, 2 steps of blocking allgathers and an
 * overlapped reduce_scatter, its step, compute, comm and exposed time by
 * hand to the ns (256421 ns a step), recorded 398000 ns against replayed
 * 2 x 181421; the job's files at N = nranks: recorded_comm_ns the sum of
 * the latest ranks' end less start, an operation failed on one rank
 * skipped in both, --steps 2 halving the step; allgather and
 * reduce_scatter's counts split over N (1000 x 8 ranks: 125 on 64 chips,
 * 2667 on 3, at least 1), allreduce and broadcast's kept, a smaller
 * communicator's size kept; one chip: 2 us an allreduce, efficiency 1;
 * every kind of operation run on a 2x2 torus; the exact message and
 * status 2 for an empty file, a file not JSON, JSON without "nnp_trace",
 * version 2, a last line cut mid-object, a key missing, a key of the
 * wrong type, a torus of 6 chips, a POD of 24 in chassis of 16, a
 * communicator larger than N, two files of the same rank, a file lacking
 * an operation of the job, different operations at one seq, communicators
 * of different sizes at one seq; an operation line with a rank at or past
 * nranks, nranks 0, an unknown op (plain, and one of terminal escapes,
 * shown as \xHH), dtype or redop, no redop for a reduction, issue, wait
 * and done out of order either way, a successful operation without
 * either device time, a comm not of 16 hex digits
 */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "args.h"
#include "replay.h"

/* NNP-T's figures (fw_clock.c's defaults), as test_fw_clock uses them. */
#define OVERHEAD_NS	2000u
#define ALPHA_NS	1000u
#define ICL_MBPS	56000u
#define HBM_MBPS	1230000u
#define CHUNK		(64u << 10)

static char dir[64];
static char out[1 << 16], err[1 << 12];

/* One operation line of a trace. */
struct op {
	const char *kind;
	uint64_t count;			/* f32 elements */
	uint64_t issue, wait, done;
	uint32_t rank, nranks;		/* nranks 0: 1 */
	uint64_t seq;			/* 0: its index */
	uint64_t dev_start, dev_end;
	const char *status;		/* NULL: ok */
};

static const char *path_of(const char *name)
{
	static char p[4][128];
	static unsigned int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void write_text(const char *name, const char *text)
{
	FILE *f = fopen(path_of(name), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void write_trace(const char *name, const struct op *ops, size_t n)
{
	FILE *f = fopen(path_of(name), "w");
	size_t k;

	assert_non_null(f);
	fputs("{\"nnp_trace\":1,\"pid\":7,\"clock\":\"CLOCK_MONOTONIC\",\"start_ns\":0}\n", f);
	for (k = 0; k < n; k++) {
		const struct op *o = &ops[k];
		bool red = !strcmp(o->kind, "allreduce") ||
			   !strcmp(o->kind, "reduce_scatter") ||
			   !strcmp(o->kind, "reduce");

		fprintf(f, "{\"seq\":%llu,\"comm\":\"00000000000000aa\",\"rank\":%u,\"nranks\":%u,\"op\":\"%s\",\"dtype\":\"f32\",\"count\":%llu,\"bytes\":%llu,\"redop\":%s,\"root\":null,\"peer\":null,\"issue_ns\":%llu,\"wait_ns\":%llu,\"done_ns\":%llu,\"gap_ns\":0,\"dev_start_ns\":%llu,\"dev_end_ns\":%llu,\"status\":\"%s\"}\n",
			(unsigned long long)(o->seq ? o->seq : k), o->rank,
			o->nranks ? o->nranks : 1, o->kind,
			(unsigned long long)o->count,
			(unsigned long long)o->count * 4, red ? "\"sum\"" : "null",
			(unsigned long long)o->issue, (unsigned long long)o->wait,
			(unsigned long long)o->done,
			(unsigned long long)o->dev_start,
			(unsigned long long)o->dev_end,
			o->status ? o->status : "ok");
	}
	fclose(f);
}

/* @path into @buf, NUL-terminated. */
static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* replay_main() with its stdout in out[] and its stderr in err[]. */
static int replay(const char *files, enum topo_kind kind, unsigned int chips,
		  unsigned int rows, double scale, unsigned int steps)
{
	static const struct nnp_fw_config model;
	/* Names here are relative to the test's directory: each gets it. */
	size_t names = 1, cap;
	char o[128], e[128], *files_path, *p, *copy = strdup(files), *name;
	int save1 = dup(1), save2 = dup(2), fd1, fd2, rc;

	for (p = copy; *p; p++)
		names += *p == ',';
	cap = strlen(files) + names * (strlen(dir) + 1) + 1;
	files_path = p = calloc(1, cap);
	assert_true(copy && files_path);
	snprintf(o, sizeof(o), "%s", path_of("stdout"));
	snprintf(e, sizeof(e), "%s", path_of("stderr"));
	for (name = strtok(copy, ","); name; name = strtok(NULL, ","))
		p += sprintf(p, "%s%s", p == files_path ? "" : ",", path_of(name));
	fflush(stdout);
	fflush(stderr);
	fd1 = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fd2 = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd1 >= 0 && fd2 >= 0);
	dup2(fd1, 1);
	dup2(fd2, 2);
	rc = replay_main(&(struct replay_opts){
		.files = files_path, .chips = &chips, .nruns = 1, .kind = kind,
		.rows = rows, .chassis = 16, .model = &model, .compute_scale = scale,
		.steps = steps, .json = true,
	});
	fflush(stdout);
	fflush(stderr);
	dup2(save1, 1);
	dup2(save2, 2);
	close(fd1);
	close(fd2);
	close(save1);
	close(save2);
	slurp(o, out, sizeof(out));
	slurp(e, err, sizeof(err));
	free(files_path);
	free(copy);
	return rc;
}

/* @name's job: read, checked, each op's device time on @n chips of @t. */
static void device_times(const char *name, enum topo_kind kind, unsigned int n,
			 uint32_t algo, struct trace_file *f, struct trace_job *j,
			 uint64_t *ns)
{
	static const struct nnp_fw_config model;
	struct topo t;

	assert_int_equal(trace_read(path_of(name), f), 0);
	assert_int_equal(trace_job(f, 1, j), 0);
	assert_int_equal(topo_shape(&t, kind, n, 0, 16), 0);
	assert_int_equal(replay_device(j, &t, n, algo, &model, ns), 0);
}

static void done_with(struct trace_file *f, struct trace_job *j)
{
	trace_job_free(j);
	trace_free(f);
}

/*
 * The device time of @op alone, written to @name, on @n chips of @kind
 * with allreduce algorithm @algo.
 */
static uint64_t one_op_ns(const char *name, const struct op *op,
			  enum topo_kind kind, unsigned int n, uint32_t algo)
{
	struct trace_file f;
	struct trace_job j;
	uint64_t ns[1];

	write_trace(name, op, 1);
	device_times(name, kind, n, algo, &f, &j, ns);
	done_with(&f, &j);
	return ns[0];
}

/*
 * Modeled ns to send @seg bytes in packets of @packet bytes, each
 * rounded down to the ns as fw_clock.c does.
 */
static uint64_t wire_ns(uint64_t seg, uint64_t packet)
{
	uint64_t ns = 0, left;

	for (left = seg; left; left -= left < packet ? left : packet)
		ns += (left < packet ? left : packet) * 1000 / ICL_MBPS;
	return ns;
}

/* Modeled ns of one pass of @bytes through device memory. */
static uint64_t mem_ns(uint64_t bytes)
{
	return bytes * 1000 / HBM_MBPS;
}

/*
 * A ring allreduce of @bytes on @n chips whose steps keep the port busy
 * (k >= 4 chunks of 64 KiB a step: alpha and a chunk's fold, 1160 ns, fit
 * in k - 1 chunks' wire time): overhead + 2(n-1) k w + alpha + the last
 * chunk's copy pass (test_fw_clock's test_defaults_and_busy_times).
 */
static uint64_t ring_ns(unsigned int n, uint64_t bytes)
{
	return OVERHEAD_NS + 2 * (n - 1) * wire_ns(bytes / n, CHUNK) + ALPHA_NS +
	       mem_ns(CHUNK);
}

static void assert_within_1pct(double got, double want)
{
	print_message("  %.0f ns against %.0f (%+.3f%%)\n", got, want,
		      100 * (got / want - 1));
	assert_true(fabs(got / want - 1) < 0.01);
}

/* Blocking allreduces (waited for at once) and compute between them. */
static const struct op blocking[] = {
	{ .kind = "allreduce", .count = (2u << 20) / 4, .done = 5000 },
	{ .kind = "allreduce", .count = (1u << 20) / 4, .issue = 15000,
	  .wait = 15000, .done = 19000 },
	{ .kind = "allreduce", .count = (2u << 20) / 4, .issue = 39000,
	  .wait = 39000, .done = 45000 },
};
#define BLOCKING_COMPUTE_NS	(10000 + 20000)

static void test_ring_blocking(void **state)
{
	uint64_t ns[3], sum = 0, formula = 0;
	struct replay_time r, half;
	struct trace_file f;
	struct trace_job j;
	unsigned int k;

	(void)state;
	write_trace("blocking.jsonl", blocking, 3);
	device_times("blocking.jsonl", TOPO_RING, 4, NNP_FW_ALGO_RING, &f, &j, ns);
	for (k = 0; k < 3; k++) {
		uint64_t want = ring_ns(4, blocking[k].count * 4);

		assert_within_1pct((double)ns[k], (double)want);
		sum += ns[k];
		formula += want;
	}
	replay_host(&j, ns, 1, &r);
	assert_true(r.compute == BLOCKING_COMPUTE_NS);
	assert_true(r.comm == (double)sum);
	assert_true(r.exposed == (double)sum);
	assert_true(r.total == BLOCKING_COMPUTE_NS + (double)sum);
	assert_within_1pct(r.total, BLOCKING_COMPUTE_NS + (double)formula);
	/* Half the compute: exactly half that part, the rest unchanged. */
	replay_host(&j, ns, 0.5, &half);
	assert_true(half.compute == BLOCKING_COMPUTE_NS / 2);
	assert_true(half.total == r.total - BLOCKING_COMPUTE_NS / 2);
	assert_true(half.exposed == r.exposed);
	done_with(&f, &j);
}

/*
 * 256 MiB on a 4x4 torus (the 2D algorithm, four ports busy): the
 * bandwidth bound 2(n-1)/n S over 4 x 56 GB/s, within 1% (0.31%).
 */
static void test_torus_bandwidth(void **state)
{
	const struct op big = {
		.kind = "allreduce", .count = (256u << 20) / 4, .done = 1,
	};

	(void)state;
	assert_within_1pct((double)one_op_ns("torus.jsonl", &big, TOPO_TORUS, 16,
						     NNP_FW_ALGO_AUTO),
			   2.0 * 15 / 16 * (256u << 20) / (4 * ICL_MBPS / 1000.0));
}

/*
 * An allreduce issued, @compute ns of the host's work, then a wait: the
 * device's T runs under the compute; the host waits for what is left.
 */
static void overlap_case(uint64_t compute)
{
	const struct op op = {
		.kind = "allreduce", .count = (1u << 20) / 4, .wait = compute,
		.done = compute + 777,
	};
	struct replay_time r;
	struct trace_file f;
	struct trace_job j;
	uint64_t ns[1], exposed;

	write_trace("overlap.jsonl", &op, 1);
	device_times("overlap.jsonl", TOPO_RING, 4, NNP_FW_ALGO_AUTO, &f, &j, ns);
	replay_host(&j, ns, 1, &r);
	exposed = ns[0] > compute ? ns[0] - compute : 0;
	print_message("  T %llu ns, compute %llu: exposed %.0f\n",
		      (unsigned long long)ns[0], (unsigned long long)compute,
		      r.exposed);
	assert_true(r.compute == (double)compute);
	assert_true(r.comm == (double)ns[0]);
	assert_true(r.exposed == (double)exposed);
	assert_true(r.comm - r.exposed == (double)(ns[0] - exposed));
	assert_true(r.total == (double)(compute + exposed));
	done_with(&f, &j);
}

static void test_overlap(void **state)
{
	(void)state;
	overlap_case(5000);	/* T is about 12 us on a ring of 4 (auto) */
	overlap_case(40000);
}

/*
 * DDP's buckets: allreduces of 2, 1 and 2 MiB issued 1 us apart while the
 * device is still busy, all waited for from 3 us; then 100 us of compute
 * and a 1 MiB allreduce on the idle device. On a ring of 4 (algo ring):
 * each bucket starts when the one before ends, not at its issue, and the
 * last at its own issue, the device free by then.
 */
static void test_back_to_back(void **state)
{
	static const struct op ddp[] = {
		{ .kind = "allreduce", .count = (2u << 20) / 4, .wait = 3000,
		  .done = 3010 },
		{ .kind = "allreduce", .count = (1u << 20) / 4, .issue = 1000,
		  .wait = 3010, .done = 3020 },
		{ .kind = "allreduce", .count = (2u << 20) / 4, .issue = 2000,
		  .wait = 3020, .done = 3030 },
		{ .kind = "allreduce", .count = (1u << 20) / 4, .issue = 103030,
		  .wait = 103030, .done = 103040 },
	};
	const uint64_t big = ring_ns(4, 2u << 20), small = ring_ns(4, 1u << 20);
	/* The buckets end one after another, the host waiting from 3 us. */
	const uint64_t buckets = big + small + big;
	uint64_t ns[4];
	struct replay_time r;
	struct trace_file f;
	struct trace_job j;
	unsigned int k;

	(void)state;
	write_trace("ddp.jsonl", ddp, 4);
	device_times("ddp.jsonl", TOPO_RING, 4, NNP_FW_ALGO_RING, &f, &j, ns);
	for (k = 0; k < 4; k++)
		assert_int_equal(ns[k], k % 2 ? small : big);
	replay_host(&j, ns, 1, &r);
	print_message("  buckets end at %llu ns, the step %.0f\n",
		      (unsigned long long)buckets, r.total);
	assert_true(r.compute == 3000 + 100000);
	assert_true(r.comm == (double)(buckets + small));
	assert_true(r.exposed == (double)(buckets - 3000 + small));
	assert_true(r.total == (double)(buckets + 100000 + small));
	done_with(&f, &j);
}

/*
 * A send of 1 MiB on 2 chips: one link, 16 packets of 64 KiB back to
 * back, the latency once, the last packet's write into device memory.
 */
static void test_send(void **state)
{
	const struct op send = {
		.kind = "send", .count = (1u << 20) / 4, .done = 1, .nranks = 2,
	};

	(void)state;
	assert_within_1pct((double)one_op_ns("send.jsonl", &send, TOPO_RING, 2,
					     NNP_FW_ALGO_AUTO),
			   (double)(OVERHEAD_NS + wire_ns(1u << 20, CHUNK) +
				    ALPHA_NS + mem_ns(CHUNK)));
}

/*
 * Each kind of operation alone on a ring of 4 (algo ring), 1 MiB a rank
 * (a rank's part, or the buffer), against its own figure from the model's
 * parameters, exact or within a slack said with its reason.
 */
#define PART		(1u << 20)
#define COLL_CHUNK	(128u << 10)	/* fw_coll.c: 8 chunks a step of PART */
#define XCHG_PACKET	(256u << 10)	/* fw_xchg.c's packet */

struct figure {
	const char *kind;
	uint64_t lo, slack;	/* in [lo, lo + slack] ns */
};

/* Every kind of enum trace_kind. */
#define NKINDS	(TRACE_SCATTER + 1)

static void kind_figures(struct figure *f)
{
	const uint64_t n = 4, k = PART / COLL_CHUNK;
	const uint64_t w = wire_ns(COLL_CHUNK, COLL_CHUNK);
	const uint64_t xk = PART / XCHG_PACKET;
	const uint64_t xw = wire_ns(XCHG_PACKET, XCHG_PACKET);
	/* A copy of a rank's own part reads and writes it. */
	const uint64_t own = mem_ns(2 * PART);
	/* A chain from the root: see below. */
	const uint64_t chain = OVERHEAD_NS + (k + n - 2) * w + (n - 1) * ALPHA_NS;
	/* n - 1 ring steps of k chunks, then the last one's hop. */
	const uint64_t steps = OVERHEAD_NS + (n - 1) * k * w + ALPHA_NS;
	/* An exchange's last packet: its hop and its write where it lands. */
	const uint64_t land = ALPHA_NS + mem_ns(XCHG_PACKET);
	const uint64_t alltoall = OVERHEAD_NS + own + 3 * xk * xw + land;
	unsigned int i = 0;

	f[i++] = (struct figure){ "allreduce", ring_ns(n, PART), 0 };
	/*
	 * The root sends k chunks back to back; the last one is n - 2
	 * chunks' wire and n - 1 hops behind, each hop ending in the
	 * receiver's write of it (broadcast) or its fold, three passes
	 * (reduce).
	 */
	f[i++] = (struct figure){ "broadcast",
				  chain + (n - 1) * mem_ns(COLL_CHUNK), 0 };
	f[i++] = (struct figure){ "reduce",
				  chain + (n - 1) * mem_ns(3 * COLL_CHUNK), 0 };
	/*
	 * The port busy throughout the steps; the last chunk written
	 * (allgather, after its own part's copy into place) or folded
	 * (reduce_scatter).
	 */
	f[i++] = (struct figure){ "allgather",
				  own + steps + mem_ns(COLL_CHUNK), 0 };
	f[i++] = (struct figure){ "reduce_scatter",
				  steps + mem_ns(3 * COLL_CHUNK), 0 };
	/* One message over one link, in 64 KiB packets. */
	f[i++] = (struct figure){ "send", OVERHEAD_NS + wire_ns(PART, CHUNK) +
				  ALPHA_NS + mem_ns(CHUNK), 0 };
	f[i] = f[i - 1];
	f[i++].kind = "recv";
	/*
	 * Into root 0: rank 3's link carries its part and rank 2's, routed
	 * through it, 2 xk packets. Rank 2's first reaches rank 3 a packet
	 * and a hop after the start: the link may wait up to that hop,
	 * depending on which the host hands the port first.
	 */
	f[i++] = (struct figure){ "gather", OVERHEAD_NS + 2 * xk * xw + land,
				  ALPHA_NS };
	/*
	 * From root 0, after its own part's copy: its port 0 carries the
	 * parts of ranks 1 and 2, a packet each in turn, rank 2's last,
	 * which rank 1 forwards: a packet's wire and a hop more.
	 */
	f[i++] = (struct figure){ "scatter", OVERHEAD_NS + own + 2 * xk * xw +
				  ALPHA_NS + xw + land, 0 };
	/*
	 * Every chip's port 0 carries its parts for the next two ranks and
	 * forwards the previous rank's for the next: 3 xk packets, at
	 * least. The three flows take the port in the host's order, leaving
	 * it idle a hop here and there: within 20% (14.2% here).
	 */
	f[i++] = (struct figure){ "alltoall", alltoall, alltoall / 5 };
	/* A kind added to the reader needs its figure here. */
	assert_int_equal(i, NKINDS);
}

/* The exact figure of @kind on test_each_kind's ring. */
static uint64_t figure_ns(const char *kind)
{
	struct figure fig[NKINDS];
	unsigned int a;

	kind_figures(fig);
	for (a = 0; a < NKINDS && strcmp(fig[a].kind, kind); a++)
		;
	assert_true(a < NKINDS);
	assert_int_equal(fig[a].slack, 0);
	return fig[a].lo;
}

/* Send and recv are one rule: a message over one link (docs/trace.md). */
static bool p2p_kind(const char *kind)
{
	return !strcmp(kind, "send") || !strcmp(kind, "recv");
}

/*
 * Every kind the trace reader knows replayed by its own rule: each time in
 * its figure's range, and in no other's (send and recv share one rule),
 * so that any kind replayed by another's rule fails.
 */
static void test_each_kind(void **state)
{
	struct figure fig[NKINDS];
	uint64_t got[NKINDS];
	unsigned int a, b;

	(void)state;
	kind_figures(fig);
	for (a = 0; a < NKINDS; a++) {
		const struct op op = {
			.kind = fig[a].kind, .count = PART / 4, .done = 1,
			.nranks = 4,
		};

		got[a] = one_op_ns("kind.jsonl", &op, TOPO_RING, 4,
				   NNP_FW_ALGO_RING);
		print_message("  %-14s %7llu ns, figure %llu + [0, %llu]\n",
			      fig[a].kind, (unsigned long long)got[a],
			      (unsigned long long)fig[a].lo,
			      (unsigned long long)fig[a].slack);
		assert_in_range(got[a], fig[a].lo, fig[a].lo + fig[a].slack);
	}
	for (a = 0; a < NKINDS; a++)
		for (b = 0; b < NKINDS; b++)
			if (a != b && !(p2p_kind(fig[a].kind) &&
					p2p_kind(fig[b].kind)))
				assert_false(got[b] >= fig[a].lo &&
					     got[b] <= fig[a].lo + fig[a].slack);
}

static struct json_object *run_of(struct json_object **doc)
{
	struct json_object *runs;

	*doc = json_tokener_parse(out);
	assert_non_null(*doc);
	assert_true(json_object_object_get_ex(*doc, "runs", &runs));
	return json_object_array_get_idx(runs, 0);
}

static int64_t int_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_int64(v);
}

/*
 * Both ranks' files of a 2-rank job, on 2 chips: the recorded time of
 * each kept op is the latest end less the latest start; the op that
 * failed on rank 1 is skipped on both.
 */
static void test_job_recorded(void **state)
{
	struct op r0[] = {
		{ .kind = "allreduce", .count = 1u << 18, .done = 50000,
		  .nranks = 2, .dev_start = 1000, .dev_end = 21000 },
		{ .kind = "allreduce", .count = 1u << 18, .issue = 60000,
		  .wait = 60000, .done = 90000, .nranks = 2,
		  .dev_start = 30000, .dev_end = 52000 },
		{ .kind = "allreduce", .count = 1u << 16, .issue = 95000,
		  .wait = 95000, .done = 99000, .nranks = 2,
		  .dev_start = 60000, .dev_end = 64000 },
	};
	struct op r1[3];
	struct json_object *doc, *run, *v;
	unsigned int k;

	(void)state;
	memcpy(r1, r0, sizeof(r0));
	for (k = 0; k < 3; k++) {
		r1[k].rank = 1;
		r1[k].dev_start += 500;		/* rank 1's clock is ahead */
		r1[k].dev_end += 300 * k;
	}
	r1[1].status = "link_down";
	write_trace("r0.jsonl", r0, 3);
	write_trace("r1.jsonl", r1, 3);
	assert_int_equal(replay("r0.jsonl,r1.jsonl", TOPO_RING, 2, 0, 1, 2), 0);
	assert_string_equal(err, "");
	run = run_of(&doc);
	assert_true(json_object_object_get_ex(doc, "skipped", &v));
	assert_int_equal(json_object_get_int64(v), 1);
	/* (21000 - 1500) + (64000 + 600 - 60500) */
	assert_int_equal(int_of(run, "recorded_comm_ns"), 19500 + 4100);
	/* Per step rounded to the ns, the whole trace's time twice it. */
	assert_true(llabs(int_of(run, "replayed_comm_ns") -
			  2 * int_of(run, "comm_ns")) <= 1);
	assert_true(int_of(run, "comm_ns") > 0);
	/* The compute between the kept ops, 95000 - 50000, per step of 2. */
	assert_int_equal(int_of(run, "compute_ns"), 45000 / 2);
	assert_int_equal(int_of(run, "step_ns"),
			 45000 / 2 + int_of(run, "comm_ns"));
	json_object_put(doc);
	/* Not as many chips as ranks: nothing recorded to compare with. */
	assert_int_equal(replay("r0.jsonl,r1.jsonl", TOPO_RING, 4, 0, 1, 1), 0);
	run = run_of(&doc);
	assert_false(json_object_object_get_ex(run, "recorded_comm_ns", &v));
	json_object_put(doc);
}

/*
 * A recorded job of 4 ranks, FSDP's step twice, 10 us of compute between
 * the steps: a blocking allgather of 1 MiB parts, 40 us of forward, a
 * blocking allgather, 30 us of backward, a reduce_scatter issued and
 * waited for after 20 us more. Replayed on a ring of 4, --steps 2: the
 * figures of test_each_kind's rules, laid out by hand.
 */
static void test_job_by_hand(void **state)
{
	struct op step[] = {
		{ .kind = "allgather", .count = PART / 4, .done = 70000,
		  .dev_start = 1000, .dev_end = 69000 },
		{ .kind = "allgather", .count = PART / 4, .issue = 110000,
		  .wait = 110000, .done = 180000, .dev_start = 111000,
		  .dev_end = 179000 },
		{ .kind = "reduce_scatter", .count = PART / 4, .issue = 210000,
		  .wait = 230000, .done = 275000, .dev_start = 211000,
		  .dev_end = 274000 },
	};
	const uint64_t ag = figure_ns("allgather"), rs = figure_ns("reduce_scatter");
	struct json_object *doc, *run, *v;
	uint64_t one_step, recorded;
	struct op job[6];
	unsigned int k, r;
	char name[16];

	(void)state;
	for (r = 0; r < 4; r++) {
		for (k = 0; k < 6; k++) {
			uint64_t at = k < 3 ? 0 : 285000;	/* step 2 */

			job[k] = step[k % 3];
			job[k].issue += at;
			job[k].wait += at;
			job[k].done += at;
			job[k].dev_start += at;
			job[k].dev_end += at;
			job[k].rank = r;
			job[k].nranks = 4;
		}
		snprintf(name, sizeof(name), "fsdp%u.jsonl", r);
		write_trace(name, job, 6);
	}
	assert_int_equal(replay("fsdp0.jsonl,fsdp1.jsonl,fsdp2.jsonl,fsdp3.jsonl",
				TOPO_RING, 4, 0, 1, 2), 0);
	assert_string_equal(err, "");
	run = run_of(&doc);
	/* Waited for: both allgathers, the reduce_scatter less its 20 us. */
	one_step = ag + 40000 + ag + 30000 + 20000 + (rs - 20000);
	/* Per step: one step, and half the 10 us between the two. */
	assert_int_equal(int_of(run, "step_ns"), one_step + 5000);
	assert_int_equal(int_of(run, "compute_ns"), 90000 + 5000);
	assert_int_equal(int_of(run, "comm_ns"), 2 * ag + rs);
	assert_int_equal(int_of(run, "exposed_ns"), 2 * ag + rs - 20000);
	assert_int_equal(int_of(run, "overlapped_ns"), 20000);
	recorded = 2 * (68000 + 68000 + 63000);
	assert_int_equal(int_of(run, "recorded_comm_ns"), recorded);
	assert_int_equal(int_of(run, "replayed_comm_ns"), 2 * (2 * ag + rs));
	assert_true(json_object_object_get_ex(run, "comm_ratio", &v));
	assert_true(fabs(json_object_get_double(v) -
			 2.0 * (2 * ag + rs) / (double)recorded) < 0.00005);
	json_object_put(doc);
}

/*
 * Data parallelism's scaling: allreduce and broadcast keep their count;
 * allgather and reduce_scatter split the whole tensor over the chips, at
 * least an element each, as do alltoall, gather and scatter (reduce keeps
 * its count); a smaller communicator keeps its size. On one
 * chip an allreduce costs the command's overhead: efficiency 1. Every
 * kind of operation runs (a broadcast's or scatter's other ranks name no
 * source, a reduce's or gather's no destination), exchanges routed.
 */
static void test_scaling(void **state)
{
	const struct op one[] = {
		{ .kind = "allreduce", .count = 1000, .done = 10 },
		{ .kind = "broadcast", .count = 1000, .issue = 20, .wait = 20,
		  .done = 30 },
	};
	const struct op mixed[] = {
		{ .kind = "broadcast", .count = 1000, .done = 1, .nranks = 2 },
		{ .kind = "allgather", .count = 1000, .done = 1, .nranks = 2 },
		{ .kind = "reduce_scatter", .count = 1000, .done = 1, .nranks = 2 },
		{ .kind = "send", .count = 1000, .done = 1, .nranks = 2 },
		{ .kind = "recv", .count = 1000, .done = 1, .nranks = 2 },
		{ .kind = "allreduce", .count = 1000, .done = 1, .nranks = 2 },
		{ .kind = "reduce", .count = 1000, .done = 1, .nranks = 2 },
		{ .kind = "alltoall", .count = 1000, .done = 1, .nranks = 2 },
		{ .kind = "gather", .count = 1000, .done = 1, .nranks = 2 },
		{ .kind = "scatter", .count = 1000, .done = 1, .nranks = 2 },
	};
	struct trace_op op = { .count = 1000, .nranks = 8 };
	struct trace_job j = { .nranks = 8 };
	struct json_object *doc, *run, *v;

	(void)state;
	op.kind = TRACE_ALLREDUCE;
	assert_int_equal(replay_count(&op, 64), 1000);
	op.kind = TRACE_BROADCAST;
	assert_int_equal(replay_count(&op, 64), 1000);
	op.kind = TRACE_ALLGATHER;
	assert_int_equal(replay_count(&op, 64), 125);
	assert_int_equal(replay_count(&op, 3), 2667);
	assert_int_equal(replay_count(&op, 1), 8000);
	op.kind = TRACE_REDUCE_SCATTER;
	assert_int_equal(replay_count(&op, 16000), 1);
	op.kind = TRACE_REDUCE;
	assert_int_equal(replay_count(&op, 64), 1000);
	op.kind = TRACE_ALLTOALL;
	assert_int_equal(replay_count(&op, 64), 125);
	op.kind = TRACE_GATHER;
	assert_int_equal(replay_count(&op, 3), 2667);
	op.kind = TRACE_SCATTER;
	assert_int_equal(replay_count(&op, 1), 8000);
	assert_int_equal(replay_chips(&j, &op, 64), 64);
	op.nranks = 4;
	assert_int_equal(replay_chips(&j, &op, 64), 4);

	write_trace("one_chip.jsonl", one, 2);
	assert_int_equal(replay("one_chip.jsonl", TOPO_TORUS, 1, 0, 1, 1), 0);
	run = run_of(&doc);
	assert_int_equal(int_of(run, "comm_ns"), 2 * OVERHEAD_NS);
	assert_int_equal(int_of(run, "step_ns"), 2 * OVERHEAD_NS + 10);
	assert_true(json_object_object_get_ex(run, "efficiency", &v));
	assert_true(json_object_get_double(v) == 1.0);
	json_object_put(doc);
	/* Every kind of operation runs on a 2 x 2 torus. */
	write_trace("mixed.jsonl", mixed, 10);
	assert_int_equal(replay("mixed.jsonl", TOPO_TORUS, 4, 0, 1, 1), 0);
	assert_string_equal(err, "");
	run = run_of(&doc);
	assert_true(int_of(run, "comm_ns") > 10 * OVERHEAD_NS);
	json_object_put(doc);
}

/* replay_main() refuses with status 2 and exactly @want on stderr. */
static void refused(const char *files, enum topo_kind kind, unsigned int n,
		    unsigned int rows, const char *want)
{
	assert_int_equal(replay(files, kind, n, rows, 1, 1), 2);
	assert_string_equal(err, want);
	assert_string_equal(out, "");
}

static const char op_line[] =
	"{\"seq\":0,\"comm\":\"00000000000000aa\",\"rank\":0,\"nranks\":1,\"op\":\"allreduce\",\"dtype\":\"f32\",\"count\":44,\"bytes\":176,\"redop\":\"sum\",\"root\":null,\"peer\":null,\"issue_ns\":1,\"wait_ns\":2,\"done_ns\":3,\"gap_ns\":0,\"dev_start_ns\":5,\"dev_end_ns\":9,\"status\":\"ok\"}\n";
static const char header[] =
	"{\"nnp_trace\":1,\"pid\":7,\"clock\":\"CLOCK_MONOTONIC\",\"start_ns\":0}\n";

/* A file of @text refused: "nnp-sim: PATH" and @why on stderr, status 2. */
static void bad_file(const char *name, const char *text, const char *why)
{
	char want[512];

	write_text(name, text);
	snprintf(want, sizeof(want), "nnp-sim: %s%s\n", path_of(name), why);
	refused(name, TOPO_RING, 2, 0, want);
}

/* @text: the header and op_line with its first @from made @to. */
static void op_with(char *text, size_t size, const char *from, const char *to)
{
	const char *at = strstr(op_line, from);

	assert_non_null(at);
	snprintf(text, size, "%s%.*s%s%s", header, (int)(at - op_line), op_line, to,
		 at + strlen(from));
}

/* Lines a trace's writer could not have written: each refused, exactly. */
static void test_bad_ops(void **state)
{
	static const struct {
		const char *from, *to, *why;
	} cases[] = {
		{ "\"rank\":0", "\"rank\":1", ":2: rank 1 of 1" },
		{ "\"rank\":0", "\"rank\":7", ":2: rank 7 of 1" },
		{ "\"nranks\":1", "\"nranks\":0", ":2: rank 0 of 0" },
		{ "\"dtype\":\"f32\"", "\"dtype\":\"f8\"", ":2: unknown dtype \"f8\"" },
		{ "\"redop\":\"sum\"", "\"redop\":\"mean\"", ":2: unknown redop \"mean\"" },
		{ "\"redop\":\"sum\"", "\"redop\":null",
		  ":2: \"redop\" is null for a reduction" },
		{ "\"issue_ns\":1", "\"issue_ns\":3", ":2: not issue_ns <= wait_ns <= done_ns" },
		{ "\"done_ns\":3", "\"done_ns\":1", ":2: not issue_ns <= wait_ns <= done_ns" },
		{ "\"dev_end_ns\":9", "\"dev_end_ns\":null",
		  ":2: \"dev_start_ns\" or \"dev_end_ns\" is null, status \"ok\"" },
		{ "\"dev_start_ns\":5", "\"dev_start_ns\":null",
		  ":2: \"dev_start_ns\" or \"dev_end_ns\" is null, status \"ok\"" },
		{ "\"comm\":\"00000000000000aa\"", "\"comm\":\"aa\"",
		  ":2: \"comm\" is not 16 hex digits" },
		{ "\"count\":44", "\"count\":-1",
		  ":2: \"count\" is not a non-negative integer" },
		{ "\"status\":\"ok\"}", "\"status\":\"ok\"} x",
		  ":2: not a JSON object" },
	};
	char text[2048], name[16];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		op_with(text, sizeof(text), cases[i].from, cases[i].to);
		snprintf(name, sizeof(name), "op%u", i);
		bad_file(name, text, cases[i].why);
	}
}

static void test_bad_files(void **state)
{
	char text[2048];

	(void)state;
	bad_file("empty", "", ": empty, not a trace");
	bad_file("foreign", "this is not JSON\n",
		 ":1: not a trace: the first line is not a JSON object");
	bad_file("other.json", "{\"name\": \"nccl\"}\n",
		 ":1: not a trace: no \"nnp_trace\" in the first line");
	bad_file("v2", "{\"nnp_trace\":2}\n",
		 ":1: trace format version 2; this nnp-sim reads version 1");
	/* The last line cut in the middle of its object. */
	snprintf(text, sizeof(text), "%s%s%.*s", header, op_line, 90, op_line);
	bad_file("cut", text, ":3: truncated: the line ends inside its object");
	snprintf(text, sizeof(text), "%s%s", header, op_line);
	memcpy(strstr(text, "\"count\""), "\"kount\"", 7);
	bad_file("nokey", text, ":2: no \"count\"");
	snprintf(text, sizeof(text), "%s%s", header, op_line);
	memcpy(strstr(text, "\"count\":44"), "\"count\":\"\"", 10);
	bad_file("badtype", text, ":2: \"count\" is not a non-negative integer");
	/* A name it does not know; one that would drive a terminal, escaped. */
	op_with(text, sizeof(text), "\"allreduce\"", "\"allreducx\"");
	bad_file("badop", text, ":2: unknown op \"allreducx\"");
	op_with(text, sizeof(text), "\"allreduce\"", "\"\\u001b]0;x\\u0007\"");
	bad_file("escop", text, ":2: unknown op \"\\x1b]0;x\\x07\"");
}

static void test_bad_topologies(void **state)
{
	const struct op op = { .kind = "allreduce", .count = 4, .done = 3 };
	const struct op sub[] = {
		{ .kind = "allreduce", .count = 4, .done = 3, .nranks = 8 },
		{ .kind = "allreduce", .count = 4, .issue = 4, .wait = 5,
		  .done = 6, .nranks = 4 },
	};
	char want[512];

	(void)state;
	write_trace("one.jsonl", &op, 1);
	/* The snake through a torus needs an even number of rows. */
	refused("one.jsonl", TOPO_TORUS, 6, 3,
		"nnp-sim: 6 chips make no torus with an even number (2 or more) of rows of 2 or more\n");
	refused("one.jsonl", TOPO_TORUS, 7, 0,
		"nnp-sim: 7 chips make no torus with an even number (2 or more) of rows of 2 or more\n");
	refused("one.jsonl", TOPO_POD, 24, 0,
		"nnp-sim: 24 chips make no pod with an even number (2 or more) of rows of 2 or more\n");
	write_trace("sub.jsonl", sub, 2);
	snprintf(want, sizeof(want), "nnp-sim: %s:3: a communicator of 4 ranks does not fit on 2 chips\n",
		 path_of("sub.jsonl"));
	refused("sub.jsonl", TOPO_RING, 2, 0, want);
	/* On as many chips as its ranks, it fits. */
	assert_int_equal(replay("sub.jsonl", TOPO_RING, 4, 0, 1, 1), 0);
	assert_string_equal(err, "");
}

/* One file more than the chips nnp-sim models: refused before it is read. */
static void test_too_many_files(void **state)
{
	const struct op op = { .kind = "allreduce", .count = 4, .done = 3 };
	char *files = malloc(MAX_CHIPS * 2 + 2), *p = files;
	unsigned int k;

	(void)state;
	assert_non_null(files);
	write_trace("a", &op, 1);
	for (k = 0; k <= MAX_CHIPS; k++)
		p += sprintf(p, "%sa", k ? "," : "");
	refused(files, TOPO_RING, 2, 0, "nnp-sim: 1024 trace files at most\n");
	free(files);
}

/*
 * The job's timeline is its lowest rank's, in whatever order its files
 * come: between its two allreduces rank 0 computes 1000 ns, rank 1 5000.
 */
static void test_timeline_of_rank_0(void **state)
{
	struct op r0[] = {
		{ .kind = "allreduce", .count = 4, .done = 2000, .nranks = 2 },
		{ .kind = "allreduce", .count = 4, .issue = 3000, .wait = 3000,
		  .done = 9000, .nranks = 2 },
	};
	struct op r1[2];
	struct json_object *doc;

	(void)state;
	memcpy(r1, r0, sizeof(r0));
	r1[0].rank = r1[1].rank = 1;
	r1[1].issue = r1[1].wait = 7000;
	write_trace("t0.jsonl", r0, 2);
	write_trace("t1.jsonl", r1, 2);
	assert_int_equal(replay("t1.jsonl,t0.jsonl", TOPO_RING, 2, 0, 1, 1), 0);
	assert_int_equal(int_of(run_of(&doc), "compute_ns"), 1000);
	json_object_put(doc);
}

static void test_not_one_job(void **state)
{
	struct op a[] = {
		{ .kind = "allreduce", .count = 4, .done = 3, .nranks = 2 },
		{ .kind = "allreduce", .count = 4, .issue = 4, .wait = 5,
		  .done = 6, .nranks = 2 },
	};
	struct op b[2];
	char want[512];

	(void)state;
	write_trace("a.jsonl", a, 2);
	snprintf(want, sizeof(want), "nnp-sim: %s:2 and %s:2 are not the ranks of one job: the same rank (communicator 00000000000000aa, seq 0)\n",
		 path_of("a.jsonl"), path_of("a.jsonl"));
	refused("a.jsonl,a.jsonl", TOPO_RING, 2, 0, want);

	memcpy(b, a, sizeof(a));
	b[0].rank = b[1].rank = 1;
	write_trace("b1.jsonl", b, 1);
	snprintf(want, sizeof(want), "nnp-sim: the files are not the ranks of one job: 1 of the 2 hold seq 1 of communicator 00000000000000aa (%s:3)\n",
		 path_of("a.jsonl"));
	refused("a.jsonl,b1.jsonl", TOPO_RING, 2, 0, want);

	memcpy(b, a, sizeof(a));
	b[0].rank = 1;
	b[0].nranks = 3;
	write_trace("b3.jsonl", b, 1);
	snprintf(want, sizeof(want), "nnp-sim: %s:2 and %s:2 are not the ranks of one job: communicators of different sizes (communicator 00000000000000aa, seq 0)\n",
		 path_of("a.jsonl"), path_of("b3.jsonl"));
	refused("a.jsonl,b3.jsonl", TOPO_RING, 4, 0, want);

	memcpy(b, a, sizeof(a));
	b[0].rank = b[1].rank = 1;
	b[1].kind = "broadcast";
	write_trace("b2.jsonl", b, 2);
	snprintf(want, sizeof(want), "nnp-sim: %s:3 and %s:3 are not the ranks of one job: different operations (communicator 00000000000000aa, seq 1)\n",
		 path_of("a.jsonl"), path_of("b2.jsonl"));
	refused("a.jsonl,b2.jsonl", TOPO_RING, 2, 0, want);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_sim_replay.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_blocking),
		cmocka_unit_test(test_torus_bandwidth),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_back_to_back),
		cmocka_unit_test(test_send),
		cmocka_unit_test(test_each_kind),
		cmocka_unit_test(test_job_recorded),
		cmocka_unit_test(test_job_by_hand),
		cmocka_unit_test(test_scaling),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_bad_ops),
		cmocka_unit_test(test_bad_topologies),
		cmocka_unit_test(test_too_many_files),
		cmocka_unit_test(test_timeline_of_rank_0),
		cmocka_unit_test(test_not_one_job),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
