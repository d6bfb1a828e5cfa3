// SPDX-License-Identifier: MIT
/*
 * Submissions behind a waiting command, for tests/vm/doorbell.sh, which
 * counts the SQ_TAIL doorbell writes QEMU traces. Chip 0's stream gets a
 * receive from chip 1, which waits, then QUEUED fills behind it; only then
 * does chip 1 send. With shadow doorbells (hardware 1.11) the receive's
 * submission alone finds chip 0 stopped and writes the doorbell, the
 * fills going to the shadow tail while the receive waits: 1 doorbell
 * write on chip 0 for 1 + QUEUED submissions, and 1 more for the copy
 * that fetches the results once chip 0 is idle. A 1.10 device takes one
 * per submission, 2 + QUEUED. Every byte is checked; exit status 0 only
 * if all are right.
 */
#include <stdio.h>
#include <string.h>

#include <nnp/nnp.h>

#define QUEUED		32
#define MSG_FLOATS	16
#define FILL_AT		4096	/* the fills' bytes, after the message */
#define BUF_BYTES	8192

#define CHECK(what, call)						\
	do {								\
		nnp_result_t r_ = (call);				\
		if (r_ != NNP_SUCCESS) {				\
			fprintf(stderr, "doorbell_job: %s: %s (%s)\n",	\
				what, nnp_strerror(r_),			\
				nnp_get_last_error());			\
			return 1;					\
		}							\
	} while (0)

int main(void)
{
	nnp_device_t *dev[2];
	nnp_comm_t *comm[2];
	nnp_stream_t *s[2];
	nnp_mem_t *buf[2], *host[2];
	unsigned char *h;
	float *msg;
	int c, i;

	for (c = 0; c < 2; c++) {
		CHECK("open", nnp_device_open(c, &dev[c]));
		CHECK("stream", nnp_stream_create(dev[c], &s[c]));
		CHECK("alloc", nnp_mem_alloc(dev[c], NNP_MEM_DEVICE, BUF_BYTES, 0,
					     &buf[c]));
		CHECK("alloc", nnp_mem_alloc(dev[c], NNP_MEM_HOST, BUF_BYTES, 0,
					     &host[c]));
	}
	CHECK("comm", nnp_comm_init_all(dev, 2, comm));
	CHECK("map", nnp_mem_map(host[1], (void **)&msg));
	for (i = 0; i < MSG_FLOATS; i++)
		msg[i] = (float)(3 * i + 1);
	CHECK("stage", nnp_memcpy_async(s[1], buf[1], 0, host[1], 0, MSG_FLOATS * 4));
	CHECK("stage", nnp_stream_synchronize(s[1]));

	CHECK("recv", nnp_recv(buf[0], 0, MSG_FLOATS, NNP_FLOAT32, 1, comm[0], s[0]));
	for (i = 0; i < QUEUED; i++)
		CHECK("fill", nnp_memset_async(s[0], buf[0], FILL_AT + 4 * i,
					       (uint8_t)(0x40 + i), 4));
	CHECK("send", nnp_send(buf[1], 0, MSG_FLOATS, NNP_FLOAT32, 0, comm[1], s[1]));
	CHECK("sync", nnp_stream_synchronize(s[1]));
	CHECK("sync", nnp_stream_synchronize(s[0]));

	CHECK("map", nnp_mem_map(host[0], (void **)&h));
	memset(h, 0, BUF_BYTES);
	CHECK("fetch", nnp_memcpy_async(s[0], host[0], 0, buf[0], 0, BUF_BYTES));
	CHECK("fetch", nnp_stream_synchronize(s[0]));
	msg = (float *)h;
	for (i = 0; i < MSG_FLOATS; i++)
		if (msg[i] != (float)(3 * i + 1)) {
			fprintf(stderr, "doorbell_job: message float %d is %g\n",
				i, msg[i]);
			return 1;
		}
	for (i = 0; i < 4 * QUEUED; i++)
		if (h[FILL_AT + i] != 0x40 + i / 4) {
			fprintf(stderr, "doorbell_job: fill byte %d is %#x\n", i,
				h[FILL_AT + i]);
			return 1;
		}
	printf("doorbell_job: ok, %d submissions on chip 0\n", 2 + QUEUED);
	for (c = 0; c < 2; c++) {
		nnp_comm_destroy(comm[c]);
		nnp_mem_free(host[c]);
		nnp_mem_free(buf[c]);
		nnp_stream_destroy(s[c]);
		nnp_device_close(dev[c]);
	}
	return 0;
}
