#!/usr/bin/env bash
# tests/common/runner.test.sh: a test that fails with its own message.
echo "fail: the reason"
exit 3
