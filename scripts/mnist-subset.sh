#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The first NTRAIN training and NTEST test images (and their labels) of an
# MNIST-format data set, as gzipped IDX files under the usual names, for
# the guest initramfs: the whole of Fashion-MNIST (30 MB) would slow down
# every VM boot for the one test that trains on it.
# Usage: mnist-subset.sh SRCDIR OUTDIR NTRAIN NTEST
set -euo pipefail
src=$1 out=$2 ntrain=$3 ntest=$4

# be32 N: N as 4 big-endian bytes.
be32() {
	printf "\\x$(printf %02x $(($1 >> 24 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))"
	printf "\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 & 255)))"
}

# subset NAME HEADER_BYTES ITEM_BYTES N: the IDX file NAME cut to N items.
subset() {
	local name=$1 hdr=$2 item=$3 n=$4 raw=$tmp/$1 have
	gzip -dc "$src/$name.gz" >"$raw"
	have=$(od -An -tu1 -j4 -N4 "$raw" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
	if [ "$n" -gt "$have" ]; then
		echo "mnist-subset: $name has $have items, not $n" >&2
		exit 1
	fi
	{
		head -c 4 "$raw"
		be32 "$n"
		head -c $((hdr + n * item)) "$raw" | tail -c +9
	} | gzip -9n >"$out/$name.gz.tmp"
	mv "$out/$name.gz.tmp" "$out/$name.gz"
	rm -f "$raw"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
subset train-images-idx3-ubyte 16 784 "$ntrain"
subset train-labels-idx1-ubyte 8 1 "$ntrain"
subset t10k-images-idx3-ubyte 16 784 "$ntest"
subset t10k-labels-idx1-ubyte 8 1 "$ntest"
