// SPDX-License-Identifier: MIT
/*
 * Firmware simulator: contexts, keys and user queues. Byte-exact copies and
 * fills in every direction, every isolation violation failing with its
 * status and stopping its queue with the guard bytes untouched, counters,
 * and queues run by several threads at once.
 *
 * In detail (docs/testing.md has the summary):
 * contexts, keys, user queues: byte-exact copies in all four directions
 * across pages, with host memory mapped whole, mapped in pieces shorter
 * than asked, or not mappable (dma_read/dma_write), page lists honoured, a
 * DMA fault after two pages failing with DMA_ERROR and exactly those pages
 * written, mapped or not, every mapping given back, memmove overlap, every
 * isolation violation with its status, stopped queue and untouched guard
 * bytes (collectives of an unknown type or reduction or with reserved
 * value bits, a send with its value's high word set among them),
 * doorbell misuse, a CQ filled to depth - 1 with CQ_HEAD written
 * lazily (no kick while there is room, the write that frees a full CQ
 * restarts the queue, every cid and phase exact), interrupts only while the
 * queue's armed word is set (hardware 1.9: none at 0, one that clears it at
 * any other value, one every time if the word is unreachable, an unaligned
 * word refused), shadow doorbells (hardware 1.11: the shadow tail taken
 * when the queue runs out, sq_event where it stopped, nothing run from the
 * shadow alone once stopped, a tail past the depth stopping the queue,
 * a doorbell rung between the device's read of the shadow tail and its
 * use standing, shadow-only commands behind a full CQ run once CQ_HEAD
 * frees it, reset and creation clearing both words, misaligned, short,
 * long (16 or 9 bytes) or unreachable words refused, none on a device presenting 1.10), destroy
 * and reset, four queues run by two threads; host
 * keys spanning `NNP_HW_MAX_KEY_PAGES` pages at most: one page short and
 * then the cap taken, one page past it NO_RESOURCES until a key is
 * unregistered
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include <cmocka.h>

#include "fw_harness.h"

#define CTX		3
#define OTHER_CTX	4
#define PAGE_LIST	(HOST_MEM_BASE + 0x28000)
#define BUF		(HOST_MEM_BASE + 0x100000)	/* host buffers from here */
#define GUARD		0xa5

/*
 * A key of @type (HOST, or PEER since 1.24) over [addr, addr + len) of
 * fake host memory, registered with its pages listed in reverse order of
 * address so that a copy that ignored the page list would land in the
 * wrong place.
 */
static uint32_t list_key(struct fw_harness *h, uint32_t ctx, uint32_t type,
			 uint64_t addr, uint64_t len, uint32_t rights,
			 uint64_t *pages_out)
{
	uint64_t first = addr & ~(uint64_t)(NNP_HW_PAGE_SIZE - 1);
	uint32_t off = (uint32_t)(addr - first);
	uint32_t n = (uint32_t)((off + len + NNP_HW_PAGE_SIZE - 1) / NNP_HW_PAGE_SIZE);
	uint64_t *list = fw_harness_host_ptr(h, PAGE_LIST);
	struct nnp_hw_key_args a = {
		.ctx = ctx, .type = type, .rights = rights,
		.length = len, .page_offset = off,
	};
	uint32_t i, key = 0;

	for (i = 0; i < n; i++)
		list[i] = first + (uint64_t)i * NNP_HW_PAGE_SIZE;
	if (pages_out)
		memcpy(pages_out, list, n * sizeof(*list));
	assert_int_equal(fw_harness_key_register(h, a, PAGE_LIST, n * 8, &key),
			 NNP_STATUS_SUCCESS);
	return key;
}

static uint32_t host_key(struct fw_harness *h, uint32_t ctx, uint64_t addr,
			 uint64_t len, uint32_t rights, uint64_t *pages_out)
{
	return list_key(h, ctx, NNP_KEY_TYPE_HOST, addr, len, rights, pages_out);
}

static int setup_queue(void **state)
{
	struct fw_harness *h;

	fw_harness_setup_aq(state);
	h = *state;
	fw_harness_ctx_create(h, CTX);
	fw_harness_ctx_create(h, OTHER_CTX);
	fw_harness_queue_create(h, CTX, 0);
	return 0;
}

static uint32_t db_read(struct fw_harness *h, uint32_t q, uint32_t reg)
{
	return nnp_fw_reg_read(h->fw, NNP_DOORBELL(q) + reg);
}

/* Run @cmd on queue 0 to completion; returns its status. */
static uint16_t run(struct fw_harness *h, struct nnp_hw_queue_cmd cmd)
{
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_QCQ(0));
	uint32_t slot;

	cmd.cid = (uint16_t)(0x4000 + h->q_tail[0]);
	slot = fw_harness_post(h, 0, cmd);
	memset(&cq[slot], 0, sizeof(cq[slot]));
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[slot].cid, cmd.cid);
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(0) + NNP_DB_CQ_HEAD, h->q_tail[0]);
	return cq[slot].status;
}

static void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 8));
}

static void assert_all(const uint8_t *p, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			fail_msg("byte %zu is 0x%02x, expected 0x%02x", i, p[i], v);
}

/* ---- admin side ---- */

static void test_contexts(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_CTX_CREATE };

	c.args[0] = CTX;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_BUSY);
	c.args[0] = 0;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_INVALID_FIELD);
	c.args[0] = NNP_HW_MAX_CONTEXTS;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_INVALID_FIELD);
	c.args[0] = 9;
	c.args[1] = 1;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_INVALID_FIELD);
	c.opcode = NNP_ADMIN_CTX_DESTROY;
	c.args[1] = 0;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_NOT_FOUND);
	c.args[0] = OTHER_CTX;
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_NOT_FOUND);
}

static void test_key_register_checks(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_key_args ok = {
		.ctx = CTX, .type = NNP_KEY_TYPE_DEVICE, .rights = NNP_KEY_READ,
		.length = 4096,
	};
	struct nnp_hw_key_args a;
	uint64_t *list = fw_harness_host_ptr(h, PAGE_LIST);
	uint32_t key, k2;

	a = ok, a.length = 0;
	assert_int_equal(fw_harness_key_register(h, a, 0, 0, &key), NNP_STATUS_INVALID_FIELD);
	a = ok, a.rights = 0;
	assert_int_equal(fw_harness_key_register(h, a, 0, 0, &key), NNP_STATUS_INVALID_FIELD);
	a = ok, a.rights = 4;
	assert_int_equal(fw_harness_key_register(h, a, 0, 0, &key), NNP_STATUS_INVALID_FIELD);
	a = ok, a.type = 3;
	assert_int_equal(fw_harness_key_register(h, a, 0, 0, &key), NNP_STATUS_INVALID_FIELD);
	a = ok, a.dev_base = DEV_MEM_SIZE - 4095;
	assert_int_equal(fw_harness_key_register(h, a, 0, 0, &key), NNP_STATUS_INVALID_FIELD);
	a = ok, a.dev_base = UINT64_MAX - 100;
	assert_int_equal(fw_harness_key_register(h, a, 0, 0, &key), NNP_STATUS_INVALID_FIELD);
	a = ok, a.ctx = 77;
	assert_int_equal(fw_harness_key_register(h, a, 0, 0, &key), NNP_STATUS_NOT_FOUND);

	a = ok, a.type = NNP_KEY_TYPE_HOST, a.length = 8192, a.page_offset = 1;
	list[0] = BUF;
	list[1] = BUF + 4096;
	list[2] = BUF + 8192;
	/* 8192 bytes from offset 1 span 3 pages: a 2-entry list is wrong. */
	assert_int_equal(fw_harness_key_register(h, a, PAGE_LIST, 16, &key), NNP_STATUS_INVALID_FIELD);
	list[2] = BUF + 8193;
	assert_int_equal(fw_harness_key_register(h, a, PAGE_LIST, 24, &key), NNP_STATUS_INVALID_FIELD);
	list[2] = BUF + 8192;
	assert_int_equal(fw_harness_key_register(h, a, 0x10, 24, &key), NNP_STATUS_DMA_ERROR);
	a.page_offset = 4096;
	assert_int_equal(fw_harness_key_register(h, a, PAGE_LIST, 24, &key), NNP_STATUS_INVALID_FIELD);
	a.page_offset = 1;
	assert_int_equal(fw_harness_key_register(h, a, PAGE_LIST, 24, &key), NNP_STATUS_SUCCESS);

	/* Keys are distinct; a stale key is not reused as the same value. */
	k2 = fw_harness_dev_key(h, CTX, 0, 4096, NNP_KEY_READ);
	assert_int_not_equal(key, k2);
	{
		struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_KEY_UNREGISTER };

		c.args[0] = CTX;
		c.args[1] = k2;
		assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_SUCCESS);
		assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_NOT_FOUND);
		c.args[0] = OTHER_CTX;
		c.args[1] = key;
		assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_NOT_FOUND);
	}
	assert_int_not_equal(fw_harness_dev_key(h, CTX, 0, 4096, NNP_KEY_READ), k2);
}

