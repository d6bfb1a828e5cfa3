/* SPDX-License-Identifier: MIT */
/*
 * libnnp: user-space access to nnp accelerators.
 *
 * Devices are numbered 0..count-1 in the order of their /dev/accel nodes.
 * Every call returns an nnp_result_t; nnp_strerror() turns one into text.
 * Handles are not shared between threads without the caller's own locking.
 */
#ifndef NNP_NNP_H
#define NNP_NNP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nnp_result {
	NNP_SUCCESS = 0,
	NNP_ERROR_INVALID_ARGUMENT,	/* a bad argument to a libnnp call */
	NNP_ERROR_NO_DRIVER,		/* the nnp kernel module is not loaded */
	NNP_ERROR_NO_DEVICE,		/* no such nnp device */
	NNP_ERROR_PERMISSION,		/* the device node is not accessible */
	NNP_ERROR_OUT_OF_MEMORY,
	NNP_ERROR_NOT_SUPPORTED,	/* the driver lacks the feature */
	NNP_ERROR_DEVICE_LOST,		/* the device was removed or reset */
	NNP_ERROR_IO,			/* any other failure of the system */
	NNP_ERROR_OUT_OF_DEVICE_MEMORY,	/* no free device memory range that large */
	NNP_ERROR_TIMEOUT,		/* the wait ended before the work did */
	NNP_ERROR_NOT_READY,		/* the work is still in progress */
	NNP_ERROR_COMMAND_FAILED,	/* the device refused a queued command */
	NNP_ERROR_BUSY,			/* every device queue is in use */
	NNP_ERROR_NO_PATH,		/* chips not joined by a usable link */
	NNP_ERROR_COMM_FAILED,		/* a collective or message of the communicator failed */
	NNP_ERROR_VERSION,		/* the driver's interface is not one libnnp speaks */
	NNP_IN_PROGRESS,		/* a non-blocking communicator is still being made (0.9) */
	NNP_ERROR_MISMATCH,		/* the ranks called a collective differently (0.9) */
} nnp_result_t;

/* A static, human-readable description of @result (never NULL). */
const char *nnp_strerror(nnp_result_t result);

/*
 * What the calling thread's last failed libnnp call found, in words: the
 * device, rank, link, peer address or ring step (e.g. "rank 2: no link
 * from port 1 of rank 2 (chip 5) to rank 3 (chip 7)"). "" until a call
 * of this thread fails; a later success leaves it alone. Valid until this
 * thread's next libnnp call. NNP_DEBUG=WARN prints the same text.
 */
const char *nnp_get_last_error(void);

/* ---- versions: major << 16 | minor << 8 | patch ------------------------ */

#define NNP_VERSION(major, minor, patch) \
	(((major) << 16) | ((minor) << 8) | (patch))
#define NNP_VERSION_MAJOR(v)	(((v) >> 16) & 0xffff)
#define NNP_VERSION_MINOR(v)	(((v) >> 8) & 0xff)
#define NNP_VERSION_PATCH(v)	((v) & 0xff)

/* The libnnp these headers belong to (compare with nnp_get_version()). */
#define NNP_VERSION_CODE	NNP_VERSION(0, 9, 0)

/* The version of the libnnp running, as NNP_VERSION(); new in 0.3.0. */
nnp_result_t nnp_get_version(int *version);

typedef struct nnp_device nnp_device_t;

/*
 * Every struct libnnp fills (struct nnp_device_info, nnp_port_info,
 * nnp_device_model, nnp_device_counters, nnp_stream_error, nnp_event_t)
 * or reads (nnp_comm_config_t) starts with size, since 0.9: the caller sets it to
 * the struct's sizeof as the program is built (struct nnp_device_info
 * info = { .size = sizeof(info) }), and libnnp reads and writes only
 * what it covers, so that members added later leave programs built before
 * them working. A size libnnp does not know is NNP_ERROR_INVALID_ARGUMENT
 * naming it. Programs built against 0.8, before size, keep the calls they
 * were linked with (their symbol versions), which fill the old layouts.
 */

/* Device capability bits (struct nnp_device_info.caps) */
#define NNP_DEVICE_CAP_ADMIN_QUEUE	(1ull << 0)
#define NNP_DEVICE_CAP_USER_QUEUES	(1ull << 1)
#define NNP_DEVICE_CAP_ICL		(1ull << 2)
#define NNP_DEVICE_CAP_COLLECTIVES	(1ull << 3)

struct nnp_device_info {
	size_t size;		/* sizeof(struct nnp_device_info), set by the caller */
	char path[64];		/* device node, e.g. /dev/accel/accel0 */
	uint32_t chip_id;
	uint32_t hw_version;	/* major << 16 | minor */
	uint32_t fw_version;	/* major << 16 | minor << 8 | patch */
	uint32_t num_icl_ports;
	uint64_t mem_size;	/* bytes of device memory */
	uint64_t caps;		/* NNP_DEVICE_CAP_* */
	uint32_t num_queues;
	uint32_t fw_heartbeat;
	char serial[16];
	char fw_build[32];
};

/*
 * Number of nnp devices: the accel devices that sysfs says nnp.ko drives
 * and whose node is in /dev/accel (none is opened to find them; a
 * container given some of the nodes counts only those, in node order).
 * NNP_ERROR_NO_DRIVER if the module is not loaded, NNP_ERROR_NO_DEVICE if
 * it is but no device is present, none has a node (NNP_DEBUG=WARN says
 * so) or NNP_VISIBLE_DEVICES hides them all.
 *
 * NNP_VISIBLE_DEVICES=2,0 (as CUDA_VISIBLE_DEVICES) shows only the listed
 * devices, renumbered in the list's order: index 0 is then the third
 * device in node order. The list ends at the first entry that is not a
 * decimal index, names no device or repeats an earlier one; the entries
 * before it stand (NNP_DEBUG=WARN says which entry ended it). Set but
 * empty: no device.
 */
nnp_result_t nnp_device_count(int *count);

/*
 * Open device @index (0..count-1), or the device node at @path.
 * NNP_ERROR_VERSION if the driver's interface major is not the one this
 * libnnp speaks or its minor is older than libnnp needs (the last error
 * names both versions).
 */
