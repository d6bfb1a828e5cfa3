// SPDX-License-Identifier: MIT
/* libnnp's own version, as the running library knows it. */
#include "log.h"

nnp_result_t nnp_get_version(int *version)
{
	if (!version)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_get_version: version is NULL");
	*version = NNP_VERSION_CODE;
	return NNP_SUCCESS;
}
