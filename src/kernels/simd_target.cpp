#include "kernels/simd_target.h"

#include <hwy/targets.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace nanoserve::kernels {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The targets the kernels are compiled for that dispatch may choose now, best (lowest bit) first.
std::vector<int64_t> available() {
  std::vector<int64_t> out;
  for (int64_t bits = hwy::SupportedTargets() & HWY_TARGETS; bits != 0; bits &= bits - 1)
    out.push_back(bits & -bits);
  return out;
}

// The cap: the targets dispatch may choose (0: all the CPU runs). Highway 1.0.3's dispatch
// follows SetSupportedTargetsForTest at once; after DisableTargets it kept its first choice.
int64_t allowed_targets = 0;

// Every target the CPU runs, whatever the cap.
std::vector<int64_t> cpu_targets() {
  hwy::SetSupportedTargetsForTest(0);
  std::vector<int64_t> all = available();
  hwy::SetSupportedTargetsForTest(allowed_targets);
  return all;
}

}  // namespace

std::string simd_target() {
  const std::vector<int64_t> targets = available();
  return targets.empty() ? "unknown" : hwy::TargetName(targets.front());
}

std::vector<std::string> supported_simd_targets() {
  std::vector<std::string> names;
  for (int64_t t : cpu_targets()) names.push_back(lower(hwy::TargetName(t)));
  return names;
}

void limit_simd_target(std::string_view name) {
  const std::string wanted = lower(name);
  const std::vector<int64_t> all = cpu_targets();
  for (int64_t t : all) {
    if (!wanted.empty() && lower(hwy::TargetName(t)) != wanted) continue;
    // That target and the ones below it (higher bits); no cap with "".
    allowed_targets = 0;
    if (!wanted.empty())
      for (int64_t other : all) allowed_targets |= other >= t ? other : 0;
    hwy::SetSupportedTargetsForTest(allowed_targets);
    return;
  }
  std::string known;
  for (const std::string& n : supported_simd_targets()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("NANOSERVE_SIMD=" + std::string(name) + ": not a SIMD target this CPU runs; it runs " +
                              known);
}

void limit_simd_target_from_environment() {
  const char* value = std::getenv("NANOSERVE_SIMD");
  if (value && *value) limit_simd_target(value);
}

}  // namespace nanoserve::kernels
