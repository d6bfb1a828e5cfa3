// SPDX-License-Identifier: MIT
/*
 * ICL shared memory (nnp_icl_shm.h): what a QEMU checks of the memfd a
 * peer on its host hands over before it maps it. Mapped only when sealed
 * against shrinking, growing, writes and new seals, of the size the hello
 * announced and all allocated: a peer that could shrink a file we map
 * would make every access past its new end fault (SIGBUS) in our process,
 * and a read of a hole would allocate a page charged to us. The memory
 * we give the peer is read-only through every descriptor of it: the one
 * we pass, and a re-open of /proc/self/fd/N read-write (which root may
 * make), can neither write nor truncate it, nor map it writable, nor
 * punch holes in it, yet the peer sees what we write through our mapping.
 *
 * In detail (docs/testing.md has the summary):
 * the checks a QEMU makes of a peer's memfd before mapping it, and how it
 * makes its own fit to give (`firmware-sim/src/transport/fw_icl_shm.c`):
 * sealed against shrinking, growing, writes and new seals, of the announced
 * size and all allocated, mapped; each of the four seals missing, none at
 * all, and a memfd made without sealing refused (extra seals do no harm); a
 * byte more or less than announced, or empty, refused; none of its pages
 * allocated, or its last page missing, refused as not all allocated; a
 * regular file (no seals) and a pipe refused with their reasons; a sealed
 * hugetlbfs memfd of the size refused as not plain shared memory (a read of
 * a huge page its pool cannot supply would SIGBUS), where the host can make
 * one; device memory made as QEMU makes it and then shared
 * (`nnp_icl_shm_share()`): all allocated, mode 0400, exactly the four
 * seals, passes the peer's checks, and the peer's read-only descriptor sees
 * writes through the device's mapping made before, but `write` (EBADF),
 * `ftruncate`, a writable shared `mmap` and `mprotect` to writable (EACCES)
 * and adding a seal (EPERM) all fail; a re-open of `/proc/self/fd/N`
 * read-write (root may; anyone else gets EACCES) can neither `pwrite`, map
 * writable, punch a hole nor truncate (each EPERM), nor can the device's
 * own descriptor write, while its mapping still does; a memfd already
 * sealed against new seals cannot be shared (EPERM); the owner cannot
 * shrink a sealed memfd either
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nnp_icl_shm.h"

#define SIZE		(1u << 20)
#define ALL_SEALS	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | \
			 F_SEAL_SEAL)

static const char not_sealed[] = "the peer's memory is not sealed against "
				 "shrinking, growing, writes and new seals";
static const char wrong_size[] = "the peer's memory is not the size its "
				 "hello announced";
static const char sparse[] = "the peer's memory is not all allocated";

/*
 * A memfd of @size bytes, the first @backed of them allocated, with
 * @seals added (0: none; -1: sealing not allowed).
 */
static int memfd_backed(uint64_t size, uint64_t backed, int seals)
{
	int fd = memfd_create("nnp-test", MFD_CLOEXEC |
			      (seals >= 0 ? MFD_ALLOW_SEALING : 0));

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	if (backed)
		assert_int_equal(fallocate(fd, 0, 0, backed), 0);
	if (seals > 0)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

/* The same, all of it allocated: what a peer should send. */
static int memfd(uint64_t size, int seals)
{
	return memfd_backed(size, size, seals);
}

static void test_sealed_memfd_of_the_size_is_mapped(void **state)
{
	int fd = memfd(SIZE, ALL_SEALS);
	const uint8_t *p;

	(void)state;
	assert_int_equal(nnp_icl_shm_seals(), ALL_SEALS);
	assert_null(nnp_icl_shm_check(fd, SIZE));
	p = nnp_icl_shm_map(fd, SIZE);
	assert_non_null(p);
	assert_int_equal(p[SIZE - 1], 0);
	nnp_icl_shm_unmap(p, SIZE);
	/* Sealed, so the owner cannot shrink it under a mapping either. */
	assert_int_equal(ftruncate(fd, SIZE / 2), -1);
	assert_int_equal(errno, EPERM);
	close(fd);
}

/* Each seal missing, or none allowed: refused. Extra seals do no harm. */
static void test_unsealed_refused(void **state)
{
	static const int seals[] = {
		0, ALL_SEALS & ~F_SEAL_SHRINK, ALL_SEALS & ~F_SEAL_GROW,
		ALL_SEALS & ~F_SEAL_FUTURE_WRITE, ALL_SEALS & ~F_SEAL_SEAL,
	};
	unsigned int i;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(seals) / sizeof(seals[0]); i++) {
		fd = memfd(SIZE, seals[i]);
		assert_string_equal(nnp_icl_shm_check(fd, SIZE), not_sealed);
		close(fd);
	}
	/* Made without MFD_ALLOW_SEALING: it holds F_SEAL_SEAL only. */
	fd = memfd(SIZE, -1);
	assert_string_equal(nnp_icl_shm_check(fd, SIZE), not_sealed);
	close(fd);
	fd = memfd(SIZE, ALL_SEALS | F_SEAL_WRITE);
	assert_null(nnp_icl_shm_check(fd, SIZE));
	close(fd);
}