/*
 * The host keys of a chip span NNP_HW_MAX_KEY_PAGES pages at most: keys
 * of 2^18 pages (a 2 MiB list at BUF) up to one page short, a one-page
 * key reaching the cap, then one page past it refused with NO_RESOURCES
 * until a key is unregistered.
 */
static void test_host_key_pages_capped(void **state)
{
	struct fw_harness *h = *state;
	const uint32_t big = 1u << 18, nbig = NNP_HW_MAX_KEY_PAGES / big;
	struct nnp_hw_key_args a = {
		.ctx = CTX, .type = NNP_KEY_TYPE_HOST, .rights = NNP_KEY_READ,
		.length = (uint64_t)big * NNP_HW_PAGE_SIZE,
	};
	struct nnp_hw_admin_cmd u = { .opcode = NNP_ADMIN_KEY_UNREGISTER };
	uint64_t *list = fw_harness_host_ptr(h, BUF);
	uint32_t i, key, last;

	for (i = 0; i < big; i++)
		list[i] = BUF;
	for (i = 0; i < nbig - 1; i++)
		assert_int_equal(fw_harness_key_register(h, a, BUF, big * 8, &key),
				 NNP_STATUS_SUCCESS);
	a.length -= NNP_HW_PAGE_SIZE;
	assert_int_equal(fw_harness_key_register(h, a, BUF, (big - 1) * 8, &key),
			 NNP_STATUS_SUCCESS);
	a.length = NNP_HW_PAGE_SIZE;
	assert_int_equal(fw_harness_key_register(h, a, BUF, 8, &last), NNP_STATUS_SUCCESS);
	assert_int_equal(fw_harness_key_register(h, a, BUF, 8, &key),
			 NNP_STATUS_NO_RESOURCES);
	u.args[0] = CTX;
	u.args[1] = last;
	assert_int_equal(fw_harness_admin(h, u, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(fw_harness_key_register(h, a, BUF, 8, &key), NNP_STATUS_SUCCESS);
}

static void test_queue_create_checks(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_queue_args ok = {
		.ctx = CTX, .qid = 1, .depth = H_QDEPTH, .vector = 2,
		.sq_base = H_QSQ(1), .cq_base = H_QCQ(1),
	};
	struct nnp_hw_queue_args bad[] = { ok, ok, ok, ok, ok, ok, ok, ok };
	uint16_t want[] = {
		NNP_STATUS_BUSY, NNP_STATUS_INVALID_FIELD, NNP_STATUS_INVALID_FIELD,
		NNP_STATUS_INVALID_FIELD, NNP_STATUS_INVALID_FIELD,
		NNP_STATUS_NOT_FOUND, NNP_STATUS_INVALID_FIELD,
		NNP_STATUS_INVALID_FIELD,
	};
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_QUEUE_CREATE };
	size_t i;

	bad[0].qid = 0;			/* taken by setup */
	bad[1].qid = NNP_HW_MAX_QUEUES;
	bad[2].depth = 24;
	bad[3].vector = 0;		/* the admin vector */
	bad[4].sq_base = H_QSQ(1) + 8;
	bad[5].ctx = 99;
	bad[6].depth = NNP_HW_QUEUE_DEPTH_MAX * 2;
	bad[7].irq_arm = H_QCQ(1) + 0x802;	/* not a 4-byte word */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(c.args, &bad[i], sizeof(bad[i]));
		assert_int_equal(fw_harness_admin(h, c, NULL), want[i]);
	}
	memcpy(c.args, &ok, sizeof(ok));
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(db_read(h, 1, NNP_DB_STATUS), NNP_QUEUE_STATUS_ENABLED);
	assert_int_equal(db_read(h, 2, NNP_DB_STATUS), 0);
}

/* ---- data movement ---- */

/* Copies in every direction, with the harness's dma_map set as @map_max. */
static void copy_every_direction(struct fw_harness *h, uint64_t map_max)
{
	/* Odd sizes and offsets, across page boundaries. */
	static const struct { uint64_t off; uint64_t len; } cases[] = {
		{ 0, 1 }, { 1, 3 }, { 4095, 2 }, { 13, 4096 }, { 777, 3 * 4096 + 5 },
		{ 0, 65536 + 17 },
	};
	const uint64_t region = 80 * 1024;
	uint8_t *src = fw_harness_host_ptr(h, BUF);
	uint8_t *dst = fw_harness_host_ptr(h, BUF + 0x40000);
	uint8_t *dev = h->dev_mem;
	uint32_t hsrc = host_key(h, CTX, BUF, region, NNP_KEY_READ, NULL);
	uint32_t hdst = host_key(h, CTX, BUF + 0x40000, region,
				 NNP_KEY_READ | NNP_KEY_WRITE, NULL);
	uint32_t dkey = fw_harness_dev_key(h, CTX, 0x1000, 2 * region,
				NNP_KEY_READ | NNP_KEY_WRITE);
	struct nnp_hw_counters c0 = fw_harness_counters(h), c1;
	uint64_t host_bytes = 0, local_bytes = 0;
	size_t i;

	h->map_max = map_max;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t off = cases[i].off, len = cases[i].len;
		struct nnp_hw_queue_cmd cp = { .opcode = NNP_CMD_COPY, .len = len };

		fill_pattern(src, region, (unsigned int)i);
		memset(dst, GUARD, region);
		memset(dev, GUARD, 0x1000 + 2 * region + 0x1000);

		/* host -> device */
		cp.src_key = hsrc, cp.src_off = off, cp.dst_key = dkey, cp.dst_off = off + 1;
		assert_int_equal(run(h, cp), NNP_STATUS_SUCCESS);
		assert_memory_equal(dev + 0x1000 + off + 1, src + off, len);
		assert_int_equal(dev[0x1000 + off], GUARD);
		assert_int_equal(dev[0x1000 + off + 1 + len], GUARD);
		/* device -> device, to the second half */
		cp.src_key = dkey, cp.src_off = off + 1, cp.dst_off = region + off;
		assert_int_equal(run(h, cp), NNP_STATUS_SUCCESS);
		assert_memory_equal(dev + 0x1000 + region + off, src + off, len);
		/* device -> host */
		cp.src_off = region + off, cp.dst_key = hdst, cp.dst_off = off;
		assert_int_equal(run(h, cp), NNP_STATUS_SUCCESS);
		assert_memory_equal(dst + off, src + off, len);
		assert_all(dst, off, GUARD);
		assert_all(dst + off + len, region - off - len, GUARD);
		/* host -> host */
		memset(dst, GUARD, region);
		cp.src_key = hsrc, cp.src_off = off;
		assert_int_equal(run(h, cp), NNP_STATUS_SUCCESS);
		assert_memory_equal(dst + off, src + off, len);
		assert_all(dst + off + len, region - off - len, GUARD);

		host_bytes += len + len + 2 * len;
		local_bytes += len;
	}
	c1 = fw_harness_counters(h);
	assert_int_equal(c1.host_dma_bytes - c0.host_dma_bytes, host_bytes);
	assert_int_equal(c1.local_bytes - c0.local_bytes, local_bytes);
	assert_int_equal(c1.cmds_completed - c0.cmds_completed, 4 * i);
	assert_int_equal(c1.cmds_failed, c0.cmds_failed);
	assert_int_equal(h->mapped, 0);
}

