#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libnnp as a user gets it: `make install` into a scratch prefix, then the
# examples built with pkg-config against the shared library (linked by
# soname) and against the static one, ring_allreduce.c through the
# installed <drm/nnp_accel.h> (in INCLUDEDIR/libnnp/drm, which nnp.pc's
# Cflags name: /usr/include/drm is linux-libc-dev's). On the host there is no nnp driver, so the
# program and nnptool must say exactly that and fail. Then the layout a
# distribution gets with DESTDIR: PREFIX=/usr puts the library in Debian's
# multiarch directory, LIBDIR moves it, and `make install-dkms` lays out
# the module's DKMS source and the udev rule (Slurm's TaskProlog in
# LIBEXECDIR/nnp); `make uninstall` and
# `make uninstall-dkms` take away exactly what they put, and nothing else.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
dest=$tmp/dest
version=$(sed -n 's/^VERSION := //p' "$root/Makefile")
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
tap_plan 23

make -s -C "$root" install PREFIX="$prefix" >"$tmp/install.log" 2>&1
tap_check "make install PREFIX=...: nnp.pc in lib/$ma/pkgconfig" \
	test -f "$prefix/lib/$ma/pkgconfig/nnp.pc"
export PKG_CONFIG_PATH=$prefix/lib/$ma/pkgconfig
tap_check "pkg-config knows nnp $version" test "$(pkg-config --modversion nnp)" = "$version"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/shared" "$root/examples/list_devices.c" \
	$(pkg-config --cflags --libs nnp) 2>"$tmp/cc.log"
tap_check "example builds with pkg-config" test -x "$tmp/shared"
tap_check "example links libnnp by soname libnnp.so.0" sh -c \
	"readelf -d '$tmp/shared' | grep -q 'NEEDED.*\[libnnp.so.0\]'"
LD_LIBRARY_PATH=$prefix/lib/$ma "$tmp/shared" >"$tmp/out" 2>&1
echo "status=$?" >>"$tmp/out"
tap_check "without the driver the example says so and fails (exit 1)" sh -c \
	"grep -q '^no nnp devices: nnp driver not loaded' '$tmp/out' &&
	 grep -qx 'status=1' '$tmp/out'"
# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror -o "$tmp/static" "$root/examples/list_devices.c" \
	$(pkg-config --cflags nnp) "$prefix/lib/$ma/libnnp.a" $(pkg-config --libs libdrm nettle) &&
	! readelf -d "$tmp/static" | grep -q libnnp &&
	{ "$tmp/static" >"$tmp/static.out" 2>&1; test $? = 1; } &&
	grep -q "^no nnp devices: nnp driver not loaded" "$tmp/static.out"; then
	tap_ok "example links libnnp.a statically, says so and exits 1"
else
	tap_not_ok "example links libnnp.a statically, says so and exits 1"
fi
# shellcheck disable=SC2046
tap_check "ring_allreduce.c builds against the installed <drm/nnp_accel.h>" \
	cc -std=c11 -Wall -Wextra -Werror -o "$tmp/ring" "$root/examples/ring_allreduce.c" \
	$(pkg-config --cflags --libs nnp)
LD_LIBRARY_PATH=$prefix/lib/$ma "$prefix/bin/nnptool" list >"$tmp/tool" 2>&1
echo "status=$?" >>"$tmp/tool"
tap_grep "installed nnptool: no driver, exit 1" "$tmp/tool" '^status=1$'
tap_grep "installed nnptool: says the driver is not loaded" "$tmp/tool" \
	'^nnptool: list: nnp driver not loaded'
tap_check "installed nnptool has no rpath into the build tree" sh -c \
	"! readelf -d '$prefix/bin/nnptool' | grep -qE 'RPATH|RUNPATH'"

make -s -C "$root" install DESTDIR="$dest" PREFIX=/usr >"$tmp/install.log" 2>&1
(cd "$dest" && find . ! -type d | sort) >"$tmp/files"
cat >"$tmp/want" <<WANT
./usr/bin/nnptool
./usr/include/libnnp/drm/nnp_accel.h
./usr/include/libnnp/drm/nnp_coredump.h
./usr/include/nnp/nnp.h
./usr/lib/$ma/libnnp.a
./usr/lib/$ma/libnnp.so
./usr/lib/$ma/libnnp.so.0
./usr/lib/$ma/libnnp.so.$version
./usr/lib/$ma/pkgconfig/nnp.pc
./usr/libexec/nnp/nnp-task-prolog
./usr/share/man/man1/nnptool.1
./usr/share/man/man3/libnnp.3
WANT
tap_check "DESTDIR= PREFIX=/usr: exactly the files of a multiarch install" \
	diff -u "$tmp/want" "$tmp/files"
