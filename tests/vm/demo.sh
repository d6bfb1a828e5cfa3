#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make demo` as the README runs it (the build is up to date: make check
# built it), and the claims its output makes, checked from that output:
# 4 devices, each chip linked to two others, an allreduce during which no
# chip moved a byte to or from the host and each sent exactly 2(n-1)/n x S
# on its links with the exact sum everywhere, and a training run whose loss
# fell. Prints how long it took: the README promises under a minute.
#
# In detail (docs/testing.md has the summary):
# what the demo claims, from its output: 4 devices listed; ports 0 and 1 of
# every chip up; during the 16 MiB allreduce each chip's row shows 0 host
# DMA bytes and exactly 25165824 link bytes sent (2(n-1)/n x S), the sum
# exact on every device; 3 training epochs, the last loss lower than the
# first, the program's verdict ok; prints how long `make demo` took
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 8
start=$(date +%s)
# -o qemu: the test runs what was built, it does not rebuild QEMU.
make --no-print-directory -s -C "$root" -o qemu demo >"$out" 2>&1
echo "demo-status=$?" >>"$out"
echo "# make demo: $(($(date +%s) - start)) s, boot included"
tap_context=/dev/null
tap_grep "make demo exits 0" "$out" '^demo-status=0$'
tap_check "nnptool list: 4 devices, accel0 to accel3" sh -c \
	"test \$(grep -cE '^[0-3] +/dev/accel/accel[0-3] ' '$out') = 4"
tap_check "nnptool links: a ring, every chip's ports 0 and 1 up" sh -c \
	"test \$(grep -cE '^[0-3] +[0-3] +[01] up +[0-3]\\.[01] ' '$out') = 8"
# S = 16 MiB on 4 chips: 2 x 3/4 x 16777216 = 25165824 bytes from each.
tap_check "allreduce: a counter row per chip, 0 host DMA bytes, 25165824 link bytes" sh -c \
	"test \$(grep -cE '^[0-3] +0 +25165824 +25165824$' '$out') = 4"
tap_grep "allreduce: the demo says 0 payload bytes crossed the host" "$out" \
	'^host: 0 payload bytes crossed the host on any chip$'
tap_grep "allreduce: exact sum on every device" "$out" \
	'^result: 0 wrong elements of 16777216 on 4 devices'
tap_check "training: 3 epochs, the last loss lower than the first" awk '
	/^epoch [0-9]+\/3: train loss / { loss[++n] = $5 }
	END { exit !(n == 3 && loss[3] + 0 < loss[1] + 0) }' "$out"
tap_grep "training: the program's own verdict, ok" "$out" '^dist_mnist_mlp: ok$'
if ! tap_done; then
	sed 's/^/# /' "$out"
	exit 1
fi
