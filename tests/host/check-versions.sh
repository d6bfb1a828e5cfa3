#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every version written down agrees with the one the code uses. nnp's
# version, the Makefile's VERSION: NNP_VERSION_CODE in <nnp/nnp.h>, the top
# entry of debian/changelog, the .TH lines of libnnp.3 and nnptool.1, and
# the README's package files and DKMS names (nnp-dkms_X.Y.Z, nnp/X.Y.Z).
# The hardware interface's, NNP_HW_VERSION_MAJOR/MINOR: hw/nnp_hw.h's own
# first comment and docs/hw-interface.md's title. The driver interface's,
# DRM_NNP_DRIVER_MAJOR/MINOR: the last entry of the list above it and of
# docs/uapi.md's table. And libnnp0's committed symbols file,
# debian/libnnp0.symbols: every global of libnnp.map, each at the version
# its node first shipped in (LIBNNP_0 at 0.1.0, LIBNNP_0.N at 0.N.0), which
# dpkg-gensymbols -c4 holds the built library to, failing on a symbol the
# library no longer has.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_v=$(sed -n 's/^VERSION := //p' "$root/Makefile")
hdr_v=$(sed -n 's/^#define NNP_VERSION_CODE[[:space:]]*NNP_VERSION(\([0-9]*\), \([0-9]*\), \([0-9]*\))/\1.\2.\3/p' \
	"$root/libnnp/include/nnp/nnp.h")
deb_v=$(sed -n '1s/^nnp (\([^)]*\)).*/\1/p' "$root/debian/changelog")
readme_v=$(grep -oE '(_|nnp-|nnp/)[0-9]+\.[0-9]+\.[0-9]+' "$root/README.md" |
	sed -E 's/^(_|nnp-|nnp\/)//' | sort | uniq -c | sed 's/^ *//' | tr '\n' ' ')
man_v() { sed -n '/^\.TH/s/.*"nnp \([0-9.]*\)".*/\1/p' "$root/docs/man/$1"; }
hw=$root/hw/nnp_hw.h
hw_v=$(sed -n 's/^#define NNP_HW_VERSION_MAJOR[[:space:]]*\([0-9]*\)$/\1/p' "$hw").$(sed -n \
	's/^#define NNP_HW_VERSION_MINOR[[:space:]]*\([0-9]*\)$/\1/p' "$hw")
hw_comment_v=$(sed -n 's/^ \* nnp hardware interface, version \([0-9.]*\)\.$/\1/p' "$hw")
hw_doc_v=$(sed -n '1s/^# nnp hardware interface, version //p' "$root/docs/hw-interface.md")
uapi=$root/uapi/drm/nnp_accel.h
drv_v=$(sed -n 's/^#define DRM_NNP_DRIVER_MAJOR[[:space:]]*//p' "$uapi").$(sed -n \
	's/^#define DRM_NNP_DRIVER_MINOR[[:space:]]*//p' "$uapi")
drv_list_v=$(sed -n 's/^ \* \(1\.[0-9]*\): .*/\1/p' "$uapi" | tail -n 1)
drv_doc_v=$(sed -n 's/^| \(1\.[0-9]*\) | .*/\1/p' "$root/docs/uapi.md" | tail -n 1)

symbols=$root/debian/libnnp0.symbols
globals=$(awk '/global:/ { g = 1; next } /local:|^}/ { g = 0 }
	g && /;/ { sub(/;.*/, ""); gsub(/[ \t]/, ""); print }' "$root/libnnp/libnnp.map" | sort)
listed=$(sed -n 's/^ \(nnp_[a-z_0-9]*\)@.*/\1/p' "$symbols" | sort)
# A symbol's line, node and version as libnnp.map's node says they must be.
want_lines=$(awk '/^LIBNNP_[0-9.]* *\{/ { node = $1
		v = node == "LIBNNP_0" ? "0.1.0" : substr(node, 8) ".0"
		print " " node "@" node " " v; next }
	/global:/ { g = 1; next } /local:|^}/ { g = 0 }
	g && /;/ { sub(/;.*/, ""); gsub(/[ \t]/, ""); print " " $0 "@" node " " v }' \
	"$root/libnnp/libnnp.map" | sort)
got_lines=$(grep '^ ' "$symbols" | sort)

# dpkg-gensymbols as dh_makeshlibs -c4 runs it, on the library `make` built.
gensymbols() { # SYMBOLS_FILE
	mkdir -p "$tmp/pkg"
	dpkg-gensymbols -plibnnp0 -v"$make_v" -P"$tmp/pkg" \
		-e"$root/build/lib/libnnp.so.$make_v" -I"$1" -O"$tmp/out" -c4 >"$tmp/gensymbols.log" 2>&1
}
sed 's/^ nnp_recv@LIBNNP_0 0.1.0$/&\n nnp_dropped@LIBNNP_0 0.1.0/' "$symbols" >"$tmp/dropped"

tap_plan 15
tap_check "the Makefile says $make_v" test -n "$make_v"
tap_check "nnp.h's NNP_VERSION_CODE is $hdr_v, the Makefile's" test "$hdr_v" = "$make_v"
tap_check "debian/changelog's top entry is $deb_v, the Makefile's" test "$deb_v" = "$make_v"
tap_check "libnnp.3 says nnp $(man_v libnnp.3), the Makefile's" test "$(man_v libnnp.3)" = "$make_v"
tap_check "nnptool.1 says nnp $(man_v nnptool.1), the Makefile's" test "$(man_v nnptool.1)" = "$make_v"
tap_check "README.md's install lines name only $make_v (count version: $readme_v)" sh -c \
	"echo '$readme_v' | grep -qE '^[0-9]+ $make_v \$'"
tap_check "hw/nnp_hw.h defines hardware interface $hw_v" test "$hw_v" != .
tap_check "hw/nnp_hw.h's first comment says version $hw_comment_v, its defines' $hw_v" \
	test "$hw_comment_v" = "$hw_v"
tap_check "docs/hw-interface.md's title says $hw_doc_v, hw/nnp_hw.h's $hw_v" test "$hw_doc_v" = "$hw_v"
tap_check "nnp_accel.h's list of versions ends at $drv_list_v, DRM_NNP_DRIVER_MAJOR.MINOR $drv_v" \
	test "$drv_list_v" = "$drv_v"
tap_check "docs/uapi.md's table of versions ends at $drv_doc_v, the driver's $drv_v" \
	test "$drv_doc_v" = "$drv_v"
tap_check "debian/libnnp0.symbols lists every global of libnnp.map, and no other" \
	test "$globals" = "$listed"
tap_check "each symbol and node at its node's first version (LIBNNP_0.N: 0.N.0)" \
	test "$want_lines" = "$got_lines"
tap_context=$tmp/gensymbols.log tap_check "dpkg-gensymbols -c4: build/lib/libnnp.so.$make_v matches debian/libnnp0.symbols" \
	gensymbols "$symbols"
gensymbols "$tmp/dropped"
dropped_status=$?
tap_context=$tmp/gensymbols.log tap_check "dpkg-gensymbols -c4 fails (status $dropped_status) naming a listed symbol the library lacks" \
	sh -c "test $dropped_status != 0 &&
	grep -q '^+#MISSING: [0-9.]*# nnp_dropped@LIBNNP_0 0\\.1\\.0' '$tmp/gensymbols.log'"
tap_done