/*
 * Host pages that follow each other are copied in one mapping, if there
 * is more than a page of them.
 */
static void test_copy_every_direction_byte_exact(void **state)
{
	struct fw_harness *h = *state;

	copy_every_direction(h, UINT64_MAX);
	/* 2 sizes past a page x 4 host sides, each one run of pages. */
	assert_int_equal(h->maps, 8);
}

/* A host that cannot map: every byte through dma_read/dma_write. */
static void test_copy_without_mapping_byte_exact(void **state)
{
	struct fw_harness *h = *state;

	copy_every_direction(h, 0);
	assert_int_equal(h->maps, 0);
}

/*
 * Mappings shorter than asked, ending just past a page: the copy goes on
 * after, mapping or not what is left.
 */
static void test_copy_with_partial_mappings_byte_exact(void **state)
{
	struct fw_harness *h = *state;

	copy_every_direction(h, 4097);
	assert_true(h->maps > 8);
}

/*
 * A device-to-host copy whose third page is outside host memory: the
 * first two (one mapping) are written, then the fault fails the command
 * with DMA_ERROR and stops the queue, as without mapping.
 */
static void dma_fault_after_two_pages(struct fw_harness *h, uint64_t map_max)
{
	uint64_t *list = fw_harness_host_ptr(h, PAGE_LIST);
	uint8_t *buf = fw_harness_host_ptr(h, BUF);
	struct nnp_hw_key_args a = {
		.ctx = CTX, .type = NNP_KEY_TYPE_HOST,
		.rights = NNP_KEY_READ | NNP_KEY_WRITE, .length = 3 * 4096,
	};
	uint32_t dk = fw_harness_dev_key(h, CTX, 0, 3 * 4096, NNP_KEY_READ);
	struct nnp_hw_queue_cmd cp = {
		.opcode = NNP_CMD_COPY, .src_key = dk, .len = 3 * 4096,
	};
	struct nnp_hw_counters c0 = fw_harness_counters(h), c1;

	h->map_max = map_max;
	list[0] = BUF;
	list[1] = BUF + 4096;
	list[2] = HOST_MEM_BASE + HOST_MEM_SIZE;	/* right after the window */
	assert_int_equal(fw_harness_key_register(h, a, PAGE_LIST, 24, &cp.dst_key),
			 NNP_STATUS_SUCCESS);
	fill_pattern(h->dev_mem, 3 * 4096, 3);
	memset(buf, GUARD, 3 * 4096);
	assert_int_equal(run(h, cp), NNP_STATUS_DMA_ERROR);
	assert_memory_equal(buf, h->dev_mem, 2 * 4096);
	assert_all(buf + 2 * 4096, 4096, GUARD);
	assert_int_equal(db_read(h, 0, NNP_DB_STATUS),
			 NNP_QUEUE_STATUS_ENABLED | NNP_QUEUE_STATUS_ERROR);
	assert_int_equal(db_read(h, 0, NNP_DB_ERROR) & 0xffff, NNP_STATUS_DMA_ERROR);
	c1 = fw_harness_counters(h);
	assert_int_equal(c1.cmds_failed - c0.cmds_failed, 1);
	assert_int_equal(h->mapped, 0);
}

static void test_dma_fault_mapped(void **state)
{
	struct fw_harness *h = *state;

	dma_fault_after_two_pages(h, UINT64_MAX);
	assert_int_equal(h->maps, 1);
}

static void test_dma_fault_unmapped(void **state)
{
	dma_fault_after_two_pages(*state, 0);
}

/* A host fill goes through a mapping too, and stays inside its key. */
static void test_fill_mapped_byte_exact(void **state)
{
	struct fw_harness *h = *state;
	uint32_t k = host_key(h, CTX, BUF + 10, 3 * 4096, NNP_KEY_WRITE, NULL);
	uint8_t *buf = fw_harness_host_ptr(h, BUF);
	struct nnp_hw_queue_cmd f = {
		.opcode = NNP_CMD_FILL, .dst_key = k, .dst_off = 5,
		.len = 3 * 4096 - 7, .value = 0x5a,
	};

	memset(buf, GUARD, 4 * 4096);
	assert_int_equal(run(h, f), NNP_STATUS_SUCCESS);
	assert_all(buf, 15, GUARD);
	assert_all(buf + 15, 3 * 4096 - 7, 0x5a);
	assert_all(buf + 15 + 3 * 4096 - 7, 4 * 4096 - 15 - (3 * 4096 - 7), GUARD);
	assert_int_equal(h->maps, 1);
}

static uint32_t cq_head_write(struct fw_harness *h, uint32_t head)
{
	return nnp_fw_reg_write(h->fw, NNP_DOORBELL(0) + NNP_DB_CQ_HEAD, head);
}

/*
 * CQ_HEAD written lazily: a write that leaves room kicks nothing; the
 * queue stops with its CQ full (depth - 1 unread) and the write that frees
 * a slot restarts it. Every completion lands once, in order, with its cid
 * and phase.
 */
static void test_lazy_cq_head_and_full_cq(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_QCQ(0));
	struct nnp_hw_queue_cmd nop = { .opcode = NNP_CMD_NOP };
	uint16_t cid = 100;
	uint32_t i;

	memset(cq, 0, H_QDEPTH * sizeof(*cq));
	/* Fill the CQ to exactly its depth - 1 without moving CQ_HEAD. */
	for (i = 0; i < H_QDEPTH - 1; i++) {
		nop.cid = cid++;
		fw_harness_post(h, 0, nop);
	}
	nnp_fw_run_queues(h->fw);
	for (i = 0; i < H_QDEPTH - 1; i++) {
		assert_int_equal(cq[i].cid, 100 + i);
		assert_int_equal(cq[i].phase & NNP_CQE_PHASE, 1);
		assert_int_equal(cq[i].status, NNP_STATUS_SUCCESS);
	}
	/* Full: freeing no slot, or with nothing to run, kicks nothing. */
	assert_int_equal(cq_head_write(h, 0), 0);
	nop.cid = cid++;
	fw_harness_post(h, 0, nop);
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[H_QDEPTH - 1].cid, 0);
	/* One slot freed on a full CQ with work waiting: the queue goes on. */
	assert_int_equal(cq_head_write(h, 1), NNP_FW_KICK_QUEUES);
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[H_QDEPTH - 1].cid, 100 + H_QDEPTH - 1);
	assert_int_equal(cq[H_QDEPTH - 1].phase & NNP_CQE_PHASE, 1);
	/* Full again (tail 0, head 1), nothing waiting: no kick. */
	assert_int_equal(cq_head_write(h, 8), 0);
	/* Not full: a lazy write kicks nothing; the ring wraps to phase 0. */
	for (i = 0; i < 3; i++) {
		nop.cid = cid++;
		fw_harness_post(h, 0, nop);
	}
	nnp_fw_run_queues(h->fw);
	for (i = 0; i < 3; i++) {
		assert_int_equal(cq[i].cid, 100 + H_QDEPTH + i);
		assert_int_equal(cq[i].phase & NNP_CQE_PHASE, 0);
	}
	assert_int_equal(cq_head_write(h, 12), 0);
	assert_int_equal(db_read(h, 0, NNP_DB_STATUS), NNP_QUEUE_STATUS_ENABLED);
	assert_int_equal(fw_harness_counters(h).cmds_completed, H_QDEPTH + 3);
}

