// SPDX-License-Identifier: MIT
/*
 * Firmware simulator contexts and memory keys.
 *
 * The driver creates one context per open file and registers memory for
 * it; each registration yields a key that only that context's queues may
 * use. The key table is the firmware's: for host memory it holds the page
 * list the driver gave, which user space never sees. A key is an index
 * with a generation above it, so a stale key never names a reused slot.
 */
#include <stdlib.h>
#include <string.h>

#include "fw_control.h"


bool nnp_fw_ctx_valid_locked(const struct nnp_fw *fw, uint32_t ctx)
{
	return ctx > 0 && ctx < NNP_HW_MAX_CONTEXTS && fw->ctx_used[ctx];
}

uint16_t nnp_fw_ctx_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	uint32_t ctx = fw_admin_arg(cmd, 0);
	uint16_t status = NNP_STATUS_SUCCESS;

	if (ctx == 0 || ctx >= NNP_HW_MAX_CONTEXTS)
		return NNP_STATUS_INVALID_FIELD;
	mtx_lock(&fw->lock);
	if (fw->ctx_used[ctx]) {
		status = NNP_STATUS_BUSY;
	} else {
		fw->ctx_used[ctx] = true;
		/* The id was another file's before: its usage starts over. */
		memset(fw->clock.ctx_busy_ns[ctx], 0,
		       sizeof(fw->clock.ctx_busy_ns[ctx]));
	}
	mtx_unlock(&fw->lock);
	return status;
}

/* Free key slot @i, with fw->lock held. */
static void key_free_locked(struct nnp_fw *fw, uint32_t i)
{
	fw->key_pages -= fw->keys[i].npages;
	free(fw->keys[i].pages);
	memset(&fw->keys[i], 0, sizeof(fw->keys[i]));
}

void nnp_fw_keys_clear_locked(struct nnp_fw *fw)
{
	uint32_t i;

	for (i = 1; i < NNP_HW_MAX_KEYS; i++)
		if (fw->keys[i].key)
			key_free_locked(fw, i);
}

uint16_t nnp_fw_ctx_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	uint32_t ctx = fw_admin_arg(cmd, 0);
	bool ok, last = true;
	uint32_t i;

	mtx_lock(&fw->lock);
	ok = nnp_fw_ctx_valid_locked(fw, ctx);
	mtx_unlock(&fw->lock);
	if (!ok)
		return NNP_STATUS_NOT_FOUND;

	nnp_fw_queues_destroy_ctx(fw, ctx, true);
	nnp_fw_comms_clear(fw, ctx);
	mtx_lock(&fw->lock);
	for (i = 1; i < NNP_HW_MAX_KEYS; i++)
		if (fw->keys[i].key && fw->keys[i].ctx == ctx)
			key_free_locked(fw, i);
	fw->ctx_used[ctx] = false;
	for (i = 1; i < NNP_HW_MAX_CONTEXTS; i++)
		last &= !fw->ctx_used[i];
	mtx_unlock(&fw->lock);
	/* No context is left to use the chip's scratch: it keeps none. */
	if (last)
		nnp_fw_scratch_release(fw);
	return NNP_STATUS_SUCCESS;
}

static uint16_t key_args_check(struct nnp_fw *fw, const struct nnp_hw_key_args *a,
			       const struct nnp_hw_admin_cmd *cmd, uint32_t *npages)
{
	uint64_t span;

	if (!a->length || !a->rights || (a->rights & ~(NNP_KEY_READ | NNP_KEY_WRITE)))
		return NNP_STATUS_INVALID_FIELD;
	switch (a->type) {
	case NNP_KEY_TYPE_DEVICE:
		if (a->page_offset || cmd->addr || cmd->len ||
		    a->dev_base > fw->cfg.mem_size ||
		    a->length > fw->cfg.mem_size - a->dev_base)
			return NNP_STATUS_INVALID_FIELD;
		*npages = 0;
		return NNP_STATUS_SUCCESS;
	case NNP_KEY_TYPE_HOST:
	case NNP_KEY_TYPE_PEER:
		if (a->dev_base || a->page_offset >= NNP_HW_PAGE_SIZE ||
		    a->length > (uint64_t)NNP_HW_HOST_KEY_MAX_PAGES * NNP_HW_PAGE_SIZE)
			return NNP_STATUS_INVALID_FIELD;
		span = a->page_offset + a->length;
		*npages = (uint32_t)((span + NNP_HW_PAGE_SIZE - 1) / NNP_HW_PAGE_SIZE);
		if (cmd->len != *npages * sizeof(uint64_t))
			return NNP_STATUS_INVALID_FIELD;
		return NNP_STATUS_SUCCESS;
	}
	return NNP_STATUS_INVALID_FIELD;
}

