#!/usr/bin/env bash
# Runs ctest in BUILD_DIR with the given arguments, its output also in BUILD_DIR/ctest.log (which
# scripts/test-summary.sh reads).
# Usage: scripts/run-ctest.sh BUILD_DIR [ctest arguments...]
set -uo pipefail
build=$1
shift
ctest --test-dir "$build" --output-on-failure "$@" 2>&1 | tee "$build/ctest.log"
exit "${PIPESTATUS[0]}"
