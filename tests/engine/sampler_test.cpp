#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "engine/sampler.h"

namespace nanoserve::engine {
namespace {

TEST(Sampler, GreedyTakesTheArgmaxLowestIdOnTies) {
  Sampler s({});
  EXPECT_EQ(s.sample(std::vector<float>{0.5f, 2.0f, -1.0f, 2.0f}), 1);
  EXPECT_EQ(s.sample(std::vector<float>{3.0f}), 0);
}

TEST(Sampler, SameSeedSameTokens) {
  std::vector<float> logits(50);
  for (int i = 0; i < 50; ++i) logits[i] = std::sin(i * 1.7f) * 3;
  SamplingParams p{.temperature = 1.0f, .seed = 42};
  Sampler a(p), b(p);
  std::vector<int32_t> ta, tb;
  for (int k = 0; k < 200; ++k) ta.push_back(a.sample(logits)), tb.push_back(b.sample(logits));
  EXPECT_EQ(ta, tb);
  p.seed = 43;
  Sampler c(p);
  std::vector<int32_t> tc;
  for (int k = 0; k < 200; ++k) tc.push_back(c.sample(logits));
  EXPECT_NE(ta, tc);
}

TEST(Sampler, TemperatureFollowsTheSoftmax) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  Sampler s({.temperature = 1.0f, .seed = 1});
  std::map<int32_t, int> counts;
  const int n = 20000;
  for (int k = 0; k < n; ++k) counts[s.sample(logits)]++;
  EXPECT_NEAR(counts[0] / double(n), 0.5, 0.02);
  EXPECT_NEAR(counts[1] / double(n), 0.3, 0.02);
  EXPECT_NEAR(counts[2] / double(n), 0.2, 0.02);
}

TEST(Sampler, FiltersKeepOnlyTheBestTokens) {
  // Probabilities 0.5, 0.3, 0.15, 0.05 (temperature 1).
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  auto seen = [&](SamplingParams p) {
    p.temperature = p.temperature > 0 ? p.temperature : 1.0f;
    Sampler s(p);
    std::map<int32_t, int> counts;
    for (int k = 0; k < 3000; ++k) counts[s.sample(logits)]++;
    return counts.size();
  };
  EXPECT_EQ(seen({.top_k = 2}), 2u);
  EXPECT_EQ(seen({.top_p = 0.75f}), 2u);  // 0.5 + 0.3 reaches 0.75
  EXPECT_EQ(seen({.top_p = 0.85f}), 3u);
  EXPECT_EQ(seen({.min_p = 0.25f}), 3u);  // 0.05 < 0.25 × 0.5
  EXPECT_EQ(seen({.min_p = 0.7f}), 1u);
  EXPECT_EQ(seen({}), 4u);
}

TEST(Sampler, PenaltiesPushRecentTokensDown) {
  const std::vector<float> logits = {2.0f, 1.9f, -1.0f};
  Sampler repeat({.repeat_penalty = 1.1f});
  repeat.remember(0);
  EXPECT_EQ(repeat.sample(logits), 1);  // 2.0 / 1.1 < 1.9
  Sampler presence({.presence_penalty = 0.05f});
  presence.remember(0);
  EXPECT_EQ(presence.sample(logits), 0);  // 1.95 > 1.9
  Sampler frequency({.frequency_penalty = 0.06f});
  frequency.remember(0);
  frequency.remember(0);
  EXPECT_EQ(frequency.sample(logits), 1);  // 2.0 - 0.12 < 1.9
  // The penalty window forgets old tokens; the sampled token joins it.
  Sampler window({.repeat_penalty = 1.1f, .penalty_last_n = 1});
  window.remember(0);
  window.remember(2);
  EXPECT_EQ(window.sample(logits), 0);
  EXPECT_EQ(window.sample(logits), 1);
}

}  // namespace
}  // namespace nanoserve::engine
