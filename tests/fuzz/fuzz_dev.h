/* SPDX-License-Identifier: MIT */
/*
 * A device for the fuzzers: one firmware-sim chip whose host memory and
 * device memory sit between inaccessible guard pages, and a host that
 * knows which memory it has named to the device.
 *
 * The device may touch only what the host named: its rings, the buffer of
 * the admin command it runs, and the pages of the keys it accepted, each
 * with the rights given. Every DMA is checked against that list, and after
 * each input every byte the device could not write must still hold the
 * pattern put there before. A violation aborts: libFuzzer reports it as a
 * crash, with the input that caused it.
 */
#ifndef NNP_FUZZ_DEV_H
#define NNP_FUZZ_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnp_fw.h"

#define FUZZ_HOST_BASE		0x100000ull
#define FUZZ_HOST_PAGES		64u
#define FUZZ_HOST_SIZE		(FUZZ_HOST_PAGES * NNP_HW_PAGE_SIZE)
#define FUZZ_DEV_SIZE		NNP_MEM_SIZE_MIN
#define FUZZ_NAMED_MAX		512

/* Where the host keeps its rings and the admin data buffer. */
#define FUZZ_AQ_SQ		FUZZ_HOST_BASE
#define FUZZ_AQ_CQ		(FUZZ_HOST_BASE + 0x1000)
#define FUZZ_AQ_DEPTH		4
#define FUZZ_AQ_DATA		(FUZZ_HOST_BASE + 0x2000)
#define FUZZ_AQ_DATA_SIZE	0x2000
#define FUZZ_Q_SQ		(FUZZ_HOST_BASE + 0x4000)
#define FUZZ_Q_CQ		(FUZZ_HOST_BASE + 0x5000)
#define FUZZ_Q_DEPTH		16
#define FUZZ_Q_ARM		(FUZZ_Q_CQ + 0x800)	/* its armed word */
/* Pages from here on are free for host keys. */
#define FUZZ_FIRST_KEY_PAGE	8u

#define FUZZ_R			1u	/* the device may read */
#define FUZZ_W			2u	/* the device may write */

/* The chip's id, as its IDENTIFY and its links' hellos give it. */
#define FUZZ_CHIP_ID		1u

/* The context whose queue the fuzzers feed; others only own memory. */
#define FUZZ_CTX		1u

struct fuzz_named {
	uint64_t addr;		/* host address, or device memory offset */
	uint64_t len;
	uint64_t *pages;	/* a host key: its pages instead (malloc'd) */
	uint32_t npages;
	unsigned int rights;
	uint32_t ctx;		/* 0: the host's own rings and buffers */
	uint32_t key;		/* the key it belongs to, or 0 */
	uint32_t queue;		/* 1 + the queue whose ring it is, or 0 */
	bool device;		/* in device memory */
	bool dead;		/* unnamed since: the device may not touch it */
};

struct fuzz_dev {
	struct nnp_fw *fw;
	uint8_t *host;		/* FUZZ_HOST_SIZE bytes at FUZZ_HOST_BASE */
	uint8_t *dev;		/* FUZZ_DEV_SIZE bytes */
	uint64_t now_ns;
	int mapped;		/* dma_map calls not yet given back */
	struct fuzz_named named[FUZZ_NAMED_MAX];
	unsigned int nnamed;
	/* The admin command running: its buffer is named meanwhile. */
	uint64_t aq_addr, aq_len;
	uint32_t aq_slot;
	/* The user queue the fuzzers feed (ctx 1, queue 0). */
	uint32_t q_tail, q_head, q_phase, q_pending;
	uint16_t q_next_cid;
	uint64_t commands;	/* completions read back */
	/* The remote peer's transport: packets sent, for the ICL fuzzer. */
	uint64_t icl_sent;
	/* A shared link's: chunks lent, and the peer's given back. */
	uint64_t icl_lent, icl_given_back;
	/* A counting link's: the peer's packets credited back, their bytes. */
	uint64_t icl_credited, icl_credited_bytes;
	/* fuzz_dev_seal(): what memory held, and the secret planted. */
	uint8_t *host_ref, *dev_ref;
	uint64_t secret_off, secret_len;
};

/* Make a booted chip with @ports ports, its admin queue up; aborts on failure. */
void fuzz_dev_init(struct fuzz_dev *d, uint16_t ports);
/* Check every byte outside writable named memory, then free the chip. */
void fuzz_dev_fini(struct fuzz_dev *d);

/*
 * Setup is over: from here every byte the device may not write must keep
 * what it holds now, checked by fuzz_dev_fini().
 */
void fuzz_dev_seal(struct fuzz_dev *d);
/*
 * Give [@off, @off + @len) of device memory, filled with a secret, to
 * context @ctx: fuzz_dev_fini() fails if the secret shows up anywhere
 * FUZZ_CTX may write. Returns the key naming it.
 */
uint32_t fuzz_dev_plant_secret(struct fuzz_dev *d, uint32_t ctx, uint64_t off,
			   uint64_t len);

/* Run one admin command, naming [addr, addr + len) to it; its status. */
uint16_t fuzz_admin(struct fuzz_dev *d, struct nnp_hw_admin_cmd cmd,
		    uint32_t *result);
/* Admin helpers; 0 on success. */
uint16_t fuzz_ctx_create(struct fuzz_dev *d, uint32_t ctx);
/* Register a key from @a (host: @npages pages at @pages); its id, or 0. */
uint32_t fuzz_key_register(struct fuzz_dev *d, const struct nnp_hw_key_args *a,
			   const uint64_t *pages, uint32_t npages);
uint16_t fuzz_key_unregister(struct fuzz_dev *d, uint32_t ctx, uint32_t key);
/* Queue 0 of @ctx at FUZZ_Q_*, depth FUZZ_Q_DEPTH. */
uint16_t fuzz_queue_create(struct fuzz_dev *d, uint32_t ctx);
uint16_t fuzz_queue_reset(struct fuzz_dev *d, uint32_t ctx);

/*
 * Post @cmd on queue 0 (its cid set here), running the queue first if the
 * ring is full; false if the queue stopped on an error (reset it).
 */
bool fuzz_queue_post(struct fuzz_dev *d, struct nnp_hw_queue_cmd cmd);
/*
 * Run queue 0 until it has nothing left to run (a command waiting for a
 * packet stays parked), and read its completions back (cids checked in
 * order); false if the queue stopped on a failed command.
 */
bool fuzz_queue_run(struct fuzz_dev *d);
/* The same, moving the clock past every wait, until nothing is pending. */
void fuzz_queue_drain(struct fuzz_dev *d);

/* Move the clock on by @ms and let the firmware run its timed work. */
void fuzz_advance_ms(struct fuzz_dev *d, uint64_t ms);

/* The byte the pattern puts at @i of host or device memory. */
static inline uint8_t fuzz_pattern(uint64_t i)
{
	return (uint8_t)(i * 131 + (i >> 8) * 7 + 0x5a);
}

/* Print @what and abort: libFuzzer's crash. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* NNP_FUZZ_DEV_H */
