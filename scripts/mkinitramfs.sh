#!/usr/bin/env bash
# Build the guest initramfs: busybox, the DRM modules nnp.ko needs (in load
# order, decompressed), nnp.ko, nnptool, libnnp, the guest tests and every
# shared library they link.
# Usage: mkinitramfs.sh OUT SYSROOT NNP_KO LIBDIR NNPTOOL [TESTS...]
set -euo pipefail
out=$1 sysroot=$2 nnp_ko=$3 libdir=$4 nnptool=$5
shift 5
here=$(dirname "$(realpath "$0")")
rel=$(cat "$sysroot/kernel-release")
mods="$sysroot/lib/modules/$rel"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,root,usr/bin,usr/lib} \
	"$stage/lib/modules" "$stage/usr/libexec/nnp-tests"

cp /bin/busybox "$stage/bin/busybox"
for applet in $("$stage/bin/busybox" --list); do
	[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done

# Modules nnp.ko depends on, dependencies first, from modules.dep.
resolve() {
	local path deps d
	path=$(awk -F: -v n="${1//-/_}" '{
		b = $1; sub(/.*\//, "", b); sub(/\.ko(\..*)?$/, "", b); gsub(/-/, "_", b)
		if (b == n) { print $1; exit }
	}' "$mods/modules.dep")
	[ -n "$path" ] || { echo "mkinitramfs: module $1 not found" >&2; exit 1; }
	deps=$(awk -F: -v p="$path" '$1 == p { print $2 }' "$mods/modules.dep")
	for d in $deps; do
		resolve "$(basename "$d" | sed 's/\.ko.*//')"
	done
	grep -qx "$path" "$stage/etc/nnp-module-paths" 2>/dev/null ||
		echo "$path" >>"$stage/etc/nnp-module-paths"
}
: >"$stage/etc/nnp-module-paths"
for dep in $(modinfo -F depends "$nnp_ko" | tr ',' ' '); do
	resolve "$dep"
done
: >"$stage/etc/nnp-modules"
while read -r path; do
	name=$(basename "$path" | sed 's/\.ko.*//')
	case "$path" in
	*.xz) xz -dc "$mods/$path" >"$stage/lib/modules/$name.ko" ;;
	*.zst) zstd -dqc "$mods/$path" >"$stage/lib/modules/$name.ko" ;;
	*) cp "$mods/$path" "$stage/lib/modules/$name.ko" ;;
	esac
	echo "$name" >>"$stage/etc/nnp-modules"
done <"$stage/etc/nnp-module-paths"
rm "$stage/etc/nnp-module-paths"
cp "$nnp_ko" "$stage/lib/modules/nnp.ko"

cp -P "$libdir"/libnnp.so* "$stage/usr/lib/"
cp "$nnptool" "$stage/usr/bin/nnptool"
for t in "$@"; do
	cp "$t" "$stage/usr/libexec/nnp-tests/"
done
cp "$here/guest-init.sh" "$stage/init"
cp "$here/nnp-load" "$stage/usr/bin/nnp-load"
cp "$here/nnp-demo" "$stage/usr/bin/nnp-demo"
chmod +x "$stage/init" "$stage"/usr/bin/* "$stage"/usr/libexec/nnp-tests/*

# Shared libraries of every dynamic binary, found the way ld.so finds them.
for bin in "$stage/usr/bin/nnptool" "$stage"/usr/libexec/nnp-tests/*; do
	file -b "$bin" | grep -q 'dynamically linked' || continue
	LD_LIBRARY_PATH="$libdir" ldd "$bin" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }'
done | sort -u | while read -r lib; do
	case "$(basename "$lib")" in libnnp.so*) continue ;; esac
	mkdir -p "$stage$(dirname "$lib")"
	cp -L "$lib" "$stage$lib"
done

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
