# Sourced by the CLI test scripts: the `ponytail` binary, a temporary directory removed on
# exit, and helpers that run a command and check its exit status and messages.
# PT_BUILD is the build directory; RUN_TIMEOUT bounds each `run` (seconds, default 60: a
# bound for a hang on a slow, loaded machine, never a speed requirement).
set -u
B="${PT_BUILD:-build}"
P="$B/bin/ponytail"
[ -x "$P" ] || { echo "FAIL: $P not built"; exit 1; }
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run WANT_STATUS STDERR_SUBSTRING ARGS...: runs `ponytail ARGS` with stdout in $T/out and
# stderr in $T/err; checks the status and that stderr says it ("" checks nothing).
run() {
	local want="$1" says="$2"
	shift 2
	timeout "${RUN_TIMEOUT:-60}" "$P" "$@" >"$T/out" 2>"$T/err"
	local got=$?
	[ "$got" -eq "$want" ] || fail "ponytail $*: exit $got, want $want ($(head -c 300 "$T/err"))"
	[ -z "$says" ] || grep -qF -- "$says" "$T/err" ||
		fail "ponytail $*: stderr lacks '$says': $(head -c 300 "$T/err")"
}

# py CODE: python3 with `out` = the last command's stdout; the exit status is the check.
py() { python3 -c "import json, sys, math; out = open('$T/out').read(); $1"; }

# finish NAME: the closing line and status of the script.
finish() {
	[ "$fails" -eq 0 ] && echo "ok: $1" || echo "$fails failure(s) in $1"
	[ "$fails" -eq 0 ]
}