nnp_result_t nnp_device_open(int index, nnp_device_t **dev);
nnp_result_t nnp_device_open_path(const char *path, nnp_device_t **dev);
void nnp_device_close(nnp_device_t *dev);

nnp_result_t nnp_device_get_info(nnp_device_t *dev,
				 struct nnp_device_info *info);

/* Inter-chip link ports */
#define NNP_MAX_PORTS		16
#define NNP_LINK_WIRED		(1u << 0)	/* the port has a peer */
#define NNP_LINK_UP		(1u << 1)	/* and the link is up */

struct nnp_port_info {
	size_t size;		/* ports[0]'s: sizeof(struct nnp_port_info), by the caller */
	uint32_t state;		/* NNP_LINK_* */
	uint32_t peer_chip;	/* if wired: the chip id at the other end */
	uint32_t peer_port;	/* and its port */
	uint64_t tx_bytes;
	uint64_t rx_bytes;
	uint64_t tx_packets;
	uint64_t rx_packets;
	uint64_t errors;	/* sends that found the link down */
};

/*
 * Fill up to @max entries of @ports, each of ports[0].size bytes (its
 * size set likewise); *@count gets the device's port count.
 */
nnp_result_t nnp_device_get_ports(nnp_device_t *dev, struct nnp_port_info *ports,
				  unsigned int max, unsigned int *count);

/*
 * Placement: which of the free devices a job of @rows x @cols chips
 * should run on, so that their links that are up join them as a ring
 * (@rows or @cols 1) or a @rows x @cols torus, each row and each column a
 * ring (a dimension of 2 chips needs two links). @free_devs lists the
 * @nfree free devices by index (NULL: every device). @picked gets
 * rows x cols device indices: in ring order, so that rank i runs on
 * picked[i] (NNP_VISIBLE_DEVICES), or the torus's row by row. The
 * smallest group of joined free devices that can hold the job is used
 * first, leaving larger groups whole. NNP_ERROR_NO_DEVICE if fewer are
 * free, NNP_ERROR_NO_PATH if their links allow no such ring or torus;
 * nnp_get_last_error() says why. Since 0.7.
 */
nnp_result_t nnp_topo_pick(const int *free_devs, int nfree, int rows, int cols,
			   int *picked);

/*
 * The chips a routed message crosses from device @from to device @to when
 * every device of this host is a rank of one communicator (rank i on
 * device i), as libnnp routes it over the links up now: the devices on
 * the way, @to last, into @path (room for @max); *@hops their count (0
 * when @from is @to). NNP_ERROR_NO_PATH if no path of up links joins
 * them, NNP_ERROR_INVALID_ARGUMENT for a device out of range or a @path
 * too short. Since 0.8.
 */
nnp_result_t nnp_topo_route(int from, int to, int *path, int max, int *hops);

/*
 * The device's modeled clock (docs/architecture.md, "The modeled clock"):
 * what all the work on it since it was last reset would have taken on an
 * NNP-T, in modeled ns, the same whatever the host's load; the work of
 * every process counts. A busy time over @now_ns is how much of the time
 * that engine or link direction was in use.
 */
struct nnp_device_model {
	size_t size;		/* sizeof(struct nnp_device_model), set by the caller */
	uint64_t now_ns;	/* the device's modeled time */
	uint64_t commands;	/* stream commands run to their end */
	uint64_t hbm_busy_ns;	/* device memory: copies, fills, reductions */
	uint64_t pcie_busy_ns;	/* transfers to and from host memory */
	uint32_t num_ports;	/* entries of port_tx_busy_ns in use */
	uint64_t port_tx_busy_ns[NNP_MAX_PORTS];	/* each port's sending side */
};

/*
 * Read it into @model. Since 0.5; NNP_ERROR_NOT_SUPPORTED from a driver
 * or device that predates it (the last error says which).
 */
nnp_result_t nnp_device_get_model(nnp_device_t *dev,
				  struct nnp_device_model *model);

/*
 * What the device's user queues did since it was last reset, all
 * processes together: what a runtime reads to see where its bytes went
 * (a collective on the device adds nothing to host_dma_bytes).
 */
struct nnp_device_counters {
	size_t size;			/* sizeof(struct nnp_device_counters), by the caller */
	uint64_t host_dma_bytes;	/* read from or written to host memory */
	uint64_t local_bytes;		/* copied or filled within device memory */
	uint64_t cmds_completed;	/* commands that succeeded */
	uint64_t cmds_failed;		/* commands that failed */
	uint64_t mem_used;		/* device memory held by objects now */
	uint64_t mem_objects;		/* memory objects alive now */
	/*
	 * Since 0.9: read from or written to another device's memory, imported
	 * (nnp_mem_import()), not in host_dma_bytes; 0 on a device before
	 * hardware interface 1.24, which counts them as host bytes.
	 */
	uint64_t peer_dma_bytes;
};

/* Read them into @counters. Since 0.6. */
nnp_result_t nnp_device_get_counters(nnp_device_t *dev,
				     struct nnp_device_counters *counters);

/*
 * Device resets since the driver bound to it, and the last one's reason:
 * "none", "heartbeat", "job-timeout", "admin", "fw-halted", "user", "pci"
 * (a PCI function reset) or "suspend" (a system sleep). A reset loses
 * every context open at the time: every later call through those handles
 * returns NNP_ERROR_DEVICE_LOST; open the device again.
 */
nnp_result_t nnp_device_get_resets(nnp_device_t *dev, uint32_t *count,
				   const char **last_reason);
/*
 * Reset the device now (root only: NNP_ERROR_PERMISSION otherwise);
 * returns once it is up again. @dev itself is then lost.
 */
nnp_result_t nnp_device_reset(nnp_device_t *dev);

/* The device's file descriptor, for poll() and for the driver's ioctls. */
int nnp_device_fd(const nnp_device_t *dev);

/*
 * Events (0.9; driver 1.10, COMM_FAILED and LINK from hardware 1.17):
 * what happened to the device, told as it happens rather than at the
 * next call. poll() nnp_device_fd() for POLLIN, or wait in
 * nnp_device_next_event().
 */
