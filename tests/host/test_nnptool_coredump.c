// SPDX-License-Identifier: MIT
/*
 * nnptool coredump (tools/nnptool/coredump.c, coredump_cmd.c) on dumps
 * made here with uapi/drm/nnp_coredump.h's structs, byte for byte: the
 * decoder in process, the sysfs walk on a tree laid out as sysfs is, and
 * the built nnptool on files.
 *
 * In detail (docs/testing.md has the summary):
 * a version 2 job-timeout dump of 2 queues (the stuck one with 8
 * commands, a FILL among them), 2 communicators (one failed), 2 ports
 * and 2 log messages (a guest error, a warning), as exact text and
 * exact JSON; a dump the firmware was not asked for: communicators "not
 * asked" (null), no ports, its log all the same; records and a header
 * longer than version 2's, their tails junk, decoded the same; version
 * 1's dump (a 152-byte header, or a longer one with junk where version
 * 2's log fields are) decoded with no log line, log_seq 0 and log [];
 * version 2 with a header of version 1's size, or no message (log_size
 * 0), no log; codes it has no name for in hex; strings with no NUL cut
 * at their field (a log message at 112 bytes, the file's last), an
 * escape sequence as \xHH (in a log message too; 112 bytes of \x7f
 * shown whole); refused, each with its message, exit 1 and nothing
 * printed: short, a version 2 header cut, bad magic, version 0, a size
 * below version 1's, a log_size below version 2's with messages, counts
 * past the end (the log's too, and three whose 32-bit product or 64-bit
 * sum would wrap), 9 commands, a file over 1 MiB (one of exactly 1 MiB
 * decodes), a missing file and one root's only (run as nobody); in
 * sysfs: only dumps of devices bound to nnp, named by PCI address and
 * accel node, --clear writing to each one decoded and to no other, none
 * found; and the command: exit 0, 1, 2, --clear with a FILE, a blank
 * line between text dumps, a JSON line each
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "nnp_accel.h"
#include "nnp_coredump.h"
#include "nnp_hw.h"

#include "coredump.h"

#define NOBODY		65534

/* A dump's parts, laid out by lay_out() with @extra bytes per record. */
struct parts {
	struct nnp_coredump_header h;
	struct nnp_coredump_queue q[2];
	struct nnp_coredump_comm c[2];
	struct nnp_coredump_port p[2];
	struct nnp_coredump_log l[3];
};

static void cmd(struct nnp_coredump_cmd *c, uint32_t slot, uint32_t state,
		uint8_t opcode, uint32_t src_key, uint64_t src_off,
		uint32_t dst_key, uint64_t dst_off, uint64_t len, uint64_t value)
{
	*c = (struct nnp_coredump_cmd){
		.slot = slot, .state = state, .opcode = opcode,
		.cid = (uint16_t)(100 + slot), .src_key = src_key,
		.dst_key = dst_key, .src_off = src_off, .dst_off = dst_off,
		.len = len, .value = value,
	};
}

static void full_queues(struct parts *d)
{
	struct nnp_coredump_queue *q = &d->q[0];
	struct nnp_coredump_cmd *c = d->q[1].cmds;

	*q = (struct nnp_coredump_queue){
		.qid = 3, .ctx = 1, .pid = 100, .depth = 64, .sq_head = 4,
		.sq_tail = 4, .shadow_tail = NNP_COREDUMP_NONE,
		.shadow_event = NNP_COREDUMP_NONE, .cq_head = 4,
		.status = NNP_QUEUE_STATUS_ENABLED,
		.num_cmds = 1, .task = "trainer",
	};
	cmd(&q->cmds[0], 3, NNP_COREDUMP_CMD_DONE, NNP_CMD_TIMESTAMP, 0, 0, 4, 0x40, 8, 0);
	d->q[1] = (struct nnp_coredump_queue){
		.qid = 5, .ctx = 2, .pid = 4242, .depth = 256, .sq_head = 10,
		.sq_tail = 12, .shadow_tail = 15, .shadow_event = 10,
		.cq_head = 9, .idle_ms = 10234, .num_cmds = 8,
		.status = NNP_QUEUE_STATUS_ENABLED | NNP_QUEUE_STATUS_BUSY,
		.task = "train.py",
	};
	cmd(&c[0], 7, NNP_COREDUMP_CMD_DONE, NNP_CMD_COPY, 1, 0, 2, 0x1000, 4096, 0);
	cmd(&c[1], 8, NNP_COREDUMP_CMD_DONE, NNP_CMD_BARRIER, 0, 0, 0, 0, 0, 0);
	cmd(&c[2], 9, NNP_COREDUMP_CMD_DONE, NNP_CMD_ALLGATHER, 2, 0x1000, 3, 0x10000, 65536, 0x12);
	c[2].flags = 1;
	cmd(&c[3], 10, NNP_COREDUMP_CMD_RUNNING, NNP_CMD_ALLREDUCE, 3, 0x100, 4, 0x200, 1048576, 0x301);
	cmd(&c[4], 11, NNP_COREDUMP_CMD_QUEUED, NNP_CMD_FILL, 0, 0, 7, 0x2000, 4096, 0);
	cmd(&c[5], 12, NNP_COREDUMP_CMD_QUEUED, NNP_CMD_SEND, 5, 0x8, 0, 0, 512, 1);
	cmd(&c[6], 13, NNP_COREDUMP_CMD_QUEUED, NNP_CMD_RECV, 0, 0, 6, 0x10, 512, 1);
	cmd(&c[7], 14, NNP_COREDUMP_CMD_QUEUED, NNP_CMD_REDUCE_SCATTER, 8, 0, 9, 0x40, 8192, 2);
}

