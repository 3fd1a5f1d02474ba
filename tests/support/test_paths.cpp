#include "support/test_paths.h"

#include <filesystem>
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

}  // namespace nanoserve::test
