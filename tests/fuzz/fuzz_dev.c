// SPDX-License-Identifier: MIT
/*
 * The fuzzers' device: a firmware-sim chip on guarded memory, and a host
 * that checks each DMA against the memory it named (see fuzz_dev.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fuzz_dev.h"

#define GUARD 4096u
#define SQE_BYTES sizeof(struct nnp_hw_queue_cmd)
#define CQE_BYTES sizeof(struct nnp_hw_cqe)
#define AQE_BYTES sizeof(struct nnp_hw_admin_cmd)

static const uint8_t secret[8] = { 'S', 'E', 'C', 'R', 'E', 'T', 0xa5, 0x3c };

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fuzz_dev: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

/* @len bytes between two pages nothing may touch; kept for the process. */
static uint8_t *guarded(size_t len)
{
	uint8_t *p = mmap(NULL, len + 2 * GUARD, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + GUARD, len, PROT_READ | PROT_WRITE))
		fuzz_fail("no memory for the device");
	return p + GUARD;
}

static bool within(uint64_t addr, uint64_t len, uint64_t base, uint64_t size)
{
	return addr >= base && len <= size && addr - base <= size - len;
}

static uint8_t *host_at(struct fuzz_dev *d, uint64_t addr, uint64_t len)
{
	if (!within(addr, len, FUZZ_HOST_BASE, FUZZ_HOST_SIZE))
		return NULL;
	return d->host + (addr - FUZZ_HOST_BASE);
}

static bool covers(const struct fuzz_named *n, uint64_t addr, uint64_t len,
		   unsigned int right)
{
	uint32_t i;

	if (n->dead || n->device || !(n->rights & right))
		return false;
	if (!n->pages)
		return within(addr, len, n->addr, n->len);
	for (i = 0; i < n->npages; i++)
		if (within(addr, len, n->pages[i], NNP_HW_PAGE_SIZE))
			return true;
	return false;
}

static bool named(const struct fuzz_dev *d, uint64_t addr, uint64_t len,
		  unsigned int right)
{
	unsigned int i;

	if (d->aq_len && within(addr, len, d->aq_addr, d->aq_len))
		return true;
	for (i = 0; i < d->nnamed; i++)
		if (covers(&d->named[i], addr, len, right))
			return true;
	return false;
}

/*
 * The device touches host memory: only what was named to it, as named.
 * One access may span pages that follow each other in host memory: each
 * page's part must be named.
 */
static void check_dma(struct fuzz_dev *d, uint64_t addr, size_t len,
		      unsigned int right)
{
	uint64_t done = 0;

	while (done < len) {
		uint64_t at = addr + done;
		uint64_t n = NNP_HW_PAGE_SIZE - at % NNP_HW_PAGE_SIZE;

		if (n > len - done)
			n = len - done;
		if (!named(d, at, n, right))
			break;
		done += n;
	}
	if (done >= len)
		return;
	fuzz_fail("the device %s %zu bytes at 0x%llx, not named to it for that",
		  right == FUZZ_W ? "wrote" : "read", len,
		  (unsigned long long)addr);
}

static int dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct fuzz_dev *d = opaque;
	uint8_t *p;

	check_dma(d, addr, len, FUZZ_R);
	p = host_at(d, addr, len);
	if (!p)
		return -1;
	memcpy(buf, p, len);
	return 0;
}

static int dma_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct fuzz_dev *d = opaque;
	uint8_t *p;

	check_dma(d, addr, len, FUZZ_W);
	p = host_at(d, addr, len);
	if (!p)
		return -1;
	memcpy(p, buf, len);
	return 0;
}

/*
 * Whole ranges of fuzz host memory only: the rest falls back to
 * dma_read/dma_write, which fault. A mapping is checked as if all of it
 * were accessed.
 */
static void *dma_map(void *opaque, uint64_t addr, uint64_t *len, bool write)
{
	struct fuzz_dev *d = opaque;
	uint8_t *p = host_at(d, addr, *len);

	if (!p)
		return NULL;
	check_dma(d, addr, *len, write ? FUZZ_W : FUZZ_R);
	d->mapped++;
	return p;
}

static void dma_unmap(void *opaque, void *ptr, uint64_t len, bool write,
		      uint64_t done)
{
	struct fuzz_dev *d = opaque;

	(void)ptr, (void)write;
	if (done > len || !d->mapped--)
		fuzz_fail("unmapped %llu of %llu bytes, %d mappings left",
			  (unsigned long long)done, (unsigned long long)len,
			  d->mapped);
}

