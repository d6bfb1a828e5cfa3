#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make check-deb: the packages `make deb` built, checked as a user meets
# them, for the Debian release this machine runs (12, bookworm, or 13,
# trixie: packages are built for the release they run on). lintian on the
# host (no errors allowed); then, in a clean root of that release
# (debootstrap minbase, cached in build/check-deb/base, or
# build/check-deb-trixie/base, a fresh copy per run), apt installs the
# five packages with 6.12 kernel headers (bookworm: the guest kernel's;
# trixie: its own kernel's, linux-headers-amd64's), a compiler and udev: DKMS must build and install nnp.ko for that
# kernel, examples/list_devices.c and ring_allreduce.c must build with
# pkg-config against libnnp-dev, they and nnptool must say that the driver
# is not loaded, and udev must parse the rule without a complaint; torch
# (which apt brings for python3-torch-nnp) must have an "nnp" backend after
# import torch_nnp, whose process group says the driver is not loaded, its
# module finding libnnp.so.0 without an rpath, and its entry point for
# torch's autoloading installed. Then the ways back out: apt purges the
# packages (dh-dkms's dkms remove takes nnp.ko out of the kernel's tree); from a copy of this checkout, `make
# install-dkms` and `dkms add` then `make uninstall-dkms` leave DKMS
# knowing no nnp, and `make install` (which builds nnptool: json-c's
# headers are installed for it) then `make uninstall` leave no file
# in /usr/local that was not there before (the directories install made,
# such as lib/<multiarch>, stay, as automake's uninstall leaves them). TAP.
# Usage: check-deb.sh DEBDIR   (needs root)
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
debs=$(realpath "$1")
dist=$(. /etc/os-release && echo "$VERSION_CODENAME")
case $dist in
bookworm) work=$repo/build/check-deb ;;
trixie) work=$repo/build/check-deb-trixie ;;
*)
	echo "check-deb: Debian '$dist' is not a release nnp packages for (bookworm, trixie)" >&2
	exit 1
	;;
esac
base=$work/base root=$work/root
version=$(sed -n 's/^VERSION := //p' "$repo/Makefile")
. "$repo/scripts/lib/debian-root.sh"
. "$repo/tests/lib/tap.sh"
trap 'debian_root_unmount "$root"; umount "$root/var/cache/apt/archives" 2>/dev/null' EXIT
[ "$(id -u)" = 0 ] || { echo "check-deb: needs root (debootstrap, chroot)" >&2; exit 1; }
# INITRD=No: the kernel image the headers depend on needs no initramfs here.
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive INITRD=No "$@"; }
start=$SECONDS
tap_plan 18

