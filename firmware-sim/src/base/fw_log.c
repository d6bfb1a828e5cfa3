// SPDX-License-Identifier: MIT
/*
 * Firmware simulator messages to the embedder: a guest's mistake, or a
 * warning when a link or a peer made a command fail. Every layer reports
 * through these, so they sit at the bottom.
 */
#include <stdarg.h>
#include <stdio.h>

#include "fw_base.h"

static __attribute__((format(printf, 3, 0))) void
report(struct nnp_fw *fw, void (*to)(void *opaque, const char *msg),
       const char *fmt, va_list ap)
{
	char msg[256];

	if (!to)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	to(fw->host.opaque, msg);
}

void nnp_fw_guest_error(struct nnp_fw *fw, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(fw, fw->host.guest_error, fmt, ap);
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
	report(fw, status_from_link(st) ? fw->host.warning :
	       fw->host.guest_error, fmt, ap);
	va_end(ap);
}
