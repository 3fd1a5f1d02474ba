#!/usr/bin/env bash
# Runs ctest in BUILD_DIR with the given arguments, its output also in BUILD_DIR/ctest-RUN.log
# (scripts/test-summary.sh reads the release run's; scripts/ci-report.sh every run's).
# Usage: scripts/run-ctest.sh BUILD_DIR RUN [ctest arguments...]
set -uo pipefail
build=$1
run=$2
shift 2
log="$build/ctest-$run.log"
if [ -n "${NANOSERVE_PHASE_LOG:-}" ]; then
  mkdir -p "$(dirname "$NANOSERVE_PHASE_LOG")"
  printf '%s\t%s\n' "$run" "$(realpath -m "$log")" >> "$NANOSERVE_PHASE_LOG.tests"
fi
ctest --test-dir "$build" --output-on-failure "$@" 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
