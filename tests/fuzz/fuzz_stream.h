/* SPDX-License-Identifier: MIT */
/*
 * An input read front to back as a peer's byte stream: a target takes
 * what a socket read would give, and the stream's end is the peer gone.
 */
#ifndef NNP_FUZZ_STREAM_H
#define NNP_FUZZ_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_stream {
	const uint8_t *p;
	size_t left;
};

/* The next @len bytes, or NULL if fewer are left (none are then taken). */
static inline const uint8_t *fuzz_take(struct fuzz_stream *s, size_t len)
{
	const uint8_t *p = s->p;

	if (len > s->left)
		return NULL;
	s->p += len;
	s->left -= len;
	return p;
}

#endif /* NNP_FUZZ_STREAM_H */
