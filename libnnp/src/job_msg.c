// SPDX-License-Identifier: MIT
/* The job view's messages, sealed and checked as bytes (job_msg.h). */
#include <stddef.h>

#include "job_msg.h"

void nnp_job_seal_query(const struct nnp_boot_session *s, struct nnp_job_query *q)
{
	nnp_boot_mac(s, "nnp job query", NULL, 0, NULL, 0, q->mac);
}

bool nnp_job_query_sealed(const struct nnp_boot_session *s,
			  const struct nnp_job_query *q)
{
	struct nnp_job_query want;

	nnp_job_seal_query(s, &want);
	return nnp_boot_mac_equal(want.mac, q->mac);
}

static void ask_mac(const struct nnp_boot_session *s, const struct nnp_job_ask *a,
		    uint8_t mac[NNP_BOOT_MAC_BYTES])
{
	nnp_boot_mac(s, "nnp job ask", a, offsetof(struct nnp_job_ask, mac), NULL, 0,
		     mac);
}

void nnp_job_seal_ask(const struct nnp_boot_session *s, struct nnp_job_ask *a)
{
	ask_mac(s, a, a->mac);
}

bool nnp_job_ask_sealed(const struct nnp_boot_session *s,
			const struct nnp_job_ask *a)
{
	uint8_t mac[NNP_BOOT_MAC_BYTES];

	ask_mac(s, a, mac);
	return nnp_boot_mac_equal(mac, a->mac);
}

static void state_mac(const struct nnp_boot_session *s,
		      const struct nnp_job_state *st, uint8_t mac[NNP_BOOT_MAC_BYTES])
{
	nnp_boot_mac(s, "nnp job state", st, offsetof(struct nnp_job_state, mac),
		     NULL, 0, mac);
}

void nnp_job_seal_state(const struct nnp_boot_session *s, struct nnp_job_state *st)
{
	state_mac(s, st, st->mac);
}

bool nnp_job_state_sealed(const struct nnp_boot_session *s,
			  const struct nnp_job_state *st)
{
	uint8_t mac[NNP_BOOT_MAC_BYTES];

	state_mac(s, st, mac);
	return nnp_boot_mac_equal(mac, st->mac);
}

static void view_mac(const struct nnp_boot_session *s, const struct nnp_job_view *v,
		     const struct nnp_job_entry *table, uint8_t mac[NNP_BOOT_MAC_BYTES])
{
	nnp_boot_mac(s, "nnp job view", v, offsetof(struct nnp_job_view, mac),
		     table, v->nranks * sizeof(*table), mac);
}

void nnp_job_seal_view(const struct nnp_boot_session *s, struct nnp_job_view *v,
		       const struct nnp_job_entry *table)
{
	view_mac(s, v, table, v->mac);
}

bool nnp_job_view_sealed(const struct nnp_boot_session *s,
			 const struct nnp_job_view *v,
			 const struct nnp_job_entry *table)
{
	uint8_t mac[NNP_BOOT_MAC_BYTES];

	view_mac(s, v, table, mac);
	return nnp_boot_mac_equal(mac, v->mac);
}
