// Runs a test body on every SIMD target compiled in that this CPU runs:
//   for (int64_t target : EverySimdTarget()) { ... hwy::TargetName(target) ... }
// Each iteration forces Highway's dynamic dispatch to that target; leaving the loop, also
// through a failed ASSERT's return, restores the normal dispatch.
#pragma once

#include <hwy/targets.h>

#include <cstdint>
#include <vector>

namespace nanoserve::kernels {

class EverySimdTarget {
 public:
  class Iterator {
   public:
    explicit Iterator(std::vector<int64_t>::const_iterator it) : it_(it) {}
    // A range-for reads each element once, before its body: the target is selected here.
    int64_t operator*() const {
      hwy::SetSupportedTargetsForTest(*it_);
      return *it_;
    }
    Iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return it_ != other.it_; }

   private:
    std::vector<int64_t>::const_iterator it_;
  };

  EverySimdTarget() : targets_(hwy::SupportedAndGeneratedTargets()) {}
  ~EverySimdTarget() { hwy::SetSupportedTargetsForTest(0); }
  EverySimdTarget(const EverySimdTarget&) = delete;
  EverySimdTarget& operator=(const EverySimdTarget&) = delete;

  Iterator begin() const { return Iterator(targets_.begin()); }
  Iterator end() const { return Iterator(targets_.end()); }

 private:
  std::vector<int64_t> targets_;
};

}  // namespace nanoserve::kernels
