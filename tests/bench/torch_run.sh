#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# torch.distributed on "nnp" and on "gloo" in one VM of
# $NNP_BENCH_TORCH_CHIPS (default 4) chips on a ring, the host's torch
# through nnp-vm --host-root (importing it in the guest takes a minute or
# two; the ranks fork from one import): all_reduce, all_gather,
# reduce_scatter and all_to_all from 64 KiB to MAX_BYTES, and the
# example's training steps (tests/bench/torch_bench.py). Writes
# RAW/torch-N.txt, which tests/bench/report_torch.py reads. Run by make
# bench (tests/bench/run.sh) and, alone, by make torch-bench.
# Usage: torch_run.sh RAW MAX_BYTES
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
raw=$1
max_bytes=$2
chips=${NNP_BENCH_TORCH_CHIPS:-4}
# Steps per backend: 20 timed after the first 2. Even, and so is 2: the
# timed steps then pair up as nnp-gloo, gloo-nnp (torch_bench.py).
steps=22
# Per chip: send and receive buffers of MAX_BYTES; the guest: torch's
# tensors of both backends beside them.
mem=$(((max_bytes < 4 << 20 ? 4 << 20 : max_bytes) * 4 >> 20))M
mkdir -p "$raw"
# USE_LIBUV=0: torch 2.6's TCPStore asks for libuv by default, which
# Debian 13's torch is built without; torch 1.13 has no such option.
# --timeout: each model trains 44 steps (22 per backend), past nnp-vm's
# default 900 s under TCG.
if ! "$root/tools/nnp-vm" --chips "$chips" --fabric ring --mem-size "$mem" --timeout 1800 \
	--guest-mem $((2048 + 3 * chips * max_bytes / 1048576)) --host-root \
	--env PYTHONPATH="$root/build/torch" --env USE_LIBUV=0 -- /usr/bin/python3 "$root/tests/bench/torch_bench.py" \
	"$chips" $((64 << 10)) "$max_bytes" "$steps" >"$raw/torch-$chips.txt" 2>&1; then
	cat "$raw/torch-$chips.txt" >&2
	echo "bench: the torch VM failed" >&2
	exit 1
fi