/* A job timeout's dump: the firmware still answered. */
static void full_parts(struct parts *d)
{
	memset(d, 0, sizeof(*d));
	d->h = (struct nnp_coredump_header){
		.magic = NNP_COREDUMP_MAGIC, .version = NNP_COREDUMP_VERSION,
		.num_queues = 2, .num_comms = 2, .num_ports = 2,
		.reason = DRM_NNP_RESET_JOB_TIMEOUT, .reset_count = 3,
		.stuck_qid = 5, .flags = NNP_COREDUMP_FW_ASKED,
		.time_ns = 1798761599987654321ull, .hw_version = (1u << 16) | 16,
		.fw_version = NNP_FW_VERSION(1, 2, 3), .chip_id = 6,
		.fw_status = NNP_FW_STATUS_READY, .fw_heartbeat = 4711,
		.heartbeat_idle_ms = 12,
		.aq_status = NNP_AQ_STATUS_READY | NNP_AQ_STATUS_BUSY,
		.serial = "NNP-0002", .fw_build = "sim-1.2.3",
		.num_log = 2, .log_seq = 42,
	};
	full_queues(d);
	d->c[0] = (struct nnp_coredump_comm){
		.id = 1, .ctx = 2, .rank = 0, .nranks = 4, .pid = 4242,
		.status = NNP_STATUS_SUCCESS, .name = "tp.stage2",
	};
	d->c[1] = (struct nnp_coredump_comm){
		.id = 2, .ctx = 2, .rank = 1, .nranks = 2, .pid = 4242,
		.status = NNP_STATUS_LINK_DOWN,
	};
	d->p[0] = (struct nnp_coredump_port){
		.port = 0, .state = NNP_PORT_WIRED | NNP_PORT_UP,
		.peer = NNP_PORT_PEER(1, 2), .tx_bytes = 1000, .rx_bytes = 2000,
		.tx_packets = 10, .rx_packets = 20,
	};
	d->p[1] = (struct nnp_coredump_port){
		.port = 1, .state = NNP_PORT_WIRED, .peer = NNP_PORT_PEER(3, 0),
		.tx_bytes = 5, .rx_bytes = 3, .tx_packets = 1, .rx_packets = 2,
		.errors = 7,
	};
	d->l[0] = (struct nnp_coredump_log){
		.time_ns = 912345678901ull, .seq = 40,
		.kind = NNP_COREDUMP_LOG_GUEST_ERROR,
		.msg = "queue cid 7: reserved field set",
	};
	d->l[1] = (struct nnp_coredump_log){
		.time_ns = 912400000000ull, .seq = 41,
		.kind = NNP_COREDUMP_LOG_WARNING,
		.msg = "receive on port 1 failed: status 0x6",
	};
}

/* @rec of @v1 bytes at *@at, then @extra junk bytes a later version adds. */
static void put(unsigned char *buf, size_t *at, const void *rec, size_t v1,
		size_t extra)
{
	memcpy(buf + *at, rec, v1);
	memset(buf + *at + v1, 0xee, extra);
	*at += v1 + extra;
}

/*
 * @d with the first @hdr bytes of its header, every record @extra bytes
 * longer. A header of version 1's size holds no log fields: no log.
 */
static unsigned char *lay_out_hdr(const struct parts *d, size_t hdr,
				  size_t extra, size_t *len)
{
	struct nnp_coredump_header h = d->h;
	unsigned char *buf;
	uint32_t i;

	h.header_size = hdr + extra;
	h.queue_size = sizeof(d->q[0]) + extra;
	h.comm_size = sizeof(d->c[0]) + extra;
	h.port_size = sizeof(d->p[0]) + extra;
	h.log_size = sizeof(d->l[0]) + extra;
	if (hdr < sizeof(h))
		h.num_log = 0;
	*len = h.header_size + h.num_queues * h.queue_size +
	       h.num_comms * h.comm_size + h.num_ports * h.port_size +
	       h.num_log * h.log_size;
	buf = malloc(*len);
	assert_non_null(buf);
	*len = 0;
	put(buf, len, &h, hdr, extra);
	for (i = 0; i < h.num_queues; i++)
		put(buf, len, &d->q[i], sizeof(d->q[i]), extra);
	for (i = 0; i < h.num_comms; i++)
		put(buf, len, &d->c[i], sizeof(d->c[i]), extra);
	for (i = 0; i < h.num_ports; i++)
		put(buf, len, &d->p[i], sizeof(d->p[i]), extra);
	for (i = 0; i < h.num_log; i++)
		put(buf, len, &d->l[i], sizeof(d->l[i]), extra);
	return buf;
}

/* @d as the driver lays it out, every record @extra bytes longer. */
static unsigned char *lay_out(const struct parts *d, size_t extra, size_t *len)
{
	return lay_out_hdr(d, sizeof(d->h), extra, len);
}

/* What one decode printed, and its exit code. */
struct result {
	int rc;
	char *out, *err;
	size_t out_len, err_len;
};

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static void decode(const unsigned char *buf, size_t len, bool json,
		   struct result *r)
{
	struct coredump_src src = { .path = "dump.bin" };
	struct coredump_out o = { .json = json };

	o.out = open_memstream(&r->out, &r->out_len);
	o.err = open_memstream(&r->err, &r->err_len);
	assert_non_null(o.out);
	assert_non_null(o.err);
	r->rc = coredump_decode(&src, buf, len, &o);
	assert_int_equal(0, fclose(o.out));
	assert_int_equal(0, fclose(o.err));
}

/* @d laid out by lay_out_hdr(), decoded. */
static void decode_hdr(const struct parts *d, size_t hdr, size_t extra,
		       bool json, struct result *r)
{
	size_t len;
	unsigned char *buf = lay_out_hdr(d, hdr, extra, &len);

	decode(buf, len, json, r);
	free(buf);
}

static void decode_parts(const struct parts *d, size_t extra, bool json,
			 struct result *r)
{
	decode_hdr(d, sizeof(d->h), extra, json, r);
}

/* @d as JSON, decoded: the caller looks for its parts in @r->out. */
static void decode_json(const struct parts *d, struct result *r)
{
	decode_parts(d, 0, true, r);
	assert_string_equal("", r->err);
	assert_int_equal(0, r->rc);
}

static void expect_ok(struct result *r, const char *want)
{
	assert_string_equal("", r->err);
	assert_int_equal(0, r->rc);
	assert_string_equal(want, r->out);
	result_free(r);
}

/* full_parts()'s identity, in every dump made from it but one. */
#define HW_LINE	"hw 1.16 fw 1.2.3 build sim-1.2.3 chip 6 serial NNP-0002\n"

