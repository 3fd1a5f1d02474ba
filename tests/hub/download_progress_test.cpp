// Progress written to a file (not a terminal): one line per tenth, then the total.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "hub/download_progress.h"
#include "support/test_paths.h"

namespace nanoserve::hub {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::istringstream in(test::read_file(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(DownloadProgress, ALineAtEachTenthWhenNotATerminal) {
  const std::string path = test::temp_file("progress.log");
  {
    std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(path.c_str(), "w"), &std::fclose);
    DownloadProgress progress("m.gguf", 1'000'000, 0, out.get());
    for (uint64_t done = 0; done <= 1'000'000; done += 1000) progress.update(done);
    progress.finish(1'000'000);
  }
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 10u) << test::read_file(path);
  EXPECT_EQ(lines[0].rfind("nanoserve: m.gguf: 10% (100.0 KB / 1.0 MB, ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[8].rfind("nanoserve: m.gguf: 90% (900.0 KB / 1.0 MB, ", 0), 0u) << lines[8];
  EXPECT_EQ(lines[9].rfind("nanoserve: m.gguf: 1.0 MB in ", 0), 0u) << lines[9];
}

TEST(DownloadProgress, AResumedDownloadSaysWhereItResumes) {
  const std::string path = test::temp_file("progress-resumed.log");
  {
    std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(path.c_str(), "w"), &std::fclose);
    DownloadProgress progress("m.gguf", 1'000'000, 650'000, out.get());
    for (uint64_t done = 650'000; done <= 1'000'000; done += 1000) progress.update(done);
    progress.finish(1'000'000);
  }
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 5u) << test::read_file(path);  // resuming, 70%, 80%, 90%, done
  EXPECT_EQ(lines[0], "nanoserve: m.gguf: resuming at 650.0 KB of 1.0 MB");
  EXPECT_EQ(lines[1].rfind("nanoserve: m.gguf: 70% ", 0), 0u) << lines[1];
}

}  // namespace
}  // namespace nanoserve::hub