static void raise_irq(void *opaque, unsigned int vector)
{
	(void)opaque;
	if (vector >= NNP_VECTOR_QUEUE(NNP_HW_MAX_QUEUES))
		fuzz_fail("interrupt on vector %u, past the last", vector);
}

static uint64_t now_ns(void *opaque)
{
	return ((struct fuzz_dev *)opaque)->now_ns;
}

static int icl_tx(void *opaque, unsigned int port, uint64_t epoch,
		  uint32_t seq, bool abort, uint64_t model_ns, const void *data,
		  size_t len)
{
	struct fuzz_dev *d = opaque;

	(void)epoch, (void)seq, (void)abort, (void)model_ns, (void)data;
	if (port >= NNP_FW_MAX_PORTS || len > NNP_FW_ICL_MAX_PACKET)
		fuzz_fail("sent %zu bytes on port %u", len, port);
	d->icl_sent++;
	return 0;
}

/* A shared link's lend: only ever of the chip's own memory. */
static int icl_tx_lent(void *opaque, unsigned int port, uint64_t epoch,
		       uint32_t seq, uint64_t model_ns, uint64_t offset,
		       size_t len, uint32_t tag)
{
	struct fuzz_dev *d = opaque;

	(void)epoch, (void)seq, (void)model_ns, (void)tag;
	if (port >= NNP_FW_MAX_PORTS || !len || len > NNP_FW_ICL_MAX_PACKET ||
	    offset > FUZZ_DEV_SIZE || len > FUZZ_DEV_SIZE - offset)
		fuzz_fail("lent %zu bytes at 0x%llx on port %u", len,
			  (unsigned long long)offset, port);
	d->icl_lent++;
	return 0;
}

static void icl_give_back(void *opaque, unsigned int port, uint32_t tag)
{
	struct fuzz_dev *d = opaque;

	(void)tag;
	if (port >= NNP_FW_MAX_PORTS)
		fuzz_fail("gave back a chunk on port %u", port);
	d->icl_given_back++;
}

static void icl_credit(void *opaque, unsigned int port, size_t len)
{
	struct fuzz_dev *d = opaque;

	if (port >= NNP_FW_MAX_PORTS || len > NNP_FW_ICL_MAX_PACKET)
		fuzz_fail("credited %zu bytes on port %u", len, port);
	d->icl_credited++;
	d->icl_credited_bytes += len;
}

static struct fuzz_named *name(struct fuzz_dev *d, struct fuzz_named n)
{
	if (d->nnamed == FUZZ_NAMED_MAX)
		fuzz_fail("more than %u named ranges", FUZZ_NAMED_MAX);
	d->named[d->nnamed] = n;
	return &d->named[d->nnamed++];
}

/* Name the host's range @n unless it is named already. */
static void name_once(struct fuzz_dev *d, struct fuzz_named n)
{
	unsigned int i;

	for (i = 0; i < d->nnamed; i++) {
		const struct fuzz_named *m = &d->named[i];

		if (!m->ctx && !m->queue && m->addr == n.addr && m->len == n.len &&
		    m->rights == n.rights)
			return;
	}
	name(d, n);
}

void fuzz_advance_ms(struct fuzz_dev *d, uint64_t ms)
{
	d->now_ns += ms * 1000000ull;
	nnp_fw_run(d->fw);
}

/* Every byte says where it is: fuzz_pattern(offset). */
static void fill(uint8_t *p, uint64_t len)
{
	static uint8_t pattern[FUZZ_DEV_SIZE > FUZZ_HOST_SIZE ? FUZZ_DEV_SIZE :
			       FUZZ_HOST_SIZE];
	static bool made;
	uint64_t i;

	for (i = 0; !made && i < sizeof(pattern); i++)
		pattern[i] = fuzz_pattern(i);
	made = true;
	memcpy(p, pattern, len);
}