/* Not the size the hello said: one byte either way, or empty. */
static void test_wrong_size_refused(void **state)
{
	int fd;

	(void)state;
	fd = memfd(SIZE + 1, ALL_SEALS);
	assert_string_equal(nnp_icl_shm_check(fd, SIZE), wrong_size);
	close(fd);
	fd = memfd(SIZE - 1, ALL_SEALS);
	assert_string_equal(nnp_icl_shm_check(fd, SIZE), wrong_size);
	close(fd);
	fd = memfd_backed(0, 0, ALL_SEALS);
	assert_string_equal(nnp_icl_shm_check(fd, SIZE), wrong_size);
	close(fd);
}

/*
 * Sealed and of the size, but with holes, which a read would fill with
 * pages charged to the reader: none allocated, the last page missing.
 */
static void test_sparse_refused(void **state)
{
	int fd;

	(void)state;
	fd = memfd_backed(SIZE, 0, ALL_SEALS);
	assert_string_equal(nnp_icl_shm_check(fd, SIZE), sparse);
	close(fd);
	fd = memfd_backed(SIZE, SIZE - 4096, ALL_SEALS);
	assert_string_equal(nnp_icl_shm_check(fd, SIZE), sparse);
	close(fd);
	fd = memfd_backed(SIZE, SIZE, ALL_SEALS);
	assert_null(nnp_icl_shm_check(fd, SIZE));
	close(fd);
}

/*
 * Other kinds of descriptor: a file, which takes no seals, and a pipe; a
 * hugetlbfs memfd, sealed and of the size, whose reads may fault when its
 * pool runs dry (where the host can make one at all).
 */
static void test_not_a_memfd_refused(void **state)
{
	char path[] = "/tmp/nnp-shm-XXXXXX";
	int fd = mkstemp(path), pipefd[2];
	long huge = 2l << 20;

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, SIZE), 0);
	assert_string_equal(nnp_icl_shm_check(fd, SIZE),
			    "the peer's memory takes no seals (not a memfd)");
	close(fd);
	assert_int_equal(pipe(pipefd), 0);
	assert_string_equal(nnp_icl_shm_check(pipefd[0], SIZE),
			    "the peer's memory is not a regular file");
	close(pipefd[0]);
	close(pipefd[1]);
	fd = memfd_create("nnp-test-huge", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
	if (fd < 0 || ftruncate(fd, huge) ||
	    fcntl(fd, F_ADD_SEALS, ALL_SEALS)) {
		print_message("  no sealed hugetlbfs memfd on this host: not tried\n");
	} else {
		assert_string_equal(nnp_icl_shm_check(fd, huge),
				    "the peer's memory is not plain shared memory (hugetlbfs?)");
	}
	if (fd >= 0)
		close(fd);
}

/* Device memory as QEMU makes it: sealed against shrinking and growing. */
static int device_memfd(void)
{
	return memfd_backed(SIZE, 0, F_SEAL_SHRINK | F_SEAL_GROW);
}

