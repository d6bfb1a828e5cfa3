/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp ICL links that share device memory between two QEMU processes on
 * one host (see nnp_icl_socket.c for the link itself).
 *
 * Two QEMUs on one host, joined by a unix socket, share their device
 * memory (when the device has it in a memfd: icl-share, the default):
 * both hellos offer NNP_ICL_FEAT_SHARE with the memory's size, and a
 * peer may offer no more than our own (the page tables of its mapping
 * are ours to pay). Each end then sends SHARE with a read-only
 * descriptor of its memfd, all allocated and sealed against writes
 * through any descriptor (nnp_icl_shm_share(), at realize: only the
 * device's own mapping, made before, writes it), and maps the peer's
 * read-only once nnp_icl_shm_check() found it sealed likewise, of the
 * size announced and all allocated (a peer that truncated a file we map
 * would SIGBUS us; a hole we read would allocate a page charged to us,
 * and the seal keeps the peer from punching one later). The firmware lends
 * a collective's chunks as on an in-process link: a LENT frame says where
 * the chunk lies (offset, length, tag), bounds-checked against the mapping
 * before anything is read; the receiver reduces or copies straight from
 * the mapping and gives the tag back in GIVE_BACK (queued by the firmware
 * under its locks, sent by this link's thread). The mapping goes when the
 * connection does, once the firmware has stopped reading it. Sharing
 * gives the authenticated peer read access to all of our device memory,
 * as chips of one process have: a job's chips trust each other that far.
 */

#include "qemu/osdep.h"
#include "qemu/timer.h"

#include "nnp_icl_link.h"
#include "nnp_icl_shm.h"
#include "trace.h"

/*
 * The header of an empty frame of @type with descriptor @pass_fd alongside
 * (SCM_RIGHTS on its first byte), sent whole within NNP_ICL_FRAME_MS.
 */
static bool write_frame_fd(int fd, uint8_t type, int pass_fd)
{
    struct nnp_icl_frame f = { .type = type };
    uint8_t h[NNP_ICL_HDR_BYTES + NNP_ICL_MODEL_BYTES];
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u = { };
    struct iovec iov = {
        .iov_base = h, .iov_len = nnp_icl_header_encode(&f, false, h),
    };
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1,
        .msg_control = u.buf, .msg_controllen = sizeof(u.buf),
    };
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    ssize_t n;

    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    do {
        n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
        return false;
    }
    /* The descriptor went with the first byte; the rest goes plain. */
    iov.iov_base = h + n;
    iov.iov_len -= n;
    return nnp_icl_write_iov(fd, &iov, iov.iov_len ? 1 : 0,
                     qemu_clock_get_ms(QEMU_CLOCK_REALTIME) +
                     NNP_ICL_FRAME_MS);
}


/*
 * read_full() of a frame's header that carries one descriptor alongside:
 * *@got gets it (close-on-exec), or -1 if none came. Any more than one,
 * or a truncated list, and every one received is closed: -EBADMSG.
 */
static int read_full_fd(int fd, void *buf, size_t len, int64_t deadline,
                        int *got)
{
    uint8_t *p = buf;
    int bad = 0;

    *got = -1;
    while (len) {
        union {
            char buf[CMSG_SPACE(4 * sizeof(int))];
            struct cmsghdr align;
        } u;
        struct iovec iov = { .iov_base = p, .iov_len = len };
        struct msghdr msg = {
            .msg_iov = &iov, .msg_iovlen = 1,
            .msg_control = u.buf, .msg_controllen = sizeof(u.buf),
        };
        struct cmsghdr *c;
        ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!nnp_icl_wait_fd(fd, G_IO_IN, deadline)) {
                bad = -ETIMEDOUT;
                break;
            }
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            bad = -EPIPE;
            break;
        }
        if (msg.msg_flags & MSG_CTRUNC) {
            bad = -EBADMSG;
        }
        for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            size_t i, nfd;

            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
                continue;
            }
            nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (i = 0; i < nfd; i++) {
                int rfd;

                memcpy(&rfd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (*got < 0 && !bad) {
                    *got = rfd;
                } else {
                    close(rfd);
                    bad = -EBADMSG;
                }
            }
        }
        p += n;
        len -= n;
    }
    if (bad && *got >= 0) {
        close(*got);
        *got = -1;
    }
    return bad;
}