void fuzz_dev_init(struct fuzz_dev *d, uint16_t ports)
{
	static uint8_t *host, *dev, *host_ref, *dev_ref;
	struct nnp_fw_host h = {
		.opaque = d, .dma_read = dma_read, .dma_write = dma_write,
		.dma_map = dma_map, .dma_unmap = dma_unmap,
		.raise_irq = raise_irq, .now_ns = now_ns, .icl_tx = icl_tx,
		.icl_tx_lent = icl_tx_lent, .icl_give_back = icl_give_back,
		.icl_credit = icl_credit,
	};
	struct nnp_fw_config cfg = {
		.chip_id = FUZZ_CHIP_ID, .mem_size = FUZZ_DEV_SIZE, .num_ports = ports,
		.heartbeat_ms = 100, .coll_timeout_ms = 100,
	};
	const char *why = NULL;

	if (!host) {
		host = guarded(FUZZ_HOST_SIZE);
		dev = guarded(FUZZ_DEV_SIZE);
		host_ref = malloc(FUZZ_HOST_SIZE);
		dev_ref = malloc(FUZZ_DEV_SIZE);
		if (!host_ref || !dev_ref)
			fuzz_fail("no memory for the references");
	}
	*d = (struct fuzz_dev){
		.host = host, .dev = dev, .host_ref = host_ref,
		.dev_ref = dev_ref, .now_ns = 1000, .q_phase = 1,
	};
	cfg.mem = dev;
	d->fw = nnp_fw_create(&cfg, &h, &why);
	if (!d->fw)
		fuzz_fail("nnp_fw_create: %s", why);
	nnp_fw_run(d->fw);	/* the reset's cleanup, then READY */
	if (nnp_fw_reg_read(d->fw, NNP_REG_FW_STATUS) != NNP_FW_STATUS_READY)
		fuzz_fail("the firmware did not boot");
	/* After the reset zeroed it: every byte now says where it is. */
	fill(host, FUZZ_HOST_SIZE);
	fill(dev, FUZZ_DEV_SIZE);
	memset(host_at(d, FUZZ_AQ_CQ, FUZZ_AQ_DEPTH * CQE_BYTES), 0,
	       FUZZ_AQ_DEPTH * CQE_BYTES);
	name(d, (struct fuzz_named){ .addr = FUZZ_AQ_SQ,
		 .len = FUZZ_AQ_DEPTH * AQE_BYTES, .rights = FUZZ_R });
	name(d, (struct fuzz_named){ .addr = FUZZ_AQ_CQ,
		 .len = FUZZ_AQ_DEPTH * CQE_BYTES, .rights = FUZZ_W });
	nnp_fw_reg_write(d->fw, NNP_REG_AQ_SQ_BASE_LO, (uint32_t)FUZZ_AQ_SQ);
	nnp_fw_reg_write(d->fw, NNP_REG_AQ_CQ_BASE_LO, (uint32_t)FUZZ_AQ_CQ);
	nnp_fw_reg_write(d->fw, NNP_REG_AQ_DEPTH, FUZZ_AQ_DEPTH);
	nnp_fw_reg_write(d->fw, NNP_REG_AQ_CTRL, NNP_AQ_CTRL_ENABLE);
	if (nnp_fw_reg_read(d->fw, NNP_REG_AQ_STATUS) != NNP_AQ_STATUS_READY)
		fuzz_fail("the admin queue did not come up");
}

uint32_t fuzz_dev_plant_secret(struct fuzz_dev *d, uint32_t ctx, uint64_t off,
			       uint64_t len)
{
	struct nnp_hw_key_args a = {
		.ctx = ctx, .type = NNP_KEY_TYPE_DEVICE,
		.rights = NNP_KEY_READ | NNP_KEY_WRITE, .length = len,
		.dev_base = off,
	};
	uint32_t key = 0;
	uint64_t i;

	if (!fuzz_ctx_create(d, ctx))
		key = fuzz_key_register(d, &a, NULL, 0);
	if (!key)
		fuzz_fail("cannot give context %u its memory", ctx);
	for (i = 0; i < len; i++)
		d->dev[off + i] = secret[i % sizeof(secret)];
	d->secret_off = off;
	d->secret_len = len;
	return key;
}

void fuzz_dev_seal(struct fuzz_dev *d)
{
	memcpy(d->host_ref, d->host, FUZZ_HOST_SIZE);
	memcpy(d->dev_ref, d->dev, FUZZ_DEV_SIZE);
}

/*
 * May @n's bytes have changed? The host writes its rings and buffers (the
 * DMA checks keep the device to their rights), the device FUZZ_CTX's
 * writable keys.
 */
static bool writable(const struct fuzz_named *n)
{
	return n->ctx == 0 || n->queue ||
	       (n->ctx == FUZZ_CTX && (n->rights & FUZZ_W));
}