/* The full dump's text after its version, up to its log. */
#define FULL_TEXT_TABLES \
	" reason job-timeout reset 3 time 2026-12-31T23:59:59.987Z\n" \
	HW_LINE \
	"fw ready error none heartbeat 4711 idle 12 ms\n" \
	"admin queue ready,busy broken no fw asked yes\n" \
	"stuck queue 5\n" \
	"queue 3 ctx 1 pid 100 task trainer depth 64 head 4 tail 4 shadow none cq_head 4 status enabled idle 0 ms\n" \
	"  slot 3 DONE timestamp cid 103 flags 0x0 src 0:0x0 dst 4:0x40 len 8 value 0x0\n" \
	"queue 5 STUCK ctx 2 pid 4242 task train.py depth 256 head 10 tail 12 shadow 15 event 10 cq_head 9 status enabled,busy idle 10234 ms\n" \
	"  slot 7 DONE copy cid 107 flags 0x0 src 1:0x0 dst 2:0x1000 len 4096 value 0x0\n" \
	"  slot 8 DONE barrier cid 108 flags 0x0 src 0:0x0 dst 0:0x0 len 0 value 0x0\n" \
	"  slot 9 DONE allgather cid 109 flags 0x1 src 2:0x1000 dst 3:0x10000 len 65536 value 0x12\n" \
	"  slot 10 RUNNING allreduce cid 110 flags 0x0 src 3:0x100 dst 4:0x200 len 1048576 value 0x301\n" \
	"  slot 11 QUEUED fill cid 111 flags 0x0 src 0:0x0 dst 7:0x2000 len 4096 value 0x0\n" \
	"  slot 12 QUEUED send cid 112 flags 0x0 src 5:0x8 dst 0:0x0 len 512 value 0x1\n" \
	"  slot 13 QUEUED recv cid 113 flags 0x0 src 0:0x0 dst 6:0x10 len 512 value 0x1\n" \
	"  slot 14 QUEUED reduce_scatter cid 114 flags 0x0 src 8:0x0 dst 9:0x40 len 8192 value 0x2\n" \
	"comm 1 ctx 2 pid 4242 rank 0/4 name tp.stage2 status ok\n" \
	"comm 2 ctx 2 pid 4242 rank 1/2 name - status link_down\n" \
	"port 0 wired,up peer 1.2 tx 1000 bytes 10 packets rx 2000 bytes 20 packets errors 0\n" \
	"port 1 wired peer 3.0 tx 5 bytes 1 packets rx 3 bytes 2 packets errors 7\n"

/* Its log, version 2's. */
#define FULL_TEXT_LOG \
	"firmware log: 42 messages since the device came up, the last 2 kept\n" \
	"log 40 time 912345678901 ns guest-error: queue cid 7: reserved field set\n" \
	"log 41 time 912400000000 ns warning: receive on port 1 failed: status 0x6\n"

static const char full_text[] =
	"coredump dump.bin\nversion 2" FULL_TEXT_TABLES FULL_TEXT_LOG;

/* A command's JSON; its cid is 100 + its slot. */
#define CMD_JSON(slot, cid, state, op, flags, sk, so, dk, dof, len, value) \
	"{\"slot\": " #slot ", \"state\": \"" state "\", \"opcode\": \"" op \
	"\", \"cid\": " #cid ", \"flags\": " #flags ", \"src_key\": " #sk \
	", \"src_off\": " #so ", \"dst_key\": " #dk ", \"dst_off\": " #dof \
	", \"len\": " #len ", \"value\": " #value "}"

/* The full dump's JSON after its version, up to its log. */
#define FULL_JSON_TABLES \
	", \"reason\": \"job-timeout\", " \
	"\"reset_count\": 3, \"time\": \"2026-12-31T23:59:59.987Z\", " \
	"\"time_ns\": 1798761599987654321, \"hw_version\": \"1.16\", " \
	"\"fw_version\": \"1.2.3\", \"fw_build\": \"sim-1.2.3\", \"chip_id\": 6, " \
	"\"serial\": \"NNP-0002\", \"fw_status\": \"ready\", \"fw_error\": \"none\", " \
	"\"fw_heartbeat\": 4711, \"heartbeat_idle_ms\": 12, " \
	"\"aq_status\": \"ready,busy\", \"aq_broken\": false, \"fw_asked\": true, " \
	"\"stuck_qid\": 5, \"queues\": [" \
	"{\"qid\": 3, \"stuck\": false, \"ctx\": 1, \"pid\": 100, \"task\": \"trainer\", " \
	"\"depth\": 64, \"sq_head\": 4, \"sq_tail\": 4, \"shadow_tail\": null, " \
	"\"shadow_event\": null, \"cq_head\": 4, " \
	"\"status\": \"enabled\", \"idle_ms\": 0, \"cmds\": [" \
	"{\"slot\": 3, \"state\": \"DONE\", \"opcode\": \"timestamp\", \"cid\": 103, " \
	"\"flags\": 0, \"src_key\": 0, \"src_off\": 0, \"dst_key\": 4, " \
	"\"dst_off\": 64, \"len\": 8, \"value\": 0}]}, " \
	"{\"qid\": 5, \"stuck\": true, \"ctx\": 2, \"pid\": 4242, \"task\": \"train.py\", " \
	"\"depth\": 256, \"sq_head\": 10, \"sq_tail\": 12, \"shadow_tail\": 15, " \
	"\"shadow_event\": 10, \"cq_head\": 9, " \
	"\"status\": \"enabled,busy\", \"idle_ms\": 10234, \"cmds\": [" \
	CMD_JSON(7, 107, "DONE", "copy", 0, 1, 0, 2, 4096, 4096, 0) ", " \
	CMD_JSON(8, 108, "DONE", "barrier", 0, 0, 0, 0, 0, 0, 0) ", " \
	CMD_JSON(9, 109, "DONE", "allgather", 1, 2, 4096, 3, 65536, 65536, 18) ", " \
	CMD_JSON(10, 110, "RUNNING", "allreduce", 0, 3, 256, 4, 512, 1048576, 769) ", " \
	CMD_JSON(11, 111, "QUEUED", "fill", 0, 0, 0, 7, 8192, 4096, 0) ", " \
	CMD_JSON(12, 112, "QUEUED", "send", 0, 5, 8, 0, 0, 512, 1) ", " \
	CMD_JSON(13, 113, "QUEUED", "recv", 0, 0, 0, 6, 16, 512, 1) ", " \
	CMD_JSON(14, 114, "QUEUED", "reduce_scatter", 0, 8, 0, 9, 64, 8192, 2) \
	"]}], \"comms\": [" \
	"{\"id\": 1, \"ctx\": 2, \"pid\": 4242, \"rank\": 0, \"nranks\": 4, " \
	"\"name\": \"tp.stage2\", \"status\": \"ok\"}, " \
	"{\"id\": 2, \"ctx\": 2, \"pid\": 4242, \"rank\": 1, \"nranks\": 2, " \
	"\"name\": \"\", \"status\": \"link_down\"}], \"ports\": [" \
	"{\"port\": 0, \"state\": \"wired,up\", \"peer\": \"1.2\", \"tx_bytes\": 1000, " \
	"\"rx_bytes\": 2000, \"tx_packets\": 10, \"rx_packets\": 20, \"errors\": 0}, " \
	"{\"port\": 1, \"state\": \"wired\", \"peer\": \"3.0\", \"tx_bytes\": 5, " \
	"\"rx_bytes\": 3, \"tx_packets\": 1, \"rx_packets\": 2, \"errors\": 7}]"