/*
 * Take the peer's SHARE, check the memory that came with it and map it
 * read-only into *@map: NULL, or why not (nothing mapped then).
 */
static const char *share_take(int fd, uint64_t size, int64_t deadline,
                              const void **map)
{
    uint8_t raw[NNP_ICL_HDR_BYTES];
    struct nnp_icl_frame h;
    const char *bad;
    int peer_fd = -1;
    int ret = read_full_fd(fd, raw, sizeof(raw), deadline, &peer_fd);

    if (ret == -EBADMSG) {
        return "the peer sent more than one descriptor";
    }
    if (ret) {
        return nnp_icl_read_failure(ret) ?: "the peer left during the hello";
    }
    bad = nnp_icl_header_decode(raw, &h);
    if (!bad) {
        bad = nnp_icl_frame_expect(&h, NNP_ICL_SHARE, 0);
    }
    if (!bad && peer_fd < 0) {
        bad = "the peer's SHARE came without its memory";
    }
    if (!bad) {
        bad = nnp_icl_shm_check(peer_fd, size);
    }
    if (!bad) {
        *map = nnp_icl_shm_map(peer_fd, size);
        if (!*map) {
            bad = "could not map the peer's memory";
        }
    }
    if (peer_fd >= 0) {
        close(peer_fd);     /* the mapping stays */
    }
    return bad;
}


/*
 * Swap memories with a peer whose hello offered @size bytes of it, no
 * more than our own: send ours, take theirs, check it and map it
 * read-only, then let the firmware lend and borrow on the link. False
 * (logged) if anything fails.
 */
bool nnp_icl_link_share(NnpIclLink *l, int fd, uint64_t size,
                        int64_t deadline)
{
    const void *map = NULL;
    const char *bad = NULL;

    if (!size) {
        bad = "the peer offers to share memory of no valid size";
    } else if (size > l->icl->mem_size) {
        bad = "the peer offers to share more memory than ours";
    } else if (!write_frame_fd(fd, NNP_ICL_SHARE, l->icl->share_fd)) {
        bad = "could not send our memory";
    } else {
        bad = share_take(fd, size, deadline, &map);
    }
    if (!bad && nnp_fw_link_share_remote(l->icl->fw, l->port, true)) {
        bad = "no memory to share the link";
    }
    if (bad) {
        nnp_icl_link_log(l, "%s", bad);
        nnp_icl_shm_unmap(map, size);
        return false;
    }
    l->peer_mem = map;
    l->peer_mem_size = size;
    trace_nnp_icl_shared(l->icl->chip_id, l->port, size);
    return true;
}


/*
 * Send the tags the firmware gave back since the last time, in frames of
 * NNP_ICL_TAGS_MAX at most: false if the connection failed, or the peer
 * lent past its credits.
 */
bool nnp_icl_send_give_backs(NnpIclLink *l)
{
    uint32_t tags[NNP_ICL_GIVE_BACK_MAX];
    uint8_t raw[4 * NNP_ICL_TAGS_MAX];
    unsigned n, i, k;
    bool overflow;

    qemu_mutex_lock(&l->gb_lock);
    n = l->gb_n;
    memcpy(tags, l->gb, n * sizeof(tags[0]));
    l->gb_n = 0;
    overflow = l->gb_overflow;
    qemu_mutex_unlock(&l->gb_lock);
    if (overflow) {
        nnp_icl_link_log(l, "the peer lent past its credits");
        return false;
    }
    for (i = 0; i < n; i += k) {
        k = MIN(n - i, NNP_ICL_TAGS_MAX);
        nnp_icl_tags_encode(tags + i, k, raw);
        if (!nnp_icl_link_send(l, NNP_ICL_GIVE_BACK, 0, 0, 0, raw, 4 * k)) {
            return false;
        }
    }
    return true;
}


/*
 * The LENT frame *@h: the chunk is checked to lie within the peer's
 * memory we map, then queued for the firmware to read in place. False
 * (@bad says why) if the frame did not come whole or names memory
 * outside the mapping.
 */
