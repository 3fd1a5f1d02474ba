// Counters and histograms for GET /metrics, in the Prometheus text format (version 0.0.4).
// Updated from any connection thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace nanoserve::server {

class Histogram {
 public:
  // `bounds`: the buckets' upper bounds, ascending (+Inf is added).
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // HELP, TYPE, cumulative buckets, _sum and _count.
  void write(std::string& out, const std::string& name, const std::string& help) const;

 private:
  mutable std::mutex mutex_;
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; the last is +Inf
  double sum_ = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();

  void count_response(int status);
  void count_tokens(int64_t prompt, int64_t generated);
  void count_cancellation();
  void observe_time_to_first_token(double seconds);
  void observe_inter_token_latency(double seconds);

  // The whole exposition; the engine's gauges are left out while no model is loaded.
  std::string prometheus_text(const std::optional<engine::EngineMetrics>& engine) const;

 private:
  mutable std::mutex responses_mutex_;
  std::map<int, uint64_t> responses_by_status_;
  std::atomic<uint64_t> prompt_tokens_{0}, generated_tokens_{0}, cancellations_{0};
  Histogram time_to_first_token_, inter_token_latency_;
};

}  // namespace nanoserve::server