struct span {
	uint64_t lo, hi;	/* [lo, hi), offsets from the memory's base */
	bool device_wrote;	/* by FUZZ_CTX's keys, not the host */
};

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Add [addr, addr + len) clipped to [base, base + size) to @s; its count. */
static unsigned int clip(struct span *s, unsigned int n, uint64_t base,
			 uint64_t size, uint64_t addr, uint64_t len, bool key)
{
	uint64_t lo = addr > base ? addr - base : 0;
	uint64_t hi = len > UINT64_MAX - addr ? UINT64_MAX : addr + len;

	hi = hi > base + size ? size : (hi > base ? hi - base : 0);
	if (lo < hi)
		s[n++] = (struct span){ lo, hi, key };
	return n;
}

/* The ranges of one memory the device may have written, sorted. */
static unsigned int writable_spans(const struct fuzz_dev *d, struct span *s,
				   bool device, uint64_t base, uint64_t size)
{
	unsigned int i, n = 0;
	uint32_t p;

	for (i = 0; i < d->nnamed; i++) {
		const struct fuzz_named *m = &d->named[i];

		if (m->device != device || !writable(m))
			continue;
		if (!m->pages)
			n = clip(s, n, base, size, m->addr, m->len, m->key);
		for (p = 0; m->pages && p < m->npages; p++)
			n = clip(s, n, base, size, m->pages[p], NNP_HW_PAGE_SIZE,
				 true);
	}
	qsort(s, n, sizeof(*s), by_start);
	return n;
}

static void unchanged(const char *what, const uint8_t *mem, const uint8_t *ref,
		      uint64_t base, uint64_t lo, uint64_t hi)
{
	if (lo < hi && memcmp(mem + lo, ref + lo, hi - lo))
		fuzz_fail("%s bytes 0x%llx..0x%llx changed, though not writable",
			  what, (unsigned long long)(base + lo),
			  (unsigned long long)(base + hi - 1));
}

/* Bytes the device could not write are as sealed; no secret where it could. */
static void check_memory(const struct fuzz_dev *d, const char *what,
			 const uint8_t *mem, const uint8_t *ref, bool device,
			 uint64_t base, uint64_t size)
{
	/* A host key names up to FUZZ_AQ_DATA_SIZE / 8 pages. */
	static struct span s[FUZZ_NAMED_MAX * (FUZZ_AQ_DATA_SIZE / 8)];
	unsigned int n = writable_spans(d, s, device, base, size), i;
	uint64_t done = 0;

	for (i = 0; i < n; i++) {
		const uint8_t *at = NULL;

		unchanged(what, mem, ref, base, done, s[i].lo);
		if (d->secret_len && s[i].device_wrote)
			at = memmem(mem + s[i].lo, s[i].hi - s[i].lo, secret,
				    sizeof(secret));
		if (at)
			fuzz_fail("another context's secret leaked to %s 0x%llx",
				  what, (unsigned long long)(base + (at - mem)));
		if (s[i].hi > done)
			done = s[i].hi;
	}
	unchanged(what, mem, ref, base, done, size);
}

void fuzz_dev_fini(struct fuzz_dev *d)
{
	unsigned int i;

	if (d->host_ref && d->nnamed) {
		check_memory(d, "host", d->host, d->host_ref, false,
			     FUZZ_HOST_BASE, FUZZ_HOST_SIZE);
		check_memory(d, "device", d->dev, d->dev_ref, true, 0,
			     FUZZ_DEV_SIZE);
	}
	nnp_fw_destroy(d->fw);
	if (d->mapped)
		fuzz_fail("%d mappings of host memory never given back", d->mapped);
	for (i = 0; i < d->nnamed; i++)
		free(d->named[i].pages);
}

/* ---- admin commands, and what they name ---- */

/* Mark dead what @ctx's key @key, queue @queue (1 + qid) or all named. */
static void unname(struct fuzz_dev *d, uint32_t ctx, uint32_t key,
		   uint32_t queue)
{
	unsigned int i;

	for (i = 0; i < d->nnamed; i++) {
		struct fuzz_named *n = &d->named[i];

		if (n->ctx == ctx && (!(key || queue) ||
				      (key && n->key == key) ||
				      (queue && n->queue == queue)))
			n->dead = true;
	}
}

static unsigned int rights_of(uint32_t key_rights)
{
	return (key_rights & NNP_KEY_READ ? FUZZ_R : 0) |
	       (key_rights & NNP_KEY_WRITE ? FUZZ_W : 0);
}

