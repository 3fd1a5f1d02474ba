#include "bench/stream_round.h"

#include <latch>
#include <thread>

#include "bench/in_process_client.h"

namespace nanoserve::bench {
namespace {

int64_t offset_us(Clock::time_point sent, Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(sent - start).count();
}

}  // namespace

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
      r.start_offset_us = offset_us(r.record.sent, start);
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

std::vector<StreamResult> run_in_process_round(engine::Engine& engine, const std::vector<BenchRequest>& requests,
                                               const std::string& id_prefix, std::chrono::seconds timeout,
                                               const std::atomic<bool>* stop) {
  const size_t n = requests.size();
  std::vector<StreamResult> results(n);
  // Every thread is started before any request is submitted, as every HTTP stream's connection
  // is open before the served round is released: the rounds differ by the server alone.
  std::latch started(static_cast<std::ptrdiff_t>(n)), go(1);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      started.count_down();
      go.wait();
      results[i].record = run_in_process(engine, requests[i], id_prefix + "-" + std::to_string(i), timeout, stop);
    });
  }
  started.wait();
  const Clock::time_point start = Clock::now();
  go.count_down();
  for (auto& t : threads) t.join();
  for (StreamResult& r : results) r.start_offset_us = offset_us(r.record.sent, start);
  return results;
}

}  // namespace nanoserve::bench
