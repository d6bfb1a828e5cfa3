// SPDX-License-Identifier: MIT
/*
 * Firmware simulator buffers kept for reuse: packet copies of up to
 * NNP_FW_ICL_MAX_PACKET, and each chip's scratch for in-place commands.
 *
 * A chip's SRAM and packet buffers are there from power-on; the
 * simulator's come from the host's allocator, which hands memory of a
 * megabyte or more, and a heap's freed top, back to the kernel at once.
 * Taken again, every page of it faults in afresh: on the machines that
 * run the tests, where a fault costs microseconds, an in-place 4 MiB
 * alltoall spent most of its time faulting in its scratch, and copies
 * of 64 KiB packets faulted in the heap the packets before gave back.
 * So both are kept once freed: packets in one pool for every chip of the
 * process (a packet is freed by its receiver, on another chip, and the
 * pool outlives any one chip), scratch in two slots per chip, each the
 * size of the largest use yet, for as long as the chip has a context: a
 * 64 MiB in-place alltoall on 8 chips kept 1 GiB of the host's memory
 * after its job ended, until the chips went.
 *
 * The pool has a class per size (64 KiB, 256 KiB, 1 MiB: a packet takes
 * the smallest that holds it, so it wastes less than three quarters),
 * each keeping NNP_FW_POOL_BYTES of buffers at most.
 */
#include <stddef.h>
#include <stdlib.h>

#include "fw_base.h"

#define CLASSES	3
_Static_assert((NNP_FW_CHUNK_BYTES << 2 * (CLASSES - 1)) ==
	       NNP_FW_ICL_MAX_PACKET, "the largest class holds the largest packet");

struct pooled {
	struct pooled *next;
};

static struct {
	once_flag once;
	mtx_t lock;
	struct pooled *free[CLASSES];
	uint32_t count[CLASSES];
} pool = { .once = ONCE_FLAG_INIT };

static void pool_init(void)
{
	mtx_init(&pool.lock, mtx_plain);
}

static size_t class_bytes(unsigned int c)
{
	return (size_t)NNP_FW_CHUNK_BYTES << 2 * c;
}

/* The class of a packet of @len bytes; CLASSES: too large for any. */
static unsigned int class_of(size_t len)
{
	unsigned int c = 0;

	while (c < CLASSES && len > class_bytes(c))
		c++;
	return c;
}

struct nnp_fw_packet *nnp_fw_packet_alloc(size_t len)
{
	unsigned int c = class_of(len);
	struct nnp_fw_packet *pk = NULL;

	if (c == CLASSES) {
		pk = malloc(sizeof(*pk) + len);
		if (pk)
			pk->pooled = 0;
		return pk;
	}
	call_once(&pool.once, pool_init);
	mtx_lock(&pool.lock);
	if (pool.free[c]) {
		pk = (struct nnp_fw_packet *)pool.free[c];
		pool.free[c] = pool.free[c]->next;
		pool.count[c]--;
	}
	mtx_unlock(&pool.lock);
	if (!pk)
		pk = malloc(sizeof(*pk) + class_bytes(c));
	if (pk)
		pk->pooled = c + 1;
	return pk;
}

void nnp_fw_packet_free(struct nnp_fw_packet *pk)
{
	struct pooled *b = (struct pooled *)pk;
	unsigned int c;

	if (!pk)
		return;
	if (pk->pooled) {
		c = pk->pooled - 1;
		mtx_lock(&pool.lock);
		if (pool.count[c] < NNP_FW_POOL_BYTES / class_bytes(c)) {
			b->next = pool.free[c];
			pool.free[c] = b;
			pool.count[c]++;
			b = NULL;
		}
		mtx_unlock(&pool.lock);
	}
	free(b);
}

uint32_t nnp_fw_packets_pooled(size_t len)
{
	unsigned int c = class_of(len);
	uint32_t n;

	if (c == CLASSES)
		return 0;
	call_once(&pool.once, pool_init);
	mtx_lock(&pool.lock);
	n = pool.count[c];
	mtx_unlock(&pool.lock);
	return n;
}

/* A scratch buffer: its size ahead of its bytes. */
struct nnp_fw_scratch {
	size_t size;
	max_align_t data[];
};

void *nnp_fw_scratch_take(struct nnp_fw *fw, size_t bytes)
{
	struct nnp_fw_scratch *s = NULL;
	unsigned int i;

	for (i = 0; i < NNP_FW_SCRATCH_SLOTS && !s; i++) {
		s = atomic_exchange(&fw->scratch_slots[i], NULL);
		/* Too small: a larger one takes its place. */
		if (s && s->size < bytes) {
			free(s);
			s = NULL;
		}
	}
	if (!s) {
		s = malloc(sizeof(*s) + bytes);
		if (!s)
			return NULL;
		s->size = bytes;
	}
	return s->data;
}

void nnp_fw_scratch_give(struct nnp_fw *fw, void *buf)
{
	struct nnp_fw_scratch *s;
	unsigned int i;

	if (!buf)
		return;
	s = (struct nnp_fw_scratch *)((char *)buf -
				      offsetof(struct nnp_fw_scratch, data));
	for (i = 0; i < NNP_FW_SCRATCH_SLOTS && s; i++) {
		struct nnp_fw_scratch *empty = NULL;

		if (atomic_compare_exchange_strong(&fw->scratch_slots[i],
						   &empty, s))
			s = NULL;
	}
	free(s);
}

void nnp_fw_scratch_release(struct nnp_fw *fw)
{
	unsigned int i;

	for (i = 0; i < NNP_FW_SCRATCH_SLOTS; i++)
		free(atomic_exchange(&fw->scratch_slots[i], NULL));
}
