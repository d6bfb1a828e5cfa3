// SPDX-License-Identifier: MIT
/*
 * nnptool coredump's decoder (coredump.h). A dump may be any file a user
 * names: every size and count of its header is checked against the bytes
 * there are before any record is read (in 64 bits, a product never past
 * what is left, so nothing wraps), records are copied out rather than
 * pointed into (the buffer promises no alignment) at the size the header
 * gives, which steps over the fields a later version appends, and a
 * string ends at its field's end whether or not it holds a NUL.
 */
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "nnp_coredump.h"
#include "nnp_hw.h"

#include "coredump.h"
#include "json_out.h"
#include "names.h"
#include "nnptool.h"
#include "text_out.h"

#define LEN(a)	(sizeof(a) / sizeof((a)[0]))

/* The longest string field (fw_build, a communicator's name) as text. */
#define FIELD_MAX	32
#define FIELD_TEXT	(4 * FIELD_MAX + 1)	/* every byte \xHH at worst */
/* A log message (version 2), likewise. */
#define MSG_MAX		sizeof(((struct nnp_coredump_log *)0)->msg)
#define MSG_TEXT	(4 * MSG_MAX + 1)

/* Room for every bit's name of a table below and the rest in hex. */
#define BITS_TEXT	64

/* A dump that holds together: its header and where its tables start. */
struct dump {
	const unsigned char *buf;
	struct nnp_coredump_header h;	/* a version 1 header's log fields 0 */
	uint64_t queues, comms, ports, log;
};

struct bit_name {
	uint32_t bit;
	const char *name;
};

static const struct bit_name queue_bits[] = {
	{ NNP_QUEUE_STATUS_ENABLED, "enabled" },
	{ NNP_QUEUE_STATUS_ERROR, "error" },
	{ NNP_QUEUE_STATUS_BUSY, "busy" },
	{ NNP_QUEUE_STATUS_WAITING, "waiting" },
};

static const struct bit_name aq_bits[] = {
	{ NNP_AQ_STATUS_READY, "ready" },
	{ NNP_AQ_STATUS_ERROR, "error" },
	{ NNP_AQ_STATUS_BUSY, "busy" },
};

static const struct bit_name port_bits[] = {
	{ NNP_PORT_WIRED, "wired" },
	{ NNP_PORT_UP, "up" },
};

static const char *const fw_states[] = {
	[NNP_FW_STATUS_OFF] = "off", [NNP_FW_STATUS_BOOTING] = "booting",
	[NNP_FW_STATUS_READY] = "ready", [NNP_FW_STATUS_HALTED] = "halted",
};

static const char *const fw_errors[] = {
	[NNP_FW_ERR_NONE] = "none", [NNP_FW_ERR_AQ_CONFIG] = "aq_config",
	[NNP_FW_ERR_AQ_DMA] = "aq_dma",
};

static const char *const log_kinds[] = {
	[NNP_COREDUMP_LOG_GUEST_ERROR] = "guest-error",
	[NNP_COREDUMP_LOG_WARNING] = "warning",
};

static const char *const cmd_states[] = {
	[NNP_COREDUMP_CMD_DONE] = "DONE", [NNP_COREDUMP_CMD_RUNNING] = "RUNNING",
	[NNP_COREDUMP_CMD_QUEUED] = "QUEUED",
};

/* ---- checks ------------------------------------------------------------- */