/* A log message's JSON. */
#define LOG_JSON(seq, time_ns, kind, msg) \
	"{\"seq\": " #seq ", \"time_ns\": " #time_ns ", \"kind\": \"" kind \
	"\", \"msg\": \"" msg "\"}"

/* Its log, version 2's, and the document's end. */
#define FULL_JSON_LOG \
	", \"log_seq\": 42, \"log\": [" \
	LOG_JSON(40, 912345678901, "guest-error", "queue cid 7: reserved field set") ", " \
	LOG_JSON(41, 912400000000, "warning", "receive on port 1 failed: status 0x6") \
	"]}\n"

static const char full_json[] =
	"{\"source\": \"dump.bin\", \"version\": 2" FULL_JSON_TABLES FULL_JSON_LOG;

/* The full dump, every record @extra bytes longer, as text and as JSON. */
static void expect_full(size_t extra)
{
	struct parts d;
	struct result r;

	full_parts(&d);
	decode_parts(&d, extra, false, &r);
	expect_ok(&r, full_text);
	decode_parts(&d, extra, true, &r);
	expect_ok(&r, full_json);
}

static void full_dump(void **state)
{
	(void)state;
	expect_full(0);
}

/*
 * A heartbeat reset: the firmware was not asked, so no status, no ports;
 * its log, read without its help, all the same.
 */
static void heartbeat_parts(struct parts *d)
{
	full_parts(d);
	d->h.reason = DRM_NNP_RESET_HEARTBEAT;
	d->h.flags = 0;
	d->h.stuck_qid = NNP_COREDUMP_NONE;
	d->h.num_queues = 0;
	d->h.num_ports = 0;
	d->h.fw_status = NNP_FW_STATUS_HALTED;
	d->h.fw_error = NNP_FW_ERR_AQ_DMA;
	d->h.aq_broken = 1;
	d->c[0].status = NNP_COREDUMP_NONE;
	d->c[1].status = NNP_COREDUMP_NONE;
}

static void fw_not_asked(void **state)
{
	struct parts d;
	struct result r;

	(void)state;
	heartbeat_parts(&d);
	decode_json(&d, &r);
	assert_non_null(strstr(r.out, "\"fw_status\": \"halted\", \"fw_error\": \"aq_dma\", "));
	assert_non_null(strstr(r.out, "\"aq_broken\": true, \"fw_asked\": false, "
			       "\"stuck_qid\": null, \"queues\": [], \"comms\": ["));
	assert_non_null(strstr(r.out, "\"name\": \"tp.stage2\", \"status\": null}, "));
	assert_non_null(strstr(r.out, "\"name\": \"\", \"status\": null}], \"ports\": []"
			       FULL_JSON_LOG));
	result_free(&r);
	decode_parts(&d, 0, false, &r);
	expect_ok(&r,
		  "coredump dump.bin\n"
		  "version 2 reason heartbeat reset 3 time 2026-12-31T23:59:59.987Z\n"
		  HW_LINE
		  "fw halted error aq_dma heartbeat 4711 idle 12 ms\n"
		  "admin queue ready,busy broken yes fw asked no\n"
		  "stuck queue none\n"
		  "comm 1 ctx 2 pid 4242 rank 0/4 name tp.stage2 status not asked\n"
		  "comm 2 ctx 2 pid 4242 rank 1/2 name - status not asked\n"
		  FULL_TEXT_LOG);
}

/* A later version's longer records and header: the same decode. */
static void longer_records_decode_the_same(void **state)
{
	(void)state;
	expect_full(24);
	expect_full(1);
}

/* A log message's whole field, 16 bytes 7 times. */
#define TIMES7(s)	s s s s s s s
#define M16		"mmmmmmmmmmmmmmmm"
#define DEL4		"\x7f\x7f\x7f\x7f"
#define DEL4_TEXT	"\\x7f\\x7f\\x7f\\x7f"

/*
 * Codes the decoder has no name for, in hex; strings without a NUL cut at
 * their field's end; escape sequences and control characters as \xHH.
 */
