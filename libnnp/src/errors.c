// SPDX-License-Identifier: MIT
/* libnnp result codes as text, and errno to result code. */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "log.h"

const char *nnp_strerror(nnp_result_t result)
{
	switch (result) {
	case NNP_SUCCESS:
		return "success";
	case NNP_ERROR_INVALID_ARGUMENT:
		return "invalid argument";
	case NNP_ERROR_NO_DRIVER:
		return "nnp driver not loaded (load it with 'modprobe nnp')";
	case NNP_ERROR_NO_DEVICE:
		return "no such nnp device";
	case NNP_ERROR_PERMISSION:
		return "permission denied on the nnp device node";
	case NNP_ERROR_OUT_OF_MEMORY:
		return "out of memory";
	case NNP_ERROR_NOT_SUPPORTED:
		return "not supported by this driver or device";
	case NNP_ERROR_DEVICE_LOST:
		return "nnp device was removed or reset";
	case NNP_ERROR_IO:
		return "system error talking to the nnp device";
	case NNP_ERROR_OUT_OF_DEVICE_MEMORY:
		return "out of device memory";
	case NNP_ERROR_TIMEOUT:
		return "timed out waiting for the device";
	case NNP_ERROR_NOT_READY:
		return "work still in progress";
	case NNP_ERROR_COMMAND_FAILED:
		return "the device refused a queued command; the stream is stopped";
	case NNP_ERROR_BUSY:
		return "every queue of the device is in use";
	case NNP_ERROR_NO_PATH:
		return "the chips are not connected by a usable inter-chip link";
	case NNP_ERROR_COMM_FAILED:
		return "a collective of the communicator failed; abort it and make a new one";
	case NNP_ERROR_VERSION:
		return "the nnp driver's interface version is not one this libnnp speaks";
	case NNP_IN_PROGRESS:
		return "the communicator is still being made";
	case NNP_ERROR_MISMATCH:
		return "the ranks called a collective differently; the communicator is failed";
	}
	return "unknown nnp result code";
}

nnp_result_t nnp_result_from_errno(int err)
{
	switch (err) {
	case 0:
		return NNP_SUCCESS;
	case EINVAL:
	case ENOSPC:
	case EFAULT:
		return NNP_ERROR_INVALID_ARGUMENT;
	case ENOENT:
	case ENXIO:
		return NNP_ERROR_NO_DEVICE;
	case ENODEV:
	case ECANCELED:	/* a reset took the file's context */
		return NNP_ERROR_DEVICE_LOST;
	case EACCES:
	case EPERM:
		return NNP_ERROR_PERMISSION;
	case ENOMEM:
		return NNP_ERROR_OUT_OF_MEMORY;
	case EOPNOTSUPP:
	case ENOTTY:
		return NNP_ERROR_NOT_SUPPORTED;
	case ETIMEDOUT:
		return NNP_ERROR_TIMEOUT;
	case EBUSY:
		return NNP_ERROR_BUSY;
	default:
		return NNP_ERROR_IO;
	}
}

nnp_result_t nnp_ioctl_failed(const nnp_device_t *dev, const char *what, int err)
{
	return nnp_fail(nnp_result_from_errno(err), "%s: %s failed: %s", dev->path,
			what, strerror(err));
}
