// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: user queue command streams against the firmware.
 *
 * The input's first SETUP_BYTES choose context 1's keys: three in device
 * memory and one over host pages, each with its bounds and rights (the
 * firmware refuses the bad ones). Context 2 owns the top of device memory,
 * holding a secret. Context 1 gets queue 0 and two communicators: one rank
 * alone, and two ranks whose link is not wired.
 *
 * The rest is records of one op byte and a 64-byte command: post it (a
 * key field of 1 to 8 picks a key from the table above, ctx 2's included),
 * drain the queue, unregister a key, or reset the queue. fuzz_dev checks
 * every DMA and, at the end, every byte of memory (fuzz_dev.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_dev.h"

#define SETUP_BYTES	32
#define RECORD_BYTES	(1 + sizeof(struct nnp_hw_queue_cmd))
#define DEV_KEYS	3
#define KEY_SLOTS	8
#define HOST_KEY_PAGES	8
/* Context 2's memory: the top 64 KiB. */
#define SECRET_OFF	(FUZZ_DEV_SIZE - 0x10000)

static unsigned long long commands;

static void report(void)
{
	fprintf(stderr, "fuzz_queue: %llu commands completed\n", commands);
}

static uint64_t get(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Context 1's device key from 4 bytes: page, length / 16, rights. */
static uint32_t device_key(struct fuzz_dev *d, const uint8_t *p)
{
	struct nnp_hw_key_args a = {
		.ctx = FUZZ_CTX, .type = NNP_KEY_TYPE_DEVICE,
		.dev_base = (uint64_t)p[0] * NNP_HW_PAGE_SIZE,
		.length = get(p + 1, 2) * 16, .rights = p[3] & 3,
	};
	uint64_t end = a.dev_base + a.length;

	/* Never over context 2's memory: reading it there would be allowed. */
	if (end > SECRET_OFF && end <= FUZZ_DEV_SIZE)
		return 0;
	return fuzz_key_register(d, &a, NULL, 0);
}

/* Context 1's host key from 16 bytes: pages, offset, length, rights. */
static uint32_t host_key(struct fuzz_dev *d, const uint8_t *p)
{
	struct nnp_hw_key_args a = {
		.ctx = FUZZ_CTX, .type = NNP_KEY_TYPE_HOST,
		.page_offset = (uint32_t)get(p + 9, 2),
		.length = get(p + 11, 4), .rights = p[15] & 3,
	};
	uint64_t pages[HOST_KEY_PAGES];
	uint32_t n = p[0] % (HOST_KEY_PAGES + 1), i;

	for (i = 0; i < n; i++)
		pages[i] = FUZZ_HOST_BASE + (uint64_t)NNP_HW_PAGE_SIZE *
			   (FUZZ_FIRST_KEY_PAGE +
			    p[1 + i] % (FUZZ_HOST_PAGES - FUZZ_FIRST_KEY_PAGE));
	return fuzz_key_register(d, &a, pages, n);
}

static void comm_create(struct fuzz_dev *d, uint32_t comm, uint32_t nranks)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_COMM_CREATE };
	struct nnp_hw_comm_args a = {
		.ctx = FUZZ_CTX, .comm = comm, .nranks = nranks, .epoch = comm,
	};

	memcpy(c.args, &a, sizeof(a));
	if (fuzz_admin(d, c, NULL))
		fuzz_fail("communicator %u: not made", comm);
}

static void setup(struct fuzz_dev *d, const uint8_t *s, uint32_t *keys)
{
	unsigned int i;

	keys[DEV_KEYS + 1] = fuzz_dev_plant_secret(d, 2, SECRET_OFF,
						   FUZZ_DEV_SIZE - SECRET_OFF);
	if (fuzz_ctx_create(d, FUZZ_CTX) || fuzz_queue_create(d, FUZZ_CTX))
		fuzz_fail("context 1 and its queue: not made");
	for (i = 0; i < DEV_KEYS; i++)
		keys[i] = device_key(d, s + 4 * i);
	keys[DEV_KEYS] = host_key(d, s + 4 * DEV_KEYS);
	comm_create(d, 1, 1);
	comm_create(d, 2, 2);
	fuzz_dev_seal(d);
}

/* Key field 1..KEY_SLOTS: that slot of the table; 0 and others as they are. */
static uint32_t pick_key(const uint32_t *keys, uint32_t k)
{
	return k && k <= KEY_SLOTS ? keys[k - 1] : k;
}

static void record(struct fuzz_dev *d, const uint8_t *r, uint32_t *keys)
{
	struct nnp_hw_queue_cmd cmd;

	memcpy(&cmd, r + 1, sizeof(cmd));
	switch (r[0] & 7) {
	case 5:
		fuzz_queue_drain(d);
		break;
	case 6:
		/* Context 1's own keys only: ctx 2's memory stays its own. */
		if (keys[cmd.cid % (DEV_KEYS + 1)] &&
		    !fuzz_key_unregister(d, FUZZ_CTX, keys[cmd.cid % (DEV_KEYS + 1)]))
			keys[cmd.cid % (DEV_KEYS + 1)] = 0;
		break;
	case 7:
		fuzz_queue_reset(d, FUZZ_CTX);
		break;
	default:
		cmd.src_key = pick_key(keys, cmd.src_key);
		cmd.dst_key = pick_key(keys, cmd.dst_key);
		if (!fuzz_queue_post(d, cmd))
			fuzz_queue_reset(d, FUZZ_CTX);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t s[SETUP_BYTES] = { 0 };
	uint32_t keys[KEY_SLOTS] = { 0 };
	static bool registered;
	struct fuzz_dev d;
	size_t off;

	if (!registered)
		registered = !atexit(report);
	memcpy(s, data, size < SETUP_BYTES ? size : SETUP_BYTES);
	fuzz_dev_init(&d, 4);
	setup(&d, s, keys);
	for (off = SETUP_BYTES; off + RECORD_BYTES <= size; off += RECORD_BYTES)
		record(&d, data + off, keys);
	fuzz_queue_drain(&d);
	commands += d.commands;
	fuzz_dev_fini(&d);
	return 0;
}