typedef enum {
	NNP_DEVICE_EVENT_RESET = 1,	/* the device was reset: @dev is lost */
	NNP_DEVICE_EVENT_COMM_FAILED,	/* a communicator of @dev failed */
	NNP_DEVICE_EVENT_LINK,		/* a port's link went down or came up */
} nnp_device_event_kind_t;

/* nnp_device_event.port of a failure a command of this chip met. */
#define NNP_EVENT_NO_PORT	0xffffu

struct nnp_device_event {
	size_t size;		/* sizeof(struct nnp_device_event), by the caller */
	nnp_device_event_kind_t kind;
	/* Events of @dev dropped, oldest first, before this one. */
	uint32_t lost;
	uint64_t time_ns;	/* CLOCK_MONOTONIC, when the driver learnt of it */
	/* RESET: the reason and the number, as nnp_device_get_resets() says. */
	const char *reset_reason;
	uint32_t reset_count;
	/*
	 * COMM_FAILED: the communicator (nnp_comm_id()), and why, as traces
	 * name the device's status: "link_down", "aborted", "peer_timeout",
	 * "mismatch", "peer_left", ...
	 */
	int comm_id;
	const char *why;
	/*
	 * LINK: the port; COMM_FAILED: the port an abort or a drop came in
	 * on, NNP_EVENT_NO_PORT if a command of this chip met the failure.
	 */
	unsigned int port;
	uint32_t link_state;	/* LINK: NNP_LINK_* bits now */
};

#define NNP_DEVICE_EVENT_INIT	{ .size = sizeof(struct nnp_device_event) }

/*
 * The next event of @dev, oldest first, into @ev; waits up to
 * @timeout_ms (0: not at all, -1: for ever). NNP_ERROR_TIMEOUT if none
 * came, NNP_ERROR_NOT_SUPPORTED from a driver before 1.10. Works on a
 * lost @dev too: its RESET is the event that says so. A handle's events
 * go to whichever thread asks first.
 */
nnp_result_t nnp_device_next_event(nnp_device_t *dev,
				   struct nnp_device_event *ev, int timeout_ms);

/*
 * Where each communicator of the device stands, for a job that hangs:
 * whose it is, the collective it is in, and whom that waits for. Its
 * collectives are numbered from 1 in the order the chip started them,
 * alike on every rank of a correct program, so a rank whose @calls is
 * behind its peers' has not yet called the collective they wait in.
 */
#define NNP_COMM_STATE_NONE	0xffffffffu	/* no such rank or port */

struct nnp_comm_state {
	size_t size;		/* sizeof(struct nnp_comm_state), by the caller */
	int comm_id;		/* as nnp_comm_id() says */
	uint32_t pid;		/* its process (in the caller's pid namespace); 0: gone */
	uint32_t uid;		/* the effective uid that opened its device */
	char task[16];		/* its process's command name */
	char name[32];		/* its configured name; "" for none */
	/* rank NNP_COMM_STATE_NONE: a transit of a split's ring (driver 1.12) */
	uint32_t rank, nranks;
	/* Nonzero: the device said what follows (hardware 1.18 on); else 0s, NULLs. */
	int known;
	uint64_t epoch;		/* names it on the links, alike on every rank */
	const char *failed;	/* its first failure ("link_down", ...); NULL: none */
	uint32_t calls;		/* collectives started */
	uint32_t calls_done;	/* of them ended, whatever their result */
	uint32_t messages;	/* sends and receives ended */
	uint64_t bytes;		/* count x element size of those that succeeded */
	/*
	 * Its operation in flight, the collective started first of those
	 * still running, else a message or a group: "allreduce", "send",
	 * "group", ...; NULL for none. @dtype and @redop name its type and
	 * reduction (NULL: none), @count its elements (send, receive: bytes;
	 * group: members), @peer its root or routed peer.
	 */
	const char *op;
	const char *dtype;
	const char *redop;
	uint64_t count;
	uint32_t peer;
	/* Whom it waits for: the port, the rank there if known, how long. */
	uint32_t wait_port;
	uint32_t wait_rank;
	uint64_t wait_ns;
};

/*
 * Since 0.9: the device's communicators, as many as @max of @comms (each
 * comms[0].size bytes), into @comms; their number into *@count. The
 * caller sees those of the processes running under its effective uid;
 * with CAP_SYS_ADMIN, everyone's: *@hidden (NULL: not asked) counts the
 * others. NNP_ERROR_NOT_SUPPORTED from a driver before 1.11.
 */
nnp_result_t nnp_device_get_comms(nnp_device_t *dev, struct nnp_comm_state *comms,
				  unsigned int max, unsigned int *count,
				  unsigned int *hidden);

/*
 * The job's view, since 0.9: where every rank of a job made by a
 * rendezvous at NNP_COMM_ID stands, asked of rank 0, which serves the
 * rendezvous and, once every rank is in, keeps each rank's connection to
 * ask it. What `nnptool job` prints.
 */
typedef enum {
	/* Its connection to rank 0 closed: it exited, was killed, or destroyed its communicator. */
	NNP_JOB_RANK_GONE,
	NNP_JOB_RANK_SILENT,	/* connected, but no answer within 2 s */
	NNP_JOB_RANK_ANSWERED,
} nnp_job_rank_heard_t;

struct nnp_job_rank {
	size_t size;		/* sizeof(struct nnp_job_rank), by the caller */
	uint32_t rank;
	nnp_job_rank_heard_t heard;
	char addr[64];		/* its connection's address, as rank 0 saw it */
	uint32_t chip;		/* its device's chip id, as it joined */
	/* ANSWERED: */
	char host[64];		/* its host name */
	uint32_t pid;
	int has_comm;		/* nonzero: its communicator stands as @comm says */
	struct nnp_comm_state comm;
};

