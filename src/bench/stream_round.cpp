#include "bench/stream_round.h"

#include <latch>
#include <thread>

namespace nanoserve::bench {

std::vector<std::vector<StreamResult>> run_streams(Target& target,
                                                   const std::vector<std::vector<BenchRequest>>& queues) {
  const size_t n = queues.size();
  std::vector<std::vector<StreamResult>> results(n);
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
        for (const BenchRequest& request : queues[i]) results[i].push_back({measure_served(target, client, request)});
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
    for (StreamResult& r : results[i])
      r.start_offset_us = std::chrono::duration_cast<std::chrono::microseconds>(r.record.sent - start).count();
  }
  return results;
}

std::vector<StreamResult> run_round(Target& target, const std::vector<BenchRequest>& requests) {
  std::vector<std::vector<BenchRequest>> queues;
  for (const BenchRequest& r : requests) queues.push_back({r});
  std::vector<StreamResult> results;
  for (auto& stream : run_streams(target, queues)) results.push_back(std::move(stream.front()));
  return results;
}

}  // namespace nanoserve::bench