static void odd_values_shown_safely(void **state)
{
	struct parts d;
	struct result r;

	(void)state;
	full_parts(&d);
	d.h.reason = 99;
	d.h.fw_status = 9;
	d.h.fw_error = 0x77;
	d.h.aq_status = 0x80 | NNP_AQ_STATUS_ERROR;
	memset(d.h.serial, 'S', sizeof(d.h.serial));
	memset(d.h.fw_build, 'b', sizeof(d.h.fw_build));
	d.h.num_queues = 1;
	d.q[0].status = NNP_QUEUE_STATUS_WAITING | 0x10;
	memcpy(d.q[0].task, "\x1b[2J", 5);
	d.q[0].cmds[0].state = 7;
	d.q[0].cmds[0].opcode = 0x42;
	d.c[0].status = NNP_STATUS_INVALID_OPCODE;
	memset(d.c[0].name, 'n', sizeof(d.c[0].name));
	memcpy(d.c[1].name, "a\\b\x07\n", 6);
	d.p[0].state = 0;
	d.h.num_ports = 1;
	/* The last message of all: nothing after its field but the file's end. */
	d.h.num_log = 3;
	d.h.log_seq = 43;
	d.l[0].kind = 7;
	memcpy(d.l[0].msg, "\x1b]0;pwn\x07", 9);
	memset(d.l[1].msg, 'm', sizeof(d.l[1].msg));
	d.l[2] = (struct nnp_coredump_log){ .seq = 42 };
	memset(d.l[2].msg, 0x7f, sizeof(d.l[2].msg));
	decode_parts(&d, 0, false, &r);
	expect_ok(&r,
		  "coredump dump.bin\n"
		  "version 2 reason 0x63 reset 3 time 2026-12-31T23:59:59.987Z\n"
		  "hw 1.16 fw 1.2.3 build bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb chip 6 serial SSSSSSSSSSSSSSSS\n"
		  "fw 0x9 error 0x77 heartbeat 4711 idle 12 ms\n"
		  "admin queue error,0x80 broken no fw asked yes\n"
		  "stuck queue 5\n"
		  "queue 3 ctx 1 pid 100 task \\x1b[2J depth 64 head 4 tail 4 shadow none cq_head 4 status waiting,0x10 idle 0 ms\n"
		  "  slot 3 0x7 0x42 cid 103 flags 0x0 src 0:0x0 dst 4:0x40 len 8 value 0x0\n"
		  "comm 1 ctx 2 pid 4242 rank 0/4 name nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn status 0x1\n"
		  "comm 2 ctx 2 pid 4242 rank 1/2 name a\\x5cb\\x07\\x0a status link_down\n"
		  "port 0 none peer - tx 1000 bytes 10 packets rx 2000 bytes 20 packets errors 0\n"
		  "firmware log: 43 messages since the device came up, the last 3 kept\n"
		  "log 40 time 912345678901 ns 0x7: \\x1b]0;pwn\\x07\n"
		  "log 41 time 912400000000 ns warning: " TIMES7(M16) "\n"
		  "log 42 time 0 ns 0x0: " TIMES7(DEL4_TEXT DEL4_TEXT DEL4_TEXT DEL4_TEXT) "\n");
	decode_json(&d, &r);
	assert_non_null(strstr(r.out, "\"fw_build\": \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\", "
			       "\"chip_id\": 6, \"serial\": \"SSSSSSSSSSSSSSSS\", "));
	assert_non_null(strstr(r.out, "\"task\": \"\\u001b[2J\", "));
	assert_non_null(strstr(r.out, "\"name\": \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\", \"status\": \"0x1\"}"));
	assert_non_null(strstr(r.out, "\"name\": \"a\\\\b\\u0007\\n\", "));
	assert_non_null(strstr(r.out, "\"state\": \"none\", \"peer\": null, "));
	assert_non_null(strstr(r.out, "\"log_seq\": 43, \"log\": ["
			       LOG_JSON(40, 912345678901, "0x7", "\\u001b]0;pwn\\u0007") ", "
			       LOG_JSON(41, 912400000000, "warning", TIMES7(M16)) ", "
			       LOG_JSON(42, 0, "0x0", TIMES7(DEL4 DEL4 DEL4 DEL4)) "]}\n"));
	result_free(&r);
}

static void poke32(unsigned char *buf, size_t off, uint32_t v)
{
	memcpy(buf + off, &v, sizeof(v));
}

#define HDR(field)	offsetof(struct nnp_coredump_header, field)
/* The full dump's size: header, 2 queues, 2 comms, 2 ports, 2 log messages. */
#define FULL_SIZE	(168 + 2 * 512 + 2 * 56 + 2 * 56 + 2 * 128)
/* Where queue record 1's num_cmds is in the full dump. */
#define Q1_NUM_CMDS	(sizeof(struct nnp_coredump_header) + \
			 sizeof(struct nnp_coredump_queue) + \
			 offsetof(struct nnp_coredump_queue, num_cmds))

/* One hostile file: the full dump, cut to @len, words written over. */
struct refusal {
	size_t len;		/* 0: all of it */
	struct {
		size_t off;
		uint32_t v;
	} poke[4];
	unsigned int npokes;
	const char *why;
};

static const struct refusal refusals[] = {
	{ 151, { { 0, 0 } }, 0, "151 bytes, too short for a coredump header (152)" },
	{ 7, { { 0, 0 } }, 0, "7 bytes, too short for a coredump header (152)" },
	/* Version 1's header whole, version 2's not. */
	{ 167, { { 0, 0 } }, 0, "header_size 168 runs past its end (167 bytes)" },
	{ 152, { { 0, 0 } }, 0, "header_size 168 runs past its end (152 bytes)" },
	{ 0, { { 4, 0x51 } }, 1, "not an nnp coredump (no NNPDUMP magic)" },
	/* "NNPDUMP" with no NUL after it. */
	{ 0, { { 4, 0x58504d55 } }, 1, "not an nnp coredump (no NNPDUMP magic)" },
	{ 0, { { HDR(version), 0 } }, 1, "version 0: no coredump has it" },
	{ 0, { { HDR(header_size), 151 } }, 1, "header_size 151 is less than version 1's 152" },
	{ 0, { { HDR(queue_size), 511 } }, 1, "queue_size 511 is less than version 1's 512" },
	{ 0, { { HDR(comm_size), 55 } }, 1, "comm_size 55 is less than version 1's 56" },
	{ 0, { { HDR(port_size), 0 } }, 1, "port_size 0 is less than version 1's 56" },
	{ 0, { { HDR(log_size), 64 }, { HDR(num_log), 1 } }, 2,
	  "log_size 64 is less than version 2's 128" },
	{ 0, { { HDR(log_size), 0 } }, 1, "log_size 0 is less than version 2's 128" },
	{ 0, { { HDR(header_size), 1673 } }, 1, "header_size 1673 runs past its end (1672 bytes)" },
	{ 0, { { HDR(header_size), 0xffffffff } }, 1,
	  "header_size 4294967295 runs past its end (1672 bytes)" },
	{ 1415, { { 0, 0 } }, 0, "2 ports of 56 bytes from byte 1304 run past its end (1415 bytes)" },
	{ 1671, { { 0, 0 } }, 0,
	  "2 log messages of 128 bytes from byte 1416 run past its end (1671 bytes)" },
	{ 0, { { HDR(num_queues), 3 } }, 1,
	  "3 queues of 512 bytes from byte 168 run past its end (1672 bytes)" },
	{ 0, { { HDR(num_comms), 0xffffffff } }, 1,
	  "4294967295 communicators of 56 bytes from byte 1192 run past its end (1672 bytes)" },
	{ 0, { { HDR(num_log), 3 } }, 1,
	  "3 log messages of 128 bytes from byte 1416 run past its end (1672 bytes)" },
	/* 65536 x 65536 is 0 in 32 bits, and so is 2^25 x 128. */
	{ 0, { { HDR(num_ports), 65536 }, { HDR(port_size), 65536 } }, 2,
	  "65536 ports of 65536 bytes from byte 1304 run past its end (1672 bytes)" },
	{ 0, { { HDR(num_log), 33554432 } }, 1,
	  "33554432 log messages of 128 bytes from byte 1416 run past its end (1672 bytes)" },
	/* 168 + (2^32 - 1)^2 + 2^17 x 2^16 + 2 x 56 + 2 x 128 is 537 in 64 bits. */
	{ 0, { { HDR(num_queues), 0xffffffff }, { HDR(queue_size), 0xffffffff },
	       { HDR(num_comms), 131072 }, { HDR(comm_size), 65536 } }, 4,
	  "4294967295 queues of 4294967295 bytes from byte 168 run past its end (1672 bytes)" },
	{ 0, { { Q1_NUM_CMDS, 9 } }, 1, "queue record 1 holds 9 commands, more than 8" },
};

