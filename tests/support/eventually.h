// Waiting for something a test expects to happen, with a generous deadline: whether it
// happens is the test's question, not how fast (benchmarks measure that), and sanitizer runs
// share two cores with other tests.
#pragma once

#include <chrono>
#include <thread>

namespace nanoserve::test {

inline constexpr std::chrono::seconds kEventually{60};

// Calls `done` every `every` until it returns true (then true) or `timeout` passes (then false).
template <typename Done>
bool eventually(Done done, std::chrono::milliseconds timeout = kEventually,
                std::chrono::milliseconds every = std::chrono::milliseconds(5)) {
  for (const auto give_up = std::chrono::steady_clock::now() + timeout;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(every);
  }
}

}  // namespace nanoserve::test
