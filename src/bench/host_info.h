// The machine and build a benchmark ran on, repeated in every row so rows from different
// runs can be told apart and compared: date, CPU model, cores, RAM, OS, git sha, build type.
#pragma once

#include <string>

#include "machine/host.h"

namespace nanoserve::bench {

struct HostInfo : machine::Host {
  std::string git_sha;        // HEAD of the working directory's repository, "+dirty" when src/ has changes
  std::string build_type;     // CMAKE_BUILD_TYPE of this binary (and "+sanitizers")
};

HostInfo probe_host();

// "2025-01-31T12:34:56Z"
std::string utc_timestamp();

}  // namespace nanoserve::bench
