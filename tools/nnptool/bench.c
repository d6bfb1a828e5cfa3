// SPDX-License-Identifier: MIT
/*
 * nnptool bench copy [DEV] [--min SIZE] [--max SIZE] [--iters N]
 * [--peer P]: copy bandwidth of one stream, host to device, device to host
 * and device to device, by size, with the host's own memcpy bandwidth
 * measured in the same run as the baseline. With --peer, also from device
 * P's memory into DEV's: P's memory imported as a dma-buf and copied by
 * DEV's engine alone ("peer"), and the way without dma-buf, staged
 * through host memory both devices registered, P copying out and then DEV
 * in ("staged"). Bandwidth counts the bytes copied once (not read +
 * written). Each size runs "reps" memcpys, and at least as many device
 * copies, more if those took under MIN_WINDOW_S: the steady rate of the
 * engine.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json_out.h"
#include "nnptool.h"

#define MIN_SIZE	4096u
/* Bytes each measurement moves at least, so small sizes run long enough. */
#define MIN_BYTES	(64u << 20)
/*
 * Shortest timed run of device copies: a shorter one is mostly the
 * stream's wake-up and the wait for its last completion (about a
 * millisecond under TCG), not the copies. 16 copies of 4 MiB timed
 * 17-29 GB/s where 4000 of them run at 49.
 */
#define MIN_WINDOW_S	0.25

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned int reps_for(size_t size, unsigned int iters)
{
	size_t reps = MIN_BYTES / size;

	return reps > iters ? (unsigned int)reps : iters;
}

/* Seconds that @reps copies of @size bytes take, queued back to back. */
static double device_run_s(nnp_stream_t *s, nnp_mem_t *dst, nnp_mem_t *src,
			   size_t size, unsigned int reps, nnp_result_t *r)
{
	double t0 = now_s();
	unsigned int i;

	for (i = 0; i < reps && *r == NNP_SUCCESS; i++)
		*r = nnp_memcpy_async(s, dst, 0, src, 0, size);
	if (*r == NNP_SUCCESS)
		*r = nnp_stream_synchronize(s);
	return now_s() - t0;
}

/*
 * GB/s of at least @reps copies of @size bytes, after one warm-up copy:
 * as many more as fill MIN_WINDOW_S if @reps ran shorter.
 */
static double device_gbps(nnp_stream_t *s, nnp_mem_t *dst, nnp_mem_t *src,
			  size_t size, unsigned int reps, nnp_result_t *r)
{
	double t;

	*r = nnp_memcpy_async(s, dst, 0, src, 0, size);
	if (*r == NNP_SUCCESS)
		*r = nnp_stream_synchronize(s);
	t = device_run_s(s, dst, src, size, reps, r);
	if (*r == NNP_SUCCESS && t > 0 && t < MIN_WINDOW_S) {
		double more = MIN_WINDOW_S / t * 1.2;

		reps = more * reps < UINT_MAX / 2 ? (unsigned int)(more * reps) : UINT_MAX / 2;
		t = device_run_s(s, dst, src, size, reps, r);
	}
	return (double)size * reps / t / 1e9;
}

static double memcpy_gbps(uint8_t *dst, const uint8_t *src, size_t size,
			  unsigned int reps)
{
	double t0;
	unsigned int i;

	memcpy(dst, src, size);
	t0 = now_s();
	for (i = 0; i < reps; i++) {
		memcpy(dst, src, size);
		/* Keep the compiler from folding the copies into one. */
		__asm__ __volatile__("" : : "r"(dst) : "memory");
	}
	return (double)size * reps / (now_s() - t0) / 1e9;
}

struct bench {
	nnp_stream_t *s;
	nnp_mem_t *h, *d0, *d1;
	uint8_t *a, *b;
	/* --peer: P's stream and memory, that memory imported, the staging. */
	nnp_device_t *pdev;
	nnp_stream_t *ps;
	nnp_mem_t *pmem, *imported, *stage_p, *stage;
	void *stage_buf;
};

