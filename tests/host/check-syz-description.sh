#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The syzkaller description (uapi/drm/nnp_accel.txt) matches the uapi
# header, and the check catches each kind of drift: first on the real
# files, then on copies with one thing changed.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check=(python3 "$root/tests/host/check-syz-description.py")
hdr=$root/uapi/drm/nnp_accel.h
desc=$root/uapi/drm/nnp_accel.txt

# drift NAME EXPECTED_PROBLEM_ERE HEADER_SED DESC_SED: the check must fail on
# copies edited by the two sed scripts, naming the expected problem.
drift() {
	sed "$3" "$hdr" >"$tmp/nnp_accel.h"
	sed "$4" "$desc" >"$tmp/nnp_accel.txt"
	if "${check[@]}" --header "$tmp/nnp_accel.h" --desc "$tmp/nnp_accel.txt" \
		>"$tmp/out" 2>&1; then
		tap_not_ok "$1 (the check passed)"
	else
		tap_context=$tmp/out tap_grep "$1" "$tmp/out" "$2"
	fi
}

tap_plan 7
if "${check[@]}" >"$tmp/out" 2>&1; then
	tap_ok "the description matches uapi/drm/nnp_accel.h"
else
	sed 's/^/# /' "$tmp/out"
	tap_not_ok "the description matches uapi/drm/nnp_accel.h"
fi
drift "a field missing from the description is caught" \
	'^drm_nnp_device_info: fields .* has .*fw_heartbeat' '' '/^\tfw_heartbeat/d'
drift "a field added to the header is caught" \
	'^drm_nnp_counters: 56 bytes, struct drm_nnp_counters has 64' \
	's/^\t__u64 mem_objects;/&\n\t__u64 added;/' ''
drift "an ioctl added to the header is caught" \
	'^DRM_IOCTL_NNP_ADDED is not described' \
	's/^#define DRM_IOCTL_NNP_COMM_DESTROY \\/#define DRM_IOCTL_NNP_ADDED \\\n\tDRM_IOW(DRM_COMMAND_BASE + 0x20, struct drm_nnp_queue_op)\n&/' ''
drift "a wrong direction is caught" \
	'^ioctl\$DRM_IOCTL_NNP_QUEUE_DESTROY: ptr\[inout, \.\.\.\], the ioctl number says in$' \
	'' 's/QUEUE_DESTROY\], arg ptr\[in,/QUEUE_DESTROY], arg ptr[inout,/'
drift "a field of the wrong size is caught" \
	'^drm_nnp_device_info\.fw_heartbeat: offset 40, struct drm_nnp_device_info has it at 36$' \
	'' 's/^\tnum_queues\tint32/\tnum_queues\tint64/'
drift "a struct no call uses is caught" \
	'^drm_nnp_unused is not used by any call' '' '$a drm_nnp_unused {\n\tx\tint32\n}'
tap_done