static void test_host_pages_follow_the_list(void **state)
{
	struct fw_harness *h = *state;
	uint64_t *list = fw_harness_host_ptr(h, PAGE_LIST);
	struct nnp_hw_key_args a = {
		.ctx = CTX, .type = NNP_KEY_TYPE_HOST,
		.rights = NNP_KEY_READ | NNP_KEY_WRITE, .length = 2 * 4096,
	};
	struct nnp_hw_queue_cmd fill = {
		.opcode = NNP_CMD_FILL, .len = 4096 + 1, .value = 0x3c,
	};
	uint8_t *buf = fw_harness_host_ptr(h, BUF);
	uint32_t key;

	memset(buf, GUARD, 3 * 4096);
	/* Key byte 0 is host page BUF+8192, byte 4096 is page BUF. */
	list[0] = BUF + 8192;
	list[1] = BUF;
	assert_int_equal(fw_harness_key_register(h, a, PAGE_LIST, 16, &key), NNP_STATUS_SUCCESS);
	fill.dst_key = key;
	assert_int_equal(run(h, fill), NNP_STATUS_SUCCESS);
	assert_all(buf + 8192, 4096, 0x3c);
	assert_int_equal(buf[0], 0x3c);
	assert_all(buf + 1, 4095 + 4096, GUARD);
}

static void test_overlapping_device_copy_is_memmove(void **state)
{
	struct fw_harness *h = *state;
	uint32_t k = fw_harness_dev_key(h, CTX, 0, 8192, NNP_KEY_READ | NNP_KEY_WRITE);
	struct nnp_hw_queue_cmd cp = {
		.opcode = NNP_CMD_COPY, .src_key = k, .dst_key = k,
		.src_off = 0, .dst_off = 100, .len = 4000,
	};
	uint8_t want[4000];

	fill_pattern(h->dev_mem, 8192, 5);
	memcpy(want, h->dev_mem, sizeof(want));
	assert_int_equal(run(h, cp), NNP_STATUS_SUCCESS);
	assert_memory_equal(h->dev_mem + 100, want, sizeof(want));
}

static void test_fill_nop_barrier_timestamp(void **state)
{
	struct fw_harness *h = *state;
	uint32_t dk = fw_harness_dev_key(h, CTX, 0, 4096, NNP_KEY_WRITE);
	uint32_t hk = host_key(h, CTX, BUF + 4090, 16, NNP_KEY_WRITE, NULL);
	uint8_t *buf = fw_harness_host_ptr(h, BUF);
	struct nnp_hw_queue_cmd c = { .opcode = NNP_CMD_FILL, .dst_key = dk,
				      .dst_off = 10, .len = 100, .value = 0xee };
	struct nnp_fw_model m;
	uint64_t ts;

	memset(h->dev_mem, GUARD, 4096);
	assert_int_equal(run(h, c), NNP_STATUS_SUCCESS);
	assert_all(h->dev_mem + 10, 100, 0xee);
	assert_int_equal(h->dev_mem[9], GUARD);
	assert_int_equal(h->dev_mem[110], GUARD);
	c.len = 0;
	assert_int_equal(run(h, c), NNP_STATUS_SUCCESS);

	c = (struct nnp_hw_queue_cmd){ .opcode = NNP_CMD_NOP };
	assert_int_equal(run(h, c), NNP_STATUS_SUCCESS);
	c.opcode = NNP_CMD_BARRIER;
	assert_int_equal(run(h, c), NNP_STATUS_SUCCESS);

	/*
	 * A timestamp split across two host pages: the modeled time its
	 * command starts at (test_fw_clock), not the host's clock.
	 */
	memset(buf + 4080, GUARD, 32);
	h->now_ns = 0x1122334455667788ull;
	nnp_fw_model_get(h->fw, &m);
	c = (struct nnp_hw_queue_cmd){ .opcode = NNP_CMD_TIMESTAMP, .dst_key = hk,
				       .dst_off = 2 };
	assert_int_equal(run(h, c), NNP_STATUS_SUCCESS);
	memcpy(&ts, buf + 4092, sizeof(ts));
	assert_int_equal(ts, m.now_ns + 2000);	/* the default overhead */
	/* Its 8 bytes crossed PCIe: its latency, and less than a ns. */
	nnp_fw_model_get(h->fw, &m);
	assert_int_equal(m.now_ns, ts + 1000);
	assert_int_equal(buf[4091], GUARD);
	assert_int_equal(buf[4100], GUARD);
}

/* ---- isolation ---- */

struct violation {
	const char *what;
	struct nnp_hw_queue_cmd cmd;
	uint16_t status;
};

