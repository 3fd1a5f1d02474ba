#!/usr/bin/env bash
# Runs the GGUF reader fuzzer for N seconds on a corpus seeded with small valid files.
# usage: fuzz-gguf.sh BUILD_DIR SECONDS
set -euo pipefail
build=$1
seconds=${2:-60}
corpus=fuzz/corpus/gguf
artifacts=fuzz/artifacts/
mkdir -p "$corpus" "$artifacts"
"$build/fuzz/fuzz_gguf_seeds" "$corpus"
# max_len 64 KiB lets mutations grow arrays and tensor data; rss_limit catches huge allocations.
"$build/fuzz/fuzz_gguf" "$corpus" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
  -malloc_limit_mb=512 -artifact_prefix="$artifacts" -print_final_stats=1
