// SPDX-License-Identifier: MIT
/* nnp-sim's output: see report.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

void report_open(struct report *r, bool json, const char *plot_dir,
		 bool timing_only, const struct nnp_fw_config *model,
		 const char *coll)
{
	char path[4096];

	*r = (struct report){
		.json = json, .plot_dir = plot_dir, .model = model,
		.timing_only = timing_only, .coll = coll,
	};
	if (plot_dir) {
		snprintf(path, sizeof(path), "%s/nnp-sim.dat", plot_dir);
		r->dat = fopen(path, "w");
		if (!r->dat)
			perror(path);
	}
	if (json)
		printf("{\"coll\": \"%s\", \"model\": {\"icl_mbps\": %u, \"icl_latency_ns\": %u, \"hbm_mbps\": %u, \"cmd_overhead_ns\": %u}, \"timing_only\": %s, \"runs\": [",
		       coll, model->icl_mbps, model->icl_latency_ns, model->hbm_mbps,
		       model->cmd_overhead_ns, timing_only ? "true" : "false");
}

void report_begin(struct report *r, const struct topo *t, unsigned int n,
		  uint32_t algo)
{
	r->kind = t->kind;
	r->rows = 0;
	if (r->json) {
		printf("%s\n {\"topo\": \"%s\", \"chips\": %u, \"rows\": %u, \"cols\": %u, \"algo\": \"%s\", \"results\": [",
		       r->runs ? "," : "", topo_kind_name(t->kind), n, t->rows,
		       t->cols, topo_algo_name(algo));
	} else {
		printf("%s# %s on a %s of %u chips (%u x %u), algo %s%s; model (0: NNP-T's figure): icl %u MB/s, latency %u ns, hbm %u MB/s, overhead %u ns\n",
		       r->runs ? "\n" : "", r->coll, topo_kind_name(t->kind), n, t->rows,
		       t->cols, topo_algo_name(algo), r->timing_only ? ", timing-only" : "",
		       r->model->icl_mbps, r->model->icl_latency_ns,
		       r->model->hbm_mbps, r->model->cmd_overhead_ns);
		printf("%12s %14s %12s %12s\n", "bytes", "time_us",
		       "algbw_GB/s", "busbw_GB/s");
	}
	if (r->dat)
		fprintf(r->dat, "%s# chips bytes time_ns busbw_GBps\n",
			r->runs ? "\n\n" : "");
	snprintf(r->chips + strlen(r->chips), sizeof(r->chips) - strlen(r->chips),
		 "%s%u", r->runs ? " " : "", n);
	r->runs++;
}

void report_row(struct report *r, unsigned int n, uint64_t bytes, uint64_t ns,
		double bus)
{
	double algbw = ns ? (double)bytes / (double)ns : 0;
	double busbw = bus * algbw;

	if (r->json)
		printf("%s\n  {\"bytes\": %llu, \"time_ns\": %llu, \"algbw_GBps\": %.3f, \"busbw_GBps\": %.3f}",
		       r->rows ? "," : "", (unsigned long long)bytes,
		       (unsigned long long)ns, algbw, busbw);
	else
		printf("%12llu %14.3f %12.3f %12.3f\n", (unsigned long long)bytes,
		       (double)ns / 1000, algbw, busbw);
	if (r->dat)
		fprintf(r->dat, "%u %llu %llu %.3f\n", n,
			(unsigned long long)bytes, (unsigned long long)ns, busbw);
	r->rows++;
	fflush(stdout);
}

void report_end(struct report *r)
{
	if (r->json)
		printf("\n ]}");
}

/*
 * gnuplot on nnp-sim.gp in @dir, as a child of ours: not through a shell,
 * which would take a quote in @dir for its own. 0, or -1 if it failed.
 */
static int run_gnuplot(const char *dir)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (chdir(dir) == 0)
			execlp("gnuplot", "gnuplot", "nnp-sim.gp", (char *)NULL);
		perror("nnp-sim: gnuplot");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Bus bandwidth against size, a line per chip count; latency vs chips. */
static int plot(struct report *r)
{
	char path[8192];
	FILE *gp;

	snprintf(path, sizeof(path), "%s/nnp-sim.gp", r->plot_dir);
	gp = fopen(path, "w");
	if (!gp) {
		perror(path);
		return -1;
	}
	fprintf(gp,
		"set terminal pngcairo size 900,600\n"
		"set output 'busbw.png'\n"
		"set logscale x 2\n"
		"set format x '%%.0b %%BB'\n"
		"set xlabel 'bytes per rank'\n"
		"set ylabel 'modeled busbw (GB/s)'\n"
		"set key left top\n"
		"set title 'nnp-sim: %s %s, modeled'\n"
		"chips = '%s'\n"
		"plot for [i=1:words(chips)] 'nnp-sim.dat' index (i-1) using 2:4 with linespoints title word(chips, i).' chips'\n"
		"set output 'latency.png'\n"
		"set logscale xy 2\n"
		"set xlabel 'chips'\n"
		"set ylabel 'modeled time of the smallest size (us)'\n"
		"unset key\n"
		"plot 'nnp-sim.dat' using 1:($3/1000) every ::0::0 with linespoints\n",
		topo_kind_name(r->kind), r->coll, r->chips);
	fclose(gp);
	return run_gnuplot(r->plot_dir);
}

int report_close(struct report *r)
{
	int bad = 0;

	if (r->json)
		printf("\n]}\n");
	if (r->dat) {
		fclose(r->dat);
		bad = plot(r);
	}
	return bad;
}
