#!/usr/bin/env bash
# The last line of `make test`: whether every test ran. Tests whose data in ../shared is missing
# are reported skipped (ctest) or skipped (node) rather than failed, so that a checkout without
# the shared folder can still test everything else; this line says loudly how many did not run.
# Usage: scripts/test-summary.sh BUILD_DIR
set -euo pipefail
build=$1
ctest_skipped=$(grep -c '\*\*\*Skipped' "$build/ctest-release.log" || true)
node_skipped=0
if [ -f "$build/node-test.log" ]; then
  node_skipped=$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$build/node-test.log" | tail -n 1)
fi
skipped=$((ctest_skipped + ${node_skipped:-0}))
if [ "$skipped" -gt 0 ]; then
  echo "make test: ${skipped} TESTS DID NOT RUN: their test data is missing (../shared, or \$NANOSERVE_SHARED_DIR;" \
       "each skipped test's log names the file). Every other test passed."
else
  echo "make test: every test ran and passed."
fi