/*
 * Ask the job whose rendezvous is at @where ("host:port", as NNP_COMM_ID
 * names it) and whose secret is @secret (NNP_COMM_SECRET's) where its
 * ranks stand: up to @max entries of @ranks (each ranks[0].size bytes), by
 * rank; *@nranks the job's size, *@epoch its epoch (NULL: not asked).
 * Answers within 5 s. Nothing of @secret crosses the wire. Fails with
 * NNP_ERROR_INVALID_ARGUMENT for an address or secret of the wrong form,
 * NNP_ERROR_IO when nothing there holds @secret (a wrong secret, another
 * job), NNP_ERROR_TIMEOUT or NNP_ERROR_IO when nothing answers (the job
 * ended, rank 0 went, a wrong address); the last error says which.
 */
nnp_result_t nnp_job_view(const char *where, const char *secret,
			  struct nnp_job_rank *ranks, unsigned int max,
			  unsigned int *nranks, uint64_t *epoch);

/* ---- memory ---------------------------------------------------------- */

typedef struct nnp_mem nnp_mem_t;

enum nnp_mem_kind {
	NNP_MEM_DEVICE,		/* device memory */
	NNP_MEM_HOST,		/* host memory the driver allocates */
	NNP_MEM_USER,		/* the caller's memory, registered */
	NNP_MEM_IMPORTED,	/* a dma-buf, imported (since 0.9) */
};

/* Flags of nnp_mem_alloc() and nnp_mem_register() */
#define NNP_MEM_READ_ONLY	(1u << 0)	/* the device may only read it */

/* Allocate @size bytes of device or host memory (zeroed, never another
 * process's leftovers). */
nnp_result_t nnp_mem_alloc(nnp_device_t *dev, enum nnp_mem_kind kind,
			   size_t size, unsigned int flags, nnp_mem_t **mem);
/* Make [@ptr, @ptr + @size) usable by the device; pinned until freed. */
nnp_result_t nnp_mem_register(nnp_device_t *dev, void *ptr, size_t size,
			      unsigned int flags, nnp_mem_t **mem);
/*
 * Make the dma-buf @fd memory of @dev (since 0.9, driver 1.13): a udmabuf,
 * a buffer of the system dma-buf heap, or memory of this or another nnp
 * device given by nnp_mem_export(). Commands read and write it as any
 * memory; a copy between it and @dev's own memory runs on @dev's copy
 * engine, device to device when it is another device's memory. It holds the dma-buf until
 * freed (close @fd when you like); map @fd to see it from the CPU.
 * NNP_ERROR_INVALID_ARGUMENT for an @fd that is not a dma-buf, or one over
 * 2 GiB or not in whole pages; NNP_ERROR_NOT_SUPPORTED for another exporter
 * than these; NNP_ERROR_DEVICE_LOST when its exporter is gone. When the
 * exporter takes the memory back (an nnp device does when unbound or
 * reset), commands naming it fail; import the dma-buf again to go on.
 */
nnp_result_t nnp_mem_import(nnp_device_t *dev, int fd, unsigned int flags,
			    nnp_mem_t **mem);
/*
 * A new dma-buf file descriptor of @mem (since 0.9), for another device,
 * another process or nnp_mem_import(); the caller closes it. Device memory
 * is shared as its range of the device's BAR, host memory as its pages.
 */
nnp_result_t nnp_mem_export(nnp_mem_t *mem, int *fd);
/* Free; waits for nothing: free only memory no queued command uses. */
void nnp_mem_free(nnp_mem_t *mem);
/*
 * Device memory of @dev not held by any memory object (of any process)
 * in *@free_bytes, and all of it in *@total_bytes. Objects take whole pages
 * (sysconf(_SC_PAGESIZE)); a free total may be split in smaller ranges.
 * New in 0.3.0.
 */
nnp_result_t nnp_mem_get_info(nnp_device_t *dev, uint64_t *free_bytes,
			      uint64_t *total_bytes);
/* The CPU's view of @mem (device memory: write-combined, slow to read). */
nnp_result_t nnp_mem_map(nnp_mem_t *mem, void **ptr);
size_t nnp_mem_size(const nnp_mem_t *mem);
enum nnp_mem_kind nnp_mem_kind(const nnp_mem_t *mem);

/* ---- streams: one device queue each, submitted to with no syscall ------ */

typedef struct nnp_stream nnp_stream_t;

nnp_result_t nnp_stream_create(nnp_device_t *dev, nnp_stream_t **stream);
/* Waits for the stream's work, then frees it. */
void nnp_stream_destroy(nnp_stream_t *stream);

/* Copy @len bytes from @src + @src_off to @dst + @dst_off, in stream order. */
nnp_result_t nnp_memcpy_async(nnp_stream_t *stream, nnp_mem_t *dst,
			      size_t dst_off, nnp_mem_t *src, size_t src_off,
			      size_t len);
/* Set @len bytes at @dst + @off to @byte, in stream order. */
nnp_result_t nnp_memset_async(nnp_stream_t *stream, nnp_mem_t *dst,
			      size_t off, uint8_t byte, size_t len);

/*
 * When the stream reaches it, the device writes its clock in ns, a
 * little-endian 64-bit word, at @dst + @off. The clock is the device's
 * modeled time (docs/architecture.md, "The modeled clock"): what the work
 * before it would have taken on an NNP-T, the same whatever the host's
 * load, not the host's time. Two stamps around some work time it on the
 * device; the second one's command overhead (2 us modeled) is part of it.
 * Since 0.4.
 */
nnp_result_t nnp_timestamp_async(nnp_stream_t *stream, nnp_mem_t *dst,
				 size_t off);

/*
 * Wait for everything submitted so far. NNP_ERROR_COMMAND_FAILED when the
 * device refused a command: the stream is stopped (nothing after it ran)
 * until nnp_stream_reset(); nnp_stream_error() says which and why. No
 * timeout of its own: a hung device is reset by the driver's watchdog
 * (NNP_ERROR_DEVICE_LOST), and a collective waits for a late peer as long
 * as its communicator's timeout (NNP_COLL_TIMEOUT_S) says.
 */
nnp_result_t nnp_stream_synchronize(nnp_stream_t *stream);

