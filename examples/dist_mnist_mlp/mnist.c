// SPDX-License-Identifier: MIT
/*
 * IDX reader: a big-endian header (magic 0x00000803 for images with count,
 * rows, cols; 0x00000801 for labels with count), then the bytes. zlib's
 * gzread reads gzipped and plain files alike.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "mnist.h"

#define IDX_IMAGES	0x00000803u
#define IDX_LABELS	0x00000801u

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Open <dir>/<name>.gz, or <dir>/<name> if there is no .gz. */
static gzFile idx_open(const char *dir, const char *name, char *path, size_t len)
{
	gzFile f;

	snprintf(path, len, "%s/%s.gz", dir, name);
	f = gzopen(path, "rb");
	if (!f) {
		snprintf(path, len, "%s/%s", dir, name);
		f = gzopen(path, "rb");
	}
	return f;
}

static int idx_read(gzFile f, void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len > 0) {
		unsigned int chunk = len > (1u << 30) ? 1u << 30 : (unsigned int)len;
		int got = gzread(f, p, chunk);

		if (got <= 0)
			return -1;
		p += got;
		len -= (size_t)got;
	}
	return 0;
}

/*
 * Read the header of IDX file @name (@hdr_words big-endian words into @hdr:
 * the magic, which must be @magic, the item count, then the dimensions) and
 * its first @want items of @item bytes into a new buffer.
 */
static uint8_t *idx_load(const char *dir, const char *name, uint32_t magic,
			 unsigned int hdr_words, size_t item, int want,
			 uint32_t *hdr, char *err, size_t errlen)
{
	char path[4096];
	unsigned char raw[16];
	uint8_t *data = NULL;
	unsigned int i;
	gzFile f = idx_open(dir, name, path, sizeof(path));

	if (!f) {
		snprintf(err, errlen, "%s/%s[.gz]: %s", dir, name, strerror(errno));
		return NULL;
	}
	if (idx_read(f, raw, hdr_words * 4) < 0) {
		snprintf(err, errlen, "%s: short header", path);
		goto out;
	}
	for (i = 0; i < hdr_words; i++)
		hdr[i] = be32(raw + 4 * i);
	if (hdr[0] != magic) {
		snprintf(err, errlen, "%s: magic 0x%08x, not 0x%08x", path, hdr[0], magic);
		goto out;
	}
	if (want < 0 || (uint32_t)want > hdr[1]) {
		snprintf(err, errlen, "%s: %u items, not %d", path, hdr[1], want);
		goto out;
	}
	data = malloc((size_t)want * item + 1);
	if (!data) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if (idx_read(f, data, (size_t)want * item) < 0) {
		snprintf(err, errlen, "%s: shorter than its header says", path);
		free(data);
		data = NULL;
	}
out:
	gzclose(f);
	return data;
}

/* The item count in the header of IDX file @name; -1 if unreadable. */
static int idx_count(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096];
	unsigned char raw[8];
	gzFile f = idx_open(dir, name, path, sizeof(path));
	int n = -1;

	if (!f) {
		snprintf(err, errlen, "%s/%s[.gz]: %s", dir, name, strerror(errno));
		return -1;
	}
	if (idx_read(f, raw, sizeof(raw)) == 0 && be32(raw + 4) <= 0x7fffffffu)
		n = (int)be32(raw + 4);
	else
		snprintf(err, errlen, "%s: short header", path);
	gzclose(f);
	return n;
}

int mnist_load(struct mnist *m, const char *dir, const char *set, int max,
	       char *err, size_t errlen)
{
	char images[64], labels[64];
	uint32_t hdr[4];
	int n, i;

	memset(m, 0, sizeof(*m));
	snprintf(images, sizeof(images), "%s-images-idx3-ubyte", set);
	snprintf(labels, sizeof(labels), "%s-labels-idx1-ubyte", set);
	n = max;
	if (n == 0) {
		n = idx_count(dir, images, err, errlen);
		if (n < 0)
			return -1;
	}
	m->images = idx_load(dir, images, IDX_IMAGES, 4, MNIST_PIXELS, n, hdr, err,
			     errlen);
	if (!m->images)
		return -1;
	if (hdr[2] * hdr[3] != MNIST_PIXELS) {
		snprintf(err, errlen, "%s/%s: %ux%u images, not 28x28", dir, images,
			 hdr[2], hdr[3]);
		goto fail;
	}
	m->labels = idx_load(dir, labels, IDX_LABELS, 2, 1, n, hdr, err, errlen);
	if (!m->labels)
		goto fail;
	for (i = 0; i < n; i++) {
		if (m->labels[i] >= MNIST_CLASSES) {
			snprintf(err, errlen, "%s/%s: label %d is %u", dir, labels, i,
				 m->labels[i]);
			goto fail;
		}
	}
	m->n = n;
	return 0;
fail:
	mnist_free(m);
	return -1;
}

void mnist_free(struct mnist *m)
{
	free(m->images);
	free(m->labels);
	memset(m, 0, sizeof(*m));
}