/* P's memory made DEV's, and host memory both devices registered. */
static nnp_result_t peer_setup(struct bench *b, nnp_device_t *dev, size_t max)
{
	nnp_result_t r = nnp_stream_create(b->pdev, &b->ps);
	int fd = -1;

	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(b->pdev, NNP_MEM_DEVICE, max, 0, &b->pmem);
	if (r == NNP_SUCCESS)
		r = nnp_mem_export(b->pmem, &fd);
	if (r == NNP_SUCCESS)
		r = nnp_mem_import(dev, fd, 0, &b->imported);
	if (fd >= 0)
		close(fd);
	if (r == NNP_SUCCESS && posix_memalign(&b->stage_buf, 4096, max))
		r = NNP_ERROR_OUT_OF_MEMORY;
	if (r == NNP_SUCCESS)
		r = nnp_mem_register(b->pdev, b->stage_buf, max, 0, &b->stage_p);
	if (r == NNP_SUCCESS)
		r = nnp_mem_register(dev, b->stage_buf, max, 0, &b->stage);
	return r;
}

static void peer_teardown(struct bench *b)
{
	nnp_mem_free(b->stage);
	nnp_mem_free(b->stage_p);
	free(b->stage_buf);
	nnp_mem_free(b->imported);
	nnp_mem_free(b->pmem);
	nnp_stream_destroy(b->ps);
}

/*
 * GB/s of @reps copies of @size bytes from P's memory to DEV's staged
 * through host memory: all of P's copies out, then all of DEV's in, as a
 * program without dma-buf would, each pass timed as device_gbps() times
 * one.
 */
static double staged_gbps(struct bench *b, size_t size, unsigned int reps,
			  nnp_result_t *r)
{
	double out = device_gbps(b->ps, b->stage_p, b->pmem, size, reps, r);
	double in = *r ? 0 : device_gbps(b->s, b->d1, b->stage, size, reps, r);

	return *r ? 0 : 1 / (1 / out + 1 / in);
}

static int bench_copy(nnp_device_t *dev, nnp_device_t *pdev,
		      const struct nnptool_opts *o, size_t min, size_t max,
		      unsigned int iters)
{
	struct json_object *doc = NULL, *rows = NULL;
	struct bench b = { 0 };
	nnp_result_t r;
	size_t size;

	b.a = malloc(max);
	b.b = malloc(max);
	r = b.a && b.b ? NNP_SUCCESS : NNP_ERROR_OUT_OF_MEMORY;
	if (r == NNP_SUCCESS)
		r = nnp_stream_create(dev, &b.s);
	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(dev, NNP_MEM_HOST, max, 0, &b.h);
	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(dev, NNP_MEM_DEVICE, max, 0, &b.d0);
	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(dev, NNP_MEM_DEVICE, max, 0, &b.d1);
	b.pdev = pdev;
	if (r == NNP_SUCCESS && pdev)
		r = peer_setup(&b, dev, max);
	if (r == NNP_SUCCESS) {
		memset(b.a, 1, max);
		if (o->json) {
			doc = jo_obj(NULL, NULL);
			rows = jo_arr(doc, "copy");
		} else {
			printf("%12s %8s %10s %10s %10s %12s", "size", "reps",
			       "h2d GB/s", "d2h GB/s", "d2d GB/s", "memcpy GB/s");
			printf(pdev ? " %10s %10s\n" : "\n", "peer GB/s", "staged GB/s");
		}
	}
	for (size = min; size <= max && r == NNP_SUCCESS; size *= 4) {
		unsigned int reps = reps_for(size, iters);
		double h2d, d2h, d2d, mc, peer = 0, staged = 0;

		h2d = device_gbps(b.s, b.d0, b.h, size, reps, &r);
		d2h = r ? 0 : device_gbps(b.s, b.h, b.d0, size, reps, &r);
		d2d = r ? 0 : device_gbps(b.s, b.d1, b.d0, size, reps, &r);
		if (pdev && r == NNP_SUCCESS)
			peer = device_gbps(b.s, b.d1, b.imported, size, reps, &r);
		if (pdev && r == NNP_SUCCESS)
			staged = staged_gbps(&b, size, reps, &r);
		mc = memcpy_gbps(b.b, b.a, size, reps);
		if (r != NNP_SUCCESS)
			break;
		if (rows) {
			struct json_object *row = jo_obj(rows, NULL);

			jo_u64(row, "size", size);
			jo_u64(row, "reps", reps);
			jo_fixed(row, "h2d_gbps", h2d, 3);
			jo_fixed(row, "d2h_gbps", d2h, 3);
			jo_fixed(row, "d2d_gbps", d2d, 3);
			jo_fixed(row, "memcpy_gbps", mc, 3);
			if (pdev) {
				jo_fixed(row, "peer_gbps", peer, 3);
				jo_fixed(row, "staged_gbps", staged, 3);
			}
		} else {
			printf("%12zu %8u %10.3f %10.3f %10.3f %12.3f", size, reps,
			       h2d, d2h, d2d, mc);
			if (pdev)
				printf(" %10.3f %10.3f", peer, staged);
			printf("\n");
			fflush(stdout);
		}
	}
	if (doc)
		jo_line(stdout, doc);
	if (pdev)
		peer_teardown(&b);
	nnp_mem_free(b.d1);
	nnp_mem_free(b.d0);
	nnp_mem_free(b.h);
	nnp_stream_destroy(b.s);
	free(b.a);
	free(b.b);
	if (r != NNP_SUCCESS)
		return nnptool_fail("bench copy", r);
	return NNPTOOL_EXIT_OK;
}

