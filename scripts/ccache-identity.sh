#!/usr/bin/env bash
# Checks that ccache never changes a result: every object of BUILD_DIR (built through the cache,
# hits included) is compiled again, by the same command through the same launcher but with
# CCACHE_RECACHE (a real compile whatever the cache holds), and compared byte for byte. For a
# build without debug info (Release): with -g an object names the folder it was first compiled
# in (the cache does not hash it, cmake/ccache-launcher.sh), which is expected to differ.
# Usage: scripts/ccache-identity.sh BUILD_DIR [JOBS]
set -euo pipefail
build=$(realpath "$1")
jobs=${2:-$(nproc)}
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
export LAUNCHER="$source_dir/cmake/ccache-launcher.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 - "$build" "$scratch" > "$scratch/commands" <<'PY'
import json, re, shlex, sys
build, scratch = sys.argv[1], sys.argv[2]
import os
for i, e in enumerate(json.load(open(build + "/compile_commands.json"))):
    out = re.search(r" -o (\S+)", e["command"]).group(1)
    if not os.path.exists(os.path.join(e["directory"], out)):
        continue  # a target this build did not make (make test builds no benchmark programs)
    fresh = f"{scratch}/{i}.o"
    cmd = e["command"].replace(f" -o {out} ", f" -o {fresh} ", 1)
    print(shlex.quote(e["directory"]), shlex.quote(out), shlex.quote(fresh), shlex.quote(cmd))
PY
total=$(wc -l < "$scratch/commands")
# Each line: the folder, the object the build made, where the fresh one goes, the command.
xargs -P "$jobs" -L 1 bash -c 'cd "$0" && CCACHE_RECACHE=1 eval "$LAUNCHER $3" && cmp -s "$1" "$2" || echo "DIFFERS: $0/$1"' \
  < "$scratch/commands" > "$scratch/report"
differ=$(grep -c DIFFERS "$scratch/report" || true)
cat "$scratch/report"
echo "ccache-identity: $((total - differ)) of $total objects identical when compiled again"
[ "$differ" -eq 0 ]
