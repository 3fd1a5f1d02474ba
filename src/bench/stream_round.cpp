#include "bench/stream_round.h"

#include <latch>
#include <thread>

namespace nanoserve::bench {

std::vector<StreamResult> run_round(Target& target, const std::vector<BenchRequest>& requests) {
  const size_t n = requests.size();
  std::vector<StreamResult> results(n);
  std::vector<std::string> errors(n);
  std::latch connected(static_cast<std::ptrdiff_t>(n)), go(1);
  Clock::time_point start;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      StreamClient client = target.client();
      client.get("/health");  // opens the kept-alive connection outside the measurement
      connected.count_down();
      go.wait();
      try {
        results[i].record = measure_served(target, client, requests[i]);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  connected.wait();
  start = Clock::now();
  go.count_down();
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < n; ++i) {
    if (!errors[i].empty()) throw RequestFailed(errors[i]);
    results[i].start_offset_us =
        std::chrono::duration_cast<std::chrono::microseconds>(results[i].record.sent - start).count();
  }
  return results;
}

}  // namespace nanoserve::bench
