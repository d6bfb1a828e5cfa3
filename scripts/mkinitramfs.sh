#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the guest initramfs: busybox, the DRM modules nnp.ko needs (in load
# order, decompressed), nnp.ko, nnptool, libnnp, Open MPI (mpirun, orted,
# the plugins a one-node job uses, help texts, the guest's MCA defaults),
# the guest tests, extra programs and data, and every shared library that
# any of these links.
# Usage: mkinitramfs.sh OUT SYSROOT NNP_KO LIBDIR NNPTOOL
#                       [--bin PROGRAM]... [--data SRC DESTDIR]... [TESTS...]
#   --bin   PROGRAM goes to /usr/bin
#   --data  file or directory SRC goes into DESTDIR (an absolute guest path)
#   TESTS   go to /usr/libexec/nnp-tests (on the guest's PATH)
set -euo pipefail
out=$1 sysroot=$2 nnp_ko=$3 libdir=$4 nnptool=$5
shift 5
bins=() data=() tests=()
while [ $# -gt 0 ]; do
	case "$1" in
	--bin) bins+=("$2"); shift 2 ;;
	--data) data+=("$2" "$3"); shift 3 ;;
	*) tests+=("$1"); shift ;;
	esac
done
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

# The path of module $1 in modules.dep.
module_path() {
	local path
	path=$(awk -F: -v n="${1//-/_}" '{
		b = $1; sub(/.*\//, "", b); sub(/\.ko(\..*)?$/, "", b); gsub(/-/, "_", b)
		if (b == n) { print $1; exit }
	}' "$mods/modules.dep")
	[ -n "$path" ] || { echo "mkinitramfs: module $1 not found" >&2; exit 1; }
	echo "$path"
}

# Module at modules.dep path $1 into /lib/modules, decompressed.
stage_module() {
	local name
	name=$(basename "$1" | sed 's/\.ko.*//')
	case "$1" in
	*.xz) xz -dc "$mods/$1" >"$stage/lib/modules/$name.ko" ;;
	*.zst) zstd -dqc "$mods/$1" >"$stage/lib/modules/$name.ko" ;;
	*) cp "$mods/$1" "$stage/lib/modules/$name.ko" ;;
	esac
}

# Module $1 and the modules it needs, dependencies first, from modules.dep,
# onto the list in /etc/nnp-module-paths.
resolve() {
	local path deps d
	path=$(module_path "$1") || exit 1
	deps=$(awk -F: -v p="$path" '$1 == p { print $2 }' "$mods/modules.dep")
	for d in $deps; do
		resolve "$(basename "$d" | sed 's/\.ko.*//')"
	done
	grep -qx "$path" "$stage/etc/nnp-module-paths" 2>/dev/null ||
		echo "$path" >>"$stage/etc/nnp-module-paths"
}
# Modules $2... and what they need into /lib/modules, their names in load
# order in /etc/$1.
stage_modules() {
	local list=$stage/etc/$1 m path
	shift
	: >"$stage/etc/nnp-module-paths"
	for m in "$@"; do
		resolve "$m"
	done
	: >"$list"
	while read -r path; do
		stage_module "$path"
		basename "$path" | sed 's/\.ko.*//' >>"$list"
	done <"$stage/etc/nnp-module-paths"
	rm "$stage/etc/nnp-module-paths"
}
# shellcheck disable=SC2046 # one module name a word
stage_modules nnp-modules $(modinfo -F depends "$nnp_ko" | tr ',' ' ')
# 9p over virtio for nnp-vm --host-root, loaded only then. The debug
# kernel has none: its list stays empty.
if grep -q '/9pnet_virtio\.ko' "$mods/modules.dep"; then
	stage_modules nnp-9p-modules 9pnet_virtio 9p
else
	: >"$stage/etc/nnp-9p-modules"
fi
# vgem, a dma-buf exporter nnp's import refuses (dmabuf_test loads it).
# The debug kernel has none: its list stays empty.
if grep -q '/vgem\.ko' "$mods/modules.dep"; then
	stage_modules nnp-vgem-modules vgem
else
	: >"$stage/etc/nnp-vgem-modules"
fi
# The NIC of a VM on a LAN with others (nnp-vm --lan), loaded only then.
stage_module "$(module_path e1000)"
cp "$nnp_ko" "$stage/lib/modules/nnp.ko"

cp -P "$libdir"/libnnp.so* "$stage/usr/lib/"
cp "$nnptool" "$stage/usr/bin/nnptool"
for t in "${tests[@]:+${tests[@]}}"; do
	cp "$t" "$stage/usr/libexec/nnp-tests/"
done
for b in "${bins[@]:+${bins[@]}}"; do
	cp "$b" "$stage/usr/bin/"
