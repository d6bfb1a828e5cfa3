#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The firmware simulator's layers call only downwards (docs/architecture.md,
# "Firmware layers"). Each layer of firmware-sim/src is compiled seeing only
# its own header and those below (an upward #include fails), archived on its
# own, and linked whole into a program with only the archives below it: a
# call to a layer above is an undefined symbol and fails the link. First
# proves, with a planted upward call, that the link bites.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Bottom up; a layer is a folder of firmware-sim/src.
layers=(base transport engines algorithms control)
src=$root/firmware-sim/src
cflags=(-std=c11 -D_GNU_SOURCE -O0 -Wall -Wextra -Werror
	-I"$root/hw" -I"$root/firmware-sim/include")
echo 'int main(void) { return 0; }' >"$tmp/main.c"
gcc -c -o "$tmp/main.o" "$tmp/main.c"

# The transport's files, bottom up: each calls only those before it, so a
# packet's way in runs one direction (arrival, purge, receive queue) and
# nothing below names the transports that wiring chooses.
transport=(fw_rx_queue fw_port fw_purge fw_icl_credit fw_rx fw_lend
	fw_icl_shared fw_relay fw_icl_frame fw_icl_shm fw_wire)

# build LAYER INC...: compile LAYER's sources with include folders INC into
# $tmp/LAYER.a; the compiler's complaints go to $tmp/LAYER.log.
build() {
	local layer=$1 f inc=()
	shift
	for f in "$@"; do inc+=(-I"$f"); done
	mkdir -p "$tmp/$layer"
	for f in "$src/$layer"/*.c; do
		gcc "${cflags[@]}" "${inc[@]}" -c -o "$tmp/$layer/$(basename "${f%.c}").o" \
			"$f" || return 1
	done
	ar rcs "$tmp/$layer.a" "$tmp/$layer"/*.o
}

# links ARCHIVE BELOW...: a program with every object of ARCHIVE and only
# the archives BELOW (nearest first) links; its errors go to stdout.
links() {
	local archive=$1
	shift
	gcc -o "$tmp/prog" "$tmp/main.o" -Wl,--whole-archive "$archive" \
		-Wl,--no-whole-archive "$@" -lm 2>&1
}

tap_plan $((${#layers[@]} + 3))
present=$(cd "$src" && ls -d -- */ | tr -d / | sort)
if [ "$present" = "$(printf '%s\n' "${layers[@]}" | sort)" ]; then
	tap_ok "every folder of firmware-sim/src is a layer in this list"
else
	echo "# folders: $present" | tr '\n' ' '
	echo
	tap_not_ok "every folder of firmware-sim/src is a layer in this list"
fi

inc=()
below=()
for i in "${!layers[@]}"; do
	layer=${layers[$i]}
	inc=("$src/$layer" "${inc[@]}")
	if ! build "$layer" "${inc[@]}" >"$tmp/$layer.log" 2>&1; then
		sed 's/^/# /' "$tmp/$layer.log"
		tap_not_ok "$layer compiles with only its own and lower headers"
	elif ! links "$tmp/$layer.a" "${below[@]}" >"$tmp/$layer.log"; then
		grep -E 'undefined reference' "$tmp/$layer.log" | sed 's/^/# /'
		tap_not_ok "$layer links with only the layers below it"
	else
		tap_ok "$layer links with only the layers below it"
	fi
	# The base layer's check is the one the planted call below goes into.
	if [ "$i" = 0 ]; then
		echo 'void nnp_fw_run(void *fw); void probe(void) { nnp_fw_run(0); }' \
			>"$tmp/probe.c"
		gcc -c -o "$tmp/probe.o" "$tmp/probe.c"
		cp "$tmp/base.a" "$tmp/planted.a"
		ar rs "$tmp/planted.a" "$tmp/probe.o" 2>/dev/null
		if links "$tmp/planted.a" | grep -q "undefined reference to \`nnp_fw_run'"; then
			tap_ok "a planted call from base up to the control plane fails the link"
		else
			tap_not_ok "a planted call from base up to the control plane fails the link"
		fi
	fi
	below=("$tmp/$layer.a" "${below[@]}")
done

# transport_order: every transport file in the list, and each links with
# only the files before it (and base); the errors go to stdout.
transport_order() {
	local present listed f before=()

	present=$(cd "$src/transport" && ls -- *.c | sed 's/\.c$//' | sort)
	listed=$(printf '%s\n' "${transport[@]}" | sort)
	if [ "$present" != "$listed" ]; then
		echo "# transport files: $present" | tr '\n' ' '
		echo
		return 1
	fi
	for f in "${transport[@]}"; do
		rm -f "$tmp/before.a"
		[ ${#before[@]} -eq 0 ] || ar rcs "$tmp/before.a" "${before[@]}"
		if ! links "$tmp/transport/$f.o" \
			$([ ${#before[@]} -eq 0 ] || echo "$tmp/before.a") \
			"$tmp/base.a" >"$tmp/order.log"; then
			echo "# $f.c calls a transport file not before it:"
			grep -E 'undefined reference' "$tmp/order.log" | sed 's/^/# /'
			return 1
		fi
		before+=("$tmp/transport/$f.o")
	done
}
if transport_order; then
	tap_ok "each transport file calls only those below it (${transport[*]})"
else
	tap_not_ok "each transport file calls only those below it (${transport[*]})"
fi
tap_done
