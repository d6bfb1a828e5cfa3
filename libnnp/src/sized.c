// SPDX-License-Identifier: MIT
/*
 * The size members of libnnp's public structs (nnp.h): a caller built
 * against an older libnnp gives a smaller size, and gets what it covers.
 */
#include "internal.h"
#include "log.h"

nnp_result_t nnp_size_check(size_t size, size_t first, size_t full,
			    const char *what)
{
	if (size >= first && size <= full)
		return NNP_SUCCESS;
	return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
			"%s size %zu, not one libnnp %d.%d knows (%zu to %zu): set it to sizeof the struct",
			what, size, NNP_VERSION_MAJOR(NNP_VERSION_CODE),
			NNP_VERSION_MINOR(NNP_VERSION_CODE), first, full);
}
