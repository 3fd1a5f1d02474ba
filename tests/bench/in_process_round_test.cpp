// The raw phase's in-process round: requests submitted together to an engine in this process,
// each stream timed as run_in_process times one. The mock engine (a token every few ms, four
// requests at once) shows whether the streams ran together and whether a refusal comes back
// as a record instead of an exception. A stream lasts over half a second, so "together" holds
// on a loaded machine too.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/stream_round.h"
#include "engine/engine_factory.h"
#include "support/test_paths.h"

namespace nanoserve::bench {
namespace {

using namespace std::chrono_literals;

constexpr int kTokens = 32;

std::vector<BenchRequest> round_requests(const BenchModel& model, int n) {
  std::vector<BenchRequest> requests;
  for (int i = 0; i < n; ++i) requests.push_back(bench_request(model, 8, kTokens, static_cast<uint64_t>(i)));
  return requests;
}

TEST(InProcessRound, StreamsRunTogetherAndEachIsTimed) {
  const BenchModel model = inspect_model(test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf"));
  const auto engine =
      engine::make_engine({.kind = "mock", .model_path = model.path, .parallel = 4, .mock_token_delay_us = 20000});
  const std::vector<StreamResult> results = run_in_process_round(*engine, round_requests(model, 3), "round", 30s);
  ASSERT_EQ(results.size(), 3u);
  int64_t latest_first = 0, earliest_last = INT64_MAX;
  for (const StreamResult& r : results) {
    ASSERT_TRUE(r.record.ok()) << r.record.error;
    EXPECT_EQ(r.record.completion_tokens, kTokens);
    ASSERT_EQ(r.record.chunk_us.size(), static_cast<size_t>(kTokens));  // one chunk a token, as served
    EXPECT_GE(r.start_offset_us, 0);
    latest_first = std::max(latest_first, r.start_offset_us + r.record.chunk_us.front());
    earliest_last = std::min(earliest_last, r.start_offset_us + r.record.chunk_us.back());
  }
  // Every stream had its first token before any stream had its last: none waited for another.
  EXPECT_LT(latest_first, earliest_last);
}

TEST(InProcessRound, ARefusedRequestIsARecordNotAnException) {
  const BenchModel model = inspect_model(test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf"));
  // One request generating and one waiting at most: of three released together, one is refused.
  const auto engine = engine::make_engine({.kind = "mock", .model_path = model.path, .queue_limit = 1,
                                           .parallel = 1, .mock_token_delay_us = 5000});
  const std::vector<StreamResult> results = run_in_process_round(*engine, round_requests(model, 3), "full", 30s);
  ASSERT_EQ(results.size(), 3u);
  int refused = 0, completed = 0;
  for (const StreamResult& r : results) {
    if (r.record.ok()) {
      ++completed;
      EXPECT_EQ(r.record.completion_tokens, kTokens);
    } else {
      ++refused;
      EXPECT_NE(r.record.error.find("the engine refused the request"), std::string::npos) << r.record.error;
    }
  }
  EXPECT_GE(refused, 1);
  EXPECT_GE(completed, 1);
}

}  // namespace
}  // namespace nanoserve::bench