static void test_violations_fail_and_stop_the_queue(void **state)
{
	struct fw_harness *h = *state;
	uint32_t mine = fw_harness_dev_key(h, CTX, 0x10000, 4096, NNP_KEY_READ | NNP_KEY_WRITE);
	uint32_t ro = fw_harness_dev_key(h, CTX, 0x20000, 4096, NNP_KEY_READ);
	uint32_t wo = fw_harness_dev_key(h, CTX, 0x30000, 4096, NNP_KEY_WRITE);
	uint32_t theirs = fw_harness_dev_key(h, OTHER_CTX, 0x40000, 4096,
				  NNP_KEY_READ | NNP_KEY_WRITE);
	uint32_t gone = fw_harness_dev_key(h, CTX, 0x50000, 4096, NNP_KEY_READ | NNP_KEY_WRITE);
	struct nnp_hw_admin_cmd un = { .opcode = NNP_ADMIN_KEY_UNREGISTER };
	const struct violation v[] = {
		{ "another context's key as source",
		  { .opcode = NNP_CMD_COPY, .src_key = theirs, .dst_key = mine, .len = 8 },
		  NNP_STATUS_KEY_INVALID },
		{ "another context's key as destination",
		  { .opcode = NNP_CMD_FILL, .dst_key = theirs, .len = 8 },
		  NNP_STATUS_KEY_INVALID },
		{ "an unregistered key",
		  { .opcode = NNP_CMD_FILL, .dst_key = gone, .len = 8 },
		  NNP_STATUS_KEY_INVALID },
		{ "a made-up key",
		  { .opcode = NNP_CMD_FILL, .dst_key = 0xdead0001, .len = 8 },
		  NNP_STATUS_KEY_INVALID },
		{ "length past the end",
		  { .opcode = NNP_CMD_COPY, .src_key = mine, .dst_key = mine,
		    .dst_off = 4000, .len = 97 },
		  NNP_STATUS_OUT_OF_BOUNDS },
		{ "offset past the end",
		  { .opcode = NNP_CMD_FILL, .dst_key = mine, .dst_off = 4097 },
		  NNP_STATUS_OUT_OF_BOUNDS },
		{ "offset + length wrapping around",
		  { .opcode = NNP_CMD_FILL, .dst_key = mine, .dst_off = 8,
		    .len = UINT64_MAX - 4 },
		  NNP_STATUS_OUT_OF_BOUNDS },
		{ "writing through a read-only key",
		  { .opcode = NNP_CMD_COPY, .src_key = mine, .dst_key = ro, .len = 8 },
		  NNP_STATUS_ACCESS_DENIED },
		{ "reading through a write-only key",
		  { .opcode = NNP_CMD_COPY, .src_key = wo, .dst_key = mine, .len = 8 },
		  NNP_STATUS_ACCESS_DENIED },
		{ "timestamp into a read-only key",
		  { .opcode = NNP_CMD_TIMESTAMP, .dst_key = ro },
		  NNP_STATUS_ACCESS_DENIED },
		{ "an unknown opcode",
		  { .opcode = 0x77 }, NNP_STATUS_INVALID_OPCODE },
		{ "flags set",
		  { .opcode = NNP_CMD_NOP, .flags = 1 }, NNP_STATUS_INVALID_FIELD },
		{ "reserved word set",
		  { .opcode = NNP_CMD_COPY, .src_key = mine, .dst_key = mine, .len = 8,
		    .rsvd2 = 1 }, NNP_STATUS_INVALID_FIELD },
		{ "fill value wider than a byte",
		  { .opcode = NNP_CMD_FILL, .dst_key = mine, .len = 8, .value = 0x100 },
		  NNP_STATUS_INVALID_FIELD },
		{ "source on a fill",
		  { .opcode = NNP_CMD_FILL, .src_key = mine, .dst_key = mine, .len = 8 },
		  NNP_STATUS_INVALID_FIELD },
		{ "length on a timestamp",
		  { .opcode = NNP_CMD_TIMESTAMP, .dst_key = mine, .len = 8 },
		  NNP_STATUS_INVALID_FIELD },
		{ "a collective of an unknown type",
		  { .opcode = NNP_CMD_ALLREDUCE, .src_key = mine, .dst_key = mine, .len = 8,
		    .value = NNP_COLL_VALUE(NNP_DTYPE_COUNT, NNP_OP_SUM, 1, 0) },
		  NNP_STATUS_INVALID_FIELD },
		{ "an allreduce of bytes (U8 is moved, never reduced)",
		  { .opcode = NNP_CMD_ALLREDUCE, .src_key = mine, .dst_key = mine, .len = 8,
		    .value = NNP_COLL_VALUE(NNP_DTYPE_U8, NNP_OP_SUM, 1, 0) },
		  NNP_STATUS_INVALID_FIELD },
		{ "a reduce-scatter of bytes",
		  { .opcode = NNP_CMD_REDUCE_SCATTER, .src_key = mine, .dst_key = mine, .len = 8,
		    .value = NNP_COLL_VALUE(NNP_DTYPE_U8, NNP_OP_MAX, 1, 0) },
		  NNP_STATUS_INVALID_FIELD },
		{ "a reduce of bytes",
		  { .opcode = NNP_CMD_REDUCE, .src_key = mine, .dst_key = mine, .len = 8,
		    .value = NNP_COLL_VALUE(NNP_DTYPE_U8, NNP_OP_SUM, 1, 0) },
		  NNP_STATUS_INVALID_FIELD },
		{ "a collective of an unknown reduction",
		  { .opcode = NNP_CMD_REDUCE_SCATTER, .src_key = mine, .dst_key = mine,
		    .len = 8, .value = NNP_COLL_VALUE(NNP_DTYPE_F32, NNP_OP_COUNT, 1, 0) },
		  NNP_STATUS_INVALID_FIELD },
		{ "a collective with its value's reserved bits set",
		  { .opcode = NNP_CMD_BROADCAST, .src_key = mine, .dst_key = mine, .len = 8,
		    .value = NNP_COLL_VALUE(NNP_DTYPE_F32, NNP_OP_SUM, 1, 0) | 1ull << 48 },
		  NNP_STATUS_INVALID_FIELD },
		{ "a collective with the top reserved bit set",
		  { .opcode = NNP_CMD_ALLGATHER, .src_key = mine, .dst_key = mine, .len = 8,
		    .value = NNP_COLL_VALUE(NNP_DTYPE_F32, NNP_OP_SUM, 1, 0) | 1ull << 63 },
		  NNP_STATUS_INVALID_FIELD },
		{ "a send with its value's high word set",
		  { .opcode = NNP_CMD_SEND, .src_key = mine, .len = 8,
		    .value = NNP_P2P_VALUE(1, 0) | 1ull << 32 },
		  NNP_STATUS_INVALID_FIELD },
	};
	struct nnp_hw_admin_cmd reset = { .opcode = NNP_ADMIN_QUEUE_RESET };
	struct nnp_hw_queue_cmd ok = { .opcode = NNP_CMD_NOP, .cid = 0x7777 };
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_QCQ(0));
	size_t i;

	un.args[0] = CTX;
	un.args[1] = gone;
	assert_int_equal(fw_harness_admin(h, un, NULL), NNP_STATUS_SUCCESS);
	reset.args[0] = CTX;
	memset(h->dev_mem, GUARD, 0x60000);

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct nnp_hw_counters before = fw_harness_counters(h), after;
		uint32_t errors = h->guest_errors;
		uint32_t slot;

		assert_int_equal(run(h, v[i].cmd), v[i].status);
		print_message("  %s: status 0x%x\n", v[i].what, v[i].status);
		assert_int_equal(db_read(h, 0, NNP_DB_STATUS),
				 NNP_QUEUE_STATUS_ENABLED | NNP_QUEUE_STATUS_ERROR);
		assert_int_equal(db_read(h, 0, NNP_DB_ERROR) & 0xffff, v[i].status);
		assert_true(h->guest_errors > errors);
		after = fw_harness_counters(h);
		assert_int_equal(after.cmds_failed - before.cmds_failed, 1);

		/* Stopped: a good command waits until the owner resets. */
		slot = fw_harness_post(h, 0, ok);
		cq[slot].cid = 0;
		nnp_fw_run_queues(h->fw);
		assert_int_equal(cq[slot].cid, 0);
		assert_int_equal(fw_harness_admin(h, reset, NULL), NNP_STATUS_SUCCESS);
		h->q_tail[0] = 0;
		assert_int_equal(db_read(h, 0, NNP_DB_STATUS), NNP_QUEUE_STATUS_ENABLED);
	}
	/* Nothing anywhere in device memory was touched. */
	assert_all(h->dev_mem, 0x60000, GUARD);
}

static void test_doorbell_misuse(void **state)
{
	struct fw_harness *h = *state;
	uint32_t errors = h->guest_errors;

	assert_int_equal(nnp_fw_reg_write(h->fw, NNP_DOORBELL(5) + NNP_DB_SQ_TAIL, 1), 0);
	assert_int_equal(h->guest_errors, errors + 1);
	assert_int_equal(nnp_fw_reg_write(h->fw, NNP_DOORBELL(0) + NNP_DB_STATUS, 0), 0);
	assert_int_equal(h->guest_errors, errors + 2);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_DOORBELL(0) + 0x14), 0);
	assert_int_equal(h->guest_errors, errors + 3);
	assert_int_equal(nnp_fw_reg_write(h->fw, NNP_DOORBELL(0) + NNP_DB_SQ_TAIL,
					  H_QDEPTH), 0);
	assert_int_equal(db_read(h, 0, NNP_DB_STATUS),
			 NNP_QUEUE_STATUS_ENABLED | NNP_QUEUE_STATUS_ERROR);
	assert_int_equal(db_read(h, 0, NNP_DB_ERROR),
			 0xffffu << 16 | NNP_STATUS_INVALID_FIELD);
}

static void test_unreachable_ring_stops_queue(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_QUEUE_CREATE };
	struct nnp_hw_queue_args a = {
		.ctx = CTX, .qid = 7, .depth = 4, .vector = 8,
		.sq_base = 0x7000000, .cq_base = H_QCQ(7),
	};

	memcpy(c.args, &a, sizeof(a));
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_SUCCESS);
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(7) + NNP_DB_SQ_TAIL, 1);
	nnp_fw_run_queues(h->fw);
	assert_int_equal(db_read(h, 7, NNP_DB_ERROR),
			 0xffffu << 16 | NNP_STATUS_DMA_ERROR);
	assert_int_equal(h->irqs[8], 0);
}

