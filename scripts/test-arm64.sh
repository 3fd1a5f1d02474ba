#!/usr/bin/env bash
# The Arm64 (NEON) check on an x86-64 machine: cross-builds nanoserve with
# cmake/aarch64-linux-gnu.cmake and runs the tests of the rooms whose results depend on the CPU
# (GGUF reading, the weight types' quantizers, the kernels against their scalar reference, the
# forward pass against llama.cpp's logits) under qemu-user. The other rooms' tests check logic
# that compiles the same everywhere, and take long under emulation.
# Runs on amd64 only, where scripts/install-deps.sh installs the cross compiler and qemu-user; on
# an Arm64 machine the native build already is this check.
# Usage: scripts/test-arm64.sh BUILD_DIR JOBS
set -euo pipefail
build=${1:-build-arm64}
jobs=${2:-$(nproc)}

if [ "$(dpkg --print-architecture)" != amd64 ]; then
  echo "test-arm64: the cross check runs on amd64 only (on Arm64 the native tests cover NEON)"
  exit 0
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DNANOSERVE_BENCH=OFF
cmake --build "$build" -j "$jobs" --target test_gguf test_tensor test_kernels test_model
ctest --test-dir "$build" -L '^(gguf|tensor|kernels|model)$' --output-on-failure -j "$jobs"
