#include "support/test_paths.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "support/build_paths.h"

namespace nanoserve::test {
namespace {

bool env_is(const char* name, std::string_view value) {
  const char* v = std::getenv(name);
  return v && value == v;
}

// The shared test data folder: $NANOSERVE_SHARED_DIR, else ../shared beside the repository.
std::string shared_dir() {
  const char* dir = std::getenv("NANOSERVE_SHARED_DIR");
  return dir && *dir ? dir : kBuildSharedDir;
}

}  // namespace

bool every_test_must_run() { return env_is("CI", "true") || env_is("NANOSERVE_REQUIRE_SHARED", "1"); }

std::string shared_path(const std::string& relative) {
  const std::filesystem::path p = std::filesystem::path(shared_dir()) / relative;
  if (std::filesystem::exists(p)) return p.string();
  const std::string what =
      "missing test data " + p.string() +
      ": this test reads the team's shared folder (golden logits, tokenizers, models), which lives beside the "
      "repository as ../shared, or where NANOSERVE_SHARED_DIR points";
  // ctest reports a test whose output has the marker as skipped (tests/CMakeLists.txt); CI
  // and `make check` need every test to run, so there the test fails.
  if (!every_test_must_run()) std::fprintf(stderr, "%s %s\n", kMissingSharedMarker, what.c_str());
  throw std::runtime_error(what);
}

std::string source_path(const std::string& relative) {
  return (std::filesystem::path(kBuildSourceDir) / relative).string();
}

std::string nanoserve_binary() { return kBuildBinary; }

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
      for (const std::string& p : paths) std::filesystem::remove_all(p, ignored);
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
