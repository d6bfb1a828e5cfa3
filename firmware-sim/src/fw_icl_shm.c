// SPDX-License-Identifier: MIT
/*
 * ICL shared memory between processes on one host (nnp_icl_shm.h): the
 * checks made on a peer's memfd before it is mapped. Linux only (memfd
 * seals), as QEMU's socket links that use it.
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
	return F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
}

int nnp_icl_shm_reopen_ro(int fd)
{
	char path[32];
	int ro;

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
		       "growing and new seals";
	/*
	 * Plain shared memory only: a hugetlbfs memfd takes seals too, but
	 * a read of a huge page its pool cannot supply faults (SIGBUS).
	 */
	if (fstatfs(fd, &fs) || fs.f_type != TMPFS_MAGIC)
		return "the peer's memory is not plain shared memory (hugetlbfs?)";
	if (st.st_size < 0 || (uint64_t)st.st_size != size)
		return "the peer's memory is not the size its hello announced";
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