bool nnp_icl_deliver_lent(NnpIclLink *l, int fd,
                          const struct nnp_icl_frame *h, int64_t deadline,
                          const char **bad)
{
    struct nnp_icl_lent d;
    int ret;

    if (!nnp_icl_read_payload(l, fd, h, deadline, bad)) {
        return false;
    }
    *bad = nnp_icl_lent_decode(l->rx_buf, l->peer_mem_size, &d);
    if (*bad) {
        return false;
    }
    ret = nnp_fw_icl_deliver_lent(l->icl->fw, l->port, h->epoch, h->seq,
                                  h->model, l->peer_mem + d.offset, d.len,
                                  d.tag);
    trace_nnp_icl_rx_lent(l->icl->chip_id, l->port, h->epoch, h->seq,
                          d.offset, d.len, d.tag, ret);
    return true;
}


/*
 * GIVE_BACK (our chunks the peer is done with) or RECLAIM (the peer's
 * chunks it wants back): false if the frame did not come whole, or the
 * peer gave back a tag it did not hold.
 */
bool nnp_icl_link_tags(NnpIclLink *l, int fd, const struct nnp_icl_frame *h,
                       int64_t deadline, const char **bad)
{
    unsigned i;

    if (!nnp_icl_read_payload(l, fd, h, deadline, bad)) {
        return false;
    }
    for (i = 0; i < h->len / 4; i++) {
        uint32_t tag = nnp_icl_tag_decode(l->rx_buf, i);

        if (h->type == NNP_ICL_RECLAIM) {
            nnp_fw_icl_reclaim_lent(l->icl->fw, l->port, tag);
        } else if (nnp_fw_icl_given_back(l->icl->fw, l->port, tag)) {
            *bad = "the peer gave back a chunk it does not hold";
            return false;
        }
    }
    return true;
}


int nnp_icl_sockets_send_lent(NnpIclSockets *icl, unsigned port,
                              uint64_t epoch, uint32_t seq, uint64_t model_ns,
                              uint64_t offset, size_t len, uint32_t tag)
{
    struct nnp_icl_lent d = { .offset = offset, .len = len, .tag = tag };
    uint8_t raw[NNP_ICL_LENT_BYTES];

    if (!nnp_icl_sockets_has_port(icl, port)) {
        return -1;
    }
    nnp_icl_lent_encode(&d, raw);
    return nnp_icl_link_send(icl->links[port], NNP_ICL_LENT, epoch, seq, model_ns,
                     raw, sizeof(raw)) ? 0 : -1;
}


/* With firmware locks held: queue it for the link's thread, never block. */
void nnp_icl_sockets_give_back(NnpIclSockets *icl, unsigned port,
                               uint32_t tag)
{
    NnpIclLink *l;

    if (!nnp_icl_sockets_has_port(icl, port)) {
        return;
    }
    l = icl->links[port];
    qemu_mutex_lock(&l->gb_lock);
    if (l->gb_n < NNP_ICL_GIVE_BACK_MAX) {
        l->gb[l->gb_n++] = tag;
    } else {
        l->gb_overflow = true;
    }
    qemu_mutex_unlock(&l->gb_lock);
    event_notifier_set(&l->gb_pending);
}


void nnp_icl_sockets_reclaim(NnpIclSockets *icl, unsigned port,
                             const uint32_t *tags, size_t n)
{
    uint8_t raw[4 * NNP_ICL_TAGS_MAX];
    size_t i, k;

    if (!nnp_icl_sockets_has_port(icl, port)) {
        return;
    }
    for (i = 0; i < n; i += k) {
        k = MIN(n - i, NNP_ICL_TAGS_MAX);
        nnp_icl_tags_encode(tags + i, k, raw);
        if (!nnp_icl_link_send(icl->links[port], NNP_ICL_RECLAIM, 0, 0, 0, raw,
                       4 * k)) {
            return;
        }
    }
}

void nnp_icl_link_unshare(NnpIclLink *l)
{
    if (l->peer_mem) {
        /* Once the firmware has stopped reading the peer's memory. */
        nnp_fw_link_share_remote(l->icl->fw, l->port, false);
        nnp_icl_shm_unmap(l->peer_mem, l->peer_mem_size);
        l->peer_mem = NULL;
        l->peer_mem_size = 0;
    }
    /* Give-backs of this connection's chunks mean nothing to the next. */
    qemu_mutex_lock(&l->gb_lock);
    l->gb_n = 0;
    l->gb_overflow = false;
    qemu_mutex_unlock(&l->gb_lock);
    event_notifier_test_and_clear(&l->gb_pending);
}
