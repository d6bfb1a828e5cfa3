# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Where a long make's time went (sourced; bash): its output stamped line by
# line with the seconds since it began, and the stamped lines where make
# began one of the build's long steps: package installs, the QEMU and
# kernel fetches, QEMU's build, the module's, torch's, a VM, the suites.
# Make prints a recipe before it runs it, so a step's line is stamped
# with the moment it began; what a step prints itself may come later, as
# its own buffers empty.

# Standard input to standard output, each line after the whole seconds
# since this began: from microseconds, whatever the locale's decimal
# point ($SECONDS counts the clock's seconds, so a line a moment after
# the start could read 1).
phases_stamp() {
	local t0=${EPOCHREALTIME//[!0-9]/} line
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%5d %s\n' $(((${EPOCHREALTIME//[!0-9]/} - t0) / 1000000)) "$line"
	done
}

# The lines of a stamped log LOG that begin a long step, indented and
# cut to a line's width.
phases_of() {
	grep -E '^ *[0-9]+ (bash (scripts|tests)/[a-z-]+\.sh|ninja -C|make -C|cd runtimes/torch|tools/nnp-vm)( |$)' "$1" |
		cut -c1-110 | sed 's/^/  /'
}