static void hostile_files_refused(void **state)
{
	char want[256];
	struct parts d;
	size_t i, len;
	unsigned int k;

	(void)state;
	full_parts(&d);
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *f = &refusals[i];
		unsigned char *buf = lay_out(&d, 0, &len);
		struct result r;

		assert_int_equal(FULL_SIZE, len);
		for (k = 0; k < f->npokes; k++)
			poke32(buf, f->poke[k].off, f->poke[k].v);
		decode(buf, f->len ? f->len : len, i % 2, &r);
		free(buf);
		snprintf(want, sizeof(want), "nnptool: coredump: dump.bin: %s\n", f->why);
		assert_string_equal(want, r.err);
		assert_int_equal(1, r.rc);
		assert_string_equal("", r.out);
		result_free(&r);
	}
}

/* No log: version 2's text says so, JSON's log is empty. */
#define NO_LOG_TEXT \
	"firmware log: 0 messages since the device came up, the last 0 kept\n"
#define NO_LOG_JSON	", \"log_seq\": 0, \"log\": []}\n"

/*
 * Version 1's dump, the full one without its log: no log, its header of
 * version 1's size or longer (its tail junk where version 2's log fields
 * are, not read). Version 2 with no log: a header of version 1's size,
 * or no message, whose size is then not checked.
 */
static void version_1_or_no_log(void **state)
{
	static const char v1_text[] = "coredump dump.bin\nversion 1" FULL_TEXT_TABLES;
	static const char v1_json[] =
		"{\"source\": \"dump.bin\", \"version\": 1" FULL_JSON_TABLES NO_LOG_JSON;
	unsigned char *buf;
	struct parts d;
	struct result r;
	size_t len;

	(void)state;
	full_parts(&d);
	d.h.version = 1;
	decode_hdr(&d, NNP_COREDUMP_HEADER_SIZE_V1, 0, false, &r);
	expect_ok(&r, v1_text);
	decode_hdr(&d, NNP_COREDUMP_HEADER_SIZE_V1, 0, true, &r);
	expect_ok(&r, v1_json);
	decode_hdr(&d, NNP_COREDUMP_HEADER_SIZE_V1, 24, false, &r);
	expect_ok(&r, v1_text);
	decode_hdr(&d, NNP_COREDUMP_HEADER_SIZE_V1, 16, true, &r);
	expect_ok(&r, v1_json);

	d.h.version = 2;
	decode_hdr(&d, NNP_COREDUMP_HEADER_SIZE_V1, 0, false, &r);
	expect_ok(&r, "coredump dump.bin\nversion 2" FULL_TEXT_TABLES NO_LOG_TEXT);
	d.h.num_log = 0;
	d.h.log_seq = 0;
	buf = lay_out(&d, 0, &len);
	poke32(buf, HDR(log_size), 0);
	decode(buf, len, false, &r);
	expect_ok(&r, "coredump dump.bin\nversion 2" FULL_TEXT_TABLES NO_LOG_TEXT);
	decode(buf, len, true, &r);
	expect_ok(&r, "{\"source\": \"dump.bin\", \"version\": 2" FULL_JSON_TABLES NO_LOG_JSON);
	free(buf);
}

