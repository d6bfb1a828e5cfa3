#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libnnp's ABI, as the built library gives it, against the committed
# baseline of its soname (libnnp/abi/SONAME.baseline.xz), with Debian's
# libabigail (abidiff). Any difference fails:
#   - functions only added: the baseline is out of date (make abi-baseline,
#     in the change that adds them);
#   - anything else (a function or symbol version gone, a parameter, return
#     type or public struct changed) breaks programs built against the
#     baseline: move the soname (libnnp.so.1), or if the break is meant,
#     make the baseline again and say why in the commit.
# The baseline is the library itself with its code taken out (its dynamic
# symbols, their versions and its DWARF kept), compressed: abidw's XML
# would be reviewable, but libabigail 2.2 compares two such XML files of
# libnnp as equal even with a public struct's size changed.
# Only the types of the public headers count, and libnnp/abi/libnnp.abignore
# lets the structs that carry their own size grow at their end.
# abidiff 2.2 does not see a function that gains a new default symbol
# version beside its old one (0.9's nnp_event_record@@LIBNNP_0.9 beside
# @LIBNNP_0), nor one of two versions going: the exported functions with
# their versions (readelf) are compared as lists too.
# First proves, on tiny libraries, that abidiff reports a changed struct
# and a removed function here, and not an unchanged library, and that the
# lists show a version added and one gone.
# With --update: writes the baseline of the built library instead.
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$root/build/lib/libnnp.so.0
abi_dir=$root/libnnp/abi

# baseline LIB OUT: LIB without its code, xz-compressed into OUT.
baseline() {
	local bare
	bare=$(mktemp)
	objcopy -R .text -R .rodata -R .eh_frame -R .eh_frame_hdr -R .data \
		-R .data.rel.ro "$1" "$bare" 2>/dev/null &&
		xz -9 -c "$bare" >"$2"
	local status=$?
	rm -f "$bare"
	return $status
}

