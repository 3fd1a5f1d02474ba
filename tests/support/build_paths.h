// The folders of the build the tests were built in, from the one generated source that names
// them (tests/CMakeLists.txt).
#pragma once

namespace nanoserve::test {

extern const char* const kBuildSharedDir;  // ../shared beside the repository
extern const char* const kBuildBinary;     // this build's nanoserve
extern const char* const kBuildSourceDir;  // the repository's root

}  // namespace nanoserve::test
