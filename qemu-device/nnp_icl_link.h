/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp ICL socket links, inside: a link's state, and its three layers.
 * Calls go down only: the link's thread (nnp_icl_socket.c: connection,
 * hellos, the receive loop) calls shared memory (nnp_icl_share.c) and
 * credits (nnp_icl_credit.c), and all three call the frame I/O at the
 * bottom (nnp_icl_io.c), which calls none of them. Not for the device's
 * other files: nnp_icl_socket.h is.
 */
#ifndef HW_NNP_ICL_LINK_H
#define HW_NNP_ICL_LINK_H

#include "qemu/event_notifier.h"
#include "qemu/sockets.h"
#include "qemu/thread.h"

#include "nnp_fw.h"
#include "nnp_icl_frame.h"
#include "nnp_icl_socket.h"

/*
 * A peer that does not send a whole frame in this long is gone (taking
 * one has a shorter bound: NNP_ICL_SEND_MS in nnp_icl_io.c).
 */
#define NNP_ICL_FRAME_MS    5000
/*
 * Give-backs queued at most: what an honest peer can have lent us (its
 * credits), twice over. More is a peer lending past its credits.
 */
#define NNP_ICL_GIVE_BACK_MAX   (2 * NNP_ICL_TAGS_MAX)

typedef struct NnpIclLink {
    NnpIclSockets *icl;
    unsigned port;
    uint32_t want_chip;     /* the peer we link to */
    unsigned want_port;
    bool listen;
    SocketAddress *addr;
    int listen_fd;
    QemuThread thread;
    bool started;
    uint8_t *rx_buf;        /* the thread's */
    size_t rx_size;

    /*
     * Tells the thread to send our link state to the peer: the monitor
     * (under the BQL) must not wait for tx_lock, which a peer that reads
     * slowly holds until the send deadline.
     */
    EventNotifier state_changed;
    QemuMutex tx_lock;      /* one frame at a time; taken before lock */
    bool tx_failed;         /* a frame failed on this connection (tx_lock) */
    QemuMutex lock;         /* guards what follows; never held across I/O */
    QemuCond cond;          /* wakes the connect retry wait */
    int fd;                 /* the connection, -1 if none */
    bool connected;         /* hellos exchanged */
    bool peer_model;        /* the peer takes modeled arrival times */
    bool admin_up;          /* not taken down, at either end */
    bool chip_up;           /* our chip runs: not being reset, not dead */
    bool peer_chip_up;      /* the peer's, as its CHIP_ frames say */
    bool peer_chip_frames;  /* the peer takes CHIP_ frames */
    bool send_admin;        /* for the thread: send admin_up */
    bool send_chip;         /* for the thread: send chip_up */
    bool stopping;

    /* Shared memory (the thread's, set before the link comes up): */
    bool is_unix;           /* a unix socket: the peer is on this host */
    const uint8_t *peer_mem;    /* the peer's memory, mapped; NULL: none */
    uint64_t peer_mem_size;
    /*
     * Tags to give back, queued by the firmware with its locks held; the
     * thread sends them (gb_pending). Guarded by gb_lock, a leaf lock.
     */
    QemuMutex gb_lock;
    EventNotifier gb_pending;
    uint32_t gb[NNP_ICL_GIVE_BACK_MAX];
    unsigned gb_n;
    bool gb_overflow;
    /* Credits owed to the peer (nnp_icl_credit.c), also under gb_lock. */
    uint32_t cr_packets;
    uint64_t cr_bytes;
} NnpIclLink;

struct NnpIclSockets {
    struct nnp_fw *fw;
    uint32_t chip_id;
    uint8_t *key;           /* the job's secret */
    size_t key_len;
    int share_fd;           /* our memory, read-only, for peers; -1: none */
    uint64_t mem_size;
    NnpIclLink *links[NNP_FW_MAX_PORTS];
};

/* nnp_icl_io.c, the bottom: */
/* Log what the peer did wrong (a trace event): the link drops it. */
void G_GNUC_PRINTF(2, 3) nnp_icl_link_log(NnpIclLink *l, const char *fmt, ...);
/*
 * Wait until @fd is ready for @events, at most until @deadline (ms on the
 * realtime clock): false on timeout or error.
 */
bool nnp_icl_wait_fd(int fd, short events, int64_t deadline);
/* Send @iov whole before @deadline: false if the connection failed. */
bool nnp_icl_write_iov(int fd, struct iovec *iov, unsigned cnt,
                       int64_t deadline);
/*
 * One frame, sent whole within NNP_ICL_SEND_MS or not at all; with
 * @model (a version 4 header) the packet's modeled arrival.
 */
bool nnp_icl_write_frame(int fd, uint8_t type, uint64_t epoch, uint32_t seq,
                         const uint64_t *model, const void *data, size_t len);
/*
 * Read exactly @len bytes before @deadline: 0, -ETIMEDOUT, or -EPIPE if
 * the connection ended or failed.
 */
int nnp_icl_read_full(int fd, void *buf, size_t len, int64_t deadline);
/* Why a read of a frame failed (-ETIMEDOUT), or NULL: the peer left. */
const char *nnp_icl_read_failure(int ret);
/*
 * Read one frame's header into *@h, whole before @deadline, leaving its
 * payload on the socket: false (@bad says why, NULL: the peer left) if
 * the connection ended or the header is malformed or late.
 */
bool nnp_icl_read_header(int fd, struct nnp_icl_frame *h, int64_t deadline,
                         const char **bad);
/* Read the payload of the frame *@h into l->rx_buf; false if it failed. */
bool nnp_icl_read_payload(NnpIclLink *l, int fd,
                          const struct nnp_icl_frame *h, int64_t deadline,
                          const char **bad);
/* Send a frame on @l's connection, if there is one; false if not sent. */
bool nnp_icl_link_send(NnpIclLink *l, uint8_t type, uint64_t epoch,
                       uint32_t seq, uint64_t model, const void *data,
                       size_t len);

/* nnp_icl_share.c, called by the link's thread: */
/*
 * Swap memories with a peer whose hello offered @size bytes: false
 * (logged) if the link must not come up.
 */
bool nnp_icl_link_share(NnpIclLink *l, int fd, uint64_t size,
                        int64_t deadline);
/* Send the tags the firmware gave back: false if the link must go. */
bool nnp_icl_send_give_backs(NnpIclLink *l);
/* A LENT frame, checked, to the firmware: false (@bad) if the link must go. */
bool nnp_icl_deliver_lent(NnpIclLink *l, int fd,
                          const struct nnp_icl_frame *h, int64_t deadline,
                          const char **bad);
/* GIVE_BACK or RECLAIM: false (@bad) if the link must go. */
bool nnp_icl_link_tags(NnpIclLink *l, int fd, const struct nnp_icl_frame *h,
                       int64_t deadline, const char **bad);
/* The connection is gone: stop sharing, once nothing reads the peer's memory. */
void nnp_icl_link_unshare(NnpIclLink *l);

/* nnp_icl_credit.c, called by the link's thread: */
/* Send the credits owed to the peer, if any: false if the link must go. */
bool nnp_icl_send_credits(NnpIclLink *l);
/* A CREDIT frame to the firmware: false (@bad) if the link must go. */
bool nnp_icl_link_credit(NnpIclLink *l, int fd, const struct nnp_icl_frame *h,
                         int64_t deadline, const char **bad);
/*
 * A connection begins (@on: both hellos offered credits) or ends (!@on):
 * the firmware counts afresh, and nothing owed is carried over.
 */
void nnp_icl_credits_start(NnpIclLink *l, bool on);

#endif
