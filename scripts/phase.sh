#!/usr/bin/env bash
# Runs one phase of `make test` / `make check` (installing, a configure, a build, a test run) and
# appends its wall time to $NANOSERVE_PHASE_LOG ("name<TAB>seconds<TAB>exit status"), which
# scripts/ci-report.sh reads. The first phase of a log also records ccache's counters, so that
# the report gives the hit rate of this run alone.
# Usage: scripts/phase.sh NAME COMMAND [ARGS...]
set -uo pipefail
name=$1
shift
log=${NANOSERVE_PHASE_LOG:-}
if [ -n "$log" ] && [ ! -e "$log" ]; then
  mkdir -p "$(dirname "$log")"
  : > "$log"
  if command -v ccache >/dev/null; then
    "$(dirname "$0")/../cmake/ccache-launcher.sh" --print-stats > "$log.ccache-before" 2>/dev/null || true
  fi
fi
start=$(date +%s%N)
"$@"
status=$?
if [ -n "$log" ]; then
  printf '%s\t%.1f\t%d\n' "$name" "$(( $(date +%s%N) - start ))e-9" "$status" >> "$log"
fi
exit $status
