// SPDX-License-Identifier: MIT
/*
 * nnptool watch [-l SEC] [-c COUNT]: every SEC seconds (default 1), one
 * row per device: device memory in use, how busy its queues were and its
 * links' traffic over the interval, temperature and power. Redraws the
 * screen on a terminal; with -c, or when not on a terminal, prints COUNT
 * blocks (forever without -c) one after another.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json_out.h"
#include "nnptool.h"

#define MAX_DEVS	64

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void link_bytes(const struct dev_sample *s, uint64_t *tx, uint64_t *rx)
{
	unsigned int p;

	*tx = *rx = 0;
	for (p = 0; p < s->nports; p++) {
		*tx += s->ports[p].tx_bytes;
		*rx += s->ports[p].rx_bytes;
	}
}

/* Rates of @cur against @prev, @dt seconds before; a reset between: 0. */
static void rates(const struct dev_sample *prev, const struct dev_sample *cur,
		  double dt, double *busy_pct, double *tx_gbs, double *rx_gbs)
{
	uint64_t tx0, rx0, tx1, rx1;

	link_bytes(prev, &tx0, &rx0);
	link_bytes(cur, &tx1, &rx1);
	*busy_pct = cur->busy_ns >= prev->busy_ns && cur->resets == prev->resets ?
		    100.0 * (double)(cur->busy_ns - prev->busy_ns) / (dt * 1e9) : 0;
	if (*busy_pct > 100)
		*busy_pct = 100;
	*tx_gbs = tx1 >= tx0 ? (double)(tx1 - tx0) / dt / 1e9 : 0;
	*rx_gbs = rx1 >= rx0 ? (double)(rx1 - rx0) / dt / 1e9 : 0;
}

static void print_json(const struct dev_sample *prev,
		       const struct dev_sample *cur, int n, double dt, int seq)
{
	struct json_object *doc = jo_obj(NULL, NULL), *devs, *o;
	double busy, tx, rx;
	int d;

	jo_int(doc, "sample", seq);
	jo_fixed(doc, "interval_s", dt, 3);
	devs = jo_arr(doc, "devices");
	for (d = 0; d < n; d++) {
		rates(&prev[d], &cur[d], dt, &busy, &tx, &rx);
		o = jo_obj(devs, NULL);
		jo_int(o, "index", d);
		jo_u64(o, "chip_id", cur[d].info.chip_id);
		jo_u64(o, "memory_used_bytes", cur[d].mem_used);
		jo_u64(o, "memory_total_bytes", cur[d].info.mem_size);
		jo_fixed(o, "busy_percent", busy, 1);
		jo_fixed(o, "link_tx_gbps", tx, 3);
		jo_fixed(o, "link_rx_gbps", rx, 3);
		if (cur[d].has_sensors) {
			jo_u64(o, "temperature_mc", cur[d].temp_mc);
			jo_u64(o, "power_uw", cur[d].power_uw);
		}
	}
	jo_line(stdout, doc);
}

static void print_table(const struct dev_sample *prev,
			const struct dev_sample *cur, int n, double dt)
{
	double busy, tx, rx;
	int d;

	printf("%-4s %5s %10s %10s %6s %9s %9s %7s %8s\n", "DEV", "CHIP",
	       "MEM USED", "MEM TOTAL", "BUSY%", "TX GB/s", "RX GB/s",
	       "TEMP C", "POWER W");
	for (d = 0; d < n; d++) {
		rates(&prev[d], &cur[d], dt, &busy, &tx, &rx);
		printf("%-4d %5" PRIu32 " %6" PRIu64 " MiB %6" PRIu64 " MiB %6.1f"
		       " %9.3f %9.3f", d, cur[d].info.chip_id,
		       cur[d].mem_used >> 20, cur[d].info.mem_size >> 20, busy,
		       tx, rx);
		if (cur[d].has_sensors)
			printf(" %7.1f %8.1f\n", cur[d].temp_mc / 1e3,
			       cur[d].power_uw / 1e6);
		else
			printf(" %7s %8s\n", "-", "-");
	}
}

static int sample_all(struct dev_sample *s, int n)
{
	int d, ret;

	for (d = 0; d < n; d++) {
		ret = dev_sample(d, &s[d]);
		if (ret)
			return ret;
	}
	return NNPTOOL_EXIT_OK;
}

int cmd_watch(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'l' },
		{ "count", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nnptool_cmd cmd = {
		"watch", "[--json] [-l SEC] [-c COUNT]", "l:c:", opts, 0, 0,
	};
	static struct dev_sample a[MAX_DEVS], b[MAX_DEVS];
	struct dev_sample *prev = a, *cur = b, *t;
	double interval = 1, t0, t1;
	long count = -1;
	int n, c, seq, ret;
	bool redraw;
	nnp_result_t r;
	char *end;

	while ((c = nnptool_getopt(&cmd, o, argc, argv)) > 0) {
		if (c == 'l') {
			interval = strtod(optarg, &end);
			if (*end || !isfinite(interval) || interval < 0.01 ||
			    interval > 86400)
				return nnptool_bad_value(&cmd, "SEC (0.01 to 86400)",
							 optarg);
		} else {
			count = strtol(optarg, &end, 10);
			if (*end || count < 1)
				return nnptool_bad_value(&cmd, "COUNT (1 or more)",
							 optarg);
		}
	}
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	r = nnp_device_count(&n);
	if (r != NNP_SUCCESS)
		return nnptool_fail("watch", r);
	if (n > MAX_DEVS)
		n = MAX_DEVS;
	redraw = count < 0 && !o->json && isatty(STDOUT_FILENO);
	ret = sample_all(prev, n);
	t0 = now_s();
	for (seq = 1; !ret && (count < 0 || seq <= count); seq++) {
		usleep((useconds_t)(interval * 1e6));
		ret = sample_all(cur, n);
		t1 = now_s();
		if (ret)
			break;
		if (redraw)
			printf("\033[H\033[2J");
		if (o->json)
			print_json(prev, cur, n, t1 - t0, seq);
		else
			print_table(prev, cur, n, t1 - t0);
		fflush(stdout);
		t = prev;
		prev = cur;
		cur = t;
		t0 = t1;
	}
	return ret;
}
