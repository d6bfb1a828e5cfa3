/* SPDX-License-Identifier: MIT */
/*
 * nnp ICL shared memory: the device memory two QEMU processes on one host
 * share over a link (nnp_icl_frame.h's SHARE). Each end backs its device
 * memory with a memfd sealed against shrinking, growing and new seals,
 * gives the peer a read-only descriptor of it, and maps the peer's
 * read-only. A peer is another process, and a mapping of a file it could
 * shrink would fault (SIGBUS) on every access past the new end: so a
 * descriptor is mapped only once its seals and size are checked here,
 * where the host tests run the very code the device does.
 */
#ifndef NNP_ICL_SHM_H
#define NNP_ICL_SHM_H

#include <stdint.h>

/* The seals a shared memory must hold (F_SEAL_* of fcntl.h). */
unsigned int nnp_icl_shm_seals(void);
/*
 * A new descriptor of @fd's memory opened read-only, for the peer: it
 * can map it for reading only, and neither write nor truncate it.
 * Returns it (close-on-exec), or -errno.
 */
int nnp_icl_shm_reopen_ro(int fd);
/*
 * Whether the peer's descriptor @fd may be mapped as @size bytes of its
 * memory: NULL if it is a regular file of plain shared memory (tmpfs, not
 * hugetlbfs) of exactly @size bytes that holds every seal
 * nnp_icl_shm_seals() names, else why not.
 */
const char *nnp_icl_shm_check(int fd, uint64_t size);
/*
 * Map @size bytes of @fd shared and read-only, after nnp_icl_shm_check():
 * NULL on failure.
 */
const void *nnp_icl_shm_map(int fd, uint64_t size);
void nnp_icl_shm_unmap(const void *p, uint64_t size);

#endif /* NNP_ICL_SHM_H */
