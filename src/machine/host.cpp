#include "machine/host.h"

#include <sys/utsname.h>

#include <fstream>
#include <thread>

#include "kernels/simd_target.h"
#include "kernels/thread_pool.h"

namespace nanoserve::machine {
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

}  // namespace

Host describe_host() {
  Host h;
  h.cpu = field_of("/proc/cpuinfo", "model name", ':');
  if (h.cpu.empty()) h.cpu = "unknown";
  h.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  h.physical_cores = physical_cores();
  const std::string mem_kb = field_of("/proc/meminfo", "MemTotal", ':');
  h.ram_bytes = mem_kb.empty() ? 0 : std::stoll(mem_kb) * 1024;
  h.os = field_of("/etc/os-release", "PRETTY_NAME", '=');
  utsname u{};
  if (uname(&u) == 0) h.os += (h.os.empty() ? "" : ", ") + std::string(u.sysname) + " " + u.release;
  h.simd = kernels::simd_target();
  return h;
}

int physical_cores() { return kernels::ThreadPool::physical_cores(); }

}  // namespace nanoserve::machine
