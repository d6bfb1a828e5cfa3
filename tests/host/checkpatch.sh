#!/usr/bin/env bash
# The driver passes the kernel's checkpatch.pl --strict (from linux-source-6.12).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cp=$root/build/linux-src/scripts/checkpatch.pl
echo "TAP version 13"
echo "1..1"
if out=$(perl "$cp" --strict --no-tree --terse --show-types -f "$root"/driver/*.[ch] 2>&1); then
	echo "ok 1 checkpatch --strict driver/"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 1 checkpatch --strict driver/"
	exit 1
fi
