#include "support/test_paths.h"

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <vector>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nanoserve::test {

std::string shared_path(const std::string& relative) {
  std::filesystem::path p = std::filesystem::path(NANOSERVE_SHARED_DIR) / relative;
  if (!std::filesystem::exists(p))
    throw std::runtime_error("missing shared test file (../shared must be present): " + p.string());
  return p.string();
}

std::string nanoserve_binary() { return NANOSERVE_BINARY; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp_file(const std::string& name) {
  // Removes every registered path at exit (a static's destructor), whatever the tests did.
  struct Registry {
    std::mutex mutex;
    std::vector<std::string> paths;
    ~Registry() {
      std::error_code ignored;
      for (const std::string& p : paths) std::filesystem::remove(p, ignored);
    }
  };
  static Registry registry;
  std::string path =
      (std::filesystem::temp_directory_path() / ("nanoserve-test-" + std::to_string(getpid()) + "-" + name)).string();
  std::lock_guard lock(registry.mutex);
  registry.paths.push_back(path);
  return path;
}

}  // namespace nanoserve::test