uint16_t nnp_fw_key_register(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd,
			     uint32_t *key)
{
	struct nnp_hw_key_args a;
	uint64_t *pages = NULL;
	uint32_t npages, i;
	uint16_t status;

	memcpy(&a, cmd->args, sizeof(a));
	fw_le_key_args(&a);
	status = key_args_check(fw, &a, cmd, &npages);
	if (status)
		return status;
	if (npages) {
		pages = malloc(npages * sizeof(*pages));
		if (!pages)
			return NNP_STATUS_NO_RESOURCES;
		if (fw->host.dma_read(fw->host.opaque, cmd->addr, pages,
				      npages * sizeof(*pages))) {
			free(pages);
			return NNP_STATUS_DMA_ERROR;
		}
		for (i = 0; i < npages; i++) {
			pages[i] = fw_le64(pages[i]);
			if (pages[i] % NNP_HW_PAGE_SIZE) {
				free(pages);
				return NNP_STATUS_INVALID_FIELD;
			}
		}
	}

	mtx_lock(&fw->lock);
	status = NNP_STATUS_NO_RESOURCES;
	if (!nnp_fw_ctx_valid_locked(fw, a.ctx)) {
		status = NNP_STATUS_NOT_FOUND;
	} else if (npages > NNP_HW_MAX_KEY_PAGES - fw->key_pages) {
		/* The page lists live in the embedder's heap: bounded. */
		status = NNP_STATUS_NO_RESOURCES;
	} else {
		for (i = 1; i < NNP_HW_MAX_KEYS; i++) {
			struct nnp_fw_key *k = &fw->keys[i];

			if (k->key)
				continue;
			/* Generation 0 is never used, so no key is 0. */
			if (++fw->key_gen[i] == 0)
				fw->key_gen[i] = 1;
			k->key = (uint32_t)fw->key_gen[i] << 16 | i;
			k->ctx = a.ctx;
			k->type = a.type;
			k->rights = a.rights;
			k->length = a.length;
			k->dev_base = a.dev_base;
			k->page_offset = a.page_offset;
			k->npages = npages;
			k->pages = pages;
			fw->key_pages += npages;
			*key = k->key;
			pages = NULL;
			status = NNP_STATUS_SUCCESS;
			break;
		}
	}
	mtx_unlock(&fw->lock);
	free(pages);
	return status;
}

uint16_t nnp_fw_key_unregister(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	uint32_t ctx = fw_admin_arg(cmd, 0), key = fw_admin_arg(cmd, 1);
	struct nnp_fw_key *k;

	mtx_lock(&fw->lock);
	k = nnp_fw_key_lookup_locked(fw, ctx, key);
	if (k)
		k->dead = true;
	mtx_unlock(&fw->lock);
	if (!k)
		return NNP_STATUS_NOT_FOUND;
	/*
	 * Commands that resolved the key before it died finish first; one
	 * waiting on a link ends ABORTED, as its wait is the peer's to end.
	 */
	nnp_fw_queues_abort_key(fw, ctx, key);
	mtx_lock(&fw->lock);
	if (k->key == key)
		key_free_locked(fw, NNP_FW_KEY_INDEX(key));
	mtx_unlock(&fw->lock);
	return NNP_STATUS_SUCCESS;
}