tap_check "nnp.pc names the installed directories, not DESTDIR" sh -c \
	"grep -qx 'libdir=/usr/lib/$ma' '$dest/usr/lib/$ma/pkgconfig/nnp.pc' &&
	 grep -qx 'includedir=/usr/include' '$dest/usr/lib/$ma/pkgconfig/nnp.pc'"
tap_check "libnnp.so.0 is a link to libnnp.so.$version" \
	test "$(readlink "$dest/usr/lib/$ma/libnnp.so.0")" = "libnnp.so.$version"
tap_check "nnp.pc's Cflags: the include directory and its libnnp/, not /usr/include/drm" \
	grep -qx 'Cflags: -I${includedir} -I${includedir}/libnnp' "$dest/usr/lib/$ma/pkgconfig/nnp.pc"
# Someone else's file where ours go, which uninstall must leave.
mkdir -p "$dest/usr/include/drm" && echo other >"$dest/usr/include/drm/drm.h"
make -s -C "$root" uninstall DESTDIR="$dest" PREFIX=/usr >"$tmp/uninstall.log" 2>&1
(cd "$dest" && find . | sort) >"$tmp/left"
printf '%s\n' . ./usr ./usr/bin ./usr/include ./usr/include/drm ./usr/include/drm/drm.h ./usr/lib \
	"./usr/lib/$ma" "./usr/lib/$ma/pkgconfig" ./usr/libexec ./usr/share ./usr/share/man ./usr/share/man/man1 \
	./usr/share/man/man3 >"$tmp/want-left"
tap_context="$tmp/uninstall.log" tap_check "make uninstall: every file install put gone, and nnp/ and libnnp/, and nothing else" \
	diff -u "$tmp/want-left" "$tmp/left"
rm -rf "$dest"
make -s -C "$root" install DESTDIR="$dest" PREFIX=/opt/nnp LIBDIR=/opt/nnp/lib64 \
	>"$tmp/install.log" 2>&1
tap_check "LIBDIR=/opt/nnp/lib64: the library and nnp.pc go there" sh -c \
	"test -f '$dest/opt/nnp/lib64/libnnp.so.$version' &&
	 grep -qx 'libdir=/opt/nnp/lib64' '$dest/opt/nnp/lib64/pkgconfig/nnp.pc' &&
	 test ! -e '$dest/opt/nnp/lib'"

rm -rf "$dest"
make -s -C "$root" install-dkms DESTDIR="$dest" >"$tmp/install.log" 2>&1
src=$dest/usr/src/nnp-$version
tap_check "install-dkms: dkms.conf for nnp $version in /usr/src/nnp-$version" sh -c \
	"grep -qx 'PACKAGE_NAME=\"nnp\"' '$src/dkms.conf' &&
	 grep -qx 'PACKAGE_VERSION=\"$version\"' '$src/dkms.conf'"
tap_check "install-dkms: Kbuild and every driver source the module is built from" sh -c \
	"cd '$root' && for f in Kbuild driver/*.c driver/*.h hw/nnp_hw.h uapi/drm/nnp_accel.h \
		uapi/drm/nnp_coredump.h; do
		cmp -s \"\$f\" '$src/'\"\$f\" || exit 1; done"
tap_check "install-dkms: no build products in the DKMS source" sh -c \
	"! find '$src' -name '*.o' -o -name '*.ko' -o -name '*.mod*' | grep -q ."
rule=$dest/lib/udev/rules.d/60-nnp.rules
tap_check "install-dkms: the udev rule in /lib/udev/rules.d" test -f "$rule"
tap_check "udev rule: nodes of the nnp driver's devices, group render, mode 0660" sh -c \
	"grep -v '^#' '$rule' | grep -qx 'SUBSYSTEM==\"accel\", KERNEL==\"accel\[0-9\]\*\", DRIVERS==\"nnp\", GROUP=\"render\", MODE=\"0660\"'"
echo other >"$dest/lib/udev/rules.d/50-other.rules"
make -s -C "$root" uninstall-dkms DESTDIR="$dest" >"$tmp/uninstall.log" 2>&1
tap_context="$tmp/uninstall.log" tap_check "make uninstall-dkms: /usr/src/nnp-$version and the rule gone" \
	test ! -e "$src" -a ! -e "$rule"
tap_check "make uninstall-dkms: another rule and /usr/src stay" \
	test -f "$dest/lib/udev/rules.d/50-other.rules" -a -d "$dest/usr/src"

tap_done
