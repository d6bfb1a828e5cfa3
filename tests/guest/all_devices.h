/* SPDX-License-Identifier: MIT */
/*
 * The fixture of the tests that drive every nnp device of the VM from one
 * process (coll_test, group_test): each device with a stream, two device
 * buffers and a host buffer, and one communicator of all of them
 * (nnp_comm_init_all).
 */
#ifndef NNP_ALL_DEVICES_H
#define NNP_ALL_DEVICES_H

#include <nnp/nnp.h>

#include "guest_env.h"

#define MAXDEV		8

struct all_devices {
	int n;
	nnp_device_t *dev[MAXDEV];
	nnp_stream_t *s[MAXDEV];
	nnp_comm_t *comm[MAXDEV];
	nnp_mem_t *a[MAXDEV], *b[MAXDEV], *host[MAXDEV];
};

/*
 * Open the VM's 2 to MAXDEV devices, buffers of @cap bytes each: a text
 * saying what failed, or NULL.
 */
static inline const char *all_devices_open(struct all_devices *d, size_t cap)
{
	int r;

	d->n = GUEST_CHIPS;
	if (d->n < 2 || d->n > MAXDEV)
		return "the VM has not 2 to 8 chips";
	for (r = 0; r < d->n; r++)
		if (nnp_device_open(r, &d->dev[r]) ||
		    nnp_stream_create(d->dev[r], &d->s[r]) ||
		    nnp_mem_alloc(d->dev[r], NNP_MEM_DEVICE, cap, 0, &d->a[r]) ||
		    nnp_mem_alloc(d->dev[r], NNP_MEM_DEVICE, cap, 0, &d->b[r]) ||
		    nnp_mem_alloc(d->dev[r], NNP_MEM_HOST, cap, 0, &d->host[r]))
			return nnp_get_last_error();
	if (nnp_comm_init_all(d->dev, d->n, d->comm))
		return nnp_get_last_error();
	return NULL;
}

static inline void all_devices_close(struct all_devices *d)
{
	int r;

	for (r = 0; r < d->n; r++) {
		nnp_comm_destroy(d->comm[r]);
		nnp_mem_free(d->a[r]);
		nnp_mem_free(d->b[r]);
		nnp_mem_free(d->host[r]);
		nnp_stream_destroy(d->s[r]);
		nnp_device_close(d->dev[r]);
	}
}

#endif /* NNP_ALL_DEVICES_H */
