// The main() of the benchmarks that time kernels: NANOSERVE_SIMD caps the SIMD target as it
// does for nanoserve's commands (kernels/simd_target.h), so that NANOSERVE_SIMD=avx2 measures the
// AVX2 kernels on an AVX-512 machine; the target that ran is in the report's context ("simd").
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <stdexcept>

#include "kernels/simd_target.h"

namespace nanoserve::bench {

inline int run_kernel_benchmarks(int argc, char** argv) {
  try {
    kernels::limit_simd_target_from_environment();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  benchmark::AddCustomContext("simd", kernels::simd_target());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace nanoserve::bench