static void name_key(struct fuzz_dev *d, const struct nnp_hw_admin_cmd *cmd,
		     uint32_t key)
{
	struct nnp_hw_key_args a;
	struct fuzz_named n = { .key = key };
	const uint8_t *list;

	memcpy(&a, cmd->args, sizeof(a));
	n.ctx = a.ctx;
	n.rights = rights_of(a.rights);
	if (a.type == NNP_KEY_TYPE_DEVICE) {
		n.device = true;
		n.addr = a.dev_base;
		n.len = a.length;
		name(d, n);
		return;
	}
	/* The firmware read the list from here, so it lies in host memory. */
	list = host_at(d, cmd->addr, cmd->len);
	n.npages = cmd->len / sizeof(uint64_t);
	n.pages = malloc(cmd->len ? cmd->len : 1);
	if (!list || !n.pages)
		fuzz_fail("key %u: its page list is gone", key);
	memcpy(n.pages, list, cmd->len);
	name(d, n);
}

static void name_queue(struct fuzz_dev *d, const struct nnp_hw_admin_cmd *cmd)
{
	struct nnp_hw_queue_args a;

	memcpy(&a, cmd->args, sizeof(a));
	name(d, (struct fuzz_named){ .addr = a.sq_base, .len = a.depth * SQE_BYTES,
		 .rights = FUZZ_R, .ctx = a.ctx, .queue = a.qid + 1 });
	name(d, (struct fuzz_named){ .addr = a.cq_base, .len = a.depth * CQE_BYTES,
		 .rights = FUZZ_W, .ctx = a.ctx, .queue = a.qid + 1 });
	if (a.irq_arm)
		name(d, (struct fuzz_named){ .addr = a.irq_arm, .len = 4,
			 .rights = FUZZ_R | FUZZ_W, .ctx = a.ctx,
			 .queue = a.qid + 1 });
}

/* What a successful command named to the device, or took back. */
static void account(struct fuzz_dev *d, const struct nnp_hw_admin_cmd *cmd,
		    uint32_t result)
{
	switch (cmd->opcode) {
	case NNP_ADMIN_KEY_REGISTER:
		name_key(d, cmd, result);
		break;
	case NNP_ADMIN_KEY_UNREGISTER:
		unname(d, cmd->args[0], cmd->args[1], 0);
		break;
	case NNP_ADMIN_QUEUE_CREATE:
		name_queue(d, cmd);
		break;
	case NNP_ADMIN_QUEUE_DESTROY:
		unname(d, cmd->args[0], 0, cmd->args[1] + 1);
		break;
	case NNP_ADMIN_CTX_DESTROY:
		unname(d, cmd->args[0], 0, 0);
		break;
	}
}

uint16_t fuzz_admin(struct fuzz_dev *d, struct nnp_hw_admin_cmd cmd,
		    uint32_t *result)
{
	struct nnp_hw_admin_cmd *sq = (void *)host_at(d, FUZZ_AQ_SQ, AQE_BYTES);
	struct nnp_hw_cqe *cq = (void *)host_at(d, FUZZ_AQ_CQ, CQE_BYTES);
	uint32_t slot = d->aq_slot;

	cmd.cid = (uint16_t)(0x100 + slot);
	memset(&cq[slot], 0xff, sizeof(cq[slot]));
	sq[slot] = cmd;
	d->aq_slot = (slot + 1) % FUZZ_AQ_DEPTH;
	d->aq_addr = cmd.addr;
	d->aq_len = cmd.len;
	nnp_fw_reg_write(d->fw, NNP_REG_AQ_SQ_TAIL, d->aq_slot);
	nnp_fw_run(d->fw);
	d->aq_len = 0;
	/* The device may have written the buffer: no longer as sealed. */
	if (cmd.len)
		name_once(d, (struct fuzz_named){ .addr = cmd.addr, .len = cmd.len });
	if (cq[slot].cid != cmd.cid)
		fuzz_fail("admin opcode 0x%x: no completion", cmd.opcode);
	nnp_fw_reg_write(d->fw, NNP_REG_AQ_CQ_HEAD, d->aq_slot);
	if (cq[slot].status == NNP_STATUS_SUCCESS)
		account(d, &cmd, cq[slot].result);
	if (result)
		*result = cq[slot].result;
	return cq[slot].status;
}

uint16_t fuzz_ctx_create(struct fuzz_dev *d, uint32_t ctx)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_CTX_CREATE };

	c.args[0] = ctx;
	return fuzz_admin(d, c, NULL);
}

