// SPDX-License-Identifier: MIT
/*
 * Firmware simulator messages: a guest's mistake, or a warning when a link
 * or a peer made a command fail. Each goes to the embedder and into the
 * device's log, which the host reads in BAR0 (v1.19) even once the
 * firmware stopped. Every layer reports through these, so they sit at
 * the bottom.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fw_base.h"

_Static_assert(sizeof(struct nnp_hw_log_entry) == 128, "a log entry is 128 bytes");

static void log_add(struct nnp_fw *fw, uint16_t kind, const char *msg)
{
	struct nnp_hw_log_entry *e;

	mtx_lock(&fw->log.lock);
	e = &fw->log.e[fw->log.seq % NNP_HW_LOG_ENTRIES];
	memset(e, 0, sizeof(*e));
	e->time_ns = fw_le64(fw->host.now_ns(fw->host.opaque));
	e->seq = fw_le32(fw->log.seq++);
	e->kind = fw_le16(kind);
	/* Cut short, its NUL kept: memset() wrote it. */
	memcpy(e->msg, msg, strnlen(msg, sizeof(e->msg) - 1));
	mtx_unlock(&fw->log.lock);
}

static __attribute__((format(printf, 4, 0))) void
report(struct nnp_fw *fw, uint16_t kind, void (*to)(void *opaque, const char *msg),
       const char *fmt, va_list ap)
{
	char msg[256];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_add(fw, kind, msg);
	if (to)
		to(fw->host.opaque, msg);
}

bool nnp_fw_is_log_reg(uint32_t offset)
{
	return offset == NNP_REG_FW_LOG_SEQ ||
	       (offset >= NNP_REG_FW_LOG &&
		offset < NNP_REG_FW_LOG + sizeof(((struct nnp_fw_log *)0)->e));
}

uint32_t nnp_fw_log_read(struct nnp_fw *fw, uint32_t offset)
{
	uint32_t v;

	mtx_lock(&fw->log.lock);
	if (offset == NNP_REG_FW_LOG_SEQ)
		v = fw->log.seq;
	else
		memcpy(&v, (const uint8_t *)fw->log.e + (offset - NNP_REG_FW_LOG),
		       sizeof(v));
	mtx_unlock(&fw->log.lock);
	return v;
}

void nnp_fw_guest_error(struct nnp_fw *fw, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(fw, NNP_HW_LOG_GUEST_ERROR, fw->host.guest_error, fmt, ap);
	va_end(ap);
}

/* The statuses a link or a peer chip causes, whatever the driver does. */
static bool status_from_link(uint16_t st)
{
	return st == NNP_STATUS_LINK_DOWN || st == NNP_STATUS_PEER_TIMEOUT;
}

void nnp_fw_op_failed(struct nnp_fw *fw, uint16_t st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (status_from_link(st))
		report(fw, NNP_HW_LOG_WARNING, fw->host.warning, fmt, ap);
	else
		report(fw, NNP_HW_LOG_GUEST_ERROR, fw->host.guest_error, fmt, ap);
	va_end(ap);
}