/*
 * Our memory once shared: all allocated, mode 0400, every seal, and it
 * passes the checks a peer makes. The device's writable mapping, made
 * before, goes on writing it and the peer sees that; the descriptor the
 * peer gets can neither write, truncate, map writable nor add seals.
 */
static void test_shared_memory_for_the_peer(void **state)
{
	int fd = device_memfd(), ro;
	uint8_t *mine;
	const uint8_t *theirs;
	struct stat st;

	(void)state;
	mine = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mine != MAP_FAILED);
	ro = nnp_icl_shm_share(fd);
	assert_true(ro >= 0);
	assert_int_equal(fcntl(ro, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(fcntl(ro, F_GETFL) & O_ACCMODE, O_RDONLY);
	assert_int_equal(fcntl(ro, F_GET_SEALS), ALL_SEALS);
	assert_int_equal(fstat(ro, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0400);
	assert_int_equal(st.st_blocks * 512, SIZE);
	assert_null(nnp_icl_shm_check(ro, SIZE));
	theirs = nnp_icl_shm_map(ro, SIZE);
	assert_non_null(theirs);
	mine[12345] = 0x5a;
	assert_int_equal(theirs[12345], 0x5a);

	assert_int_equal(write(ro, "x", 1), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(ftruncate(ro, 0), -1);
	assert_true(mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0) ==
		    MAP_FAILED);
	assert_int_equal(errno, EACCES);
	assert_int_equal(mprotect((void *)theirs, SIZE, PROT_READ | PROT_WRITE), -1);
	assert_int_equal(errno, EACCES);
	assert_int_equal(fcntl(ro, F_ADD_SEALS, F_SEAL_WRITE), -1);
	assert_int_equal(errno, EPERM);

	nnp_icl_shm_unmap(theirs, SIZE);
	munmap(mine, SIZE);
	close(ro);
	close(fd);
}

/*
 * What a peer tries with the descriptor it got: re-open it read-write
 * through /proc/self/fd/N (only root may: mode 0400), then write it,
 * map it writable, punch a hole in it or shrink it: the seals refuse
 * each (EPERM), and the device's own descriptor too; its mapping made
 * before still writes.
 */
static void test_no_write_through_any_descriptor(void **state)
{
	int fd = device_memfd(), ro, rw;
	uint8_t *mine;
	char path[32];

	(void)state;
	mine = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mine != MAP_FAILED);
	ro = nnp_icl_shm_share(fd);
	assert_true(ro >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", ro);
	rw = open(path, O_RDWR | O_CLOEXEC);
	if (geteuid()) {
		assert_int_equal(rw, -1);
		assert_int_equal(errno, EACCES);
		print_message("  not root: writes tried through the device's fd\n");
		rw = fd;
	}
	assert_true(rw >= 0);
	assert_int_equal(pwrite(rw, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(pwrite(fd, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_true(mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0) ==
		    MAP_FAILED);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fallocate(rw, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				   0, 4096), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(rw, 0), -1);
	assert_int_equal(errno, EPERM);
	mine[0] = 0xa5;
	assert_int_equal(pread(ro, path, 1, 0), 1);
	assert_int_equal((uint8_t)path[0], 0xa5);

	if (rw != fd)
		close(rw);
	munmap(mine, SIZE);
	close(ro);
	close(fd);
}

/* A memfd already sealed against new seals cannot be made fit: EPERM. */
static void test_share_needs_room_for_seals(void **state)
{
	int fd = memfd_backed(SIZE, 0, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);

	(void)state;
	assert_int_equal(nnp_icl_shm_share(fd), -EPERM);
	close(fd);
	assert_int_equal(nnp_icl_shm_share(fd), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sealed_memfd_of_the_size_is_mapped),
		cmocka_unit_test(test_unsealed_refused),
		cmocka_unit_test(test_wrong_size_refused),
		cmocka_unit_test(test_not_a_memfd_refused),
		cmocka_unit_test(test_sparse_refused),
		cmocka_unit_test(test_shared_memory_for_the_peer),
		cmocka_unit_test(test_no_write_through_any_descriptor),
		cmocka_unit_test(test_share_needs_room_for_seals),
	};

	return cmocka_run_group_tests_name("fw_icl_shm", tests, NULL, NULL);
}