uint32_t fuzz_key_register(struct fuzz_dev *d, const struct nnp_hw_key_args *a,
			   const uint64_t *pages, uint32_t npages)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_KEY_REGISTER };
	uint32_t key = 0;

	if (npages > FUZZ_AQ_DATA_SIZE / sizeof(*pages))
		return 0;
	if (npages) {
		c.addr = FUZZ_AQ_DATA;
		c.len = npages * sizeof(*pages);
		memcpy(host_at(d, c.addr, c.len), pages, c.len);
	}
	memcpy(c.args, a, sizeof(*a));
	return fuzz_admin(d, c, &key) ? 0 : key;
}

uint16_t fuzz_key_unregister(struct fuzz_dev *d, uint32_t ctx, uint32_t key)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_KEY_UNREGISTER };

	c.args[0] = ctx;
	c.args[1] = key;
	return fuzz_admin(d, c, NULL);
}

uint16_t fuzz_queue_create(struct fuzz_dev *d, uint32_t ctx)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_QUEUE_CREATE };
	struct nnp_hw_queue_args a = {
		.ctx = ctx, .depth = FUZZ_Q_DEPTH, .vector = NNP_VECTOR_QUEUE(0),
		.sq_base = FUZZ_Q_SQ, .cq_base = FUZZ_Q_CQ, .irq_arm = FUZZ_Q_ARM,
	};

	memset(host_at(d, FUZZ_Q_CQ, FUZZ_Q_DEPTH * CQE_BYTES), 0,
	       FUZZ_Q_DEPTH * CQE_BYTES);
	memcpy(c.args, &a, sizeof(a));
	return fuzz_admin(d, c, NULL);
}

/* ---- user queue 0 ---- */

uint16_t fuzz_queue_reset(struct fuzz_dev *d, uint32_t ctx)
{
	struct nnp_hw_admin_cmd c = { .opcode = NNP_ADMIN_QUEUE_RESET };
	uint16_t st;

	c.args[0] = ctx;
	st = fuzz_admin(d, c, NULL);
	if (!st) {
		/* As the driver does: a zeroed CQ, both rings from slot 0. */
		memset(host_at(d, FUZZ_Q_CQ, FUZZ_Q_DEPTH * CQE_BYTES), 0,
		       FUZZ_Q_DEPTH * CQE_BYTES);
		d->q_tail = d->q_head = d->q_pending = 0;
		d->q_phase = 1;
	}
	return st;
}

/* Read back the completions posted; false if the queue stopped on one. */
static bool reap(struct fuzz_dev *d)
{
	struct nnp_hw_cqe *cq = (void *)host_at(d, FUZZ_Q_CQ, CQE_BYTES);
	bool ok = true;

	while (d->q_pending && (cq[d->q_head].phase & NNP_CQE_PHASE) == d->q_phase) {
		uint16_t want = (uint16_t)(d->q_next_cid - d->q_pending);

		if (cq[d->q_head].cid != want)
			fuzz_fail("completion for cid %u where %u was due",
				  cq[d->q_head].cid, want);
		ok = ok && cq[d->q_head].status == NNP_STATUS_SUCCESS;
		d->commands++;
		d->q_pending--;
		d->q_head = (d->q_head + 1) % FUZZ_Q_DEPTH;
		if (!d->q_head)
			d->q_phase ^= 1;
	}
	nnp_fw_reg_write(d->fw, NNP_DOORBELL(0) + NNP_DB_CQ_HEAD, d->q_head);
	return ok;
}

bool fuzz_queue_run(struct fuzz_dev *d)
{
	nnp_fw_run_queues(d->fw);
	return reap(d);
}

void fuzz_queue_drain(struct fuzz_dev *d)
{
	int round;

	/* A parked command ends within one clock step (its timeout). */
	for (round = 0; round < 8 && d->q_pending; round++) {
		if (!fuzz_queue_run(d))
			return;
		if (d->q_pending)
			fuzz_advance_ms(d, 3600 * 1000);
	}
}

bool fuzz_queue_post(struct fuzz_dev *d, struct nnp_hw_queue_cmd cmd)
{
	struct nnp_hw_queue_cmd *sq = (void *)host_at(d, FUZZ_Q_SQ, SQE_BYTES);

	if (d->q_pending == FUZZ_Q_DEPTH - 1)
		fuzz_queue_drain(d);
	if (d->q_pending == FUZZ_Q_DEPTH - 1)
		return false;
	cmd.cid = d->q_next_cid++;
	sq[d->q_tail] = cmd;
	d->q_tail = (d->q_tail + 1) % FUZZ_Q_DEPTH;
	d->q_pending++;
	nnp_fw_reg_write(d->fw, NNP_DOORBELL(0) + NNP_DB_SQ_TAIL, d->q_tail);
	return true;
}
