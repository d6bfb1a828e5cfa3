/* SPDX-License-Identifier: MIT */
/*
 * MNIST-format (IDX) data sets: Fashion-MNIST as Debian installs it, gzipped
 * or not: <dir>/<set>-images-idx3-ubyte[.gz] and <set>-labels-idx1-ubyte[.gz].
 */
#ifndef DIST_MNIST_MNIST_H
#define DIST_MNIST_MNIST_H

#include <stddef.h>
#include <stdint.h>

#define MNIST_PIXELS	784	/* 28 x 28 */
#define MNIST_CLASSES	10

struct mnist {
	int n;			/* images */
	uint8_t *images;	/* n x MNIST_PIXELS, row-major, 0..255 */
	uint8_t *labels;	/* n, 0..MNIST_CLASSES - 1 */
};

/*
 * Load the first @max images of set @set ("train" or "t10k") from @dir, all
 * of them if @max is 0. 0 on success; -1 with a message in @err otherwise
 * (@max larger than the set is an error).
 */
int mnist_load(struct mnist *m, const char *dir, const char *set, int max,
	       char *err, size_t errlen);
void mnist_free(struct mnist *m);

#endif
