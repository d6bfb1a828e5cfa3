// SPDX-License-Identifier: MIT
/*
 * nnptool memtest [DEV] [--size SIZE]: write patterns through every path
 * into and out of device memory and verify every byte.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "nnptool.h"

struct memtest {
	nnp_device_t *dev;
	nnp_stream_t *s;
	size_t size;
	nnp_mem_t *d0, *d1, *h;
	uint8_t *d0p, *hp, *user, *want;
	int failures;
	struct json_object *paths;	/* --json: the verdicts; else NULL */
};

static void fill_pattern(uint8_t *p, size_t n, unsigned int kind)
{
	static const uint8_t fixed[] = { 0x00, 0xff, 0xa5, 0x5a };
	uint64_t x = 0x2545f4914f6cdd1dull;
	size_t i;

	if (kind < sizeof(fixed)) {
		memset(p, fixed[kind], n);
		return;
	}
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static const char *pattern_name(unsigned int kind)
{
	static const char *names[] = { "0x00", "0xff", "0xa5", "0x5a", "random" };

	return names[kind];
}

/* Report one path; a failure names the first differing byte. */
static void verdict(struct memtest *t, const char *path, unsigned int kind,
		    nnp_result_t r, const uint8_t *got)
{
	size_t i = 0;

	if (r == NNP_SUCCESS)
		while (i < t->size && got[i] == t->want[i])
			i++;
	if (r != NNP_SUCCESS || i != t->size)
		t->failures++;
	if (t->paths) {
		struct json_object *p = jo_obj(t->paths, NULL);

		jo_str(p, "path", path);
		jo_str(p, "pattern", pattern_name(kind));
		jo_u64(p, "bytes", t->size);
		jo_bool(p, "ok", r == NNP_SUCCESS && i == t->size);
		if (r != NNP_SUCCESS)
			jo_str(p, "error", nnp_strerror(r));
		else if (i != t->size)
			jo_u64(p, "first_bad_byte", i);
	} else if (r == NNP_SUCCESS && i == t->size) {
		printf("PASS  %-22s %-7s %zu bytes\n", path, pattern_name(kind), t->size);
	} else if (r != NNP_SUCCESS) {
		printf("FAIL  %-22s %-7s %s\n", path, pattern_name(kind), nnp_strerror(r));
	} else {
		printf("FAIL  %-22s %-7s byte %zu is 0x%02x, expected 0x%02x\n", path,
		       pattern_name(kind), i, got[i], t->want[i]);
	}
}

static nnp_result_t copy(struct memtest *t, nnp_mem_t *dst, nnp_mem_t *src)
{
	nnp_result_t r = nnp_memcpy_async(t->s, dst, 0, src, 0, t->size);

	return r == NNP_SUCCESS ? nnp_stream_synchronize(t->s) : r;
}

static void run_paths(struct memtest *t, nnp_mem_t *u, unsigned int kind)
{
	nnp_result_t r;

	/* host -> device -> device -> host */
	fill_pattern(t->want, t->size, kind);
	memcpy(t->hp, t->want, t->size);
	r = copy(t, t->d0, t->h);
	if (r == NNP_SUCCESS)
		r = copy(t, t->d1, t->d0);
	memset(t->hp, ~t->want[0], t->size);
	if (r == NNP_SUCCESS)
		r = copy(t, t->h, t->d1);
	verdict(t, "host>dev>dev>host", kind, r, t->hp);

	/* the CPU reads device memory through its mapping */
	verdict(t, "dev via CPU mapping", kind, NNP_SUCCESS, t->d0p);

	/* the CPU writes through the mapping, the device reads it back */
	memset(t->d0p, 0, t->size);
	memcpy(t->d0p, t->want, t->size);
	memset(t->hp, ~t->want[0], t->size);
	verdict(t, "CPU>dev>host", kind, copy(t, t->h, t->d0), t->hp);

	/* registered user memory in both directions */
	memset(t->user, ~t->want[0], t->size);
	r = copy(t, u, t->d1);
	verdict(t, "dev>user", kind, r, t->user);
	memcpy(t->user, t->want, t->size);
	r = copy(t, t->d1, u);
	memset(t->hp, ~t->want[0], t->size);
	if (r == NNP_SUCCESS)
		r = copy(t, t->h, t->d1);
	verdict(t, "user>dev>host", kind, r, t->hp);

	/* device fill */
	if (kind < 4) {
		r = nnp_memset_async(t->s, t->d0, 0, t->want[0], t->size);
		if (r == NNP_SUCCESS)
			r = nnp_stream_synchronize(t->s);
		verdict(t, "device fill", kind, r, t->d0p);
	}
}

static int memtest_device(nnp_device_t *dev, size_t size,
			  struct json_object *paths)
{
	struct memtest t = { .dev = dev, .size = size, .paths = paths };
	nnp_mem_t *u = NULL;
	nnp_result_t r;
	unsigned int kind;

	t.user = malloc(size);
	t.want = malloc(size);
	r = t.user && t.want ? NNP_SUCCESS : NNP_ERROR_OUT_OF_MEMORY;
	if (r == NNP_SUCCESS)
		r = nnp_stream_create(dev, &t.s);
	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(dev, NNP_MEM_DEVICE, size, 0, &t.d0);
	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(dev, NNP_MEM_DEVICE, size, 0, &t.d1);
	if (r == NNP_SUCCESS)
		r = nnp_mem_alloc(dev, NNP_MEM_HOST, size, 0, &t.h);
	if (r == NNP_SUCCESS)
		r = nnp_mem_register(dev, t.user, size, 0, &u);
	if (r == NNP_SUCCESS)
		r = nnp_mem_map(t.d0, (void **)&t.d0p);
	if (r == NNP_SUCCESS)
		r = nnp_mem_map(t.h, (void **)&t.hp);
	if (r == NNP_SUCCESS) {
		for (kind = 0; kind < 5; kind++)
			run_paths(&t, u, kind);
	} else {
		fprintf(stderr, "nnptool: memtest setup: %s\n", nnp_strerror(r));
		t.failures++;
	}
	nnp_mem_free(u);
	nnp_mem_free(t.h);
	nnp_mem_free(t.d1);
	nnp_mem_free(t.d0);
	nnp_stream_destroy(t.s);
	free(t.want);
	free(t.user);
	return t.failures;
}

int cmd_memtest(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nnptool_cmd cmd = {
		"memtest", "[--json] [DEV] [-s|--size SIZE]", "s:", opts, 0, 1,
	};
	struct json_object *doc = NULL;
	size_t size = 16u << 20;
	nnp_device_t *dev;
	int c, failures;

	while ((c = nnptool_getopt(&cmd, o, argc, argv)) > 0)
		if (parse_size(optarg, &size) || !size)
			return nnptool_bad_value(&cmd, "SIZE", optarg);
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	if (nnptool_open(optind < argc ? argv[optind] : "0", &dev))
		return NNPTOOL_EXIT_ERROR;
	if (o->json)
		doc = jo_obj(NULL, NULL);
	failures = memtest_device(dev, size, doc ? jo_arr(doc, "paths") : NULL);
	nnp_device_close(dev);
	if (doc) {
		jo_int(doc, "failures", failures);
		jo_bool(doc, "passed", !failures);
		jo_line(stdout, doc);
	} else {
		printf("memtest: %s\n", failures ? "FAILED" : "passed");
	}
	return failures ? NNPTOOL_EXIT_ERROR : NNPTOOL_EXIT_OK;
}
