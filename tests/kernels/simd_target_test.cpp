// NANOSERVE_SIMD caps Highway's dispatch: after limit_simd_target(name) the kernels run the
// named target (checked with a function dispatched like theirs that says which target ran),
// simd_target() names it, "" lifts the cap, and a name this CPU does not run is refused
// with the list of those it does.
#include <gtest/gtest.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd_target_test.cpp"  // NOLINT
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels::HWY_NAMESPACE {
int64_t RunningTarget() { return HWY_TARGET; }
}  // namespace nanoserve::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <stdexcept>
#include <string>

#include "kernels/simd_target.h"

namespace nanoserve::kernels {
HWY_EXPORT(RunningTarget);
namespace {

std::string running() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(RunningTarget)()); }

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

TEST(SimdTarget, TheCapChoosesWhatTheKernelsRun) {
  const std::vector<std::string> targets = supported_simd_targets();
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(simd_target(), upper(targets.front()));
  for (const std::string& t : targets) {
    limit_simd_target(t);
    EXPECT_EQ(simd_target(), upper(t));
    EXPECT_EQ(running(), upper(t));
    EXPECT_EQ(supported_simd_targets(), targets);  // the list is the CPU's, whatever the cap
  }
  // From the worst back up: a cap is replaced, not narrowed.
  for (auto t = targets.rbegin(); t != targets.rend(); ++t) {
    limit_simd_target(*t);
    EXPECT_EQ(running(), upper(*t));
  }
  limit_simd_target("");
  EXPECT_EQ(running(), upper(targets.front()));
}

TEST(SimdTarget, AnUnknownTargetIsRefusedWithTheList) {
  try {
    limit_simd_target("avx9000");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NANOSERVE_SIMD=avx9000"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(supported_simd_targets().front()), std::string::npos) << e.what();
  }
  EXPECT_EQ(simd_target(), upper(supported_simd_targets().front()));  // unchanged
}

}  // namespace
}  // namespace nanoserve::kernels
#endif  // HWY_ONCE
