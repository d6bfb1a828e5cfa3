// SPDX-License-Identifier: MIT
/*
 * Firmware simulator key lookups: a command's key resolved into the span of
 * memory its DMA reaches. Registering and dropping keys is the control
 * plane's (fw_ctx.c).
 */
#include "fw_engines.h"

struct nnp_fw_key *nnp_fw_key_lookup_locked(struct nnp_fw *fw, uint32_t ctx,
					    uint32_t key)
{
	struct nnp_fw_key *k;

	if (!key || NNP_FW_KEY_INDEX(key) >= NNP_HW_MAX_KEYS)
		return NULL;
	k = &fw->keys[NNP_FW_KEY_INDEX(key)];
	return k->key == key && k->ctx == ctx && !k->dead ? k : NULL;
}

uint16_t nnp_fw_key_resolve(struct nnp_fw *fw, uint32_t ctx, uint32_t key,
			    uint64_t off, uint64_t len, uint32_t right,
			    struct nnp_fw_span *span)
{
	const struct nnp_fw_key *k;
	uint16_t status = NNP_STATUS_SUCCESS;

	mtx_lock(&fw->lock);
	k = nnp_fw_key_lookup_locked(fw, ctx, key);
	if (!k)
		status = NNP_STATUS_KEY_INVALID;
	else if (!(k->rights & right))
		status = NNP_STATUS_ACCESS_DENIED;
	else if (off > k->length || len > k->length - off)
		status = NNP_STATUS_OUT_OF_BOUNDS;
	if (!status) {
		span->type = k->type;
		span->start = off;
		span->len = len;
		span->dev_base = k->dev_base;
		span->page_offset = k->page_offset;
		span->pages = k->pages;
	}
	mtx_unlock(&fw->lock);
	return status;
}