/* Queue @qid of CTX whose armed word is at host address @irq_arm. */
static void create_armed_queue(struct fw_harness *h, uint32_t qid,
			       uint64_t irq_arm)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_QUEUE_CREATE };
	struct nnp_hw_queue_args a = {
		.ctx = CTX, .qid = qid, .depth = H_QDEPTH,
		.vector = NNP_VECTOR_QUEUE(qid), .sq_base = H_QSQ(qid),
		.cq_base = H_QCQ(qid), .irq_arm = irq_arm,
	};

	memcpy(c.args, &a, sizeof(a));
	assert_int_equal(fw_harness_admin(h, c, NULL), NNP_STATUS_SUCCESS);
}

/* Run a NOP on queue @qid; the interrupts its vector has taken since. */
static unsigned int nop_irqs(struct fw_harness *h, uint32_t qid)
{
	struct nnp_hw_queue_cmd nop = { .opcode = NNP_CMD_NOP };
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_QCQ(qid));
	unsigned int before = h->irqs[NNP_VECTOR_QUEUE(qid)];
	uint32_t slot;

	nop.cid = (uint16_t)(0x5000 + h->q_tail[qid]);
	slot = fw_harness_post(h, qid, nop);
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[slot].cid, nop.cid);
	assert_int_equal(cq[slot].status, NNP_STATUS_SUCCESS);
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(qid) + NNP_DB_CQ_HEAD, h->q_tail[qid]);
	return h->irqs[NNP_VECTOR_QUEUE(qid)] - before;
}

/*
 * v1.9: with an armed word, completions interrupt only while it is set,
 * and the interrupt clears it; a word the device cannot read interrupts
 * every time, and a queue without one (queue 0) too.
 */
static void test_irq_only_when_armed(void **state)
{
	struct fw_harness *h = *state;
	uint32_t *word = fw_harness_host_ptr(h, H_QCQ(3) + 0x800);

	create_armed_queue(h, 3, H_QCQ(3) + 0x800);
	*word = 0;
	assert_int_equal(nop_irqs(h, 3), 0);
	assert_int_equal(*word, 0);
	*word = 1;
	assert_int_equal(nop_irqs(h, 3), 1);
	assert_int_equal(*word, 0);
	assert_int_equal(nop_irqs(h, 3), 0);
	*word = 0xffffffffu;		/* any value but 0 is set */
	assert_int_equal(nop_irqs(h, 3), 1);
	assert_int_equal(*word, 0);

	create_armed_queue(h, 4, 0x7000000);	/* no host memory there */
	assert_int_equal(nop_irqs(h, 4), 1);
	assert_int_equal(nop_irqs(h, 4), 1);
	assert_int_equal(nop_irqs(h, 0), 1);
}

/* ---- shadow doorbells (v1.11) ---- */

#define SHADOW(q)	(H_QCQ(q) + 0x800)

/* QUEUE_CREATE of queue @qid of CTX whose data buffer is @addr, @len. */
static uint16_t create_shadow_queue(struct fw_harness *h, uint32_t qid,
				    uint64_t addr, uint32_t len)
{
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_QUEUE_CREATE, .addr = addr, .len = len,
	};
	struct nnp_hw_queue_args a = {
		.ctx = CTX, .qid = qid, .depth = H_QDEPTH,
		.vector = NNP_VECTOR_QUEUE(qid), .sq_base = H_QSQ(qid),
		.cq_base = H_QCQ(qid),
	};

	memcpy(c.args, &a, sizeof(a));
	return fw_harness_admin(h, c, NULL);
}

/* Put a NOP with cid 0x6000 + slot in queue @qid's next slot, no doorbell. */
static void shadow_put_nop(struct fw_harness *h, uint32_t qid)
{
	struct nnp_hw_queue_cmd *sq = fw_harness_host_ptr(h, H_QSQ(qid));
	uint32_t slot = h->q_tail[qid];

	memset(&sq[slot], 0, sizeof(sq[slot]));
	sq[slot].opcode = NNP_CMD_NOP;
	sq[slot].cid = (uint16_t)(0x6000 + slot);
	h->q_tail[qid] = (slot + 1) % H_QDEPTH;
}

/*
 * The device takes what the owner put in the shadow tail while the queue
 * ran, says in sq_event where it stopped, and takes nothing without a
 * doorbell once stopped; creation checks the words, and a reset and a
 * creation clear them.
 */
static void test_shadow_doorbell(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_queue_shadow *sh = fw_harness_host_ptr(h, SHADOW(1));
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_QCQ(1));
	struct nnp_hw_admin_cmd r = { .opcode = NNP_ADMIN_QUEUE_RESET };
	uint32_t i;

	assert_true(nnp_fw_reg_read(h->fw, NNP_REG_HW_VERSION) >= (1 << 16 | 11));
	assert_int_equal(create_shadow_queue(h, 1, SHADOW(1) + 4, 8),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(create_shadow_queue(h, 1, SHADOW(1), 4),
			 NNP_STATUS_INVALID_FIELD);
	/* Too long is as wrong as too short: the words are exactly 8 bytes. */
	assert_int_equal(create_shadow_queue(h, 1, SHADOW(1), 16),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(create_shadow_queue(h, 1, SHADOW(1), 9),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(create_shadow_queue(h, 1, 0, 8), NNP_STATUS_INVALID_FIELD);
	assert_int_equal(create_shadow_queue(h, 1, 0x7000000, 8),
			 NNP_STATUS_DMA_ERROR);
	assert_int_equal(db_read(h, 1, NNP_DB_STATUS), 0);
	sh->sq_tail = sh->sq_event = 0xffffffffu;
	assert_int_equal(create_shadow_queue(h, 1, SHADOW(1), 8), NNP_STATUS_SUCCESS);
	assert_int_equal(sh->sq_tail, 0);
	assert_int_equal(sh->sq_event, 0);

	/* One doorbell for the first; two more given by the shadow only. */
	shadow_put_nop(h, 1);
	sh->sq_tail = 1;
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(1) + NNP_DB_SQ_TAIL, 1);
	shadow_put_nop(h, 1);
	shadow_put_nop(h, 1);
	sh->sq_tail = 3;
	nnp_fw_run_queues(h->fw);
	for (i = 0; i < 3; i++) {
		assert_int_equal(cq[i].cid, 0x6000 + i);
		assert_int_equal(cq[i].status, NNP_STATUS_SUCCESS);
	}
	assert_int_equal(sh->sq_event, 3);
	assert_int_equal(db_read(h, 1, NNP_DB_SQ_HEAD), 3);
	assert_int_equal(db_read(h, 1, NNP_DB_SQ_TAIL), 3);

	/* Stopped at 3: the shadow alone runs nothing, the doorbell does. */
	shadow_put_nop(h, 1);
	sh->sq_tail = 4;
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[3].cid, 0);
	assert_int_equal(db_read(h, 1, NNP_DB_SQ_HEAD), 3);
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(1) + NNP_DB_SQ_TAIL, 4);
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[3].cid, 0x6003);
	assert_int_equal(sh->sq_event, 4);

	/* A shadow tail past the depth stops the queue as a doorbell's does. */
	shadow_put_nop(h, 1);
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(1) + NNP_DB_SQ_TAIL, 5);
	sh->sq_tail = H_QDEPTH;
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[4].cid, 0x6004);
	assert_int_equal(db_read(h, 1, NNP_DB_STATUS),
			 NNP_QUEUE_STATUS_ENABLED | NNP_QUEUE_STATUS_ERROR);
	assert_int_equal(db_read(h, 1, NNP_DB_ERROR),
			 0xffffu << 16 | NNP_STATUS_INVALID_FIELD);

	/* The reset starts the words over: an old tail runs nothing new. */
	sh->sq_event = 7;
	r.args[0] = CTX;
	r.args[1] = 1;
	assert_int_equal(fw_harness_admin(h, r, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(sh->sq_tail, 0);
	assert_int_equal(sh->sq_event, 0);
	assert_int_equal(db_read(h, 1, NNP_DB_STATUS), NNP_QUEUE_STATUS_ENABLED);
}

/*
 * The owner's submission that lands between the device's last read of the
 * shadow tail and its use: the owner, having seen sq_event at its old
 * tail, rings the doorbell. The doorbell's tail must stand, not the older
 * one the device read, or the command is never run.
 */
static void submit_during_shadow_read(struct fw_harness *h, uint64_t addr,
				      size_t len)
{
	struct nnp_hw_queue_shadow *sh = fw_harness_host_ptr(h, SHADOW(1));

	if (addr != SHADOW(1) + offsetof(struct nnp_hw_queue_shadow, sq_tail) ||
	    len != 4)
		return;
	h->after_dma_read = NULL;
	assert_int_equal(sh->sq_event, 1);
	shadow_put_nop(h, 1);
	sh->sq_tail = 2;
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(1) + NNP_DB_SQ_TAIL, 2);
}

