/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nnp ICL socket links, the bottom: frame I/O on a link's connection,
 * every read and write bounded by a deadline. The link's thread
 * (nnp_icl_socket.c) and what it hands frames to, shared memory
 * (nnp_icl_share.c) and credits (nnp_icl_credit.c), build on these and
 * nothing here calls up into them.
 */

#include "qemu/osdep.h"
#include "qemu/iov.h"
#include "qemu/timer.h"

#include "nnp_icl_frame.h"
#include "nnp_icl_link.h"
#include "trace.h"

/*
 * A peer that does not take a whole frame in this long is gone: an honest
 * one's link thread drains its socket as frames come, and the sender
 * waits behind at most a few such frames, well inside the driver's admin
 * timeout.
 */
#define NNP_ICL_SEND_MS     250
void nnp_icl_link_log(NnpIclLink *l, const char *fmt, ...)
{
    g_autofree char *what = NULL;
    va_list ap;

    va_start(ap, fmt);
    what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    /* The peer's doing, not the guest's: a trace event, no guest error. */
    trace_nnp_icl_link_error(l->icl->chip_id, l->port, what);
}

/*
 * Wait until @fd is ready for @events, at most until @deadline (ms on the
 * realtime clock): false on timeout or error.
 */
bool nnp_icl_wait_fd(int fd, short events, int64_t deadline)
{
    GPollFD pfd = { .fd = fd, .events = events };
    int64_t left = deadline - qemu_clock_get_ms(QEMU_CLOCK_REALTIME);

    return left > 0 && g_poll(&pfd, 1, left) == 1;
}

/* Send @iov whole before @deadline: false if the connection failed. */
bool nnp_icl_write_iov(int fd, struct iovec *iov, unsigned cnt,
                       int64_t deadline)
{
    while (cnt) {
        struct msghdr msg = { .msg_iov = iov, .msg_iovlen = cnt };
        ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!nnp_icl_wait_fd(fd, G_IO_OUT, deadline)) {
                return false;
            }
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        iov_discard_front(&iov, &cnt, n);
    }
    return true;
}

/*
 * One frame, sent whole within NNP_ICL_SEND_MS or not at all; with
 * @model (a version 4 header) the packet's modeled arrival.
 */
bool nnp_icl_write_frame(int fd, uint8_t type, uint64_t epoch, uint32_t seq,
                         const uint64_t *model, const void *data, size_t len)
{
    struct nnp_icl_frame f = {
        .type = type, .len = len, .seq = seq, .epoch = epoch,
        .model = model ? *model : 0,
    };
    uint8_t h[NNP_ICL_HDR_BYTES + NNP_ICL_MODEL_BYTES];
    struct iovec iov[2] = {
        { .iov_base = h,
          .iov_len = nnp_icl_header_encode(&f, model != NULL, h) },
        { .iov_base = (void *)data, .iov_len = len },
    };

    return nnp_icl_write_iov(fd, iov, len ? 2 : 1,
                             qemu_clock_get_ms(QEMU_CLOCK_REALTIME) +
                             NNP_ICL_SEND_MS);
}

/*
 * Read exactly @len bytes before @deadline: 0, -ETIMEDOUT, or -EPIPE if
 * the connection ended or failed.
 */
int nnp_icl_read_full(int fd, void *buf, size_t len, int64_t deadline)
{
    uint8_t *p = buf;

    while (len) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);

        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!nnp_icl_wait_fd(fd, G_IO_IN, deadline)) {
                return -ETIMEDOUT;
            }
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -EPIPE;
        }
        p += n;
        len -= n;
    }
    return 0;
}

/* The end of a failed nnp_icl_read_full(), as a frame's reader reports it. */
const char *nnp_icl_read_failure(int ret)
{
    return ret == -ETIMEDOUT ? "no whole frame in time" : NULL;
}

/*
 * Read one frame's header into *@h (with the modeled arrival, 0 in a
 * version 3 frame), whole before @deadline, leaving its payload of h->len
 * (bounded by the decoder) on the socket. False if the connection ended
 * or the header is malformed or late (@bad then says why).
 */
bool nnp_icl_read_header(int fd, struct nnp_icl_frame *h, int64_t deadline,
                         const char **bad)
{
    uint8_t raw[NNP_ICL_HDR_BYTES];
    int ret = nnp_icl_read_full(fd, raw, sizeof(raw), deadline);

    if (ret) {
        *bad = nnp_icl_read_failure(ret);
        return false;
    }
    *bad = nnp_icl_header_decode(raw, h);
    if (*bad) {
        return false;
    }
    if (nnp_icl_model_bytes(h)) {
        ret = nnp_icl_read_full(fd, raw, NNP_ICL_MODEL_BYTES, deadline);
        if (ret) {
            *bad = nnp_icl_read_failure(ret);
            return false;
        }
        nnp_icl_model_decode(raw, h);
    }
    return true;
}

/*
 * Read the payload of the frame *@h into l->rx_buf, as
 * nnp_icl_read_header().
 */
bool nnp_icl_read_payload(NnpIclLink *l, int fd,
                          const struct nnp_icl_frame *h, int64_t deadline,
                          const char **bad)
{
    int ret;

    if (h->len > l->rx_size) {
        l->rx_buf = g_realloc(l->rx_buf, h->len);
        l->rx_size = h->len;
    }
    ret = nnp_icl_read_full(fd, l->rx_buf, h->len, deadline);
    if (ret) {
        *bad = nnp_icl_read_failure(ret);
        return false;
    }
    return true;
}

/* Send a frame on @l's connection, if there is one; false if not sent. */
bool nnp_icl_link_send(NnpIclLink *l, uint8_t type, uint64_t epoch,
                       uint32_t seq, uint64_t model, const void *data,
                       size_t len)
{
    bool ok = false, with_model;
    int fd;

    qemu_mutex_lock(&l->tx_lock);
    qemu_mutex_lock(&l->lock);
    /* After a failed frame, nothing more for this connection. */
    fd = l->connected && !l->tx_failed ? l->fd : -1;
    with_model = l->peer_model &&
                 (type == NNP_ICL_DATA || type == NNP_ICL_ABORT);
    qemu_mutex_unlock(&l->lock);
    if (fd >= 0) {
        ok = nnp_icl_write_frame(fd, type, epoch, seq,
                                 with_model ? &model : NULL, data, len);
        if (!ok) {
            /*
             * A half-sent frame: end the connection, the link's thread
             * sees it. Under tx_lock, as link_close() closes @fd only
             * after taking it: @fd cannot be a recycled number here.
             */
            nnp_icl_link_log(l, "the peer took no whole frame in %d ms, "
                             "or left", NNP_ICL_SEND_MS);
            l->tx_failed = true;
            shutdown(fd, SHUT_RDWR);
        }
    }
    qemu_mutex_unlock(&l->tx_lock);
    return ok;
}

bool nnp_icl_sockets_has_port(NnpIclSockets *icl, unsigned port)
{
    return port < NNP_FW_MAX_PORTS && icl->links[port];
}