static int refuse(FILE *err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* What is wrong with the dump at @path, on @err; the exit code. */
static int refuse(FILE *err, const char *path, const char *fmt, ...)
{
	va_list ap;

	fprintf(err, "nnptool: coredump: %s: ", path);
	va_start(ap, fmt);
	vfprintf(err, fmt, ap);
	va_end(ap);
	fputc('\n', err);
	return NNPTOOL_EXIT_ERROR;
}

/* A size below version 1's would leave fields the decoder reads outside. */
static int check_sizes(const struct nnp_coredump_header *h, const char *path,
		       FILE *err)
{
	const struct {
		const char *what;
		uint32_t size;
		size_t v1;
	} s[] = {
		{ "header_size", h->header_size, NNP_COREDUMP_HEADER_SIZE_V1 },
		{ "queue_size", h->queue_size, sizeof(struct nnp_coredump_queue) },
		{ "comm_size", h->comm_size, sizeof(struct nnp_coredump_comm) },
		{ "port_size", h->port_size, sizeof(struct nnp_coredump_port) },
	};
	size_t i;

	for (i = 0; i < LEN(s); i++)
		if (s[i].size < s[i].v1)
			return refuse(err, path, "%s %u is less than version 1's %zu",
				      s[i].what, s[i].size, s[i].v1);
	if (h->num_log && h->log_size < sizeof(struct nnp_coredump_log))
		return refuse(err, path, "log_size %u is less than version 2's %zu",
			      h->log_size, sizeof(struct nnp_coredump_log));
	return NNPTOOL_EXIT_OK;
}

/* Where each table starts, and that the last one ends within @len bytes. */
static int check_tables(struct dump *d, size_t len, const char *path, FILE *err)
{
	const struct nnp_coredump_header *h = &d->h;
	const struct {
		const char *what;
		uint32_t count, size;	/* size: at least its first version's, if counted */
		uint64_t *at;
	} t[] = {
		{ "queues", h->num_queues, h->queue_size, &d->queues },
		{ "communicators", h->num_comms, h->comm_size, &d->comms },
		{ "ports", h->num_ports, h->port_size, &d->ports },
		{ "log messages", h->num_log, h->log_size, &d->log },
	};
	uint64_t off = h->header_size;
	size_t i;

	if (off > len)
		return refuse(err, path, "header_size %u runs past its end (%zu bytes)",
			      h->header_size, len);
	for (i = 0; i < LEN(t); i++) {
		*t[i].at = off;
		if (t[i].count && t[i].count > (len - off) / t[i].size)
			return refuse(err, path, "%u %s of %u bytes from byte %llu run past its end (%zu bytes)",
				      t[i].count, t[i].what, t[i].size,
				      (unsigned long long)off, len);
		off += (uint64_t)t[i].count * t[i].size;
	}
	return NNPTOOL_EXIT_OK;
}

/* Record @i of the table at @at: its version 1 fields into @rec. */
static void record(const struct dump *d, uint64_t at, uint32_t size,
		   uint32_t i, void *rec, size_t v1)
{
	memcpy(rec, d->buf + at + (uint64_t)i * size, v1);
}

static void queue_at(const struct dump *d, uint32_t i, struct nnp_coredump_queue *q)
{
	record(d, d->queues, d->h.queue_size, i, q, sizeof(*q));
}

/* cmds[] has room for NNP_COREDUMP_CMDS: a larger count would read past. */
static int check_queues(const struct dump *d, const char *path, FILE *err)
{
	struct nnp_coredump_queue q;
	uint32_t i;

	for (i = 0; i < d->h.num_queues; i++) {
		queue_at(d, i, &q);
		if (q.num_cmds > NNP_COREDUMP_CMDS)
			return refuse(err, path, "queue record %u holds %u commands, more than %d",
				      i, q.num_cmds, NNP_COREDUMP_CMDS);
	}
	return NNPTOOL_EXIT_OK;
}

static int check(struct dump *d, size_t len, const char *path, FILE *err)
{
	struct nnp_coredump_header *h = &d->h;

	if (len < NNP_COREDUMP_HEADER_SIZE_V1)
		return refuse(err, path, "%zu bytes, too short for a coredump header (%d)",
			      len, NNP_COREDUMP_HEADER_SIZE_V1);
	/* Version 1's header, then what of version 2's its header_size holds. */
	memset(h, 0, sizeof(*h));
	memcpy(h, d->buf, NNP_COREDUMP_HEADER_SIZE_V1);
	if (h->version >= 2 && h->header_size >= sizeof(*h) && len >= sizeof(*h))
		memcpy(h, d->buf, sizeof(*h));
	/* The magic's 8 bytes hold its NUL. */
	if (memcmp(h->magic, NNP_COREDUMP_MAGIC, sizeof(h->magic)))
		return refuse(err, path, "not an nnp coredump (no %s magic)",
			      NNP_COREDUMP_MAGIC);
	if (!h->version)
		return refuse(err, path, "version 0: no coredump has it");
	if (check_sizes(h, path, err) || check_tables(d, len, path, err))
		return NNPTOOL_EXIT_ERROR;
	return check_queues(d, path, err);
}

/* ---- values in words ---------------------------------------------------- */

/* @name, or @v in hex where the decoder knows no name for it, into @buf. */
static const char *name_or_hex(char *buf, size_t len, const char *name, uint32_t v)
{
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "0x%x", v);
	return buf;
}

static const char *table_name(const char *const *names, size_t n, uint32_t v)
{
	return v < n ? names[v] : NULL;
}

