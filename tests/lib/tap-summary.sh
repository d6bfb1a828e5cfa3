#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The end of a test run, from the TAP files it wrote (<dir>/<suite>.tap):
# what was skipped and why, one line each; what failed; then the last line
# "N passed, N skipped, N failed". Exits 1 if anything failed.
#
# A result with a SKIP directive (kselftest's "ok N name # SKIP why",
# CMocka's "not ok N # SKIP name") is a skip, never a pass or a failure; so
# is a suite's empty plan "1..0 # SKIP why". The directive is the word
# SKIP after a '#': "not ok 3 # skipped nothing" is a failure.
# Usage: tap-summary.sh TAP...
awk '
# The line, after the name of its suite (of the file).
function show(f, debug) {
	f = FILENAME
	debug = f ~ /test-results-debug\//
	sub(/.*\//, "", f)
	sub(/\.tap$/, "", f)
	return f (debug ? " (debug kernel)" : "") ": " $0
}
/^(not )?ok( |$)/ && /#[[:space:]]*[Ss][Kk][Ii][Pp]([^[:alnum:]_]|$)/ { skip[++skipped] = show(); next }
/^ok( |$)/ { passed++; next }
/^not ok( |$)/ { fail[++failed] = show(); next }
/^1\.\.0([^0-9]|$)/ && /#[[:space:]]*[Ss][Kk][Ii][Pp]([^[:alnum:]_]|$)/ { skip[++skipped] = show() }
END {
	print ""
	if (skipped) {
		print "Skipped, and why:"
		for (i = 1; i <= skipped; i++)
			print skip[i]
	}
	if (failed) {
		print "Failed tests:"
		for (i = 1; i <= failed; i++)
			print fail[i]
	}
	printf "%d passed, %d skipped, %d failed\n", passed, skipped, failed
	exit failed != 0
}' "$@" /dev/null
