#!/usr/bin/env bash
# libnnp as a user gets it: `make install` into a scratch prefix, then an
# example program built with pkg-config against the shared library (linked
# by soname) and against the static one. On the host there is no nnp driver,
# so the program and nnptool must say exactly that and fail.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
tap_plan 8

make -s -C "$root" install PREFIX="$prefix" >"$tmp/install.log" 2>&1
tap_check "make install PREFIX=..." test -f "$prefix/lib/pkgconfig/nnp.pc"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
tap_check "pkg-config knows nnp $(sed -n 's/^VERSION := //p' "$root/Makefile")" \
	test "$(pkg-config --modversion nnp)" = "$(sed -n 's/^VERSION := //p' "$root/Makefile")"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/shared" "$root/examples/list_devices.c" \
	$(pkg-config --cflags --libs nnp) 2>"$tmp/cc.log"
tap_check "example builds with pkg-config" test -x "$tmp/shared"
tap_check "example links libnnp by soname libnnp.so.0" sh -c \
	"readelf -d '$tmp/shared' | grep -q 'NEEDED.*\[libnnp.so.0\]'"
LD_LIBRARY_PATH=$prefix/lib "$tmp/shared" >"$tmp/out" 2>&1
echo "status=$?" >>"$tmp/out"
tap_grep "without the driver the example says so and fails" "$tmp/out" \
	"^no nnp devices: nnp driver not loaded"
# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror -o "$tmp/static" "$root/examples/list_devices.c" \
	$(pkg-config --cflags nnp) "$prefix/lib/libnnp.a" $(pkg-config --libs libdrm) &&
	! readelf -d "$tmp/static" | grep -q libnnp &&
	"$tmp/static" 2>&1 | grep -q "nnp driver not loaded"; then
	tap_ok "example links libnnp.a statically"
else
	tap_not_ok "example links libnnp.a statically"
fi
"$prefix/bin/nnptool" list >"$tmp/tool" 2>&1
echo "status=$?" >>"$tmp/tool"
tap_grep "installed nnptool: no driver, exit 1" "$tmp/tool" '^status=1$'
tap_grep "installed nnptool: says the driver is not loaded" "$tmp/tool" \
	'^nnptool: list: nnp driver not loaded'

tap_done