soname=$(objdump -p "$lib" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
if [ "${1:-}" = --update ]; then
	[ -n "$soname" ] || { echo "check-libnnp-abi: no $lib (make lib first)" >&2; exit 1; }
	mkdir -p "$abi_dir"
	baseline "$lib" "$abi_dir/$soname.baseline.xz" || exit 1
	echo "check-libnnp-abi: wrote libnnp/abi/$soname.baseline.xz"
	exit 0
fi

. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 4

# The plant: v2 changes struct s's layout, v3 drops g(), v1 is unchanged.
printf 'struct s { int a; };\nint f(struct s *p) { return p->a; }\nint g(int x) { return x; }\n' >"$tmp/v1.c"
printf 'struct s { long a; int b; };\nint f(struct s *p) { return (int)p->a + p->b; }\nint g(int x) { return x; }\n' >"$tmp/v2.c"
printf 'struct s { int a; };\nint f(struct s *p) { return p->a; }\n' >"$tmp/v3.c"
for v in 1 2 3; do
	gcc -g -shared -fPIC -Wl,-soname,libplant.so.1 -o "$tmp/libplant$v.so" "$tmp/v$v.c"
done
abidiff --no-added-syms "$tmp/libplant1.so" "$tmp/libplant1.so" >/dev/null
same=$?
abidiff --no-added-syms "$tmp/libplant1.so" "$tmp/libplant2.so" >/dev/null
changed=$?
abidiff --no-added-syms "$tmp/libplant1.so" "$tmp/libplant3.so" >/dev/null
removed=$?
tap_context=/dev/null tap_check "abidiff bites here: a changed struct ($changed), a removed function ($removed), nothing for the same library ($same)" \
	test "$same" = 0 -a "$changed" != 0 -a "$removed" != 0

# versions LIB: its exported functions, name@version (a program binds
# one whether it is the default, @@, or not).
versions() {
	readelf --dyn-syms -W "$1" |
		awk '$4 == "FUNC" && $7 != "UND" { sub("@@", "@", $8); print $8 }' | sort -u
}
# The plant: v5 keeps g@V1 for old programs and adds g@@V2 (as a struct
# that gains a size does), v6 drops g@V1.
printf 'V1 { global: f; g; local: *; };\nV2 { global: g; } V1;\n' >"$tmp/v.map"
printf '%s\n' 'int g1(int x) { return x; }' '__asm__(".symver g1, g@V1");' \
	'int g2(long x) { return (int)x; }' >"$tmp/v5.c"
printf '__asm__(".symver g2, g@@@V2");\n' >>"$tmp/v5.c"
cat "$tmp/v1.c" >>"$tmp/v5.c"
sed -i '/^int g(int x)/d' "$tmp/v5.c"
grep -v 'g1' "$tmp/v5.c" >"$tmp/v6.c"
for v in 5 6; do
	gcc -shared -fPIC -Wl,-soname,libplant.so.1 -Wl,--version-script="$tmp/v.map" \
		-o "$tmp/libplant$v.so" "$tmp/v$v.c"
done
printf 'V1 { global: f; g; local: *; };\n' >"$tmp/v1.map"
gcc -shared -fPIC -Wl,-soname,libplant.so.1 -Wl,--version-script="$tmp/v1.map" \
	-o "$tmp/libplant4.so" "$tmp/v1.c"
versions "$tmp/libplant4.so" >"$tmp/p4"
versions "$tmp/libplant5.so" >"$tmp/p5"
versions "$tmp/libplant6.so" >"$tmp/p6"
added=$(comm -13 "$tmp/p4" "$tmp/p5" | tr '\n' ' ')
gone=$(comm -23 "$tmp/p5" "$tmp/p6" | tr '\n' ' ')
abidiff "$tmp/libplant4.so" "$tmp/libplant5.so" >/dev/null
tap_context=/dev/null tap_check "the version lists see what abidiff ($?) does not: added '$added', gone '$gone'" \
	test "$added" = "g@V2 " -a "$gone" = "g@V1 "

base=$abi_dir/$soname.baseline.xz
if [ -z "$soname" ] || [ ! -f "$base" ]; then
	echo "# no baseline libnnp/abi/${soname:-?}.baseline.xz for $lib: make abi-baseline"
	tap_not_ok "libnnp's ABI: nothing removed or changed since the baseline"
	tap_not_ok "libnnp's ABI: nothing added that the baseline lacks"
	tap_done
	exit
fi
xz -d -c "$base" >"$tmp/$soname" || exit 1
# Only types of the public headers count (struct nnp_comm and the other
# handles are opaque), less what libnnp.abignore allows.
public=(--hd1 "$root/libnnp/include/nnp" --hd2 "$root/libnnp/include/nnp"
	--suppressions "$abi_dir/libnnp.abignore")
abidiff "${public[@]}" --no-added-syms "$tmp/$soname" "$lib" >"$tmp/breaks" 2>&1
breaks=$?
versions "$tmp/$soname" >"$tmp/base.syms"
versions "$lib" >"$tmp/lib.syms"
if comm -23 "$tmp/base.syms" "$tmp/lib.syms" | sed 's/^/  gone: /' | grep . >>"$tmp/breaks"; then
	breaks=1
fi
tap_context=$tmp/breaks tap_check "libnnp's ABI: nothing removed or changed since libnnp/abi/$soname.baseline.xz" \
	test "$breaks" = 0
abidiff "${public[@]}" "$tmp/$soname" "$lib" >"$tmp/all" 2>&1
status=$?
if comm -13 "$tmp/base.syms" "$tmp/lib.syms" | sed 's/^/  added: /' | grep . >>"$tmp/all"; then
	status=1
fi
[ "$status" = 0 ] || echo "# added: make abi-baseline in the change that adds them" >>"$tmp/all"
tap_context=$tmp/all tap_check "libnnp's ABI: nothing added that libnnp/abi/$soname.baseline.xz lacks" \
	test "$status" = 0
tap_done
