// The figures every row derives from a StreamRecord: percentiles (numpy's linear rule),
// medians, client TTFT and gaps, and overhead = client clock − engine clock.
#include <gtest/gtest.h>

#include "bench/timing.h"

namespace nanoserve::bench {
namespace {

TEST(Timing, PercentileInterpolatesBetweenRanks) {
  EXPECT_FALSE(percentile({}, 50));
  EXPECT_EQ(*percentile({7}, 99), 7);
  EXPECT_EQ(*percentile({4, 1, 3, 2}, 50), 2.5);  // numpy.percentile([1,2,3,4], 50)
  EXPECT_DOUBLE_EQ(*percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99), 9.91);
  EXPECT_EQ(*percentile({5, 1}, 0), 1);
  EXPECT_EQ(*percentile({5, 1}, 100), 5);
}

TEST(Timing, SpreadIsMedianMinMax) {
  EXPECT_FALSE(spread({}));
  const Spread odd = *spread({3, 1, 2});
  EXPECT_EQ(odd.median, 2);
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.max, 3);
  EXPECT_EQ(odd.n, 3u);
  EXPECT_EQ(spread({4, 1, 3, 2})->median, 2.5);
}

StreamRecord record(std::vector<int64_t> chunks, int64_t end) {
  StreamRecord r;
  r.chunk_us = std::move(chunks);
  r.end_us = end;
  return r;
}

TEST(Timing, ClientFiguresComeFromChunkArrivals) {
  const ClientFigures f = client_figures(record({10000, 30000, 50000, 90000}, 91000));
  EXPECT_EQ(f.ttft_ms, 10);
  EXPECT_EQ(f.last_chunk_ms, 90);
  EXPECT_EQ(f.end_ms, 91);
  EXPECT_EQ(f.gap_p50_ms, 20);                  // gaps 20, 20, 40 ms
  EXPECT_DOUBLE_EQ(*f.gap_p99_ms, 20 + 20 * 0.98);
  EXPECT_DOUBLE_EQ(*f.decode_tok_s, 3 / 0.08);  // 3 gaps in 80 ms
  const ClientFigures none = client_figures(record({}, 5000));
  EXPECT_FALSE(none.ttft_ms);
  EXPECT_FALSE(none.gap_p50_ms);
  EXPECT_FALSE(client_figures(record({1000}, 2000)).decode_tok_s);
}

TEST(Timing, OverheadIsClientMinusEngine) {
  StreamRecord r = record({12000, 22000, 32000}, 33000);
  EXPECT_FALSE(overhead(r).ttft_ms);  // no engine clock: no overhead
  r.engine.emplace();
  r.engine->queue_ms = 0.1;
  r.engine->ttft_ms = 11.5;
  r.engine->prefill_tok_s = 100;
  r.engine->decode_tok_s = 100;
  r.engine->peak_memory_bytes = 1;
  r.completion_tokens = 3;
  const Overhead o = overhead(r);
  EXPECT_DOUBLE_EQ(*o.ttft_ms, 12 - 11.5);
  // The engine's last token: 11.5 ms + 2 tokens at 100 tok/s = 31.5 ms.
  EXPECT_DOUBLE_EQ(*engine_last_token_ms(*r.engine, 3), 31.5);
  EXPECT_DOUBLE_EQ(*o.total_ms, 32 - 31.5);
  EXPECT_EQ(engine_last_token_ms(*r.engine, 1), 11.5);
  r.engine->decode_tok_s.reset();
  EXPECT_FALSE(engine_last_token_ms(*r.engine, 3));
}

}  // namespace
}  // namespace nanoserve::bench
