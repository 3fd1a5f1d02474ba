// Paths the tests share: ../shared (golden data, tokenizers, models) and the built binary.
#pragma once

#include <string>

namespace nanoserve::test {

// Absolute path of a file under ../shared; the test fails (ASSERT-style exception) when absent.
std::string shared_path(const std::string& relative);
// The nanoserve binary of this build.
std::string nanoserve_binary();
// Whole file as bytes; throws when unreadable.
std::string read_file(const std::string& path);

}  // namespace nanoserve::test
