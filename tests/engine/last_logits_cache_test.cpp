// The last-logits cache: exact hits only (a prefix, an extension or one changed token misses),
// the least recently used entry replaced first, and a put for the same tokens replaces.
#include "engine/last_logits_cache.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace nanoserve::engine {
namespace {

std::vector<float> floats(float v) { return {v, v + 1, v + 2}; }

TEST(LastLogitsCache, HitsOnlyTheExactTokens) {
  LastLogitsCache cache(4);
  const std::vector<int32_t> tokens = {5, 6, 7, 8};
  cache.put(tokens, floats(1));
  EXPECT_TRUE(cache.contains(tokens));
  const std::span<const float> hit = cache.find(tokens);
  EXPECT_EQ(std::vector<float>(hit.begin(), hit.end()), floats(1));
  for (const std::vector<int32_t>& other : std::vector<std::vector<int32_t>>{{5, 6, 7}, {5, 6, 7, 8, 9}, {5, 6, 7, 9}, {}}) {
    EXPECT_FALSE(cache.contains(other));
    EXPECT_TRUE(cache.find(other).empty());
  }
  cache.put(tokens, floats(10));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find(tokens)[0], 10.0f);
}

TEST(LastLogitsCache, ReplacesTheLeastRecentlyUsed) {
  LastLogitsCache cache(2);
  cache.put(std::vector<int32_t>{1}, floats(1));
  cache.put(std::vector<int32_t>{2}, floats(2));
  EXPECT_FALSE(cache.find(std::vector<int32_t>{1}).empty());  // {2} is now the least recently used
  cache.put(std::vector<int32_t>{3}, floats(3));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.contains(std::vector<int32_t>{1}));
  EXPECT_FALSE(cache.contains(std::vector<int32_t>{2}));
  EXPECT_EQ(cache.find(std::vector<int32_t>{3})[0], 3.0f);
  EXPECT_EQ(cache.find(std::vector<int32_t>{1})[0], 1.0f);
}

TEST(LastLogitsCache, NeedsRoomForOneEntry) { EXPECT_THROW(LastLogitsCache(0), std::invalid_argument); }

}  // namespace
}  // namespace nanoserve::engine
