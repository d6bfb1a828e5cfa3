/* SPDX-License-Identifier: MIT */
/*
 * Allreduce inputs tagged by communicator, for the tests that run several
 * communicators over the same chips at once (comm_split_test,
 * comm_shrink_test): a sum that took another communicator's packets
 * comes out wrong.
 */
#ifndef NNP_TAGGED_SUMS_H
#define NNP_TAGGED_SUMS_H

#include <stddef.h>
#include <stdint.h>

#include <nnp/nnp.h>

/* Parent rank @r's @i-th input of a sum tagged @tag. */
static inline int32_t tagged_input(int tag, int r, size_t i)
{
	return tag * 1000000 + (r + 1) * 10000 + (int32_t)(i % 9973);
}

/*
 * Parent rank @r's @count inputs tagged @tag into @mem, through @host (as
 * many bytes, host memory), on @s and waited for.
 */
static inline nnp_result_t tagged_stage(nnp_stream_t *s, nnp_mem_t *host,
					nnp_mem_t *mem, size_t count, int tag, int r)
{
	nnp_result_t res;
	int32_t *h;
	size_t i;

	res = nnp_mem_map(host, (void **)&h);
	if (res != NNP_SUCCESS)
		return res;
	for (i = 0; i < count; i++)
		h[i] = tagged_input(tag, r, i);
	res = nnp_memcpy_async(s, mem, 0, host, 0, count * 4);
	return res == NNP_SUCCESS ? nnp_stream_synchronize(s) : res;
}

/*
 * Of the @count int32 of @mem, once @s's work is done, those that are not
 * the sum of the @tag inputs of the parent ranks in @members (a bit
 * each), read through @host; -1 if a call failed.
 */
static inline long tagged_wrong(nnp_stream_t *s, nnp_mem_t *host, nnp_mem_t *mem,
				size_t count, int tag, unsigned int members)
{
	long bad = 0;
	int32_t *h;
	size_t i;
	int m;

	if (nnp_stream_synchronize(s) != NNP_SUCCESS ||
	    nnp_memcpy_async(s, host, 0, mem, 0, count * 4) != NNP_SUCCESS ||
	    nnp_stream_synchronize(s) != NNP_SUCCESS ||
	    nnp_mem_map(host, (void **)&h) != NNP_SUCCESS)
		return -1;
	for (i = 0; i < count; i++) {
		int32_t want = 0;

		for (m = 0; members >> m; m++)
			if (members & 1u << m)
				want += tagged_input(tag, m, i);
		bad += h[i] != want;
	}
	return bad;
}

#endif /* NNP_TAGGED_SUMS_H */
