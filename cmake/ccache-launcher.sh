#!/bin/sh
# Every compile of every build tree goes through here when ccache is installed
# (cmake/compiler_cache.cmake). The key is the compile's content: paths under the clone are
# hashed relative to the build folder and the build folder itself is left out, so a fresh clone
# in another folder reuses what an earlier one compiled. The cache lives outside any clone.
case $0 in
  /*) root=${0%/cmake/*} ;;  # as CMake calls it
  *) root=$(cd "$(dirname "$0")/.." && pwd) ;;
esac
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=1
export CCACHE_DIR="${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nanoserve/ccache}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
exec ccache "$@"