struct nnp_stream_error {
	size_t size;		/* sizeof(struct nnp_stream_error), set by the caller */
	uint64_t seq;		/* the failed command's sequence number */
	uint16_t status;	/* the device's status code (docs/hw-interface.md) */
	const char *what;	/* the status as text */
};
/* The stream's first failure since create or reset: NNP_SUCCESS if none. */
nnp_result_t nnp_stream_error(const nnp_stream_t *stream,
			      struct nnp_stream_error *err);
/* Drop what was queued after a failure and make the stream usable again. */
nnp_result_t nnp_stream_reset(nnp_stream_t *stream);

/*
 * A point in a stream: done once everything submitted before it is.
 * nnp_event_record() fills it, once its size is set (NNP_EVENT_INIT);
 * it names the stream, so it is good only while the stream is.
 */
typedef struct nnp_event {
	size_t size;		/* sizeof(nnp_event_t), set by the caller */
	nnp_stream_t *stream;
	uint64_t seq;
} nnp_event_t;
#define NNP_EVENT_INIT	{ sizeof(nnp_event_t), NULL, 0 }

nnp_result_t nnp_event_record(nnp_stream_t *stream, nnp_event_t *event);
/* NNP_SUCCESS if done, NNP_ERROR_NOT_READY if not yet. */
nnp_result_t nnp_event_query(const nnp_event_t *event);
/* Wait for @event, sleeping in the driver; @timeout_ns < 0: no limit. */
nnp_result_t nnp_event_synchronize(const nnp_event_t *event, int64_t timeout_ns);

/* ---- collectives: NCCL's model, run on the devices over their links ---- */

typedef struct nnp_comm nnp_comm_t;

/*
 * NNP_UINT8 (libnnp 0.9, hardware interface 1.15) is bytes: broadcast,
 * allgather, alltoall(v), gather, scatter, send and recv move data of any
 * type as that many bytes; allreduce, reduce-scatter and reduce refuse it
 * (NNP_ERROR_INVALID_ARGUMENT), as an older device refuses it everywhere
 * (NNP_ERROR_NOT_SUPPORTED).
 */
typedef enum nnp_dtype {
	NNP_FLOAT32, NNP_FLOAT16, NNP_BFLOAT16, NNP_INT32, NNP_FLOAT64, NNP_INT64,
	NNP_UINT8,
} nnp_dtype_t;

typedef enum nnp_redop {
	NNP_SUM, NNP_PROD, NNP_MIN, NNP_MAX, NNP_AVG,
} nnp_redop_t;

/*
 * Collectives run as a ring through every rank's chip over links that are
 * up. The ring follows rank order where the links allow it and is searched
 * for otherwise (a 2D torus, say); NNP_ERROR_NO_PATH when no ring exists.
 */

/*
 * Names one job to all of its ranks: made once, passed to every rank.
 * Opaque; it begins with its format's version, and an id of another
 * format (another libnnp made it) is refused by name.
 */
#define NNP_UNIQUE_ID_BYTES	128
typedef struct nnp_unique_id {
	char internal[NNP_UNIQUE_ID_BYTES];
} nnp_unique_id_t;

/*
 * Make a unique id for a new job, on one rank (usually rank 0), then hand
 * it to the others (MPI_Bcast, say). The calling process serves the job's
 * rendezvous on a TCP port of one address (that address only) until every
 * rank has joined: the first up interface's IPv4 address, else its IPv6
 * one, among the interfaces NNP_SOCKET_IFNAME lets through (NCCL's syntax:
 * "eth,ib" prefixes, "^docker" all but, "=eth0" exact; unset: all but
 * loopback) and of NNP_SOCKET_FAMILY (AF_INET or AF_INET6) if set;
 * loopback if there is none. So
 * it must live until nnp_comm_init_rank() returns everywhere. The id holds
 * a random secret that every rank shows the rendezvous first: whoever has
 * the id can join the job, so keep it among the job's processes.
 *
 * NNP_COMM_ID=host:port ([addr]:port for IPv6) names the address instead
 * (rank 0 serves it there, bound to that address only; all ranks must see
 * it, and every process makes the same id itself). Then NNP_COMM_SECRET,
 * 16 to 64 characters and the same on every rank, is the job's secret
 * (e.g. from openssl rand -hex 16): without it, or if it is shorter or
 * longer, this fails with NNP_ERROR_INVALID_ARGUMENT and says so on stderr.
 */
nnp_result_t nnp_get_unique_id(nnp_unique_id_t *id);

/*
 * Make @dev rank @rank of the @nranks-rank job @id; blocks until every
 * rank has called it (NNP_ERROR_TIMEOUT after NNP_COMM_TIMEOUT_S seconds,
 * default 60). NNP_ERROR_INVALID_ARGUMENT if the rendezvous refuses the
 * rank (taken already, or another @nranks than the job's), NNP_ERROR_IO
 * if it drops the connection (a secret other than the job's) or answers
 * what no root sends.
 */
nnp_result_t nnp_comm_init_rank(nnp_comm_t **comm, int nranks,
				const nnp_unique_id_t *id, int rank,
				nnp_device_t *dev);

/*
 * A communicator's options (since 0.9), given to
 * nnp_comm_init_rank_config(). Start from NNP_COMM_CONFIG_INIT, which
 * sets size to the struct's size as the program is built: a later libnnp
 * that adds members reads only those the size covers, and gives the
 * others their defaults, so a program built against 0.9 keeps working.
 * A size this libnnp does not know (smaller than the first version's, or
 * larger than its own) is NNP_ERROR_INVALID_ARGUMENT.
 */
