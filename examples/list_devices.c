// SPDX-License-Identifier: MIT
/*
 * The smallest libnnp program: print every nnp device, or why there is
 * none. Build: cc list_devices.c $(pkg-config --cflags --libs nnp)
 */
#include <inttypes.h>
#include <stdio.h>

#include <nnp/nnp.h>

int main(void)
{
	nnp_result_t r;
	int count, i;

	r = nnp_device_count(&count);
	if (r != NNP_SUCCESS) {
		fprintf(stderr, "no nnp devices: %s\n", nnp_strerror(r));
		return 1;
	}
	for (i = 0; i < count; i++) {
		struct nnp_device_info info = { .size = sizeof(info) };
		nnp_device_t *dev;

		r = nnp_device_open(i, &dev);
		if (r == NNP_SUCCESS) {
			r = nnp_device_get_info(dev, &info);
			nnp_device_close(dev);
		}
		if (r != NNP_SUCCESS) {
			fprintf(stderr, "device %d: %s\n", i, nnp_strerror(r));
			return 1;
		}
		printf("%d: chip %" PRIu32 ", %" PRIu64 " MiB at %s\n", i,
		       info.chip_id, info.mem_size >> 20, info.path);
	}
	return 0;
}
