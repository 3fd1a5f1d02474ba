#include "bench/host_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

#include "kernels/thread_pool.h"

#ifndef NANOSERVE_BUILD_TYPE
#define NANOSERVE_BUILD_TYPE "unknown"
#endif

namespace nanoserve::bench {
namespace {

// The value after "key<spaces>:" (cpuinfo) or "key=" (os-release) on the first line with it.
std::string field_of(const std::string& path, const std::string& key, char separator) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t sep = line.find(separator);
    if (sep == std::string::npos) continue;
    std::string value = line.substr(sep + 1);
    value.erase(0, value.find_first_not_of(" \t\""));
    while (!value.empty() && (value.back() == '"' || value.back() == ' ')) value.pop_back();
    return value;
  }
  return {};
}

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

HostInfo probe_host() {
  HostInfo h;
  h.cpu = field_of("/proc/cpuinfo", "model name", ':');
  if (h.cpu.empty()) h.cpu = "unknown";
  h.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  h.physical_cores = kernels::ThreadPool::physical_cores();
  const std::string mem_kb = field_of("/proc/meminfo", "MemTotal", ':');
  h.ram_bytes = mem_kb.empty() ? 0 : std::stoll(mem_kb) * 1024;
  h.os = field_of("/etc/os-release", "PRETTY_NAME", '=');
  utsname u{};
  if (uname(&u) == 0) h.os += (h.os.empty() ? "" : ", ") + std::string(u.sysname) + " " + u.release;
  h.git_sha = git_sha();
  h.build_type = NANOSERVE_BUILD_TYPE;
  return h;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

}  // namespace nanoserve::bench