/* A fresh directory under /tmp that another user may enter. */
static char *temp_dir(void)
{
	char *dir = strdup("/tmp/nnp-coredump-XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(0, chmod(dir, 0755));
	return dir;
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_tree(char *dir)
{
	assert_int_equal(0, nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS));
	free(dir);
}

static void write_file(const char *path, const void *buf, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal((ssize_t)len, write(fd, buf, len));
	assert_int_equal(0, close(fd));
}

/* The full dump into @dir/@name; its path in @path (PATH_MAX). */
static void dump_file(const char *dir, const char *name, char *path, size_t pad)
{
	struct parts d;
	size_t len;
	unsigned char *buf;

	full_parts(&d);
	buf = lay_out(&d, 0, &len);
	buf = realloc(buf, len + pad);
	assert_non_null(buf);
	memset(buf + len, 0, pad);
	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	write_file(path, buf, len + pad, 0644);
	free(buf);
}

/* coredump_file() on @path, or in sysfs @root when @path is NULL. */
static void run_in_process(const char *path, const char *root, bool clear,
			   struct result *r)
{
	struct coredump_src src = { .path = path };
	struct coredump_out o = { 0 };

	o.out = open_memstream(&r->out, &r->out_len);
	o.err = open_memstream(&r->err, &r->err_len);
	assert_non_null(o.out);
	assert_non_null(o.err);
	r->rc = path ? coredump_file(&src, &o) : coredump_sysfs(root, clear, &o);
	assert_int_equal(0, fclose(o.out));
	assert_int_equal(0, fclose(o.err));
}

static void expect_refused(struct result *r, const char *why_fmt, const char *path)
{
	char want[PATH_MAX + 128];

	snprintf(want, sizeof(want), why_fmt, path);
	assert_string_equal(want, r->err);
	assert_int_equal(1, r->rc);
	assert_string_equal("", r->out);
	result_free(r);
}

/* At most 1 MiB is read: one byte more is no coredump; exactly 1 MiB is. */
static void read_bounded(void **state)
{
	char *dir = temp_dir(), path[PATH_MAX];
	size_t max = COREDUMP_READ_MAX - FULL_SIZE;
	struct result r;

	(void)state;
	dump_file(dir, "max.bin", path, max);
	run_in_process(path, NULL, false, &r);
	assert_string_equal("", r.err);
	assert_int_equal(0, r.rc);
	result_free(&r);
	dump_file(dir, "over.bin", path, max + 1);
	run_in_process(path, NULL, false, &r);
	expect_refused(&r, "nnptool: coredump: %s: more than 1048576 bytes, larger than any coredump\n",
		       path);
	remove_tree(dir);
}

/*
 * coredump_file() or coredump_sysfs() (@path NULL) as user nobody, in a
 * child: what root may read, nobody may not. Its stderr into @r.
 */
static void run_as_nobody(const char *path, const char *root, struct result *r)
{
	FILE *err = tmpfile();
	int status;
	pid_t pid;

	assert_non_null(err);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct coredump_src src = { .path = path };
		struct coredump_out o = { .out = stdout, .err = err };

		if (getuid() == 0 &&
		    (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)))
			_exit(99);
		status = path ? coredump_file(&src, &o) : coredump_sysfs(root, false, &o);
		fflush(err);
		_exit(status);
	}
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_true(WIFEXITED(status));
	r->rc = WEXITSTATUS(status);
	r->out = strdup("");
	r->err = calloc(1, 4096);
	assert_non_null(r->err);
	rewind(err);
	assert_true(fread(r->err, 1, 4095, err) > 0);
	fclose(err);
}

static void unreadable_file_named(void **state)
{
	char *dir = temp_dir(), path[PATH_MAX];
	struct result r;

	(void)state;
	snprintf(path, sizeof(path), "%s/none.bin", dir);
	run_in_process(path, NULL, false, &r);
	expect_refused(&r, "nnptool: coredump: %s: No such file or directory\n", path);
	/* Mode 0: root reads it all the same, nobody (or its owner) not. */
	dump_file(dir, "root.bin", path, 0);
	assert_int_equal(0, chmod(path, 0));
	run_as_nobody(path, NULL, &r);
	expect_refused(&r, "nnptool: coredump: %s: Permission denied\n", path);
	remove_tree(dir);
}

static void make_dirs(const char *path)
{
	char p[PATH_MAX], *s;

	snprintf(p, sizeof(p), "%s", path);
	for (s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			assert_true(!mkdir(p, 0755) || errno == EEXIST);
			*s = '/';
		}
	assert_true(!mkdir(p, 0755) || errno == EEXIST);
}

/*
 * Dump devcd@n in sysfs tree @root, of PCI device @pci bound to @driver,
 * with accel node @accel (NULL: none), holding the full dump (@good) or a
 * file that is none. Its data file's path into @data (PATH_MAX).
 */
static void sysfs_dump(const char *root, int n, const char *pci, const char *driver,
		       const char *accel, bool good, char *data)
{
	char cd[PATH_MAX], dev[PATH_MAX], link[PATH_MAX + 32], to[PATH_MAX];

	snprintf(cd, sizeof(cd), "%s/class/devcoredump/devcd%d", root, n);
	snprintf(dev, sizeof(dev), "%s/devices/pci0000:00/%s", root, pci);
	make_dirs(cd);
	make_dirs(dev);
	if (good) {
		dump_file(cd, "data", data, 0);
	} else {
		assert_true(snprintf(data, PATH_MAX, "%s/data", cd) < PATH_MAX);
		write_file(data, "junk", 4, 0600);
	}
	snprintf(link, sizeof(link), "%s/failing_device", cd);
	assert_int_equal(0, symlink(dev, link));
	snprintf(link, sizeof(link), "%s/driver", dev);
	snprintf(to, sizeof(to), "../../../bus/pci/drivers/%s", driver);
	assert_int_equal(0, symlink(to, link));
	if (accel) {
		snprintf(link, sizeof(link), "%s/accel/%s", dev, accel);
		make_dirs(link);
	}
}

/* The first byte of file @path: '1' once --clear wrote to it. */
static char first_byte(const char *path)
{
	char c = 0;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(1, read(fd, &c, 1));
	close(fd);
	return c;
}

static void sysfs_nnp_dumps_only(void **state)
{
	char *root = temp_dir(), nnp[PATH_MAX], other[PATH_MAX], want[2 * PATH_MAX];
	struct result r;

	(void)state;
	sysfs_dump(root, 2, "0000:00:05.0", "e1000e", NULL, true, other);
	sysfs_dump(root, 10, "0000:00:04.0", "nnp", "accel1", true, nnp);
	run_in_process(NULL, root, false, &r);
	assert_string_equal("", r.err);
	assert_int_equal(0, r.rc);
	assert_true(snprintf(want, sizeof(want), "coredump 0000:00:04.0 /dev/accel/accel1 (%s)\n%s",
			     nnp, strchr(full_text, '\n') + 1) < (int)sizeof(want));
	assert_string_equal(want, r.out);
	result_free(&r);
	assert_int_equal('N', first_byte(nnp));
	remove_tree(root);
}

/* --clear writes to each dump decoded, not to one that did not decode. */
static void sysfs_clear(void **state)
{
	char *root = temp_dir(), a[PATH_MAX], b[PATH_MAX], bad[PATH_MAX], other[PATH_MAX];
	char want[PATH_MAX + 128];
	struct result r;

	(void)state;
	sysfs_dump(root, 0, "0000:00:04.0", "nnp", "accel0", true, a);
	sysfs_dump(root, 1, "0000:00:05.0", "nnp", NULL, false, bad);
	sysfs_dump(root, 2, "0000:00:06.0", "nnp", "accel2", true, b);
	sysfs_dump(root, 3, "0000:00:07.0", "e1000e", NULL, true, other);
	run_in_process(NULL, root, true, &r);
	assert_int_equal(1, r.rc);
	assert_non_null(strstr(r.out, "coredump 0000:00:04.0 /dev/accel/accel0 ("));
	/* The one with no accel node is still named by its PCI address. */
	assert_non_null(strstr(r.out, "\n\ncoredump 0000:00:06.0 /dev/accel/accel2 ("));
	assert_int_equal('1', first_byte(a));
	assert_int_equal('1', first_byte(b));
	assert_int_equal('j', first_byte(bad));
	assert_int_equal('N', first_byte(other));
	snprintf(want, sizeof(want), "nnptool: coredump: %s: 4 bytes, too short for a coredump header (152)\n",
		 bad);
	assert_string_equal(want, r.err);
	result_free(&r);
	remove_tree(root);
}