typedef struct nnp_comm_config {
	size_t size;		/* sizeof(nnp_comm_config_t), as built */
	/*
	 * How long each wait of the communicator's collectives and messages
	 * for a late peer may be, in ms: -1 as NNP_COLL_TIMEOUT_S says (30
	 * minutes by default), 0 for ever (a runtime whose watchdog calls
	 * nnp_comm_abort()), else 1 to 4294967294.
	 */
	long long timeout_ms;
	/*
	 * NULL, or up to NNP_COMM_NAME_MAX - 1 letters, digits, '.', '-' and
	 * '_' (as "tp.stage2"): the communicator's name in errors, traces and
	 * debug lines. The same on every rank.
	 */
	const char *name;
	/*
	 * 1 (the default): nnp_comm_init_rank_config() returns once the
	 * communicator is made. 0: it returns NNP_IN_PROGRESS at once, with
	 * *comm set, and makes it on a thread of its own, as NCCL's
	 * config.blocking = 0. nnp_comm_get_async_error() then gives
	 * NNP_IN_PROGRESS until it is made (NNP_SUCCESS) or failed (the
	 * failure, the last error saying why); every other call on it returns
	 * the same until then, nothing done. nnp_comm_abort() or
	 * nnp_comm_destroy() ends it where it is (within 100 ms; a
	 * rendezvous this rank serves runs on to its deadline for the
	 * others). Since 0.9.
	 */
	int blocking;
	/*
	 * -1 (the default): as NNP_GROUP_FUSION says when the communicator is
	 * made. 1: the allreduces of a group on it that are alike (one type,
	 * op and count, 64 KiB or less each) run as one on a device of
	 * hardware interface 1.25 or later (on an older one, each on its
	 * own); every rank must then group them alike, or its collectives
	 * fail NNP_ERROR_MISMATCH. 0: each runs on its own, as NCCL's do. A
	 * communicator split or shrunk from this one keeps the setting, but
	 * for a shrink's own config. Since 0.9.
	 */
	int group_fusion;
} nnp_comm_config_t;

#define NNP_COMM_NAME_MAX	32
#define NNP_COMM_CONFIG_INIT	{ sizeof(nnp_comm_config_t), -1, NULL, 1, -1 }

/*
 * nnp_comm_init_rank() with the options in @config (NULL: the defaults),
 * as NCCL's ncclCommInitRankConfig. A bad member is
 * NNP_ERROR_INVALID_ARGUMENT, the last error naming it, before anything
 * else is done. Since 0.9.
 */
nnp_result_t nnp_comm_init_rank_config(nnp_comm_t **comm, int nranks,
				       const nnp_unique_id_t *id, int rank,
				       nnp_device_t *dev,
				       const nnp_comm_config_t *config);

/* One process driving @n devices: comms[i] is rank i on devs[i]. */
nnp_result_t nnp_comm_init_all(nnp_device_t **devs, int n, nnp_comm_t **comms);
/*
 * NCCL's ncclCommSplit: make sub-communicators of @parent. Every rank of
 * @parent calls it (a collective: from its own thread when one process
 * drives several ranks); the ranks that give the same @color become one
 * new communicator, ranked by @key, then by their rank in @parent, in
 * *@newcomm. A rank with a negative @color (NNP_SPLIT_NOCOLOR) takes
 * part in the exchange only and gets NULL; so does one whose @newcomm is
 * NULL, which then returns NNP_ERROR_INVALID_ARGUMENT. Since 0.6.
 *
 * A new communicator is independent of @parent and of its siblings: an
 * epoch of its own on the links (its traffic never mixes with theirs),
 * its own ring over the links that are up between its chips (found as
 * nnp_comm_init_rank() finds one: a row or a column of a torus works), and
 * it outlives @parent (destroy or abort one, the others go on). It waits
 * for a late peer as long as @parent does (NNP_COLL_TIMEOUT_S when @parent
 * was made) and groups allreduces as @parent's config said (where it said
 * -1, NNP_GROUP_FUSION is read again, as NNP_ALGO is).
 *
 * Since 0.9, chips that share no link with their ring neighbours (a
 * pipeline's stages on every other chip, a torus's diagonal) still make
 * one, on a driver of interface 1.12 or later: each hop of its ring then
 * crosses chips of other ranks of @parent, whatever their color, which
 * pass its packets on and relay its messages without a host copy (a
 * "transit": nnptool ps shows it as rank "-"). A transit is held by
 * @parent on its rank and ends with it: keep @parent on every rank until
 * the communicators split from it are destroyed. If a transit ends
 * first, or a link on its hop goes down, the communicator fails on its
 * ranks (NNP_ERROR_COMM_FAILED) rather than wait. Such a ring runs every
 * operation; its collectives use one port pair (no second pair, no
 * torus), so a ring of links is faster where there is one.
 *
 * The ranks exchange colors, keys and their chips' ports with two
 * allgathers of @parent on a stream of the split's own (the secret of
 * @parent's job is not used or sent): synchronize the streams with work
 * of @parent first, so that every rank runs its collectives in the same
 * order, and make sure no other thread is inside a call that takes
 * @parent. A rank that never calls it holds the others up to @parent's
 * timeout, then they fail with NNP_ERROR_COMM_FAILED.
 *
 * Every rank of @parent returns, and all the ranks of one color agree:
 * NNP_ERROR_NO_PATH on each when its chips form no ring of up links nor
 * one over transits, the last error naming the color and why no ring
 * over transits was found ("nnp_comm_split: color 1: no ring of links,
 * nor one over transits: no ring over the 3 ranks: no path from rank 2
 * (chip 2) to rank 0 (chip 0) but through other ranks", or a chip that
 * would pass two hops on different ports);
 * NNP_ERROR_COMM_FAILED when another of them, or a transit of its ring,
 * could not make its part (the last error names it, and why: a transit's
 * driver before interface 1.12 says NNP_ERROR_NOT_SUPPORTED) or the
 * exchange over @parent failed.
 */
#define NNP_SPLIT_NOCOLOR	(-1)
nnp_result_t nnp_comm_split(nnp_comm_t *parent, int color, int key,
			    nnp_comm_t **newcomm);
