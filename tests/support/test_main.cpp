// The main of every test binary. A skipped test is never silent: ctest reports it skipped (the
// marker below, SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt), and under CI=true or
// NANOSERVE_REQUIRE_SHARED=1 (make check), where every test must run, it fails the binary.
#include <gtest/gtest.h>

#include <cstdio>

#include "support/test_paths.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  const int skipped = testing::UnitTest::GetInstance()->skipped_test_count();
  if (skipped == 0) return status;
  if (nanoserve::test::every_test_must_run()) {
    std::fprintf(stderr, "%d test(s) skipped: under CI=true or NANOSERVE_REQUIRE_SHARED=1 every test must run\n",
                 skipped);
    return 1;
  }
  std::fprintf(stderr, "%s %d test(s) skipped\n", nanoserve::test::kMissingSharedMarker, skipped);
  return status;
}