static void test_shadow_doorbell_during_the_read(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_queue_shadow *sh = fw_harness_host_ptr(h, SHADOW(1));
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_QCQ(1));

	assert_int_equal(create_shadow_queue(h, 1, SHADOW(1), 8), NNP_STATUS_SUCCESS);
	shadow_put_nop(h, 1);
	sh->sq_tail = 1;
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(1) + NNP_DB_SQ_TAIL, 1);
	h->after_dma_read = submit_during_shadow_read;
	nnp_fw_run_queues(h->fw);
	assert_null(h->after_dma_read);
	assert_int_equal(cq[0].cid, 0x6000);
	assert_int_equal(cq[1].cid, 0x6001);
	assert_int_equal(cq[1].status, NNP_STATUS_SUCCESS);
	assert_int_equal(db_read(h, 1, NNP_DB_SQ_HEAD), 2);
	assert_int_equal(sh->sq_event, 2);
}

/*
 * Commands given by the shadow tail while the completion ring is full run
 * once CQ_HEAD frees it: the owner rang for the first (the device had
 * stopped), not for the others, and the CQ_HEAD write that frees the ring
 * restarts the queue, which then reads the shadow tail.
 */
static void test_shadow_doorbell_with_a_full_cq(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_queue_shadow *sh = fw_harness_host_ptr(h, SHADOW(1));
	struct nnp_hw_cqe *cq = fw_harness_host_ptr(h, H_QCQ(1));
	uint32_t i;

	assert_int_equal(create_shadow_queue(h, 1, SHADOW(1), 8), NNP_STATUS_SUCCESS);
	for (i = 0; i < H_QDEPTH - 1; i++)
		shadow_put_nop(h, 1);
	sh->sq_tail = H_QDEPTH - 1;
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(1) + NNP_DB_SQ_TAIL, H_QDEPTH - 1);
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[H_QDEPTH - 2].cid, 0x6000 + H_QDEPTH - 2);
	assert_int_equal(sh->sq_event, H_QDEPTH - 1);

	/* The owner read 8 completions but has not said so: the CQ is full. */
	shadow_put_nop(h, 1);
	sh->sq_tail = 0;
	nnp_fw_reg_write(h->fw, NNP_DOORBELL(1) + NNP_DB_SQ_TAIL, 0);
	for (i = 0; i < 7; i++)
		shadow_put_nop(h, 1);
	sh->sq_tail = 7;
	nnp_fw_run_queues(h->fw);
	assert_int_equal(db_read(h, 1, NNP_DB_SQ_HEAD), H_QDEPTH - 1);
	assert_int_equal(nnp_fw_reg_write(h->fw, NNP_DOORBELL(1) + NNP_DB_CQ_HEAD, 8),
			 NNP_FW_KICK_QUEUES);
	nnp_fw_run_queues(h->fw);
	assert_int_equal(cq[H_QDEPTH - 1].cid, 0x6000 + H_QDEPTH - 1);
	for (i = 0; i < 7; i++) {
		assert_int_equal(cq[i].cid, 0x6000 + i);
		assert_int_equal(cq[i].phase & NNP_CQE_PHASE, 0);
	}
	assert_int_equal(db_read(h, 1, NNP_DB_SQ_HEAD), 7);
	assert_int_equal(sh->sq_event, 7);
}

/* A device presenting 1.10 takes no shadow doorbell. */
static void test_shadow_doorbell_off(void **state)
{
	struct fw_harness *h;

	fw_harness_model.no_shadow_doorbells = true;
	setup_queue(state);
	fw_harness_model.no_shadow_doorbells = false;
	h = *state;
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_HW_VERSION), 1 << 16 | 10);
	assert_int_equal(create_shadow_queue(h, 1, SHADOW(1), 8),
			 NNP_STATUS_INVALID_FIELD);
	assert_int_equal(create_shadow_queue(h, 1, 0, 0), NNP_STATUS_SUCCESS);
	fw_harness_teardown(state);
}

static void test_destroy_and_reset_drop_everything(void **state)
{
	struct fw_harness *h = *state;
	uint32_t k = fw_harness_dev_key(h, CTX, 0, 4096, NNP_KEY_WRITE);
	struct nnp_hw_queue_cmd fill = { .opcode = NNP_CMD_FILL, .dst_key = k, .len = 1 };
	struct nnp_hw_admin_cmd d = { .opcode = NNP_ADMIN_CTX_DESTROY };

	assert_int_equal(run(h, fill), NNP_STATUS_SUCCESS);
	assert_int_equal(h->irqs[NNP_VECTOR_QUEUE(0)], 1);
	d.args[0] = CTX;
	assert_int_equal(fw_harness_admin(h, d, NULL), NNP_STATUS_SUCCESS);
	assert_int_equal(db_read(h, 0, NNP_DB_STATUS), 0);
	/* The context's queue and keys are gone with it. */
	fw_harness_ctx_create(h, CTX);
	fw_harness_queue_create(h, CTX, 0);
	h->q_tail[0] = 0;
	assert_int_equal(run(h, fill), NNP_STATUS_KEY_INVALID);

	/* A reset stops queues at once and forgets them once run. */
	nnp_fw_reg_write(h->fw, NNP_REG_DEV_CTRL, NNP_DEV_CTRL_RESET);
	assert_false(db_read(h, 0, NNP_DB_STATUS) & NNP_QUEUE_STATUS_ENABLED);
	assert_true(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS) & NNP_AQ_STATUS_BUSY);
	fw_harness_advance_ms(h, BOOT_MS);
	assert_int_equal(db_read(h, 0, NNP_DB_STATUS), 0);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_FW_STATUS), NNP_FW_STATUS_READY);
	assert_int_equal(nnp_fw_reg_read(h->fw, NNP_REG_AQ_STATUS), 0);
	/* Counters start over, and the old context is gone. */
	fw_harness_aq_setup(h, H_AQ_SQ, H_AQ_CQ, H_AQ_DEPTH);
	h->aq_slot = 0;
	assert_int_equal(fw_harness_counters(h).cmds_failed, 0);
	assert_int_equal(fw_harness_counters(h).cmds_completed, 0);
	d.args[0] = CTX;
	assert_int_equal(fw_harness_admin(h, d, NULL), NNP_STATUS_NOT_FOUND);
}

/* ---- several workers ---- */

#define NQ 4
#define PER_QUEUE 40

static int worker(void *arg)
{
	struct nnp_fw *fw = arg;
	int i;

	for (i = 0; i < 2000; i++)
		nnp_fw_run_queues(fw);
	return 0;
}

