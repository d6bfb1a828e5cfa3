/* SPDX-License-Identifier: MIT */
/*
 * nnp ICL shared memory: the device memory two QEMU processes on one host
 * share over a link (nnp_icl_frame.h's SHARE). Each end backs its device
 * memory with a memfd, allocates all of it and seals it against
 * shrinking, growing, writes (but through the mapping it made before) and
 * new seals, gives the peer a read-only descriptor of it, and maps the
 * peer's read-only. A peer is another process: a mapping of a file it
 * could shrink would fault (SIGBUS) on every access past the new end, and
 * a read of a hole in it would allocate a page charged to us; so a
 * descriptor is mapped only once its seals, size and pages are checked
 * here, where the host tests run the very code the device does.
 */
#ifndef NNP_ICL_SHM_H
#define NNP_ICL_SHM_H

#include <stdint.h>

/* The seals a shared memory must hold (F_SEAL_* of fcntl.h). */
unsigned int nnp_icl_shm_seals(void);
/*
 * Make the memfd @fd (sealed against shrinking and growing, not against
 * new seals), which the caller has already mapped writable if it writes
 * it, fit to give a peer: all of it allocated, mode 0400 and every seal
 * nnp_icl_shm_seals() names, so that no descriptor of it, a re-open of
 * /proc/self/fd/N read-write included, can write it or map it writable
 * any more (EPERM). Returns a new descriptor of it opened read-only, for
 * the peer (close-on-exec), or -errno.
 */
int nnp_icl_shm_share(int fd);
/*
 * Whether the peer's descriptor @fd may be mapped as @size bytes of its
 * memory: NULL if it is a regular file of plain shared memory (tmpfs, not
 * hugetlbfs) that holds every seal nnp_icl_shm_seals() names, of exactly
 * @size bytes, all of them allocated, else why not.
 */
const char *nnp_icl_shm_check(int fd, uint64_t size);
/*
 * Map @size bytes of @fd shared and read-only, after nnp_icl_shm_check():
 * NULL on failure.
 */
const void *nnp_icl_shm_map(int fd, uint64_t size);
void nnp_icl_shm_unmap(const void *p, uint64_t size);

#endif /* NNP_ICL_SHM_H */
