#!/usr/bin/env bash
# Where a run of `make test` / `make check` spent its time, printed at its end (and by .ci/run,
# also after a failure): each phase's wall time (scripts/phase.sh), ccache's hit rate over the
# run, and the slowest tests of every test run it made (ctest's and node's logs).
# Usage: scripts/ci-report.sh [PHASE_LOG]
set -uo pipefail
log=${1:-${NANOSERVE_PHASE_LOG:-}}
if [ -z "$log" ] || [ ! -s "$log" ]; then
  echo "ci-report: no phase times recorded${log:+ in $log}"
  exit 0
fi

echo "== where the time went (${log}) =="
awk -F'\t' '{ printf "  %-22s %8.1f s%s\n", $1, $2, ($3 == 0 ? "" : "  (exit " $3 ")"); t += $2 }
            END { printf "  %-22s %8.1f s (%.1f min)\n", "total", t, t / 60 }' "$log"

before="$log.ccache-before"
if [ -f "$before" ] && command -v ccache >/dev/null; then
  "$(dirname "$0")/../cmake/ccache-launcher.sh" --print-stats 2>/dev/null | awk -F'\t' -v before="$before" '
    BEGIN { while ((getline line < before) > 0) { split(line, f, "\t"); b[f[1]] = f[2] } }
    { d[$1] = $2 - b[$1] }
    END {
      hits = d["direct_cache_hit"] + d["preprocessed_cache_hit"]; total = hits + d["cache_miss"]
      if (total > 0) printf "  ccache: %d of %d compiles from the cache (%.0f%%; %d direct, %d preprocessed)\n",
                            hits, total, 100 * hits / total, d["direct_cache_hit"], d["preprocessed_cache_hit"]
      else print "  ccache: no compiles went through it"
    }'
else
  echo "  ccache: not used"
fi

echo "  slowest tests:"
# ctest: "12/345 Test #67: Suite.Name ....   Passed   15.42 sec"; node: "ok 3 - name" then "duration_ms: N".
tests_list="$log.tests"
if [ -f "$tests_list" ]; then
  sort -u "$tests_list" | while IFS=$'\t' read -r run file; do
    [ -f "$file" ] || continue
    case "$file" in
      *node-test.log) awk -v run="$run" '/^ok [0-9]+ - / || /^not ok [0-9]+ - / { sub(/^(not )?ok [0-9]+ - /, ""); name = $0 }
                      name != "" && /^  duration_ms: / { printf "%.2f\t%s\t%s\n", $2 / 1000, run, name; name = "" }' "$file" ;;
      *) awk -v run="$run" '/Test +#[0-9]+: / && / sec$/ {
           for (i = 1; i < NF; ++i) if ($i ~ /^#[0-9]+:$/) { printf "%s\t%s\t%s\n", $(NF - 1), run, $(i + 1); break } }' "$file" ;;
    esac
  done | sort -t$'\t' -k1,1 -rn | awk -F'\t' 'NR <= 10 { printf "  %8.1f s  %-12s %s\n", $1, $2, $3 }'
fi
exit 0  # a report: it never fails the run it describes
