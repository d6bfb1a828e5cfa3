// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the bytes a peer QEMU sends on an ICL socket link,
 * read as qemu-device/nnp_icl_socket.c reads them, with the same frame
 * codec (nnp_icl_frame.h), into a chip whose collectives and
 * point-to-point commands wait for its packets.
 *
 * The chip is fuzz_icl_chip.h's; the port of the connection is down until
 * its hello, the other one up with a silent peer. The input
 * is the commands it posts at once (FUZZ_ICL_CMDS_BYTES), a byte whose
 * low bit picks the port the connection is on, then the peer's byte
 * stream: a HELLO, an AUTH, then DATA, ABORT, LINK_DOWN, LINK_UP,
 * CHIP_DOWN and CHIP_UP frames, each header decoded and checked before its payload is read,
 * a DATA or ABORT payload copied into the packet the firmware queues (a
 * refused one to a buffer of its own length) as the link's thread does. The AUTH's MAC is QEMU's HMAC-SHA256, not built here: any 32
 * bytes pass, so the fuzzer gets past the hello as a peer holding the
 * secret would. Where the link would drop the connection, the stream
 * ends; then the port goes down and the queue drains. fuzz_dev checks
 * every access and, at the end, that nothing outside context 1's key
 * changed.
 *
 * A hello offering to share 1 MiB of memory (NNP_ICL_FEAT_SHARE, as a
 * QEMU on the same host) makes the link shared, the peer's memory a
 * buffer of exactly 1 MiB (ASan's bounds): LENT frames are decoded and
 * bounds-checked as the link does and their chunks read in place,
 * GIVE_BACK hands the firmware tags (one it does not know drops the
 * connection), RECLAIM asks for the peer's chunks back. The link stops
 * being shared before that memory goes.
 *
 * A hello offering NNP_ICL_FEAT_CREDIT makes the link count credits, as
 * QEMU's does: our sends on it take them, CREDIT frames give them back
 * (more than were out drops the connection), and the chip may credit the
 * peer no more packets and bytes than it delivered.
 *
 * In detail (docs/testing.md has the summary):
 * the same memory rules; every length bounded by the codec before its
 * payload is read, each payload in a buffer of exactly its length (a read
 * past it is ASan's), every lent chunk within the peer's 1 MiB (a read past
 * it is ASan's too) and every chunk the chip lends within its own memory;
 * the connection's port comes up only through a hello the codec matches to
 * the chip and port expected, and any frame the codec refuses, or a tag the
 * firmware never lent given back, or more credits than were out, ends the
 * stream there, as it drops the connection; the chip credits the peer no
 * more packets or bytes than it delivered; the link stops being shared
 * before the peer's memory is freed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_icl_chip.h"
#include "fuzz_stream.h"
#include "nnp_icl_frame.h"

/* The peer's memory on a shared link: what its hello must offer. */
#define PEER_MEM	(1u << 20)

static unsigned long long frames, packets, commands, lent, shared_links,
	credit_frames;
/* This input's packets delivered and their bytes: the most creditable. */
static uint64_t run_packets, run_bytes;
/* The peer's memory as the link maps it; NULL: the link shares none. */
static uint8_t *peer_mem;

static void report(void)
{
	fprintf(stderr, "fuzz_icl_frame: %llu frames read, %llu packets delivered, %llu commands completed, %llu shared links, %llu chunks lent to us, %llu credit frames taken\n",
		frames, packets, commands, shared_links, lent, credit_frames);
}

/* A frame's header, as the link's read_header(): false where it drops. */
static bool read_header(struct fuzz_stream *s, struct nnp_icl_frame *f)
{
	const uint8_t *p = fuzz_take(s, NNP_ICL_HDR_BYTES);

	if (!p || nnp_icl_header_decode(p, f))
		return false;
	if (nnp_icl_model_bytes(f)) {
		p = fuzz_take(s, NNP_ICL_MODEL_BYTES);
		if (!p)
			return false;
		nnp_icl_model_decode(p, f);
	}
	frames++;
	return true;
}

/*
 * One frame, as the link's read_frame(): false where the link drops the
 * connection. *@payload is malloc'd to exactly @f->len bytes.
 */
static bool read_frame(struct fuzz_stream *s, struct nnp_icl_frame *f,
		       uint8_t **payload)
{
	const uint8_t *p;

	if (!read_header(s, f))
		return false;
	p = fuzz_take(s, f->len);
	if (!p)
		return false;
	*payload = malloc(f->len ? f->len : 1);
	if (!*payload)
		fuzz_fail("no memory for a %u-byte frame", f->len);
	memcpy(*payload, p, f->len);
	return true;
}

/* The hello: the peer's HELLO and AUTH; true if the link comes up. */
static bool hello(struct fuzz_dev *d, struct fuzz_stream *s, unsigned int port)
{
	struct nnp_icl_frame f;
	struct nnp_icl_hello peer;
	uint8_t *payload = NULL;
	bool ok;

	if (!read_frame(s, &f, &payload))
		return false;
	ok = !nnp_icl_frame_expect(&f, NNP_ICL_HELLO, NNP_ICL_HELLO_BYTES);
	if (ok)
		nnp_icl_hello_decode(payload, &peer);
	free(payload);
	if (!ok || !read_frame(s, &f, &payload))
		return false;
	ok = !nnp_icl_frame_expect(&f, NNP_ICL_AUTH, NNP_ICL_MAC_LEN);
	free(payload);
	if (!ok || !nnp_icl_hello_matches(&peer, FUZZ_CHIP_ID, port,
					  fuzz_icl_peer_chip[port],
					  fuzz_icl_peer_port[port]))
		return false;
	if (nnp_fw_link_attach_remote(d->fw, port, peer.chip_id, peer.port))
		fuzz_fail("port %u: its peer's hello not attached", port);
	if (nnp_icl_hello_mem_size(&peer) == PEER_MEM) {
		peer_mem = malloc(PEER_MEM);
		if (!peer_mem || nnp_fw_link_share_remote(d->fw, port, true))
			fuzz_fail("port %u: not shared", port);
		memset(peer_mem, 0x3c, PEER_MEM);
		shared_links++;
	}
	if (nnp_fw_link_credits(d->fw, port, peer.features & NNP_ICL_FEAT_CREDIT))
		fuzz_fail("port %u: credits not set", port);
	nnp_fw_link_set(d->fw, port, peer.up);
	return true;
}

/*
 * LENT, GIVE_BACK or RECLAIM on a shared link, as the link's
 * link_deliver_lent() and link_tags(): false where it drops.
 */
static bool shared_frame(struct fuzz_dev *d, struct fuzz_stream *s,
			 unsigned int port, const struct nnp_icl_frame *f)
{
	const uint8_t *p = fuzz_take(s, f->len);
	struct nnp_icl_lent c;
	uint32_t i;

	if (!p)
		return false;
	if (f->type == NNP_ICL_LENT) {
		if (nnp_icl_lent_decode(p, PEER_MEM, &c))
			return false;
		nnp_fw_icl_deliver_lent(d->fw, port, f->epoch, f->seq, f->model,
					peer_mem + c.offset, c.len, c.tag);
		lent++;
		return true;
	}
	for (i = 0; i < f->len / 4; i++) {
		if (f->type == NNP_ICL_RECLAIM)
			nnp_fw_icl_reclaim_lent(d->fw, port, nnp_icl_tag_decode(p, i));
		else if (nnp_fw_icl_given_back(d->fw, port, nnp_icl_tag_decode(p, i)))
			return false;
	}
	return true;
}

/*
 * A DATA or ABORT frame's payload, as the link's link_deliver(): into the
 * packet the firmware queues, or (a packet it refuses) through a buffer of
 * its own length to nnp_fw_icl_deliver(). False where the link drops.
 */
static bool deliver(struct fuzz_dev *d, struct fuzz_stream *s,
		    unsigned int port, const struct nnp_icl_frame *f)
{
	struct nnp_fw_packet *pk = nnp_fw_icl_rx_alloc(d->fw, port, f->len);
	bool abort = f->type == NNP_ICL_ABORT;
	const uint8_t *p = fuzz_take(s, f->len);
	uint8_t *payload;

	if (!p) {
		nnp_fw_icl_rx_drop(pk);
		return false;
	}
	if (pk) {
		memcpy(nnp_fw_icl_rx_data(pk), p, f->len);
		nnp_fw_icl_rx_queue(d->fw, port, pk, f->epoch, f->seq, abort,
				    f->model);
	} else {
		payload = malloc(f->len ? f->len : 1);
		if (!payload)
			fuzz_fail("no memory for a %u-byte frame", f->len);
		memcpy(payload, p, f->len);
		nnp_fw_icl_deliver(d->fw, port, f->epoch, f->seq, abort,
				   f->model, payload, f->len);
		free(payload);
	}
	packets++;
	run_packets++;
	run_bytes += f->len;
	return true;
}

/* CREDIT, as the link's nnp_icl_link_credit(): false where it drops. */
static bool credit(struct fuzz_dev *d, struct fuzz_stream *s,
		   unsigned int port, const struct nnp_icl_frame *f)
{
	const uint8_t *p = fuzz_take(s, f->len);
	struct nnp_icl_credit c;

	if (!p || nnp_icl_credit_decode(p, &c) ||
	    nnp_fw_icl_credits_back(d->fw, port, c.packets, c.bytes))
		return false;
	credit_frames++;
	return true;
}

/* Frames until the stream ends or one would drop the connection. */
static void receive(struct fuzz_dev *d, struct fuzz_stream *s, unsigned int port)
{
	struct nnp_icl_frame f;

	while (read_header(s, &f) &&
	       !(peer_mem ? nnp_icl_frame_check_shared(&f) :
			    nnp_icl_frame_check_linked(&f))) {
		if (f.type == NNP_ICL_LENT || f.type == NNP_ICL_GIVE_BACK ||
		    f.type == NNP_ICL_RECLAIM) {
			if (!shared_frame(d, s, port, &f))
				return;
			if (!fuzz_queue_run(d))
				fuzz_queue_reset(d, FUZZ_CTX);
		} else if (f.type == NNP_ICL_DATA || f.type == NNP_ICL_ABORT) {
			if (!deliver(d, s, port, &f))
				return;
			if (!fuzz_queue_run(d))
				fuzz_queue_reset(d, FUZZ_CTX);
		} else if (f.type == NNP_ICL_CREDIT) {
			if (!credit(d, s, port, &f))
				return;
			if (!fuzz_queue_run(d))
				fuzz_queue_reset(d, FUZZ_CTX);
		} else {
			/* The link's or the peer chip's state, as the link sets it. */
			nnp_fw_link_set(d->fw, port, f.type == NNP_ICL_LINK_UP ||
						     f.type == NNP_ICL_CHIP_UP);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool registered;
	struct fuzz_stream s;
	struct fuzz_dev d;
	unsigned int port;
	uint32_t key;

	if (!registered)
		registered = !atexit(report);
	if (size < FUZZ_ICL_CMDS_BYTES + 1)
		return 0;
	run_packets = run_bytes = 0;
	port = data[FUZZ_ICL_CMDS_BYTES] & 1;
	s = (struct fuzz_stream){
		.p = data + FUZZ_ICL_CMDS_BYTES + 1,
		.left = size - FUZZ_ICL_CMDS_BYTES - 1,
	};
	fuzz_dev_init(&d, 4);
	key = fuzz_icl_chip_setup(&d, false);
	/* The other port's peer is linked and silent: sends there go out. */
	nnp_fw_link_set(d.fw, !port, true);
	fuzz_icl_post_commands(&d, data, key);
	if (hello(&d, &s, port))
		receive(&d, &s, port);
	/* The connection is over: the port goes down with it. */
	nnp_fw_link_set(d.fw, port, false);
	nnp_fw_link_credits(d.fw, port, false);
	/* Nothing reads the peer's memory once this returns: it may go. */
	if (peer_mem) {
		nnp_fw_link_share_remote(d.fw, port, false);
		free(peer_mem);
		peer_mem = NULL;
	}
	fuzz_queue_drain(&d);
	commands += d.commands;
	fuzz_dev_fini(&d);
	if (d.icl_credited > run_packets || d.icl_credited_bytes > run_bytes)
		fuzz_fail("credited %llu packets, %llu bytes of %llu, %llu delivered",
			  (unsigned long long)d.icl_credited,
			  (unsigned long long)d.icl_credited_bytes,
			  (unsigned long long)run_packets,
			  (unsigned long long)run_bytes);
	return 0;
}