done
for ((i = 0; i < ${#data[@]}; i += 2)); do
	mkdir -p "$stage${data[i + 1]}"
	cp -R "${data[i]}" "$stage${data[i + 1]}/"
done
cp "$here/guest-init.sh" "$stage/init"
cp "$here/nnp-load" "$stage/usr/bin/nnp-load"
cp "$here/nnp-demo" "$stage/usr/bin/nnp-demo"
chmod +x "$stage/init" "$stage"/usr/bin/* "$stage"/usr/libexec/nnp-tests/*

# Open MPI as Debian installs it, for one-node jobs. Debian 12's 4.1:
# mpirun (orterun) and orted; the plugins, less those for fabrics and
# launchers the guest does not have (InfiniBand, OFI, UCX, PSM, Slurm, ...)
# and OpenSHMEM's frameworks; PMIx with its plugins. Debian 13's 5.0 has
# its components built in: mpirun, which runs PRRTE's prterun, and prted.
# Then the help texts that explain errors, and our MCA defaults. The
# libraries all of them link are collected below.
ompi=/usr/lib/x86_64-linux-gnu/openmpi
pmix=/usr/lib/x86_64-linux-gnu/pmix2
mkdir -p "$stage$pmix/lib/pmix" "$stage/usr/share/openmpi" "$stage/etc/openmpi"
if [ -x /usr/bin/orterun ]; then
	cp /usr/bin/orterun /usr/bin/orted "$stage/usr/bin/"
	ln -s orterun "$stage/usr/bin/mpirun"
	ln -s orterun "$stage/usr/bin/mpiexec"
	mkdir -p "$stage$ompi/lib/openmpi3"
	for plugin in "$ompi"/lib/openmpi3/*.so; do
		case "$(basename "$plugin")" in
		*ucx* | *ofi* | *openib* | *psm* | *verbs* | *slurm* | *flux* | *jsm* | \
			*gridengine* | *_simulator* | mca_spml_* | mca_sshmem_* | \
			mca_memheap_* | mca_scoll_* | mca_atomic_* | mca_crs_* | \
			mca_compress_* | mca_vprotocol_* | *monitoring*) continue ;;
		esac
		# A plugin that needs a library this machine lacks would only
		# fail to load: leave it out.
		ldd "$plugin" | grep -q 'not found' && continue
		cp "$plugin" "$stage$ompi/lib/openmpi3/"
	done
	cp "$pmix"/lib/pmix/pmix_mca_pcompress_zlib.so "$pmix"/lib/pmix/pmix_mca_prm_default.so \
		"$stage$pmix/lib/pmix/"
	cp /etc/openmpi/openmpi-default-hostfile "$stage/etc/openmpi/"
	cp "$here/guest-openmpi-mca-params.conf" "$stage/etc/openmpi/openmpi-mca-params.conf"
else
	cp /usr/bin/mpirun.openmpi /usr/bin/prte /usr/bin/prted "$stage/usr/bin/"
	ln -s mpirun.openmpi "$stage/usr/bin/mpirun"
	ln -s mpirun.openmpi "$stage/usr/bin/mpiexec"
	ln -s prte "$stage/usr/bin/prterun"
	cp "$pmix"/lib/pmix/*.so "$stage$pmix/lib/pmix/"
	mkdir -p "$stage/usr/share/prte"
	cp /usr/share/prte/help-*.txt "$stage/usr/share/prte/"
	cp /etc/openmpi/prte-default-hostfile /etc/openmpi/prte.conf "$stage/etc/openmpi/"
	cp "$here/guest-openmpi5-mca-params.conf" "$stage/etc/openmpi/openmpi-mca-params.conf"
	cp "$here/guest-prte-mca-params.conf" "$stage/etc/openmpi/prte-mca-params.conf"
fi
cp -R "$pmix/share" "$stage$pmix/"
cp /usr/share/openmpi/help-*.txt "$stage/usr/share/openmpi/"
# Who and where we are: Open MPI looks up the user and the host name.
echo 'root:x:0:0:root:/root:/bin/sh' >"$stage/etc/passwd"
# render: the group udev/60-nnp.rules gives the accel nodes to.
printf 'root:x:0:\nrender:x:105:\n' >"$stage/etc/group"
printf '127.0.0.1\tlocalhost nnp-vm\n::1\tlocalhost ip6-localhost\n' >"$stage/etc/hosts"

# Shared libraries of every dynamic executable and library staged so far,
# found the way ld.so finds them.
find "$stage" -type f ! -name '*.ko' | while read -r bin; do
	file -b "$bin" | grep -qE 'ELF.*dynamically linked' || continue
	LD_LIBRARY_PATH="$libdir" ldd "$bin" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }'
done | sort -u | while read -r lib; do
	[ -e "$stage$lib" ] && continue
	case "$(basename "$lib")" in libnnp.so*) continue ;; esac
	mkdir -p "$stage$(dirname "$lib")"
	cp -L "$lib" "$stage$lib"
done

# Uncompressed: every boot of a test VM would otherwise spend 0.3-0.8 s of
# TCG time inflating it before /init runs.
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
