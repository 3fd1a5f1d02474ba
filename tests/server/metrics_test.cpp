// The Prometheus text exposition: counters, cumulative histogram buckets, engine gauges.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "server/metrics.h"

namespace nanoserve::server {
namespace {

// Every line is a comment (# HELP / # TYPE) or `name{labels} value`.
void expect_valid_exposition(const std::string& text) {
  const std::regex sample(R"(^[a-z_]+(\{[a-z_]+="[^"]*"\})? (-?[0-9.e+-]+|\+Inf)$)");
  const std::regex comment(R"(^# (HELP|TYPE) [a-z_]+ .+$)");
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line))
    EXPECT_TRUE(std::regex_match(line, sample) || std::regex_match(line, comment)) << "line: " << line;
  EXPECT_EQ(text.back(), '\n');
}

TEST(Histogram, BucketsAreCumulativeWithSumAndCount) {
  Histogram h({0.125, 1});
  h.observe(0.0625);
  h.observe(0.125);  // on a bound: counted in that bucket (le = "less or equal")
  h.observe(0.5);
  h.observe(7);
  std::string out;
  h.write(out, "x_seconds", "Test.");
  EXPECT_EQ(out,
            "# HELP x_seconds Test.\n# TYPE x_seconds histogram\n"
            "x_seconds_bucket{le=\"0.125\"} 2\nx_seconds_bucket{le=\"1\"} 3\nx_seconds_bucket{le=\"+Inf\"} 4\n"
            "x_seconds_sum 7.6875\nx_seconds_count 4\n");
}

TEST(ServerMetrics, ExpositionWithEngineGauges) {
  ServerMetrics m;
  m.count_response(200);
  m.count_response(200);
  m.count_response(400);
  m.count_tokens(10, 4);
  m.count_cancellation();
  m.observe_time_to_first_token(0.02);
  m.observe_inter_token_latency(0.004);
  engine::EngineMetrics e{.waiting = 2, .running = 1, .kv_used_bytes = 256, .kv_total_bytes = 1024,
                          .kv_used_blocks = 4, .kv_total_blocks = 16, .preemptions = 3,
                          .kv_cached_blocks = 5, .prefix_lookups = 7, .prefix_hit_tokens = 300,
                          .prefix_miss_tokens = 40, .prefix_evictions = 2,
                          .prefix_logits_hits = 6,
                          .prefix_disk = {.blocks = 9, .bytes = 9000, .writes = 11, .reads = 6, .write_errors = 1,
                                          .dropped = 2, .read_errors = 3, .evictions = 4},
                          .batch_sequences = {.bounds = {1, 2, 4}, .counts = {5, 0, 2, 1}, .sum = 19},
                          .decode_steps = 50, .generated_tokens = 80, .verify_steps = 20, .draft_tokens = 60,
                          .accepted_tokens = 30};
  const std::string text = m.prometheus_text(e);
  expect_valid_exposition(text);
  for (const char* expected :
       {"# TYPE nanoserve_http_requests_total counter\n", "nanoserve_http_requests_total{code=\"200\"} 2\n",
        "nanoserve_http_requests_total{code=\"400\"} 1\n", "nanoserve_prompt_tokens_total 10\n",
        "nanoserve_generation_tokens_total 4\n", "nanoserve_request_cancellations_total 1\n",
        "# TYPE nanoserve_time_to_first_token_seconds histogram\n", "nanoserve_time_to_first_token_seconds_count 1\n",
        "nanoserve_inter_token_latency_seconds_count 1\n", "nanoserve_requests_waiting 2\n",
        "nanoserve_requests_running 1\n", "nanoserve_kv_cache_used_bytes 256\n",
        "nanoserve_kv_cache_capacity_bytes 1024\n", "nanoserve_kv_cache_usage_ratio 0.25\n",
        "nanoserve_kv_cache_used_blocks 4\n", "nanoserve_kv_cache_blocks 16\n",
        "# TYPE nanoserve_preemptions_total counter\n", "nanoserve_preemptions_total 3\n",
        "# TYPE nanoserve_batch_size_sequences histogram\n", "nanoserve_prefix_cache_blocks 5\n",
        "# TYPE nanoserve_prefix_cache_lookups_total counter\n", "nanoserve_prefix_cache_lookups_total 7\n",
        "nanoserve_prefix_cache_hit_tokens_total 300\n", "nanoserve_prefix_cache_miss_tokens_total 40\n",
        "nanoserve_prefix_cache_evictions_total 2\n", "nanoserve_prefix_cache_logits_hits_total 6\n",
        "nanoserve_prefix_cache_disk_blocks 9\n",
        "nanoserve_prefix_cache_disk_bytes 9000\n", "nanoserve_prefix_cache_disk_writes_total 11\n",
        "nanoserve_prefix_cache_disk_reads_total 6\n", "nanoserve_prefix_cache_disk_write_errors_total 1\n",
        "nanoserve_prefix_cache_disk_dropped_total 2\n", "nanoserve_prefix_cache_disk_read_errors_total 3\n",
        "nanoserve_prefix_cache_disk_evictions_total 4\n", "# TYPE nanoserve_decode_steps_total counter\n",
        "nanoserve_decode_steps_total 50\n", "nanoserve_decode_step_tokens_total 80\n",
        "nanoserve_spec_verify_steps_total 20\n", "nanoserve_spec_draft_tokens_total 60\n",
        "nanoserve_spec_accepted_tokens_total 30\n",
        "nanoserve_batch_size_sequences_bucket{le=\"1\"} 5\nnanoserve_batch_size_sequences_bucket{le=\"2\"} 5\n"
        "nanoserve_batch_size_sequences_bucket{le=\"4\"} 7\nnanoserve_batch_size_sequences_bucket{le=\"+Inf\"} 8\n"
        "nanoserve_batch_size_sequences_sum 19\nnanoserve_batch_size_sequences_count 8\n"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
}

// An engine without batching (mock, sequential) has no batch-size histogram.
TEST(ServerMetrics, NoBatchHistogramWithoutBatching) {
  const std::string text = ServerMetrics().prometheus_text(engine::EngineMetrics{});
  expect_valid_exposition(text);
  EXPECT_NE(text.find("nanoserve_kv_cache_used_blocks 0\n"), std::string::npos);
  EXPECT_EQ(text.find("nanoserve_batch_size_sequences"), std::string::npos);
}

TEST(ServerMetrics, NoEngineGaugesWhileLoading) {
  const std::string text = ServerMetrics().prometheus_text(std::nullopt);
  expect_valid_exposition(text);
  EXPECT_EQ(text.find("nanoserve_requests_running"), std::string::npos);
  EXPECT_NE(text.find("nanoserve_request_cancellations_total 0\n"), std::string::npos);
}

}  // namespace
}  // namespace nanoserve::server
