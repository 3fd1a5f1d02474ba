// Progress as a log gets it (a line per tenth, then the total) and as a terminal does (one line
// redrawn in place).
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

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

// The terminal test's clock: what the test sets it to.
DownloadProgress::Clock::time_point test_now;
DownloadProgress::Clock::time_point read_test_now() { return test_now; }

TEST(DownloadProgress, OneRedrawnLineOnATerminal) {
  using namespace std::chrono_literals;
  int terminal = -1, device = -1;
  ASSERT_EQ(openpty(&terminal, &device, nullptr, nullptr, nullptr), 0);
  {
    std::unique_ptr<FILE, int (*)(FILE*)> out(fdopen(device, "w"), &std::fclose);
    DownloadProgress progress("m.gguf", 1'000'000, 0, out.get(), &read_test_now);
    progress.update(250'000);  // the first update draws at once; later ones at most every 100 ms
    test_now += 60ms;
    progress.update(500'000);
    test_now += 60ms;
    progress.update(750'000);
    progress.finish(1'000'000);
  }
  std::string shown;
  char buffer[4096];
  pollfd readable{terminal, POLLIN, 0};
  while (poll(&readable, 1, 200) > 0) {
    const ssize_t n = read(terminal, buffer, sizeof buffer);
    if (n <= 0) break;
    shown.append(buffer, static_cast<size_t>(n));
  }
  close(terminal);
  EXPECT_EQ(shown.rfind("\rm.gguf: 250.0 KB / 1.0 MB, ", 0), 0u) << shown;
  EXPECT_EQ(shown.find("500.0 KB"), std::string::npos) << shown;  // within 100 ms of the last drawing
  EXPECT_NE(shown.find("\x1b[K\rm.gguf: 750.0 KB / 1.0 MB, "), std::string::npos) << shown;  // 120 ms after it
  EXPECT_NE(shown.find(" left\x1b[K\r\x1b[Knanoserve: m.gguf: 1.0 MB in "), std::string::npos) << shown;
}

}  // namespace
}  // namespace nanoserve::hub
