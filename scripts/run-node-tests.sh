#!/usr/bin/env bash
# Runs the node tests (tests/node/) against BUILD_DIR's binary, their output also in
# BUILD_DIR/node-test.log (which scripts/test-summary.sh and scripts/ci-report.sh read).
# Usage: scripts/run-node-tests.sh BUILD_DIR
set -uo pipefail
build=$1
log="$build/node-test.log"
if [ -n "${NANOSERVE_PHASE_LOG:-}" ]; then printf 'node\t%s\n' "$(realpath -m "$log")" >> "$NANOSERVE_PHASE_LOG.tests"; fi
node --test tests/node/ 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