static void sysfs_none_or_root_only(void **state)
{
	char *root = temp_dir(), data[PATH_MAX];
	struct result r;

	(void)state;
	/* No class directory at all, then another driver's dump only. */
	run_in_process(NULL, root, false, &r);
	expect_refused(&r, "nnptool: coredump: no device coredump of an nnp device\n", "");
	sysfs_dump(root, 0, "0000:00:05.0", "e1000e", NULL, true, data);
	run_in_process(NULL, root, false, &r);
	expect_refused(&r, "nnptool: coredump: no device coredump of an nnp device\n", "");
	sysfs_dump(root, 1, "0000:00:04.0", "nnp", "accel0", true, data);
	assert_int_equal(0, chmod(data, 0));
	run_as_nobody(NULL, root, &r);
	expect_refused(&r, "nnptool: coredump: %s: Permission denied (device coredumps are root's)\n",
		       data);
	remove_tree(root);
}

/* ---- the built nnptool ------------------------------------------------- */

/* build/bin/nnptool, beside this test's build/tests/host/. */
static void nnptool_path(char *path)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	assert_true(snprintf(path, PATH_MAX, "%s/../../bin/nnptool", exe) < PATH_MAX);
}

static char *slurp(FILE *f)
{
	char *s = calloc(1, 65536);

	assert_non_null(s);
	rewind(f);
	assert_true(fread(s, 1, 65535, f) < 65535);
	fclose(f);
	return s;
}

/* nnptool coredump ARGS... (NULL-terminated): exit code, stdout, stderr. */
static void run_nnptool(struct result *r, ...)
{
	char tool[PATH_MAX], *argv[8] = { tool, "coredump" };
	FILE *out = tmpfile(), *err = tmpfile();
	int argc = 2, status;
	va_list ap;
	pid_t pid;

	assert_non_null(out);
	assert_non_null(err);
	nnptool_path(tool);
	va_start(ap, r);
	while ((argv[argc] = va_arg(ap, char *)))
		assert_true(++argc < 7);
	va_end(ap);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fileno(out), 1);
		dup2(fileno(err), 2);
		execv(tool, argv);
		_exit(127);
	}
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_true(WIFEXITED(status));
	r->rc = WEXITSTATUS(status);
	r->out = slurp(out);
	r->err = slurp(err);
}

static void command_decodes_and_refuses(void **state)
{
	char *dir = temp_dir(), good[PATH_MAX], bad[PATH_MAX], want[4 * PATH_MAX];
	struct result r;

	(void)state;
	dump_file(dir, "good.bin", good, 0);
	snprintf(bad, sizeof(bad), "%s/bad.bin", dir);
	write_file(bad, "NNPDUMP", 8, 0644);
	run_nnptool(&r, good, NULL);
	snprintf(want, sizeof(want), "coredump %s\n%s", good, strchr(full_text, '\n') + 1);
	expect_ok(&r, want);
	run_nnptool(&r, bad, NULL);
	expect_refused(&r, "nnptool: coredump: %s: 8 bytes, too short for a coredump header (152)\n",
		       bad);
	/* Each file in turn: a blank line between dumps, the bad one said. */
	run_nnptool(&r, good, bad, good, NULL);
	assert_int_equal(1, r.rc);
	snprintf(want, sizeof(want), "coredump %s\n%s\ncoredump %s\n%s", good,
		 strchr(full_text, '\n') + 1, good, strchr(full_text, '\n') + 1);
	assert_string_equal(want, r.out);
	snprintf(want, sizeof(want), "nnptool: coredump: %s: 8 bytes, too short for a coredump header (152)\n",
		 bad);
	assert_string_equal(want, r.err);
	result_free(&r);
	/* --json after the command: a line each. */
	run_nnptool(&r, "--json", good, good, NULL);
	snprintf(want, sizeof(want), "{\"source\": \"%s\", %s{\"source\": \"%s\", %s", good,
		 full_json + strlen("{\"source\": \"dump.bin\", "), good,
		 full_json + strlen("{\"source\": \"dump.bin\", "));
	expect_ok(&r, want);
	remove_tree(dir);
}

static void command_usage(void **state)
{
	struct result r;

	(void)state;
	run_nnptool(&r, "--clear", "dump.bin", NULL);
	assert_int_equal(2, r.rc);
	assert_string_equal("nnptool: coredump: --clear frees the dumps in sysfs: give no FILE with it\n",
			    r.err);
	assert_string_equal("", r.out);
	result_free(&r);
	run_nnptool(&r, "--bogus", NULL);
	assert_int_equal(2, r.rc);
	assert_string_equal("nnptool: coredump: unknown option '--bogus'\n"
			    "usage: nnptool coredump [--json] [--clear] [FILE...]\n", r.err);
	result_free(&r);
	run_nnptool(&r, "--help", NULL);
	expect_ok(&r, "usage: nnptool coredump [--json] [--clear] [FILE...]\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_dump),
		cmocka_unit_test(fw_not_asked),
		cmocka_unit_test(longer_records_decode_the_same),
		cmocka_unit_test(odd_values_shown_safely),
		cmocka_unit_test(hostile_files_refused),
		cmocka_unit_test(version_1_or_no_log),
		cmocka_unit_test(read_bounded),
		cmocka_unit_test(unreadable_file_named),
		cmocka_unit_test(sysfs_nnp_dumps_only),
		cmocka_unit_test(sysfs_clear),
		cmocka_unit_test(sysfs_none_or_root_only),
		cmocka_unit_test(command_decodes_and_refuses),
		cmocka_unit_test(command_usage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
