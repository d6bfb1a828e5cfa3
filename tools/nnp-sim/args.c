// SPDX-License-Identifier: MIT
/* nnp-sim's option values: see args.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

int parse_size(const char *arg, uint64_t *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(arg, &end, 0);
	if (errno || end == arg)
		return -1;
	switch (*end) {
	case 'G': n <<= 10; /* fall through */
	case 'M': n <<= 10; /* fall through */
	case 'K': n <<= 10; end++; break;
	}
	*v = n;
	return *end ? -1 : 0;
}

int parse_u32(const char *arg, uint32_t *v)
{
	uint64_t n;

	if (parse_size(arg, &n) || n > UINT32_MAX)
		return -1;
	*v = (uint32_t)n;
	return 0;
}

int parse_chips(const char *arg, unsigned int *chips, unsigned int *nruns)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int bad = !copy;

	*nruns = 0;
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !bad;
	     tok = strtok_r(NULL, ",", &save)) {
		uint32_t n;

		bad = *nruns == MAX_RUNS || parse_u32(tok, &n) || !n ||
		      n > MAX_CHIPS;
		if (!bad)
			chips[(*nruns)++] = n;
	}
	free(copy);
	return bad || !*nruns ? -1 : 0;
}
