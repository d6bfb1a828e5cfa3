// SPDX-License-Identifier: MIT
/* Tables exchanged over a communicator (comm_exchange.h). */
#include <string.h>

#include "comm_exchange.h"
#include "log.h"

nnp_result_t nnp_exchange_open(struct nnp_exchange *x, nnp_comm_t *comm,
			       size_t size, const char *what)
{
	size_t all = (size_t)comm->nranks * size;
	nnp_result_t res;

	*x = (struct nnp_exchange){ .comm = comm, .what = what };
	res = nnp_stream_create(comm->dev, &x->s);
	if (res == NNP_SUCCESS)
		res = nnp_mem_alloc(comm->dev, NNP_MEM_DEVICE, all, 0, &x->dev);
	if (res == NNP_SUCCESS)
		res = nnp_mem_alloc(comm->dev, NNP_MEM_HOST, all, 0, &x->host);
	if (res == NNP_SUCCESS)
		res = nnp_mem_map(x->host, (void **)&x->table);
	return res;
}

void nnp_exchange_close(struct nnp_exchange *x)
{
	/* The stream first: it waits for what it still runs on the buffers. */
	nnp_stream_destroy(x->s);
	nnp_mem_free(x->dev);
	nnp_mem_free(x->host);
}

/* Staged into device memory, an in-place allgather, and back. */
nnp_result_t nnp_exchange(struct nnp_exchange *x, const void *mine, size_t size)
{
	size_t off = (size_t)x->comm->rank * size;
	nnp_result_t res;

	memcpy(x->table + off, mine, size);
	res = nnp_memcpy_async(x->s, x->dev, off, x->host, off, size);
	if (res == NNP_SUCCESS)
		res = nnp_allgather(x->dev, off, x->dev, 0, size / 4, NNP_INT32,
				    x->comm, x->s);
	if (res == NNP_SUCCESS)
		res = nnp_memcpy_async(x->s, x->host, 0, x->dev, 0,
				       (size_t)x->comm->nranks * size);
	if (res == NNP_SUCCESS)
		res = nnp_stream_synchronize(x->s);
	if (res == NNP_ERROR_COMMAND_FAILED)
		res = NNP_ERROR_COMM_FAILED;
	return res == NNP_SUCCESS ? res :
	       nnp_fail_within(res, "%s: rank %d: the exchange over the communicator failed",
			       x->what, x->comm->rank);
}
