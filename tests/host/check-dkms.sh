#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The module as DKMS builds it on an operator's machine: `make install-dkms`
# lays out /usr/src/nnp-VERSION (in a scratch DESTDIR), then dkms itself
# adds and builds it against the guest kernel's 6.12 headers in
# build/sysroot, in a DKMS tree of its own (nothing of the host's DKMS
# state is touched). The nnp.ko it makes must be for that kernel. Then
# `make uninstall-dkms` has dkms remove it and takes the source and the
# udev rule away.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^VERSION := //p' "$root/Makefile")
kver=$(cat "$root/build/sysroot/kernel-release")
kdir=$(realpath "$root/build/sysroot/build")
dkms_args=(--sourcetree "$tmp/dest/usr/src" --dkmstree "$tmp/dkms" -m nnp -v "$version")
tap_plan 6

make -s -C "$root" install-dkms DESTDIR="$tmp/dest" >"$tmp/log" 2>&1
mkdir -p "$tmp/dkms"
tap_context=$tmp/log tap_check "dkms add nnp/$version" \
	sh -c "dkms add ${dkms_args[*]} >>'$tmp/log' 2>&1"
start=$(date +%s)
tap_context=$tmp/log tap_check "dkms build nnp/$version for $kver against build/sysroot's headers" \
	sh -c "dkms build ${dkms_args[*]} -k '$kver' --kernelsourcedir '$kdir' >>'$tmp/log' 2>&1"
echo "# dkms build: $(($(date +%s) - start)) s"
ko=$tmp/dkms/nnp/$version/$kver/$(uname -m)/module/nnp.ko
tap_check "DKMS made nnp.ko for $kver" sh -c \
	"modinfo -F vermagic '$ko' | grep -q '^$kver '"
tap_check "dkms status: nnp/$version built for $kver" sh -c \
	"dkms status ${dkms_args[*]} -k '$kver' | grep -q ': built$'"

make -s -C "$root" uninstall-dkms DKMS_ARGS="--sourcetree $tmp/dest/usr/src --dkmstree $tmp/dkms" \
	DKMSDIR="$tmp/dest/usr/src/nnp-$version" UDEVRULESDIR="$tmp/dest/lib/udev/rules.d" \
	>"$tmp/log" 2>&1
dkms status "${dkms_args[@]}" >>"$tmp/log" 2>&1
# What dkms remove left, not what it said: DKMS 3.2 (Debian 13) names
# the module nnp/VERSION where 3.0 (Debian 12) said nnp-VERSION.
tap_context=$tmp/log tap_check "make uninstall-dkms: dkms remove, nnp/$version gone from the DKMS tree and its status" \
	sh -c "test ! -e '$tmp/dkms/nnp/$version' && test ! -e '$ko' &&
	test -z \"\$(dkms status ${dkms_args[*]})\""
tap_check "make uninstall-dkms: /usr/src/nnp-$version and 60-nnp.rules gone" \
	test ! -e "$tmp/dest/usr/src/nnp-$version" -a ! -e "$tmp/dest/lib/udev/rules.d/60-nnp.rules"
tap_done
