#include "support/run_nanoserve.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "support/test_paths.h"

namespace nanoserve::test {

CommandResult run_nanoserve(const std::string& args, const std::string& stdin_text) {
  // Files unique to this process and call, so parallel tests (ctest -j) never share one.
  static std::atomic<int> calls{0};
  const std::string base = "/tmp/nanoserve-test-" + std::to_string(getpid()) + "-" + std::to_string(calls++);
  const std::string in_path = base + ".in", err_path = base + ".err";
  std::ofstream(in_path, std::ios::binary) << stdin_text;
  const std::string cmd = nanoserve_binary() + " " + args + " < " + in_path + " 2> " + err_path;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed: " + cmd);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  CommandResult result{WEXITSTATUS(status), out, read_file(err_path)};
  std::remove(in_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

}  // namespace nanoserve::test
