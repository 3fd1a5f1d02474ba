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
// A path for a scratch file in the temp directory, unique to this process (ctest -j runs
// several), named after `name`; the file is removed when the test program exits.
std::string temp_file(const std::string& name);

}  // namespace nanoserve::test