/* @v's bits by name, comma-separated, then any others in hex; "none" if 0. */
static const char *bits_text(char *buf, uint32_t v, const struct bit_name *names,
			     size_t n)
{
	size_t i;
	int at = 0;

	for (i = 0; i < n; i++) {
		if (!(v & names[i].bit))
			continue;
		at += snprintf(buf + at, BITS_TEXT - at, "%s%s", at ? "," : "",
			       names[i].name);
		v &= ~names[i].bit;
	}
	if (v)
		snprintf(buf + at, BITS_TEXT - at, "%s0x%x", at ? "," : "", v);
	else if (!at)
		snprintf(buf, BITS_TEXT, "none");
	return buf;
}

/* A string field of @len bytes, NUL-terminated or not, into @out. */
static const char *field_str(char *out, const char *s, size_t len)
{
	size_t n = strnlen(s, len);

	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

/* The same for a terminal: escaped (text_out.h); "-" if empty. */
static const char *field_text(char *out, const char *s, size_t len)
{
	char plain[FIELD_MAX + 1];

	text_for_terminal(field_str(plain, s, len), out, FIELD_TEXT);
	return *out ? out : "-";
}

/* @ns since the epoch in UTC, ISO 8601, to the millisecond. */
static void utc_text(char *buf, size_t len, uint64_t ns)
{
	/* Even 2^64 ns is in year 2554: gmtime_r has an answer for all. */
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;
	size_t n;

	gmtime_r(&s, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03lluZ",
		 (unsigned long long)(ns / 1000000u % 1000u));
}

/* What the header's codes say, in the words both outputs use. */
struct header_words {
	char reason[16], time[48], hw[16], fw[24], fw_state[16], fw_error[16];
	char aq[BITS_TEXT];
};

static void header_words(const struct nnp_coredump_header *h,
			 struct header_words *w)
{
	name_or_hex(w->reason, sizeof(w->reason), nnp_reset_reason_name(h->reason),
		    h->reason);
	utc_text(w->time, sizeof(w->time), h->time_ns);
	snprintf(w->hw, sizeof(w->hw), "%u.%u", NNP_HW_VERSION_MAJOR_OF(h->hw_version),
		 h->hw_version & 0xffff);
	/* The firmware's version has a patch level: "1.2.3", as nnptool info. */
	snprintf(w->fw, sizeof(w->fw), "%u.%u.%u", NNP_FW_VERSION_MAJOR(h->fw_version),
		 NNP_FW_VERSION_MINOR(h->fw_version), NNP_FW_VERSION_PATCH(h->fw_version));
	name_or_hex(w->fw_state, sizeof(w->fw_state),
		    table_name(fw_states, LEN(fw_states), h->fw_status), h->fw_status);
	name_or_hex(w->fw_error, sizeof(w->fw_error),
		    table_name(fw_errors, LEN(fw_errors), h->fw_error), h->fw_error);
	bits_text(w->aq, h->aq_status, aq_bits, LEN(aq_bits));
}

static bool is_stuck(const struct dump *d, const struct nnp_coredump_queue *q)
{
	return d->h.stuck_qid != NNP_COREDUMP_NONE && q->qid == d->h.stuck_qid;
}

struct cmd_words {
	char state[16], opcode[16];
};

static void cmd_words(const struct nnp_coredump_cmd *c, struct cmd_words *w)
{
	name_or_hex(w->state, sizeof(w->state),
		    table_name(cmd_states, LEN(cmd_states), c->state), c->state);
	name_or_hex(w->opcode, sizeof(w->opcode), nnp_cmd_name(c->opcode), c->opcode);
}

/* A communicator's status in words; NULL if the firmware was not asked. */
static const char *comm_status(char *buf, size_t len, uint32_t status)
{
	if (status == NNP_COREDUMP_NONE)
		return NULL;
	return name_or_hex(buf, len, nnp_status_name(status), status);
}

/* A port's peer as "CHIP.PORT", as nnptool links gives it; NULL if unwired. */
static const char *port_peer(char *buf, size_t len, const struct nnp_coredump_port *p)
{
	if (!(p->state & NNP_PORT_WIRED))
		return NULL;
	snprintf(buf, len, "%u.%u", NNP_PORT_PEER_CHIP(p->peer),
		 NNP_PORT_PEER_PORT(p->peer));
	return buf;
}

/* ---- text --------------------------------------------------------------- */

static void text_header(FILE *out, const struct coredump_src *src,
			const struct nnp_coredump_header *h)
{
	char serial[FIELD_TEXT], build[FIELD_TEXT];
	struct header_words w;

	header_words(h, &w);
	if (src->pci)
		fprintf(out, "coredump %s %s (%s)\n", src->pci,
			src->node ? src->node : "-", src->path);
	else
		fprintf(out, "coredump %s\n", src->path);
	fprintf(out, "version %u reason %s reset %u time %s\n", h->version,
		w.reason, h->reset_count, w.time);
	fprintf(out, "hw %s fw %s build %s chip %u serial %s\n", w.hw, w.fw,
		field_text(build, h->fw_build, sizeof(h->fw_build)), h->chip_id,
		field_text(serial, h->serial, sizeof(h->serial)));
	fprintf(out, "fw %s error %s heartbeat %u idle %u ms\n", w.fw_state,
		w.fw_error, h->fw_heartbeat, h->heartbeat_idle_ms);
	fprintf(out, "admin queue %s broken %s fw asked %s\n", w.aq,
		h->aq_broken ? "yes" : "no",
		h->flags & NNP_COREDUMP_FW_ASKED ? "yes" : "no");
	if (h->stuck_qid == NNP_COREDUMP_NONE)
		fprintf(out, "stuck queue none\n");
	else
		fprintf(out, "stuck queue %u\n", h->stuck_qid);
}

static void text_cmd(FILE *out, const struct nnp_coredump_cmd *c)
{
	struct cmd_words w;

	cmd_words(c, &w);
	fprintf(out, "  slot %u %s %s cid %u flags 0x%x src %u:0x%llx dst %u:0x%llx"
		" len %llu value 0x%llx\n",
		c->slot, w.state, w.opcode, c->cid, (unsigned int)c->flags,
		c->src_key, c->src_off, c->dst_key, c->dst_off, c->len, c->value);
}

/* A queue's shadow doorbell: "none", or its tail and its event index. */
static const char *shadow_text(char *buf, size_t len,
			       const struct nnp_coredump_queue *q)
{
	if (q->shadow_tail == NNP_COREDUMP_NONE)
		return "none";
	snprintf(buf, len, "%u event %u", q->shadow_tail, q->shadow_event);
	return buf;
}

static void text_queue(FILE *out, const struct dump *d, uint32_t i)
{
	char task[FIELD_TEXT], status[BITS_TEXT], shadow[32];
	struct nnp_coredump_queue q;
	uint32_t c;

	queue_at(d, i, &q);
	fprintf(out, "queue %u%s ctx %u pid %u task %s depth %u head %u tail %u"
		" shadow %s cq_head %u status %s idle %u ms\n",
		q.qid, is_stuck(d, &q) ? " STUCK" : "", q.ctx, q.pid,
		field_text(task, q.task, sizeof(q.task)), q.depth, q.sq_head,
		q.sq_tail, shadow_text(shadow, sizeof(shadow), &q), q.cq_head,
		bits_text(status, q.status, queue_bits, LEN(queue_bits)), q.idle_ms);
	for (c = 0; c < q.num_cmds; c++)
		text_cmd(out, &q.cmds[c]);
}

static void text_comm(FILE *out, const struct dump *d, uint32_t i)
{
	struct nnp_coredump_comm m;
	char name[FIELD_TEXT], status[16];
	const char *st;

	record(d, d->comms, d->h.comm_size, i, &m, sizeof(m));
	st = comm_status(status, sizeof(status), m.status);
	fprintf(out, "comm %u ctx %u pid %u rank %u/%u name %s status %s\n",
		m.id, m.ctx, m.pid, m.rank, m.nranks,
		field_text(name, m.name, sizeof(m.name)), st ? st : "not asked");
}

static void text_port(FILE *out, const struct dump *d, uint32_t i)
{
	struct nnp_coredump_port p;
	char state[BITS_TEXT], peer[24];
	const char *pr;

	record(d, d->ports, d->h.port_size, i, &p, sizeof(p));
	pr = port_peer(peer, sizeof(peer), &p);
	fprintf(out, "port %u %s peer %s tx %llu bytes %llu packets"
		" rx %llu bytes %llu packets errors %llu\n",
		p.port, bits_text(state, p.state, port_bits, LEN(port_bits)),
		pr ? pr : "-", p.tx_bytes, p.tx_packets, p.rx_bytes,
		p.rx_packets, p.errors);
}

/* A log message's text, escaped, into @out of MSG_TEXT bytes. */
static const char *msg_text(char *out, const struct nnp_coredump_log *l)
{
	char plain[MSG_MAX + 1];

	text_for_terminal(field_str(plain, l->msg, sizeof(l->msg)), out, MSG_TEXT);
	return out;
}

static const char *log_kind(char *buf, size_t len, uint16_t kind)
{
	return name_or_hex(buf, len, table_name(log_kinds, LEN(log_kinds), kind),
			   kind);
}

static void text_log(FILE *out, const struct dump *d, uint32_t i)
{
	struct nnp_coredump_log l;
	char msg[MSG_TEXT], kind[16];

	record(d, d->log, d->h.log_size, i, &l, sizeof(l));
	fprintf(out, "log %u time %llu ns %s: %s\n", l.seq,
		(unsigned long long)l.time_ns, log_kind(kind, sizeof(kind), l.kind),
		msg_text(msg, &l));
}

static void text_dump(FILE *out, const struct coredump_src *src,
		      const struct dump *d)
{
	uint32_t i;

	text_header(out, src, &d->h);
	for (i = 0; i < d->h.num_queues; i++)
		text_queue(out, d, i);
	for (i = 0; i < d->h.num_comms; i++)
		text_comm(out, d, i);
	for (i = 0; i < d->h.num_ports; i++)
		text_port(out, d, i);
	if (d->h.version >= 2)
		fprintf(out, "firmware log: %u messages since the device came up, the last %u kept\n",
			d->h.log_seq, d->h.num_log);
	for (i = 0; i < d->h.num_log; i++)
		text_log(out, d, i);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_header(struct json_object *doc, const struct nnp_coredump_header *h)
{
	char serial[FIELD_MAX + 1], build[FIELD_MAX + 1];
	struct header_words w;

	header_words(h, &w);
	jo_u64(doc, "version", h->version);
	jo_str(doc, "reason", w.reason);
	jo_u64(doc, "reset_count", h->reset_count);
	jo_str(doc, "time", w.time);
	jo_u64(doc, "time_ns", h->time_ns);
	jo_str(doc, "hw_version", w.hw);
	jo_str(doc, "fw_version", w.fw);
	jo_str(doc, "fw_build", field_str(build, h->fw_build, sizeof(h->fw_build)));
	jo_u64(doc, "chip_id", h->chip_id);
	jo_str(doc, "serial", field_str(serial, h->serial, sizeof(h->serial)));
	jo_str(doc, "fw_status", w.fw_state);
	jo_str(doc, "fw_error", w.fw_error);
	jo_u64(doc, "fw_heartbeat", h->fw_heartbeat);
	jo_u64(doc, "heartbeat_idle_ms", h->heartbeat_idle_ms);
	jo_str(doc, "aq_status", w.aq);
	jo_bool(doc, "aq_broken", h->aq_broken);
	jo_bool(doc, "fw_asked", h->flags & NNP_COREDUMP_FW_ASKED);
	if (h->stuck_qid == NNP_COREDUMP_NONE)
		jo_null(doc, "stuck_qid");
	else
		jo_u64(doc, "stuck_qid", h->stuck_qid);
}

static void json_cmd(struct json_object *cmds, const struct nnp_coredump_cmd *c)
{
	struct json_object *o = jo_obj(cmds, NULL);
	struct cmd_words w;

	cmd_words(c, &w);
	jo_u64(o, "slot", c->slot);
	jo_str(o, "state", w.state);
	jo_str(o, "opcode", w.opcode);
	jo_u64(o, "cid", c->cid);
	jo_u64(o, "flags", c->flags);
	jo_u64(o, "src_key", c->src_key);
	jo_u64(o, "src_off", c->src_off);
	jo_u64(o, "dst_key", c->dst_key);
	jo_u64(o, "dst_off", c->dst_off);
	jo_u64(o, "len", c->len);
	jo_u64(o, "value", c->value);
}

static void json_queue(struct json_object *queues, const struct dump *d, uint32_t i)
{
	struct json_object *o = jo_obj(queues, NULL), *cmds;
	char task[FIELD_MAX + 1], status[BITS_TEXT];
	struct nnp_coredump_queue q;
	uint32_t c;

	queue_at(d, i, &q);
	jo_u64(o, "qid", q.qid);
	jo_bool(o, "stuck", is_stuck(d, &q));
	jo_u64(o, "ctx", q.ctx);
	jo_u64(o, "pid", q.pid);
	jo_str(o, "task", field_str(task, q.task, sizeof(q.task)));
	jo_u64(o, "depth", q.depth);
	jo_u64(o, "sq_head", q.sq_head);
	jo_u64(o, "sq_tail", q.sq_tail);
	/* No shadow doorbell: both null. */
	if (q.shadow_tail == NNP_COREDUMP_NONE) {
		jo_null(o, "shadow_tail");
		jo_null(o, "shadow_event");
	} else {
		jo_u64(o, "shadow_tail", q.shadow_tail);
		jo_u64(o, "shadow_event", q.shadow_event);
	}
	jo_u64(o, "cq_head", q.cq_head);
	jo_str(o, "status", bits_text(status, q.status, queue_bits, LEN(queue_bits)));
	jo_u64(o, "idle_ms", q.idle_ms);
	cmds = jo_arr(o, "cmds");
	for (c = 0; c < q.num_cmds; c++)
		json_cmd(cmds, &q.cmds[c]);
}

static void json_comm(struct json_object *comms, const struct dump *d, uint32_t i)
{
	struct json_object *o = jo_obj(comms, NULL);
	char name[FIELD_MAX + 1], status[16];
	struct nnp_coredump_comm m;

	record(d, d->comms, d->h.comm_size, i, &m, sizeof(m));
	jo_u64(o, "id", m.id);
	jo_u64(o, "ctx", m.ctx);
	jo_u64(o, "pid", m.pid);
	jo_u64(o, "rank", m.rank);
	jo_u64(o, "nranks", m.nranks);
	jo_str(o, "name", field_str(name, m.name, sizeof(m.name)));
	jo_str_or_null(o, "status", comm_status(status, sizeof(status), m.status));
}

static void json_port(struct json_object *ports, const struct dump *d, uint32_t i)
{
	struct json_object *o = jo_obj(ports, NULL);
	char state[BITS_TEXT], peer[24];
	struct nnp_coredump_port p;

	record(d, d->ports, d->h.port_size, i, &p, sizeof(p));
	jo_u64(o, "port", p.port);
	jo_str(o, "state", bits_text(state, p.state, port_bits, LEN(port_bits)));
	jo_str_or_null(o, "peer", port_peer(peer, sizeof(peer), &p));
	jo_u64(o, "tx_bytes", p.tx_bytes);
	jo_u64(o, "rx_bytes", p.rx_bytes);
	jo_u64(o, "tx_packets", p.tx_packets);
	jo_u64(o, "rx_packets", p.rx_packets);
	jo_u64(o, "errors", p.errors);
}

static void json_log(struct json_object *log, const struct dump *d, uint32_t i)
{
	struct json_object *o = jo_obj(log, NULL);
	char msg[MSG_MAX + 1], kind[16];
	struct nnp_coredump_log l;

	record(d, d->log, d->h.log_size, i, &l, sizeof(l));
	jo_u64(o, "seq", l.seq);
	jo_u64(o, "time_ns", l.time_ns);
	jo_str(o, "kind", log_kind(kind, sizeof(kind), l.kind));
	jo_str(o, "msg", field_str(msg, l.msg, sizeof(l.msg)));
}

static void json_dump(FILE *out, const struct coredump_src *src,
		      const struct dump *d)
{
	struct json_object *doc = jo_obj(NULL, NULL), *a;
	uint32_t i;

	jo_str(doc, "source", src->path);
	if (src->pci) {
		jo_str(doc, "pci_address", src->pci);
		jo_str_or_null(doc, "node", src->node);
	}
	json_header(doc, &d->h);
	a = jo_arr(doc, "queues");
	for (i = 0; i < d->h.num_queues; i++)
		json_queue(a, d, i);
	a = jo_arr(doc, "comms");
	for (i = 0; i < d->h.num_comms; i++)
		json_comm(a, d, i);
	a = jo_arr(doc, "ports");
	for (i = 0; i < d->h.num_ports; i++)
		json_port(a, d, i);
	jo_u64(doc, "log_seq", d->h.log_seq);
	a = jo_arr(doc, "log");
	for (i = 0; i < d->h.num_log; i++)
		json_log(a, d, i);
	jo_line(out, doc);
}

int coredump_decode(const struct coredump_src *src, const unsigned char *buf,
		    size_t len, struct coredump_out *o)
{
	struct dump d = { .buf = buf };

	/* All of it checked first: a refused dump prints nothing on @o->out. */
	if (check(&d, len, src->path, o->err))
		return NNPTOOL_EXIT_ERROR;
	if (o->json) {
		json_dump(o->out, src, &d);
	} else {
		if (o->shown)
			fputc('\n', o->out);
		text_dump(o->out, src, &d);
	}
	o->shown++;
	return NNPTOOL_EXIT_OK;
}
