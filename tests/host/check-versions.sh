#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libnnp's version is written in four places that must agree: the
# Makefile's VERSION, NNP_VERSION_CODE in <nnp/nnp.h>, the top entry of
# debian/changelog, and the nnp.3 man page; and libnnp0's symbols file,
# made from libnnp.map, lists every exported symbol of every version node
# at the version that first shipped it.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"

make_v=$(sed -n 's/^VERSION := //p' "$root/Makefile")
hdr_v=$(sed -n 's/^#define NNP_VERSION_CODE[[:space:]]*NNP_VERSION(\([0-9]*\), \([0-9]*\), \([0-9]*\))/\1.\2.\3/p' \
	"$root/libnnp/include/nnp/nnp.h")
deb_v=$(sed -n '1s/^nnp (\([^)]*\)).*/\1/p' "$root/debian/changelog")
man_v=$(sed -n '/^\.TH/s/.*"nnp \([0-9.]*\)".*/\1/p' "$root/docs/man/libnnp.3")
symbols=$(sh "$root/debian/symbols-from-map" "$root/libnnp/libnnp.map" "$deb_v")
globals=$(awk '/global:/ { g = 1; next } /local:|^}/ { g = 0 }
	g && /;/ { sub(/;.*/, ""); gsub(/[ \t]/, ""); print }' "$root/libnnp/libnnp.map" | sort)
listed=$(echo "$symbols" | sed -n 's/^ \(nnp_[a-z_0-9]*\)@.*/\1/p' | sort)

# What debian/rules hands symbols-from-map: its own VERSION.
rules_v=$(make -s -C "$root" -f debian/rules --eval 'nnp-print-version: ; @echo $(DEB_VERSION_UPSTREAM)' \
	nnp-print-version 2>&1)

tap_plan 8
tap_check "the Makefile says $make_v" test -n "$make_v"
tap_check "nnp.h's NNP_VERSION_CODE is $hdr_v, the Makefile's" test "$hdr_v" = "$make_v"
tap_check "debian/changelog's top entry is $deb_v, the Makefile's" test "$deb_v" = "$make_v"
tap_check "libnnp.3 says nnp $man_v, the Makefile's" test "$man_v" = "$make_v"
tap_check "the symbols file lists every global of libnnp.map" test "$globals" = "$listed"
tap_check "nnp_comm_split is at 0.6.0, nnp_device_get_model at 0.5.0, nnp_timestamp_async at 0.4.0, nnp_get_version at 0.3.0, nnp_comm_abort at 0.2.0" \
	bash -c 'grep -qx " nnp_comm_split@LIBNNP_0.6 0.6.0" <<<"$1" &&
		grep -qx " nnp_device_get_model@LIBNNP_0.5 0.5.0" <<<"$1" &&
		grep -qx " nnp_get_version@LIBNNP_0.3 0.3.0" <<<"$1" &&
		grep -qx " nnp_timestamp_async@LIBNNP_0.4 0.4.0" <<<"$1" &&
		grep -qx " nnp_comm_abort@LIBNNP_0.2 0.2.0" <<<"$1"' _ "$symbols"
tap_check "debian/rules knows the upstream version, $rules_v" test "$rules_v" = "$make_v"
tap_check "symbols-from-map refuses an empty VERSION" \
	bash -c '! sh "$1/debian/symbols-from-map" "$1/libnnp/libnnp.map" "" 2>/dev/null' _ "$root"
tap_done
