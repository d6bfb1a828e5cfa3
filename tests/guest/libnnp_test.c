// SPDX-License-Identifier: MIT
/* libnnp against the real driver: enumeration, open, info, result codes. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "guest_env.h"
#include "kselftest_harness.h"

TEST(count_matches_the_vm)
{
	int count = -1;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_count(&count));
	EXPECT_EQ(GUEST_CHIPS, count);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_count(NULL));
}

TEST(open_each_device_in_node_order)
{
	int i, last_minor = -1;

	for (i = 0; i < GUEST_CHIPS; i++) {
		struct nnp_device_info in;
		nnp_device_t *dev = NULL;
		struct stat st;
		int minor;

		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(i, &dev));
		ASSERT_NE(NULL, dev);
		ASSERT_GE(nnp_device_fd(dev), 0);
		ASSERT_EQ(0, fstat(nnp_device_fd(dev), &st));
		EXPECT_TRUE(S_ISCHR(st.st_mode));
		ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &in));
		ASSERT_EQ(1, sscanf(in.path, "/dev/accel/accel%d", &minor));
		EXPECT_GT(minor, last_minor);
		last_minor = minor;
		EXPECT_EQ(GUEST_MEM_SIZE, in.mem_size);
		EXPECT_EQ(NNP_DEVICE_CAP_ADMIN_QUEUE | NNP_DEVICE_CAP_USER_QUEUES, in.caps);
		EXPECT_STREQ(GUEST_FW_BUILD, in.fw_build);
		EXPECT_EQ(1u, NNP_VERSION_MAJOR(in.fw_version));
		nnp_device_close(dev);
	}
}

TEST(open_by_path)
{
	struct nnp_device_info a, b;
	nnp_device_t *dev;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &a));
	nnp_device_close(dev);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open_path(a.path, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_get_info(dev, &b));
	nnp_device_close(dev);
	EXPECT_EQ(a.chip_id, b.chip_id);
	EXPECT_STREQ(a.path, b.path);
}

TEST(bad_arguments)
{
	nnp_device_t *dev = (nnp_device_t *)1;
	struct nnp_device_info in;

	EXPECT_EQ(NNP_ERROR_NO_DEVICE, nnp_device_open(GUEST_CHIPS, &dev));
	EXPECT_EQ(NULL, dev);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_open(-1, &dev));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_open(0, NULL));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_open_path(NULL, &dev));
	EXPECT_EQ(NNP_ERROR_NO_DEVICE, nnp_device_open_path("/dev/accel/none", &dev));
	/* A character device that is not an nnp node. */
	EXPECT_EQ(NNP_ERROR_NO_DEVICE, nnp_device_open_path("/dev/null", &dev));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_device_get_info(NULL, &in));
	EXPECT_EQ(-1, nnp_device_fd(NULL));
	nnp_device_close(NULL);
}

TEST(every_result_has_its_own_text)
{
	nnp_result_t r, s;

	for (r = NNP_SUCCESS; r <= NNP_ERROR_NO_PATH; r++) {
		ASSERT_NE(NULL, nnp_strerror(r));
		EXPECT_GT(strlen(nnp_strerror(r)), 4);
		for (s = NNP_SUCCESS; s < r; s++)
			EXPECT_STRNE(nnp_strerror(s), nnp_strerror(r));
	}
	EXPECT_STREQ("unknown nnp result code", nnp_strerror((nnp_result_t)1000));
	EXPECT_STREQ("success", nnp_strerror(NNP_SUCCESS));
}

TEST_HARNESS_MAIN