/*
 * NCCL's ncclCommShrink: after a rank or its chip is lost, the others go
 * on without it. Every rank of @parent not among the @nexclude ranks of
 * @exclude calls it (the excluded ones do not); they become the ranks of
 * a new communicator in *@newcomm, in @parent's rank order (parent ranks
 * 0, 1 and 3 of 4 without 2 are new ranks 0, 1 and 2), with the options
 * of @config (NULL, or a member left at its default: @parent's timeout,
 * name and group_fusion). Since 0.9.
 *
 * Nothing goes over @parent, whose ring may run through the lost chip:
 * each survivor plans the same ring from the chips and links @parent was
 * planned on, under an epoch of its own drawn from @parent's, the set
 * excluded and how many shrinks of @parent came before; then the new
 * ring's first allgather checks that every survivor made its part. So
 * the survivors must exclude the same set (in any order) and shrink
 * @parent the same number of times: a survivor that excluded another set
 * is on no ring with the others, and every one of them fails with
 * NNP_ERROR_COMM_FAILED at the new communicator's timeout, as when a
 * survivor never calls. NNP_ERROR_NO_PATH, on every survivor, when the
 * survivors' chips form no ring of links (a ring of chips missing one is
 * a line: on a full fabric or where a ring is left, it works).
 *
 * @parent is left as it was (failed or not): destroy it when its streams
 * are reset. An @exclude that is NULL while @nexclude is not 0, a
 * negative @nexclude, a rank listed that is out of range, listed twice or
 * the caller's own, a bad @config member, or no @parent or @newcomm:
 * NNP_ERROR_INVALID_ARGUMENT on that rank, the last error naming it, and
 * nothing is made.
 */
nnp_result_t nnp_comm_shrink(nnp_comm_t *parent, const int *exclude, int nexclude,
			     const nnp_comm_config_t *config, nnp_comm_t **newcomm);
/*
 * Free @comm. A collective or message of it still on the device runs on
 * to its end: synchronize its streams first, or abort it instead.
 */
void nnp_comm_destroy(nnp_comm_t *comm);
/*
 * NCCL's ncclCommAbort: free @comm and end its collectives and messages
 * in flight on the device at once (their streams stop with ABORTED, see
 * nnp_stream_error()); the abort is passed down the ring, so the ranks
 * waiting on this one stop too, and a rank that has yet to start the
 * collective fails it when it does. It may be called from another thread
 * while one is blocked in nnp_stream_synchronize() (or an event wait) on
 * a stream the communicator uses: that call returns
 * NNP_ERROR_COMMAND_FAILED. Not while another thread is inside a call
 * that takes @comm itself. To go on, reset the streams and make a new
 * communicator (every rank: nnp_comm_init_rank() with a new id).
 * NNP_ERROR_NOT_SUPPORTED if the device predates it (@comm is freed
 * anyway, as by nnp_comm_destroy()).
 */
nnp_result_t nnp_comm_abort(nnp_comm_t *comm);
/*
 * NCCL's ncclCommGetAsyncError, for a watchdog thread polling while
 * others wait: *@async_error becomes NNP_SUCCESS while no collective or
 * message of @comm has failed, NNP_ERROR_COMM_FAILED once one has (a peer
 * past NNP_COLL_TIMEOUT_S, a link down, another rank's failure or abort;
 * nnp_stream_error() on its stream says which). Once failed,
 * nnp_get_last_error() says why, as NCCL's ncclGetLastError(): the
 * failure this chip met ("link_down", "peer_timeout", "peer_left",
 * "mismatch", or "aborted" when another rank's failure reached it
 * first), which a stream command ending ABORTED after it does not name.
 * Safe to call from any thread while @comm lives. Returns the call's own
 * result.
 */
nnp_result_t nnp_comm_get_async_error(nnp_comm_t *comm, nnp_result_t *async_error);
int nnp_comm_rank(const nnp_comm_t *comm);
int nnp_comm_count(const nnp_comm_t *comm);
/*
 * The driver's id of @comm on its device, as NNP_DEVICE_EVENT_COMM_FAILED
 * and fdinfo (nnp-comm-ID) name it; -1 for NULL. Since 0.9.
 */
int nnp_comm_id(const nnp_comm_t *comm);

/*
 * Reduce @count elements of @send (at @send_off bytes) across all ranks
 * into @recv (at @recv_off) on every rank, in @stream's order. Both must be
 * device memory of the stream's device; send == recv at the same offset is
 * in place. Call it on every rank's stream, then synchronize each.
 */
nnp_result_t nnp_allreduce(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			   size_t recv_off, size_t count, nnp_dtype_t dtype,
			   nnp_redop_t op, nnp_comm_t *comm, nnp_stream_t *stream);

/*
 * Copy @count elements of @send on rank @root to @recv on every rank
 * (@send is read on the root only).
 */
nnp_result_t nnp_broadcast(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			   size_t recv_off, size_t count, nnp_dtype_t dtype,
			   int root, nnp_comm_t *comm, nnp_stream_t *stream);

/*
 * Gather @count elements of @send from every rank into @recv on every
 * rank: rank r's part lands at element r * @count.
 */
nnp_result_t nnp_allgather(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			   size_t recv_off, size_t count, nnp_dtype_t dtype,
			   nnp_comm_t *comm, nnp_stream_t *stream);

/*
 * Reduce nranks * @count elements of @send across ranks; rank r gets
 * elements r * @count .. (r + 1) * @count - 1 of the result in @recv.
 */
nnp_result_t nnp_reduce_scatter(nnp_mem_t *send, size_t send_off,
				nnp_mem_t *recv, size_t recv_off, size_t count,
				nnp_dtype_t dtype, nnp_redop_t op,
				nnp_comm_t *comm, nnp_stream_t *stream);

/*
 * Since 0.8: reduce @count elements of @send across ranks by @op into
 * @root's @recv (read only on @root: NULL elsewhere), as a chain round the
 * ring that ends at the root (NCCL's ncclReduce): every other rank sends
 * the buffer once. Hardware interface 1.12.
 */
nnp_result_t nnp_reduce(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			size_t recv_off, size_t count, nnp_dtype_t dtype,
			nnp_redop_t op, int root, nnp_comm_t *comm,
			nnp_stream_t *stream);

/*
 * Since 0.8, on messages routed between any two ranks (hardware interface
 * 1.12; NNP_ERROR_NOT_SUPPORTED on an older device, NNP_ERROR_NO_PATH if a
 * rank it must reach has no path of up links), communicators of at most
 * 1024 ranks, device memory only, in place or not.
 *
 * nnp_alltoall: @send holds nranks * @count elements, segment r for rank
 * r; @recv gets nranks * @count, segment r from rank r (NCCL's ncclAlltoAll).
 * Each segment goes on a shortest path of links, all at once.
 */