mkdir -p "$work"
lintian --fail-on error "$debs"/*.changes >"$work/lintian.log" 2>&1
lint=$?
tap_context=$work/lintian.log tap_check "lintian: no errors in the five packages" \
	test "$lint" = 0 -a "$(ls "$debs"/*.deb | grep -vc dbgsym)" = 5

if [ ! -f "$base/.nnp-base" ]; then
	echo "# debootstrap $dist into $base (once; cached)"
	debian_root_create "$base" "$work/debootstrap.log" ca-certificates "$dist" || exit 1
	touch "$base/.nnp-base"
fi
debian_root_unmount "$root"
rm -rf "$root"
cp -a "$base" "$root"
mkdir -p "$work/apt-archives" "$root/tmp/debs"
mount --bind "$work/apt-archives" "$root/var/cache/apt/archives"
debian_root_mount "$root"
cp "$debs"/nnp-dkms_*.deb "$debs"/libnnp0_*.deb "$debs"/libnnp-dev_*.deb \
	"$debs"/nnptool_*.deb "$debs"/python3-torch-nnp_*.deb "$root/tmp/debs/"
# The kernel the headers are for: the guest's on bookworm, trixie's own.
if [ "$dist" = bookworm ]; then
	kver=$(cat "$repo/build/sysroot/kernel-release")
else
	kver=$(in_root sh -c 'apt-get update -q >/dev/null && apt-cache depends linux-headers-amd64' |
		sed -n 's/^ *Depends: linux-headers-\(6\.12\.[^ ]*-amd64\)$/\1/p' | head -n 1)
	[ -n "$kver" ] || { echo "check-deb: no 6.12 headers behind trixie's linux-headers-amd64" >&2; exit 1; }
fi
echo "# root ready after $((SECONDS - start)) s; apt install for $kver (log: $work/apt.log)"
# shellcheck disable=SC2046
in_root sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends \
	/tmp/debs/*.deb linux-headers-$kver gcc libc6-dev make pkg-config udev \
	libjson-c-dev" \
	>"$work/apt.log" 2>&1
in_root dpkg-query -W -f='${Status}\n' nnp-dkms libnnp0 libnnp-dev nnptool \
	python3-torch-nnp "linux-headers-$kver" >"$work/status" 2>&1
tap_context=$work/apt.log tap_check "apt installs nnp-dkms, libnnp0, libnnp-dev, nnptool, python3-torch-nnp, linux-headers-$kver" sh -c \
	"test \$(grep -cx 'install ok installed' '$work/status') = 6"
echo "# apt install, DKMS build included: done after $((SECONDS - start)) s"

in_root dkms status >"$work/dkms.log" 2>&1
tap_context=$work/dkms.log tap_grep "DKMS built and installed nnp/$version for $kver" \
	"$work/dkms.log" "^nnp/$version, ${kver//+/\\+}, $(uname -m): installed"
tap_check "modinfo: nnp.ko for $kver where modprobe finds it" sh -c \
	"chroot '$root' modinfo -k '$kver' -F vermagic nnp | grep -q '^$kver '"

cp "$repo/examples/list_devices.c" "$repo/examples/ring_allreduce.c" "$root/tmp/"
in_root sh -c 'cd /tmp && cc -Wall -Wextra -Werror -o list_devices list_devices.c \
	$(pkg-config --cflags --libs nnp) && cc -Wall -Wextra -Werror -o ring_allreduce \
	ring_allreduce.c $(pkg-config --cflags --libs nnp)' >"$work/cc.log" 2>&1
tap_context=$work/cc.log tap_check "list_devices.c and ring_allreduce.c build with pkg-config nnp" \
	test -x "$root/tmp/list_devices" -a -x "$root/tmp/ring_allreduce"
in_root /tmp/list_devices >"$work/run.log" 2>&1
echo "status=$?" >>"$work/run.log"
tap_check "list_devices: 'nnp driver not loaded', exit 1" sh -c \
	"grep -q '^no nnp devices: nnp driver not loaded' '$work/run.log' && grep -qx status=1 '$work/run.log'"
in_root nnptool list >"$work/tool.log" 2>&1
echo "status=$?" >>"$work/tool.log"
tap_check "nnptool list: 'nnp driver not loaded', exit 1" sh -c \
	"grep -q '^nnptool: list: nnp driver not loaded' '$work/tool.log' && grep -qx status=1 '$work/tool.log'"
tap_check "libnnp.so.0 resolves from the multiarch directory" sh -c \
	"chroot '$root' ldd /usr/bin/nnptool | grep -q 'libnnp.so.0 => /lib/x86_64-linux-gnu/libnnp.so.0\|libnnp.so.0 => /usr/lib/x86_64-linux-gnu/libnnp.so.0'"

# The backend as a training script meets it, on a machine without nnp.ko.
in_root python3 -c 'import torch.distributed as dist, torch_nnp
dist.init_process_group("nnp", store=dist.HashStore(), rank=0, world_size=1)' \
	>"$work/torch.log" 2>&1
echo "status=$?" >>"$work/torch.log"
tap_context=$work/torch.log tap_check "import torch_nnp: init_process_group(\"nnp\") says the driver is not loaded, exit 1" sh -c \
	"grep -q '^RuntimeError: nnp: counting the devices: .*not loaded' '$work/torch.log' &&
	 grep -qx status=1 '$work/torch.log'"
so=$(cd "$root" && find usr/lib/python3/dist-packages/torch_nnp -name '_C*.so')
tap_check "torch_nnp's module finds libnnp.so.0 in the multiarch directory, with no rpath" sh -c \
	"chroot '$root' ldd '/$so' | grep -q 'libnnp.so.0 => /.*lib/x86_64-linux-gnu/libnnp.so.0' &&
	 ! readelf -d '$root/$so' | grep -q 'RPATH\|RUNPATH'"
in_root python3 -c 'from importlib.metadata import entry_points
print(*(e.value for e in entry_points(group="torch.backends") if e.name == "nnp"))' \
	>"$work/entry.log" 2>&1
tap_context=$work/entry.log tap_check "torch's autoloading entry point: nnp = torch_nnp:_autoload" \
	grep -qx 'torch_nnp:_autoload' "$work/entry.log"

# udev's own parser: every rule file is read for any device's test run.
in_root udevadm test /sys/devices/virtual/mem/null >"$work/udev.log" 2>&1
tap_check "udevadm reads 60-nnp.rules and has nothing to say about it" sh -c \
	"grep -q 'Reading rules file: /lib/udev/rules.d/60-nnp.rules\|60-nnp.rules' '$work/udev.log' &&
	 ! grep '60-nnp.rules' '$work/udev.log' | grep -qiE 'invalid|error|unknown|ignor|fail'"
tap_check "group render exists for the rule" sh -c "chroot '$root' getent group render >/dev/null"

in_root apt-get purge -y -q nnp-dkms libnnp0 libnnp-dev nnptool python3-torch-nnp \
	>"$work/purge.log" 2>&1
in_root dkms status >>"$work/purge.log" 2>&1
tap_context=$work/purge.log tap_check "apt purge: DKMS knows no nnp, and no nnp.ko is left for $kver" sh -c \
	"test -z \"\$(chroot '$root' dkms status)\" &&
	 test -z \"\$(find '$root/lib/modules/$kver' -name 'nnp.ko*')\""
tap_check "apt purge: /usr/src/nnp-$version, the headers, the rule, nnptool and torch_nnp gone" sh -c \
	"test ! -e '$root/usr/src/nnp-$version' -a ! -e '$root/usr/include/libnnp' -a \
	 ! -e '$root/usr/include/nnp' -a ! -e '$root/lib/udev/rules.d/60-nnp.rules' -a \
	 ! -e '$root/usr/bin/nnptool' -a ! -e '$root/usr/lib/python3/dist-packages/torch_nnp'"

mkdir -p "$root/tmp/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -xf - -C "$root/tmp/src"
in_root sh -c "make -C /tmp/src install-dkms && dkms add nnp/$version && dkms status &&
	make -C /tmp/src uninstall-dkms && dkms status" >"$work/uninstall-dkms.log" 2>&1
tap_context=$work/uninstall-dkms.log tap_check "make install-dkms, dkms add: nnp/$version added" \
	grep -q "^nnp/$version: added" "$work/uninstall-dkms.log"
tap_context=$work/uninstall-dkms.log tap_check "make uninstall-dkms: dkms remove, then DKMS knows no nnp; source and rule gone" sh -c \
	"grep -Eq 'Deleting module nnp[-/]$version completely from the DKMS tree' '$work/uninstall-dkms.log' &&
	 test -z \"\$(chroot '$root' dkms status)\" &&
	 test ! -e '$root/usr/src/nnp-$version' -a ! -e '$root/lib/udev/rules.d/60-nnp.rules'"
(cd "$root/usr/local" && find . ! -type d | sort) >"$work/local-before"
in_root sh -c "make -C /tmp/src install && make -C /tmp/src uninstall" >"$work/uninstall.log" 2>&1
(cd "$root/usr/local" && find . ! -type d | sort) >"$work/local-after"
tap_context=$work/uninstall.log tap_check "make install, then make uninstall: no file left in /usr/local, nor include/nnp or include/libnnp" sh -c \
	"test -x '$root/tmp/src/build/install/nnptool' && diff -u '$work/local-before' '$work/local-after' &&
	 test ! -e '$root/usr/local/include/nnp' -a ! -e '$root/usr/local/include/libnnp'"

echo "# check-deb: $((SECONDS - start)) s"
tap_done
