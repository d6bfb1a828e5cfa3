#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the debug guest kernel (KASAN, lockdep, kmemleak, UBSAN, fault
# injection: scripts/debug-kernel.config) from Debian's linux-source-6.12,
# laid out as a sysroot like scripts/fetch-kernel.sh's, so mkinitramfs.sh
# and tools/nnp-vm take either:
#   SYSROOT/kernel-release         the release string (6.12.N-nnp-debug)
#   SYSROOT/boot/vmlinuz-RELEASE   the kernel
#   SYSROOT/lib/modules/RELEASE/   drm.ko, e1000.ko, modules.dep
#   SYSROOT/build                  the build tree: KDIR for nnp.ko
# Usage: build-debug-kernel.sh SYSROOT
# SYSROOT becomes a symlink to CACHE/debug-kernel/KEY, KEY being the hash
# of the fragment's settings and the source package's version: a build whose KEY is
# already there is reused, and a changed fragment gets a build of its own.
# CACHE is the machine's, shared by every checkout, so a fresh clone on a
# machine that built this kernel before takes it in a second instead of a
# cold build of about 13 minutes: $NNP_CACHE_DIR if set, else
# /var/cache/nnp for root, else ~/.cache/nnp. Remove it to start afresh.
set -euo pipefail
sysroot=$1
here=$(dirname "$(realpath "$0")")
fragment=$here/debug-kernel.config
tarball=/usr/src/linux-source-6.12.tar.xz
jobs=${NNP_KERNEL_JOBS:-2}

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
# Its settings only: a comment changed in the fragment reuses the build.
key=$( { grep -E '^(CONFIG_|# CONFIG_)' "$fragment"; echo "linux-source-6.12 $srcver"; } |
	sha256sum | cut -c1-16)
if [ -n "${NNP_CACHE_DIR:-}" ]; then
	cache=$NNP_CACHE_DIR
elif [ "$(id -u)" = 0 ]; then
	cache=/var/cache/nnp
else
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/nnp
fi
cache=$cache/debug-kernel
mkdir -p "$cache"
cache=$(realpath "$cache")
out=$cache/$key
link() { ln -sfn "$out" "$sysroot"; }
# One build of a KEY at a time, whichever checkout asks for it.
exec 9>"$cache/$key.lock"
flock 9
# A cached build: touched, so that make sees it newer than what it was
# asked to be rebuilt for.
if [ -f "$out/kernel-release" ]; then
	echo "build-debug-kernel: the cached build $out"
	link
	touch "$out/kernel-release"
	exit 0
fi

# The source, extracted once per source package version.
src=$cache/src-$srcver
if [ ! -f "$src/.nnp-extracted" ]; then
	echo "build-debug-kernel: extracting $tarball into $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xf "$tarball" -C "$src.tmp" --strip-components=1
	touch "$src.tmp/.nnp-extracted"
	mv "$src.tmp" "$src"
fi
src=$(realpath "$src")

# Every line of the fragment, as kconfig must have kept it.
check_config() {
	local line sym bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) sym=${line%%=*} ;;
		"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *} ;;
		*) continue ;;
		esac
		if ! grep -qxF "$line" "$1" &&
			! { [ "${line:0:1}" = "#" ] && ! grep -q "^$sym=" "$1"; }; then
			echo "build-debug-kernel: wanted '$line', got '$(grep -E "^(# )?$sym[= ]" "$1" || echo unset)'" >&2
			bad=1
		fi
	done <"$fragment"
	return $bad
}

# Built in place: an interrupted build resumes where it stopped, and the
# tree stays where the .cmd files and lib/modules/RELEASE/build say it is.
# kernel-release, written last, marks the build complete.
obj=$out/obj
mkdir -p "$obj"
obj=$(realpath "$obj")
kmake() { nice -n 15 make -C "$src" O="$obj" -j"$jobs" "$@"; }
kmake tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$fragment" >/dev/null
kmake olddefconfig >/dev/null
check_config "$obj/.config"
echo "build-debug-kernel: building in $obj (log: $obj/build.log)"
kmake bzImage modules >"$obj/build.log" 2>&1 || { tail -n 40 "$obj/build.log"; exit 1; }
rel=$(kmake -s kernelrelease)
kmake -s INSTALL_MOD_PATH="$(realpath "$out")" modules_install >>"$obj/build.log" 2>&1
mkdir -p "$out/boot"
cp "$obj/arch/x86/boot/bzImage" "$out/boot/vmlinuz-$rel"
ln -sfn obj "$out/build"
echo "$rel" >"$out/kernel-release"
link
