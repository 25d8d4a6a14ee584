#!/usr/bin/env bash
# Body-bone poses over the wire (protocol 1.2) and REST move a chest collider; a 1.1
# client's bones are ignored (tests/server/bones_client.py says what is checked).
. "$(dirname "$0")/../client/lib.sh"
start_daemon
timeout 60 python3 tests/server/bones_client.py "$S" "$WS_PORT" || fail "bones_client.py"
finish bones
