#!/usr/bin/env bash
# Writes the man pages from the binaries' own --help, which both print from their option
# tables (server/config.c, clients/cli/*.c): a page cannot list an option the program
# lacks, nor miss one it has.
#   dist/man.sh BIN_DIR VERSION OUT_DIR   -> OUT_DIR/ponytaild.8, OUT_DIR/ponytail.1
set -eu
bin="$1" version="$2" out="$3"
mkdir -p "$out"

# roff-escape text lines: backslashes, leading dots and quotes, hyphens.
esc() { sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/' -e 's/-/\\-/g'; }

{
	cat <<ROFF
.TH PONYTAILD 8 "" "ponytail $version" "System Administration"
.SH NAME
ponytaild \- networked hair\-simulation daemon
.SH SYNOPSIS
.B ponytaild
[\fB\-\-flag\fR \fIvalue\fR ...]
.SH DESCRIPTION
ROFF
	# The description: the --help lines between the usage line and the first option.
	"$bin/ponytaild" --help | sed -n '3,/^$/p' | sed '/^$/d' | esc
	cat <<'ROFF'
.PP
Precedence, lowest first: built\-in defaults, the \fB\-\-config\fR file (one
\fIname value\fR pair per line, names as the flags without the dashes, \fB#\fR
comments), environment variables, command\-line flags. A bad value anywhere stops
start\-up with a message naming the flag or the file line.
.SH OPTIONS
ROFF
	# "  --flag   help [range]" then "    env VAR, default 'x'".
	"$bin/ponytaild" --help | awk '
		function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); return s }
		/^  --help, --version/ { print ".TP\n.B \\-\\-help\\fR, \\fB\\-\\-version"; print "Print this list, or the version, and exit."; next }
		/^  --[a-z]/ {
			flag = $1; help = $0; sub(/^  --[a-z-]+ +/, "", help)
			print ".TP"; print ".BI \"" esc(flag) " \" value"; print esc(help); next
		}
		/^ +env PONYTAIL_/ { line = $0; sub(/^ +/, "", line); print ".br"; print esc(line) }'
	cat <<'ROFF'
.SH SIGNALS
SIGTERM and SIGINT: stop accepting, finish the requests in flight and the tick, close
every WebSocket with 1001, checkpoint the store, exit 0 (exit 1 when that takes over
20 s).
.SH FILES
.TP
.I DATA/ponytail.db
the SQLite store (WAL): instance definitions and write\-token hashes.
.SH SEE ALSO
.BR ponytail (1);
GET /v1/openapi.json on a running daemon (the REST contract);
/usr/share/doc/ponytail.
ROFF
} >"$out/ponytaild.8"

{
	cat <<ROFF
.TH PONYTAIL 1 "" "ponytail $version" "User Commands"
.SH NAME
ponytail \- offline simulation, VRM import, REST and WebSocket client and load generator for ponytaild
.SH SYNOPSIS
.B ponytail
.I COMMAND
[\fIARGS\fR...]
.br
.B ponytail
.I COMMAND
.B \-\-help
.SH COMMANDS
ROFF
	cmds=$("$bin/ponytail" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
	"$bin/ponytail" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ {
		c = $1; d = $0; sub(/^  [a-z-]+ +/, "", d); gsub(/-/, "\\-", d); gsub(/-/, "\\-", c)
		print ".TP"; print ".B " c; print d } on && /^$/ { on = 0 }'
	for c in $cmds; do
		printf '.SH "PONYTAIL %s"\n.nf\n' "$(echo "$c" | tr a-z A-Z)"
		"$bin/ponytail" "$c" --help | esc
		printf '.fi\n'
	done
	cat <<'ROFF'
.SH EXIT STATUS
0 ok, 1 bad input or failure, 2 usage error.
.SH SEE ALSO
.BR ponytaild (8)
ROFF
} >"$out/ponytail.1"
