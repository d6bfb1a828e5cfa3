// SPDX-License-Identifier: MIT
/*
 * nnp-sim: the firmware simulator's collectives on up to 1024 chips in one
 * process, on the modeled clock: the modeled time, latency and bus
 * bandwidth an NNP-T fabric would reach, per message size, as a table,
 * JSON, and a gnuplot plot against chips and size. See docs/nnp-sim.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "replay.h"
#include "report.h"
#include "sim.h"
#include "sweep.h"
#include "topo.h"

struct opts {
	enum sweep_coll coll;
	enum topo_kind kind;
	unsigned int chips[MAX_RUNS], nruns;
	unsigned int rows, chassis;
	uint64_t min_bytes, max_bytes;
	unsigned int factor;
	bool timing_only, json;
	uint32_t algo;		/* NNP_ALGO or --algo */
	const char *plot_dir;
	struct nnp_fw_config model;
	const char *replay;	/* --replay FILE[,FILE...] */
	double compute_scale;
	unsigned int steps;
};

static void usage(FILE *f)
{
	fputs("usage: nnp-sim [--coll allreduce|broadcast|allgather|reduce_scatter|reduce|\n"
	      "                      alltoall|gather|scatter]\n"
	      "               [--topo ring|torus|pod] [--chips N[,N...]] [--rows R]\n"
	      "               [--chassis 8|16] [--min-bytes B] [--max-bytes B] [--factor F]\n"
	      "               [--algo auto|ring|bidir|rings|torus] (or NNP_ALGO)\n"
	      "               [--timing-only] [--json] [--plot DIR]\n"
	      "               [--icl-mbps M] [--icl-latency-ns NS] [--hbm-mbps M]\n"
	      "               [--cmd-overhead-ns NS]\n"
	      "       nnp-sim --replay FILE[,FILE...] [--compute-scale F] [--steps S]\n"
	      "               and the options above but the sizes and --plot\n"
	      "Runs float collectives (allreduces by default) on the firmware simulator's\n"
	      "chips and prints the\n"
	      "modeled time and bus bandwidth per size; or projects a recorded job's\n"
	      "step on the chips (docs/nnp-sim.md, docs/trace.md).\n", f);
}

