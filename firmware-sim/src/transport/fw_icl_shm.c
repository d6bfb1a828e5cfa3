// SPDX-License-Identifier: MIT
/*
 * ICL shared memory between processes on one host (nnp_icl_shm.h): our
 * memfd made fit to give a peer, and the checks made on a peer's memfd
 * before it is mapped. Linux only (memfd seals), as QEMU's socket links
 * that use it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "nnp_icl_shm.h"

unsigned int nnp_icl_shm_seals(void)
{
	return F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;
}

int nnp_icl_shm_share(int fd)
{
	char path[32];
	struct stat st;
	int ro;

	/*
	 * Every page allocated now, as a peer wants it (nnp_icl_shm_check());
	 * no write bit, so that only root may open it for writing again; and
	 * the seals, after which write(), hole punching and new writable
	 * mappings fail through any descriptor, a re-open by root too, while
	 * the writable mapping made before (the device's) goes on working.
	 */
	if (fstat(fd, &st) || fallocate(fd, 0, 0, st.st_size) ||
	    fchmod(fd, 0400) || fcntl(fd, F_ADD_SEALS, nnp_icl_shm_seals()))
		return -errno;
	/* A memfd has no path of its own; its /proc link opens the same file. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	return ro < 0 ? -errno : ro;
}

const char *nnp_icl_shm_check(int fd, uint64_t size)
{
	unsigned int want = nnp_icl_shm_seals();
	struct statfs fs;
	struct stat st;
	int seals;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return "the peer's memory is not a regular file";
	/* Only a memfd (shmem, hugetlbfs) has seals: EINVAL elsewhere. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0)
		return "the peer's memory takes no seals (not a memfd)";
	if (((unsigned int)seals & want) != want)
		return "the peer's memory is not sealed against shrinking, "
		       "growing, writes and new seals";
	/*
	 * Plain shared memory only: a hugetlbfs memfd takes seals too, but
	 * a read of a huge page its pool cannot supply faults (SIGBUS).
	 */
	if (fstatfs(fd, &fs) || fs.f_type != TMPFS_MAGIC)
		return "the peer's memory is not plain shared memory (hugetlbfs?)";
	/* Its size and pages as the seals now keep them, not as they were. */
	if (fstat(fd, &st))
		return "the peer's memory is not a regular file";
	if (st.st_size < 0 || (uint64_t)st.st_size != size)
		return "the peer's memory is not the size its hello announced";
	/*
	 * A read of a hole would allocate the page, charged to us: the peer
	 * pays for all of it up front, and the seals keep it from punching
	 * holes later (F_SEAL_FUTURE_WRITE refuses FALLOC_FL_PUNCH_HOLE).
	 */
	if ((uint64_t)st.st_blocks * 512 < size)
		return "the peer's memory is not all allocated";
	return NULL;
}

const void *nnp_icl_shm_map(int fd, uint64_t size)
{
	void *p;

	if ((uint64_t)(size_t)size != size)
		return NULL;
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

void nnp_icl_shm_unmap(const void *p, uint64_t size)
{
	if (p)
		munmap((void *)p, size);
}