/* Whether @a and @b are one device, opened twice. */
static bool same_device(nnp_device_t *a, nnp_device_t *b)
{
	struct nnp_device_info ia = { .size = sizeof(ia) };
	struct nnp_device_info ib = { .size = sizeof(ib) };

	return nnp_device_get_info(a, &ia) == NNP_SUCCESS &&
	       nnp_device_get_info(b, &ib) == NNP_SUCCESS &&
	       !strcmp(ia.path, ib.path);
}

int cmd_bench_copy(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "min", required_argument, NULL, 'l' },
		{ "max", required_argument, NULL, 'm' },
		{ "iters", required_argument, NULL, 'n' },
		{ "peer", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nnptool_cmd cmd = {
		"bench copy", "[--json] [DEV] [--min SIZE] [--max SIZE] [--iters N] [--peer P]",
		NULL, opts, 0, 1,
	};
	const char *peer_arg = NULL;
	nnp_device_t *pdev = NULL;
	size_t min = MIN_SIZE, max = 64u << 20;
	const char *min_arg = NULL;
	unsigned long iters = 8;
	nnp_device_t *dev;
	char *end;
	int c, ret;

	while ((c = nnptool_getopt(&cmd, o, argc, argv)) > 0) {
		if (c == 'l' && (parse_size(optarg, &min) || min < MIN_SIZE))
			return nnptool_bad_value(&cmd, "SIZE (4K or more)", optarg);
		if (c == 'l')
			min_arg = optarg;
		if (c == 'm' && (parse_size(optarg, &max) || max < MIN_SIZE))
			return nnptool_bad_value(&cmd, "SIZE (4K or more)", optarg);
		if (c == 'n') {
			iters = strtoul(optarg, &end, 0);
			if (*end || !iters || iters > 1000000)
				return nnptool_bad_value(&cmd, "N (1 to 1000000)",
							 optarg);
		}
		if (c == 'p')
			peer_arg = optarg;
	}
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	if (min > max)
		return nnptool_bad_value(&cmd, "SIZE (4K to --max)", min_arg);
	if (nnptool_open(optind < argc ? argv[optind] : "0", &dev))
		return NNPTOOL_EXIT_ERROR;
	if (peer_arg && nnptool_open(peer_arg, &pdev)) {
		nnp_device_close(dev);
		return NNPTOOL_EXIT_ERROR;
	}
	if (pdev && same_device(dev, pdev))
		ret = nnptool_bad_value(&cmd, "P (a device other than DEV)", peer_arg);
	else
		ret = bench_copy(dev, pdev, o, min, max, (unsigned int)iters);
	if (pdev)
		nnp_device_close(pdev);
	nnp_device_close(dev);
	return ret;
}

/* nnptool bench NAME: the benchmark's own command parses what follows. */
int cmd_bench(struct nnptool_opts *o, int argc, char **argv)
{
	/* "+": the options before NAME (--json, --help) are bench's. */
	static const struct nnptool_cmd cmd = {
		"bench", "[--json] copy|allreduce|broadcast|allgather|"
		"reduce_scatter|reduce|alltoall|gather|scatter|sendrecv [OPTIONS]", "+",
		NULL, 1, INT_MAX,
	};
	int c;

	c = nnptool_getopt(&cmd, o, argc, argv);
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	argc -= optind;
	argv += optind;
	optind = 0;
	if (!strcmp(argv[0], "copy"))
		return cmd_bench_copy(o, argc, argv);
	return cmd_bench_coll(o, argc, argv);
}
