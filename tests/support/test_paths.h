// Paths the tests share: ../shared (golden data, tokenizers, models) and the built binary.
#pragma once

#include <string>

namespace nanoserve::test {

// What a test binary prints when a test did not run (its data in ../shared is missing, or it
// was skipped): ctest then reports it skipped (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt,
// which repeats this text).
inline constexpr const char* kMissingSharedMarker = "NANOSERVE_TEST_SKIPPED:";

// True under CI=true or NANOSERVE_REQUIRE_SHARED=1 (make check): a test that cannot run fails.
bool every_test_must_run();

// Absolute path of a file under the shared folder. When it is absent the test stops with an
// exception naming the file and where the folder belongs: reported skipped by ctest, or failed
// under CI=true or NANOSERVE_REQUIRE_SHARED=1 (make check).
std::string shared_path(const std::string& relative);
// Absolute path of a file of this repository (test fixtures), e.g. "tests/model/data/x.py".
std::string source_path(const std::string& relative);
// The nanoserve binary of this build.
std::string nanoserve_binary();
// Whole file as bytes; throws when unreadable.
std::string read_file(const std::string& path);
// A path for a scratch file (or folder) in the temp directory, unique to this process (ctest
// -j runs several), named after `name`; it is removed when the test program exits.
std::string temp_file(const std::string& name);

}  // namespace nanoserve::test
