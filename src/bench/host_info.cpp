#include "bench/host_info.h"

#include <array>
#include <cstdio>
#include <ctime>

#ifndef NANOSERVE_BUILD_TYPE
#define NANOSERVE_BUILD_TYPE "unknown"
#endif

namespace nanoserve::bench {
namespace {

// A command's first line of output ("" when it fails).
std::string first_line_of(const std::string& command) {
  FILE* p = popen((command + " 2>/dev/null").c_str(), "r");
  if (!p) return {};
  std::array<char, 256> buf{};
  std::string out = fgets(buf.data(), buf.size(), p) ? buf.data() : "";
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string git_sha() {
  std::string sha = first_line_of("git rev-parse --short=12 HEAD");
  if (sha.empty()) return "unknown";
  if (!first_line_of("git status --porcelain --untracked-files=no -- src CMakeLists.txt").empty()) sha += "+dirty";
  return sha;
}

}  // namespace

HostInfo probe_host() { return {machine::describe_host(), git_sha(), NANOSERVE_BUILD_TYPE}; }

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

}  // namespace nanoserve::bench