nnp_result_t nnp_alltoall(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			  size_t recv_off, size_t count, nnp_dtype_t dtype,
			  nnp_comm_t *comm, nnp_stream_t *stream);

/*
 * nnp_gather: @count elements of each rank's @send to @root's @recv, rank
 * r's at element r * @count; @recv is read only on @root (NULL elsewhere).
 */
nnp_result_t nnp_gather(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			size_t recv_off, size_t count, nnp_dtype_t dtype,
			int root, nnp_comm_t *comm, nnp_stream_t *stream);

/*
 * nnp_scatter: @root's @send holds nranks * @count elements, segment r for
 * rank r; each rank's @recv gets its @count. @send is read only on @root
 * (NULL elsewhere).
 */
nnp_result_t nnp_scatter(nnp_mem_t *send, size_t send_off, nnp_mem_t *recv,
			 size_t recv_off, size_t count, nnp_dtype_t dtype,
			 int root, nnp_comm_t *comm, nnp_stream_t *stream);

/*
 * Alltoall with a count and a place for each peer, as MPI_Alltoallv: rank
 * r sends send_counts[p] elements from element send_displs[p] after
 * @send + @send_off to rank p, which writes them at element
 * recv_displs[r] after @recv + @recv_off; counts and displacements in
 * elements, one each per rank. What each pair agrees on must match:
 * send_counts[p] on rank r is recv_counts[r] on rank p (a receive of
 * another length fails its stream with the device's INVALID_FIELD, and
 * the others of the exchange end ABORTED or at their timeout). A rank's
 * own part is a copy: send_counts[r] must equal recv_counts[r]. Made of a
 * group of sends and receives (nnp_group_start(), hardware interface
 * 1.13), so at most 64 ranks (else NNP_ERROR_NOT_SUPPORTED), and inside
 * a group of the caller's it joins that group. Since 0.9.
 */
nnp_result_t nnp_alltoallv(nnp_mem_t *send, size_t send_off,
			   const size_t *send_counts, const size_t *send_displs,
			   nnp_mem_t *recv, size_t recv_off,
			   const size_t *recv_counts, const size_t *recv_displs,
			   nnp_dtype_t dtype, nnp_comm_t *comm,
			   nnp_stream_t *stream);

/*
 * Point-to-point: send @count elements at @send + @off to rank @peer, which
 * posts the matching nnp_recv() (same count and type) on its stream. Over
 * the link between the two chips, or if they share none routed through
 * the chips between on a shortest path of links up when the communicator
 * was made, device to device (hardware 1.12, ranks below 1024; else
 * NNP_ERROR_NO_PATH); messages between two ranks arrive in the order sent. A
 * receive waits for its message as long as a collective waits for a late
 * peer (NNP_COLL_TIMEOUT_S, 30 minutes by default), so post the pair
 * together.
 */
nnp_result_t nnp_send(nnp_mem_t *send, size_t off, size_t count,
		      nnp_dtype_t dtype, int peer, nnp_comm_t *comm,
		      nnp_stream_t *stream);
nnp_result_t nnp_recv(nnp_mem_t *recv, size_t off, size_t count,
		      nnp_dtype_t dtype, int peer, nnp_comm_t *comm,
		      nnp_stream_t *stream);
/*
 * Receive from any source, as MPI_ANY_SOURCE: the first message for this
 * rank to reach its chip, from any other rank, whose place in its pair's
 * order no receive has taken (an nnp_recv() naming its peer takes its
 * place when the device starts it, so a receive from any source never
 * takes a message a receive already waiting names). Its @count and type
 * must be the sender's (else the stream fails with the device's
 * INVALID_FIELD). *@source is -1 until the stream has run the receive,
 * then the sender's rank (-1 if it failed): read it after
 * nnp_stream_synchronize() or an event recorded after, and keep it valid
 * until then. Not inside a group (NNP_ERROR_INVALID_ARGUMENT: no member
 * of a group says whence it took); hardware interface 1.26 (else
 * NNP_ERROR_NOT_SUPPORTED). Not while an alltoall, gather or scatter from
 * a rank on another chassis may be in flight to this one: a chunk of it
 * from another process cannot be told from a message. Since 0.9.
 */
nnp_result_t nnp_recv_any(nnp_mem_t *recv, size_t off, size_t count,
			  nnp_dtype_t dtype, int *source, nnp_comm_t *comm,
			  nnp_stream_t *stream);

/*
 * Group calls, as NCCL's ncclGroupStart/ncclGroupEnd. Between
 * nnp_group_start() and nnp_group_end() the calling thread's collectives,
 * sends and receives, on any communicators and streams, are checked and
 * held, not submitted; nnp_group_end() launches them together. Each
 * stream gets its collectives in the order issued, in one submission
 * (small ones, 64 KiB or less, that touch no memory another writes run
 * at once on a 1.14 device, so 32 tiny allreduces cost about one's
 * latency), then its sends and receives, which its device runs all at
 * once (hardware interface 1.13): sends and receives posted in any order
 * never wait on each other, so a ring posted in reverse completes. At most
 * 127 sends and receives per stream in one group. Copies and fills are
 * not held. Groups nest: only the outermost end launches. Since 0.9.
 *
 * An operation refused inside a group returns its error at once, and
 * fails the group: nnp_group_end() then launches nothing and returns
 * that error (the last error names it), so no rank runs half a step.
 * Destroying a communicator or stream that a group holds operations of
 * drops them and fails the group likewise (NNP_ERROR_INVALID_ARGUMENT).
 * nnp_group_end() without a group open on the thread (ended twice):
 * NNP_ERROR_INVALID_ARGUMENT. A failure of a launched operation is the
 * stream's, as outside a group: a send or receive that fails ends the
 * others of its stream's group ABORTED, and its communicator fails.
 */
nnp_result_t nnp_group_start(void);
nnp_result_t nnp_group_end(void);

#ifdef __cplusplus
}
#endif

#endif /* NNP_NNP_H */