static void test_queues_run_in_parallel_workers(void **state)
{
	struct fw_harness *h = *state;
	uint32_t src = fw_harness_dev_key(h, CTX, 0, 64 * 1024, NNP_KEY_READ);
	uint32_t dst[NQ];
	struct nnp_hw_counters c;
	thrd_t t[2];
	uint32_t q, i;

	fill_pattern(h->dev_mem, 64 * 1024, 9);
	for (q = 0; q < NQ; q++) {
		if (q)
			fw_harness_queue_create(h, CTX, q);
		dst[q] = host_key(h, CTX, BUF + q * 0x10000, 0x10000,
				  NNP_KEY_WRITE, NULL);
	}
	/* Each queue copies 1 KiB pieces into its own host buffer, in order. */
	for (i = 0; i < PER_QUEUE; i++) {
		for (q = 0; q < NQ; q++) {
			struct nnp_hw_queue_cmd cp = {
				.opcode = NNP_CMD_COPY, .cid = (uint16_t)i,
				.src_key = src, .src_off = (i % 64) * 1024,
				.dst_key = dst[q], .dst_off = (i % 64) * 1024,
				.len = 1024,
			};

			if ((h->q_tail[q] + 1) % H_QDEPTH ==
			    nnp_fw_reg_read(h->fw, NNP_DOORBELL(q) + NNP_DB_CQ_HEAD))
				continue;
			fw_harness_post(h, q, cp);
		}
		if (i % 8 == 7) {
			assert_int_equal(thrd_create(&t[0], worker, h->fw), thrd_success);
			assert_int_equal(thrd_create(&t[1], worker, h->fw), thrd_success);
			thrd_join(t[0], NULL);
			thrd_join(t[1], NULL);
			for (q = 0; q < NQ; q++)
				nnp_fw_reg_write(h->fw, NNP_DOORBELL(q) + NNP_DB_CQ_HEAD,
						 h->q_tail[q]);
		}
	}
	for (q = 0; q < NQ; q++) {
		assert_memory_equal(fw_harness_host_ptr(h, BUF + q * 0x10000),
				    h->dev_mem, PER_QUEUE * 1024);
		assert_int_equal(db_read(h, q, NNP_DB_STATUS), NNP_QUEUE_STATUS_ENABLED);
	}
	c = fw_harness_counters(h);
	assert_int_equal(c.cmds_completed, NQ * PER_QUEUE);
	assert_int_equal(c.host_dma_bytes, NQ * PER_QUEUE * 1024);
}

/*
 * A PEER key (v1.24, another device's memory): copied to and from, filled
 * and stamped through its page list as a host key is, its bytes counted
 * in peer_dma_bytes and none in host_dma_bytes; PCIe time as host bytes.
 */
static void test_peer_key_counted_apart(void **state)
{
	struct fw_harness *h = *state;
	uint32_t pkey = list_key(h, CTX, NNP_KEY_TYPE_PEER, BUF + 5, 5000,
				 NNP_KEY_READ | NNP_KEY_WRITE, NULL);
	uint32_t dkey = fw_harness_dev_key(h, CTX, 0x1000, 8192,
					   NNP_KEY_READ | NNP_KEY_WRITE);
	struct nnp_hw_queue_cmd in = {
		.opcode = NNP_CMD_COPY, .src_key = pkey, .dst_key = dkey, .len = 5000,
	};
	struct nnp_hw_queue_cmd out = {
		.opcode = NNP_CMD_COPY, .src_key = dkey, .dst_key = pkey,
		.dst_off = 1000, .len = 3000,
	};
	struct nnp_hw_queue_cmd fill = {
		.opcode = NNP_CMD_FILL, .dst_key = pkey, .len = 7, .value = 0x3c,
	};
	struct nnp_hw_counters c0 = fw_harness_counters(h), c1;
	uint8_t *buf = fw_harness_host_ptr(h, BUF + 5);

	fill_pattern(buf, 5000, 9);
	assert_int_equal(run(h, in), NNP_STATUS_SUCCESS);
	assert_memory_equal(h->dev_mem + 0x1000, buf, 5000);
	assert_int_equal(run(h, out), NNP_STATUS_SUCCESS);
	assert_memory_equal(buf + 1000, h->dev_mem + 0x1000, 3000);
	assert_int_equal(run(h, fill), NNP_STATUS_SUCCESS);
	assert_all(buf, 7, 0x3c);
	c1 = fw_harness_counters(h);
	assert_int_equal(c1.peer_dma_bytes - c0.peer_dma_bytes, 5000 + 3000 + 7);
	assert_int_equal(c1.host_dma_bytes, c0.host_dma_bytes);
	assert_int_equal(c1.local_bytes, c0.local_bytes);
}

/*
 * GET_COUNTERS writes what the buffer holds from the 1.3 block up (a
 * driver before 1.24 asks for 64 bytes and gets them, nothing past), and
 * refuses less.
 */
static void test_counters_block_by_length(void **state)
{
	struct fw_harness *h = *state;
	struct nnp_hw_admin_cmd c = {
		.opcode = NNP_ADMIN_GET_COUNTERS, .addr = H_AQ_DATA,
		.len = NNP_HW_COUNTERS_SIZE_V1_3,
	};
	uint8_t *data = fw_harness_host_ptr(h, H_AQ_DATA);
	uint32_t result = 0;

	memset(data, GUARD, 2 * sizeof(struct nnp_hw_counters));
	assert_int_equal(fw_harness_admin(h, c, &result), NNP_STATUS_SUCCESS);
	assert_int_equal(result, NNP_HW_COUNTERS_SIZE_V1_3);
	assert_all(data + NNP_HW_COUNTERS_SIZE_V1_3, 8, GUARD);
	c.len = 2 * sizeof(struct nnp_hw_counters);
	assert_int_equal(fw_harness_admin(h, c, &result), NNP_STATUS_SUCCESS);
	assert_int_equal(result, sizeof(struct nnp_hw_counters));
	c.len = NNP_HW_COUNTERS_SIZE_V1_3 - 1;
	assert_int_equal(fw_harness_admin(h, c, &result), NNP_STATUS_BUFFER_TOO_SMALL);
}

#define QTEST(fn) cmocka_unit_test_setup_teardown(fn, setup_queue, fw_harness_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		QTEST(test_contexts),
		QTEST(test_key_register_checks),
		QTEST(test_host_key_pages_capped),
		QTEST(test_queue_create_checks),
		QTEST(test_copy_every_direction_byte_exact),
		QTEST(test_peer_key_counted_apart),
		QTEST(test_counters_block_by_length),
		QTEST(test_copy_without_mapping_byte_exact),
		QTEST(test_copy_with_partial_mappings_byte_exact),
		QTEST(test_dma_fault_mapped),
		QTEST(test_dma_fault_unmapped),
		QTEST(test_fill_mapped_byte_exact),
		QTEST(test_lazy_cq_head_and_full_cq),
		QTEST(test_host_pages_follow_the_list),
		QTEST(test_overlapping_device_copy_is_memmove),
		QTEST(test_fill_nop_barrier_timestamp),
		QTEST(test_violations_fail_and_stop_the_queue),
		QTEST(test_doorbell_misuse),
		QTEST(test_unreachable_ring_stops_queue),
		QTEST(test_irq_only_when_armed),
		QTEST(test_shadow_doorbell),
		QTEST(test_shadow_doorbell_during_the_read),
		QTEST(test_shadow_doorbell_with_a_full_cq),
		cmocka_unit_test(test_shadow_doorbell_off),
		QTEST(test_destroy_and_reset_drop_everything),
		QTEST(test_queues_run_in_parallel_workers),
	};

	return cmocka_run_group_tests_name("fw_queue", tests, NULL, NULL);
}
