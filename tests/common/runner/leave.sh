#!/usr/bin/env bash
# tests/common/runner.test.sh: a test that passes and leaves an orphaned process behind.
( setsid sleep 1003 & )
echo "leave: done"