/* A factor of 0 or more for the host's compute. */
static int parse_scale(const char *arg, double *v)
{
	char *end;

	*v = strtod(arg, &end);
	return end == arg || *end || !(*v >= 0) ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "coll", required_argument, NULL, 'C' },
		{ "topo", required_argument, NULL, 't' },
		{ "chips", required_argument, NULL, 'n' },
		{ "rows", required_argument, NULL, 'r' },
		{ "chassis", required_argument, NULL, 'c' },
		{ "min-bytes", required_argument, NULL, 'a' },
		{ "max-bytes", required_argument, NULL, 'b' },
		{ "factor", required_argument, NULL, 'f' },
		{ "timing-only", no_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'p' },
		{ "icl-mbps", required_argument, NULL, 'I' },
		{ "icl-latency-ns", required_argument, NULL, 'L' },
		{ "hbm-mbps", required_argument, NULL, 'H' },
		{ "cmd-overhead-ns", required_argument, NULL, 'O' },
		{ "algo", required_argument, NULL, 'A' },
		{ "replay", required_argument, NULL, 'R' },
		{ "compute-scale", required_argument, NULL, 'S' },
		{ "steps", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *algo = getenv("NNP_ALGO");
	int ch, bad = 0;

	*o = (struct opts){
		.kind = TOPO_RING, .chips = { 8 }, .nruns = 1, .chassis = 16,
		.min_bytes = 8, .max_bytes = 256u << 20, .factor = 8,
		.compute_scale = 1, .steps = 1,
	};
	while (!bad && (ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'C': bad = sweep_coll_parse(optarg, &o->coll); break;
		case 't': bad = topo_kind_parse(optarg, &o->kind); break;
		case 'n': bad = parse_chips(optarg, o->chips, &o->nruns); break;
		case 'r': bad = parse_u32(optarg, &o->rows); break;
		case 'c': bad = parse_u32(optarg, &o->chassis); break;
		case 'a': bad = parse_size(optarg, &o->min_bytes); break;
		case 'b': bad = parse_size(optarg, &o->max_bytes); break;
		case 'f': bad = parse_u32(optarg, &o->factor); break;
		case 'T': o->timing_only = true; break;
		case 'j': o->json = true; break;
		case 'p': o->plot_dir = optarg; break;
		case 'I': bad = parse_u32(optarg, &o->model.icl_mbps); break;
		case 'L': bad = parse_u32(optarg, &o->model.icl_latency_ns); break;
		case 'H': bad = parse_u32(optarg, &o->model.hbm_mbps); break;
		case 'O': bad = parse_u32(optarg, &o->model.cmd_overhead_ns); break;
		case 'A': algo = optarg; break;
		case 'R': o->replay = optarg; break;
		case 'S': bad = parse_scale(optarg, &o->compute_scale); break;
		case 's': bad = parse_u32(optarg, &o->steps) || !o->steps; break;
		case 'h': usage(stdout); exit(0);
		default: bad = 1;
		}
	}
	if (!bad && algo && topo_algo_parse(algo, &o->algo)) {
		fprintf(stderr, "nnp-sim: no algorithm %s\n", algo);
		bad = 1;
	}
	/* Float elements, at least one. */
	if (bad || optind != argc || o->factor < 2 || o->min_bytes < 4 ||
	    o->max_bytes < o->min_bytes || o->max_bytes > (1ull << 30)) {
		usage(stderr);
		return -1;
	}
	return 0;
}

static int run(const struct opts *o, unsigned int n, struct report *rep)
{
	struct topo t;
	struct sim s;
	uint64_t bytes;
	int bad;

	uint64_t buf = sweep_buf_bytes(o->coll, o->max_bytes);

	if (topo_shape(&t, o->kind, n, o->rows, o->chassis))
		return -1;
	bad = sim_create(&s, n, buf > SIM_BARRIER_BYTES(n) ? buf : SIM_BARRIER_BYTES(n),
			 o->timing_only, &o->model) ||
	      topo_wire(&s, &t) || topo_comm(&s, &t) ||
	      topo_set_algo(&s, &t, o->algo);
	if (bad)
		fprintf(stderr, "nnp-sim: could not set up %u chips\n", n);
	report_begin(rep, &t, n, o->algo);
	for (bytes = o->min_bytes; !bad; bytes *= o->factor) {
		uint64_t ns = 0;

		if (bytes > o->max_bytes)
			bytes = o->max_bytes;
		bytes &= ~3ull;
		bad = sweep_run(&s, o->coll, bytes, &ns);
		if (!bad)
			report_row(rep, n, bytes, ns, sweep_bus(o->coll, n));
		bad = bad < 0;
		if (bytes == o->max_bytes)
			break;
	}
	report_end(rep);
	sim_destroy(&s);
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct report rep;
	struct opts o;
	unsigned int r;
	int bad = 0;

	if (parse_args(argc, argv, &o))
		return 2;
	if (o.replay)
		return replay_main(&(struct replay_opts){
			.files = o.replay, .chips = o.chips, .nruns = o.nruns,
			.kind = o.kind, .rows = o.rows, .chassis = o.chassis,
			.algo = o.algo, .model = &o.model,
			.compute_scale = o.compute_scale, .steps = o.steps,
			.json = o.json,
		});
	report_open(&rep, o.json, o.plot_dir, o.timing_only, &o.model,
		    sweep_coll_name(o.coll));
	for (r = 0; r < o.nruns && !bad; r++)
		bad = run(&o, o.chips[r], &rep);
	if (report_close(&rep))
		bad = 1;
	return bad ? 1 : 0;
}
