// The machine a benchmark runs on: CPU model, cores, RAM and OS.
#pragma once

#include <cstdint>
#include <string>

namespace nanoserve::machine {

struct Host {
  std::string cpu;            // /proc/cpuinfo "model name"
  int logical_cores = 0;
  int physical_cores = 0;
  int64_t ram_bytes = 0;      // MemTotal
  std::string os;             // PRETTY_NAME of /etc/os-release, and the kernel release
  std::string simd;           // the SIMD target the kernels run (NANOSERVE_SIMD may cap it): "AVX3_DL"
};

Host describe_host();

// Physical cores of this machine (logical CPUs when the topology is unknown): the thread
// pool's count, which sizes the model's threads by default.
int physical_cores();

}  // namespace nanoserve::machine
