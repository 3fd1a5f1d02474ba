#include "server/server_drain.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace nanoserve::server {
namespace {

// How often the drain looks at the requests in flight (and for a second signal).
constexpr std::chrono::milliseconds kPoll{50};
// After the cut, how long the cut generations get to send their error events.
constexpr std::chrono::milliseconds kAfterCut{5'000};

// Waits up to `wait` for another of `signals`; ends the process when one comes.
void exit_on_second_signal(const sigset_t& signals, std::chrono::milliseconds wait) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
  const timespec ts{.tv_sec = static_cast<time_t>(ns / 1'000'000'000), .tv_nsec = static_cast<long>(ns % 1'000'000'000)};
  const int signal = sigtimedwait(&signals, nullptr, &ts);
  if (signal <= 0) return;
  fmt::print(stderr, "nanoserve: {} again: stopping at once\n", strsignal(signal));
  std::_Exit(128 + signal);
}

// Polls until nothing is in flight or `deadline`; true when nothing is.
bool wait_for_answers(HttpServer& http, const sigset_t& signals, std::chrono::steady_clock::time_point deadline) {
  while (http.in_flight() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    exit_on_second_signal(signals, kPoll);
  }
  return true;
}

}  // namespace

void drain_and_stop(HttpServer& http, const sigset_t& signals, std::chrono::milliseconds timeout) {
  http.drain();
  fmt::print(stderr, "nanoserve: draining: {} requests in flight, up to {:.1f} s; a second signal stops at once\n",
             http.in_flight(), std::chrono::duration<double>(timeout).count());
  if (!wait_for_answers(http, signals, std::chrono::steady_clock::now() + timeout)) {
    fmt::print(stderr, "nanoserve: the drain's time is up: ending the {} requests still in flight\n", http.in_flight());
    http.cut_generations();
    wait_for_answers(http, signals, std::chrono::steady_clock::now() + kAfterCut);
  }
  http.stop();
}

}  // namespace nanoserve::server
