// The machine and build a benchmark ran on, repeated in every row so rows from different
// runs can be told apart and compared: date, CPU model, cores, RAM, OS, git sha, build type.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace nanoserve::bench {

struct HostInfo {
  std::string cpu;            // /proc/cpuinfo "model name"
  int logical_cores = 0;
  int physical_cores = 0;
  int64_t ram_bytes = 0;      // MemTotal
  std::string os;             // PRETTY_NAME of /etc/os-release, and the kernel release
  std::string git_sha;        // HEAD of the working directory's repository, "+dirty" when src/ has changes
  std::string build_type;     // CMAKE_BUILD_TYPE of this binary (and "+sanitizers")
};

HostInfo probe_host();

// "2025-01-31T12:34:56Z"
std::string utc_timestamp();

}  // namespace nanoserve::bench
