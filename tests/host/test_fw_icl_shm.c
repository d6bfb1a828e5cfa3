// SPDX-License-Identifier: MIT
/*
 * ICL shared memory (nnp_icl_shm.h): what a QEMU checks of the memfd a
 * peer on its host hands over before it maps it. Mapped only when sealed
 * against shrinking, growing and new seals and of the size the hello
 * announced: a peer that could shrink a file we map would make every
 * access past its new end fault (SIGBUS) in our process. The descriptor
 * we give the peer is read-only: it can neither write nor truncate it,
 * nor map it writable, yet sees what we write.
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
#include <unistd.h>

#include <cmocka.h>

#include "nnp_icl_shm.h"

#define SIZE		(1u << 20)
#define ALL_SEALS	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static const char not_sealed[] = "the peer's memory is not sealed against "
				 "shrinking, growing and new seals";
static const char wrong_size[] = "the peer's memory is not the size its "
				 "hello announced";

/* A memfd of @size bytes with @seals added (0: none; -1: sealing not allowed). */
static int memfd(uint64_t size, int seals)
{
	int fd = memfd_create("nnp-test", MFD_CLOEXEC |
			      (seals >= 0 ? MFD_ALLOW_SEALING : 0));

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	if (seals > 0)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
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
		0, F_SEAL_GROW | F_SEAL_SEAL, F_SEAL_SHRINK | F_SEAL_SEAL,
		F_SEAL_SHRINK | F_SEAL_GROW,
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
	fd = memfd(0, ALL_SEALS);
	assert_string_equal(nnp_icl_shm_check(fd, SIZE), wrong_size);
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

/*
 * The descriptor given to the peer: it sees what the owner writes, passes
 * the checks, and can neither write, truncate nor map it writable.
 */
static void test_read_only_for_the_peer(void **state)
{
	int fd = memfd(SIZE, ALL_SEALS), ro;
	uint8_t *mine;
	const uint8_t *theirs;

	(void)state;
	ro = nnp_icl_shm_reopen_ro(fd);
	assert_true(ro >= 0);
	assert_int_equal(fcntl(ro, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_null(nnp_icl_shm_check(ro, SIZE));
	mine = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mine != MAP_FAILED);
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
	/* Nor add or take seals (F_SEAL_SEAL). */
	assert_int_equal(fcntl(ro, F_ADD_SEALS, F_SEAL_WRITE), -1);

	nnp_icl_shm_unmap(theirs, SIZE);
	munmap(mine, SIZE);
	close(ro);
	close(fd);
	assert_int_equal(nnp_icl_shm_reopen_ro(fd), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sealed_memfd_of_the_size_is_mapped),
		cmocka_unit_test(test_unsealed_refused),
		cmocka_unit_test(test_wrong_size_refused),
		cmocka_unit_test(test_not_a_memfd_refused),
		cmocka_unit_test(test_read_only_for_the_peer),
	};

	return cmocka_run_group_tests_name("fw_icl_shm", tests, NULL, NULL);
}
