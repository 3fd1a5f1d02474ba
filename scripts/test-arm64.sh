#!/usr/bin/env bash
# The Arm64 (NEON) check on an x86-64 machine: cross-builds nanoserve with
# cmake/aarch64-linux-gnu.cmake and runs, under qemu-user, the tests whose results depend on the
# CPU: GGUF reading, the weight types' quantizers, the kernels (and the bandwidth test's read
# kernel) against their scalar reference, and one golden model's forward pass against
# llama.cpp's logits (Q4_K_M: Q4_K and Q6_K matrices; the kernel tests already check every
# weight type's kernel against the reference), and the engine's core on those kernels. The other
# tests check logic that compiles the same everywhere, and take long under emulation.
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

phase=scripts/phase.sh
$phase configure-arm64 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DNANOSERVE_BENCH=OFF
$phase build-arm64 cmake --build "$build" -j "$jobs" --target test_gguf test_tensor test_kernels test_machine test_model \
  test_engine
$phase test-arm64 scripts/run-ctest.sh "$build" arm64 -L '^(gguf|tensor|kernels|machine)$' -j "$jobs"
$phase test-arm64-model scripts/run-ctest.sh "$build" arm64-model -L '^model$' -R 'GoldenForward.*tiny_qwen3_Q4_K_M' \
  -j "$jobs" --no-tests=error
# The engine on the NEON kernels: batches give each request its tokens alone (a golden model),
# the batch engine, scheduler, sampling and text output; not the speculation and architecture
# sweeps, which take many times longer under qemu-user (they run natively in every other build).
$phase test-arm64-engine scripts/run-ctest.sh "$build" arm64-engine -L '^engine$' \
  -R 'BatchedGolden.*tiny_qwen3_Q8_0|BatchEngine\.|Scheduler|StopMatcher|TextOutput|Sampler|GenerationTest|PrefixCache\.AConversation|PromptLookup|LastLogits|MockEngine' \
  -E 'Preempt' -j "$jobs" --no-tests=error
