#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/lib/phases.sh, which `make check-fresh` reports a command's
# phases with (issue 48, item 4): each line stamped with the seconds since
# the stamping began, a last line without its newline kept; and of a
# stamped log, exactly the lines where make began a long step.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
. "$root/scripts/lib/phases.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 4

{ echo first; sleep 1.2; printf 'second, no newline'; } | phases_stamp >"$tmp/stamped"
tap_context=$tmp/stamped
tap_grep "the first line at 0 s, the width fixed" "$tmp/stamped" '^    0 first$'
tap_grep "a line 1.2 s later at 1 or 2 s, kept without its newline" "$tmp/stamped" \
	'^    [12] second, no newline$'

cat >"$tmp/log" <<'LOG'
    0 bash scripts/install-deps.sh
    0 install-deps: this machine lacks what the nnp build needs; adding:
    2 Get:1 http://deb.debian.org/debian trixie InRelease [140 kB]
  190 bash scripts/fetch-qemu.sh build/qemu-src
  191 bash scripts/fetch-kernel.sh build/sysroot
  230 ninja -C build/qemu qemu-system-x86_64 (log: build/qemu/ninja.log)
  231 make -C build/sysroot/usr/src/linux-headers-6.12 M=/root/nnp modules
  232 make[1]: Entering directory '/root/nnp/build/sysroot'
  233   bash scripts/not-a-recipe.sh
  400 cd runtimes/torch && NNP_VERSION=0.9.0 /usr/bin/python3 setup.py -q egg_info
  500 ok 3 - bash scripts/fetch-qemu.sh was run
  600 tools/nnp-vm --chips 4 --fabric ring --mem-size 64M -- nnp-demo
  610 bash tests/run-tests.sh
  611 bash tests/run-tests.sh-like
LOG
phases_of "$tmp/log" >"$tmp/phases"
cat >"$tmp/want" <<'WANT'
      0 bash scripts/install-deps.sh
    190 bash scripts/fetch-qemu.sh build/qemu-src
    191 bash scripts/fetch-kernel.sh build/sysroot
    230 ninja -C build/qemu qemu-system-x86_64 (log: build/qemu/ninja.log)
    231 make -C build/sysroot/usr/src/linux-headers-6.12 M=/root/nnp modules
    400 cd runtimes/torch && NNP_VERSION=0.9.0 /usr/bin/python3 setup.py -q egg_info
    600 tools/nnp-vm --chips 4 --fabric ring --mem-size 64M -- nnp-demo
    610 bash tests/run-tests.sh
WANT
tap_context="$tmp/phases"
tap_check "the recipes of long steps, in order, and no other line" cmp -s "$tmp/want" "$tmp/phases"

printf '%0200d\n' 7 | sed 's/^/    5 bash scripts\/x.sh /' >"$tmp/long"
phases_of "$tmp/long" >"$tmp/phases"
tap_check "a long line cut to 110 characters and indented" \
	test "$(wc -L <"$tmp/phases")" = 112
tap_done
