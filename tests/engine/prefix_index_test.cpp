// The prefix cache's index: a chain of whole blocks matches only with the same tokens after
// the same parent block, a collision costs a miss and never a wrong block, and forgetting a
// block cuts the chains published after it.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "engine/prefix_index.h"

namespace nanoserve::engine::prefix_index_test {
namespace {

constexpr int64_t kBlock = 4;

std::vector<int32_t> iota_tokens(int n, int32_t first) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

// Publishes tokens' whole blocks into `blocks` (block ids, one per whole block; a block whose
// prefix is published already stands for itself).
void publish_all(PrefixIndex& index, const std::vector<int32_t>& tokens, const std::vector<int32_t>& blocks) {
  std::vector<uint64_t> hashes;
  index.extend_chain(tokens, hashes);
  int32_t parent = -1;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::span<const int32_t> own(tokens.data() + i * kBlock, kBlock);
    parent = index.publish(blocks[i], parent, hashes[i], own);
    ASSERT_EQ(parent, blocks[i]);
  }
}

std::vector<int32_t> match(const PrefixIndex& index, const std::vector<int32_t>& tokens) {
  std::vector<uint64_t> hashes;
  index.extend_chain(tokens, hashes);
  return index.match(tokens, hashes);
}

TEST(PrefixIndex, ChainHashesCoverWholeBlocksAndExtendIncrementally) {
  const PrefixIndex index(8, kBlock);
  const std::vector<int32_t> tokens = iota_tokens(11, 100);
  std::vector<uint64_t> all;
  index.extend_chain(tokens, all);
  ASSERT_EQ(all.size(), 2u);  // 11 tokens: two whole blocks of 4
  std::vector<uint64_t> grown;
  index.extend_chain(std::span(tokens).first(5), grown);
  ASSERT_EQ(grown.size(), 1u);
  index.extend_chain(tokens, grown);
  EXPECT_EQ(grown, all);
  // The chain depends on everything before: the same second block after another first one differs.
  std::vector<int32_t> other = tokens;
  other[0] = 7;
  std::vector<uint64_t> other_hashes;
  index.extend_chain(other, other_hashes);
  EXPECT_NE(other_hashes[0], all[0]);
  EXPECT_NE(other_hashes[1], all[1]);
}

TEST(PrefixIndex, MatchesTheLongestPublishedPrefixOfWholeBlocks) {
  PrefixIndex index(8, kBlock);
  const std::vector<int32_t> tokens = iota_tokens(12, 0);
  publish_all(index, tokens, {5, 2, 7});
  EXPECT_EQ(match(index, tokens), (std::vector<int32_t>{5, 2, 7}));
  std::vector<int32_t> longer = tokens;
  longer.insert(longer.end(), {50, 51, 52, 53, 54});
  EXPECT_EQ(match(index, longer), (std::vector<int32_t>{5, 2, 7}));
  std::vector<int32_t> diverges = tokens;
  diverges[9] = 99;  // inside the third block
  EXPECT_EQ(match(index, diverges), (std::vector<int32_t>{5, 2}));
  EXPECT_TRUE(match(index, std::vector<int32_t>{0, 1, 2}).empty());  // no whole block
  EXPECT_TRUE(match(index, iota_tokens(8, 1)).empty());
  EXPECT_EQ(index.size(), 3);
}

TEST(PrefixIndex, PublishingTheSamePrefixAgainNamesTheFirstBlock) {
  PrefixIndex index(8, kBlock);
  const std::vector<int32_t> tokens = iota_tokens(8, 0);
  publish_all(index, tokens, {0, 1});
  std::vector<uint64_t> hashes;
  index.extend_chain(tokens, hashes);
  EXPECT_EQ(index.publish(3, -1, hashes[0], std::span(tokens).first(kBlock)), 0);
  EXPECT_FALSE(index.published(3));
  // Its successor publishes after block 0, which holds the same keys and values.
  std::vector<int32_t> next = tokens;
  next.insert(next.end(), {9, 9, 9, 9});
  hashes.clear();
  index.extend_chain(next, hashes);
  EXPECT_EQ(index.publish(4, 1, hashes[2], std::span(next).subspan(8, kBlock)), 4);
  EXPECT_EQ(match(index, next), (std::vector<int32_t>{0, 1, 4}));
  // A parent that is not published publishes nothing after it.
  EXPECT_EQ(index.publish(5, 6, hashes[2] + 1, std::span(next).subspan(8, kBlock)), -1);
}

// Every block hashes the same: each key is taken by the first block published under it, and a
// block with other tokens, or after another parent, is never returned for it.
uint64_t colliding_hash(uint64_t, std::span<const int32_t>) { return 42; }

TEST(PrefixIndex, ACollisionIsAMissNeverAWrongBlock) {
  PrefixIndex index(8, kBlock, colliding_hash);
  const std::vector<int32_t> a = iota_tokens(8, 0), b = iota_tokens(8, 100);
  std::vector<uint64_t> ha, hb;
  index.extend_chain(a, ha);
  index.extend_chain(b, hb);
  EXPECT_EQ(ha, hb);
  EXPECT_EQ(index.publish(0, -1, ha[0], std::span(a).first(kBlock)), 0);
  EXPECT_EQ(index.publish(1, 0, ha[1], std::span(a).subspan(kBlock, kBlock)), -1);  // key taken by block 0
  EXPECT_EQ(index.publish(2, -1, hb[0], std::span(b).first(kBlock)), -1);            // other tokens
  EXPECT_EQ(index.match(a, ha), (std::vector<int32_t>{0}));  // block 0 is not its own successor
  EXPECT_TRUE(index.match(b, hb).empty());
  // The same tokens as a's second block, as a first block: the parent differs.
  const std::vector<int32_t> shifted(a.begin() + kBlock, a.end());
  std::vector<uint64_t> hs;
  index.extend_chain(shifted, hs);
  EXPECT_TRUE(index.match(shifted, hs).empty());
}

TEST(PrefixIndex, TheLongestChildAgreesWithTheMostTokens) {
  PrefixIndex index(8, kBlock);
  publish_all(index, {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1});
  publish_all(index, {0, 1, 2, 3, 4, 5, 9, 9}, {0, 2});  // block 0 again: the same key, then another child
  const std::vector<int32_t> tail = {4, 5, 6, 8};
  EXPECT_EQ(index.longest_child(0, tail), (std::pair<int32_t, int64_t>{1, 3}));
  EXPECT_EQ(index.longest_child(0, std::vector<int32_t>{4, 5, 9}), (std::pair<int32_t, int64_t>{2, 3}));
  EXPECT_EQ(index.longest_child(0, std::vector<int32_t>{4}), (std::pair<int32_t, int64_t>{1, 1}));
  EXPECT_EQ(index.longest_child(0, std::vector<int32_t>{7}).second, 0);
  EXPECT_EQ(index.longest_child(1, tail).second, 0);  // no children
  index.forget(1);
  EXPECT_EQ(index.longest_child(0, tail), (std::pair<int32_t, int64_t>{2, 2}));
  index.forget(0);  // its children no longer follow it
  EXPECT_EQ(index.longest_child(0, tail).second, 0);
}

// A tail (a block's first positions, kept when its sequence ends) is found only as a child,
// after its parent or as a first block; the same positions published twice stand as one; a
// tail is never a whole block, and forgetting it or its parent ends it.
TEST(PrefixIndex, ATailIsFoundAsAChildOnly) {
  PrefixIndex index(8, kBlock);
  publish_all(index, {0, 1, 2, 3}, {0});
  const std::vector<int32_t> tail = {4, 5, 6};
  EXPECT_EQ(index.publish_tail(1, 0, tail), 1);
  EXPECT_EQ(index.longest_child(0, std::vector<int32_t>{4, 5, 6, 7}), (std::pair<int32_t, int64_t>{1, 3}));
  EXPECT_EQ(index.longest_child(0, std::vector<int32_t>{4, 9}), (std::pair<int32_t, int64_t>{1, 1}));
  EXPECT_EQ(index.publish_tail(2, 0, std::vector<int32_t>{4, 5}), 1);  // its positions are cached already
  EXPECT_EQ(index.publish_tail(2, 0, std::vector<int32_t>{4, 9}), 2);  // other positions
  EXPECT_EQ(index.longest_child(0, std::vector<int32_t>{4, 9}), (std::pair<int32_t, int64_t>{2, 2}));
  const std::vector<int32_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(match(index, all), (std::vector<int32_t>{0}));  // a tail is no whole block
  EXPECT_EQ(index.publish_tail(3, -1, std::vector<int32_t>{8, 9}), 3);  // a first block's
  EXPECT_EQ(index.longest_child(-1, std::vector<int32_t>{8, 9, 10}), (std::pair<int32_t, int64_t>{3, 2}));
  EXPECT_EQ(index.longest_child(-1, std::vector<int32_t>{0, 1, 5}), (std::pair<int32_t, int64_t>{0, 2}));
  EXPECT_EQ(index.publish_tail(4, 6, std::vector<int32_t>{1}), -1);  // the parent is not published
  EXPECT_THROW(index.publish_tail(4, 0, std::vector<int32_t>{4, 5, 6, 7}), std::invalid_argument);  // a whole block
  index.forget(3);
  EXPECT_EQ(index.longest_child(-1, std::vector<int32_t>{8, 9}).second, 0);
  index.forget(0);
  EXPECT_EQ(index.longest_child(0, tail).second, 0);
}

TEST(PrefixIndex, ForgettingABlockCutsTheChainsAfterIt) {
  PrefixIndex index(8, kBlock);
  const std::vector<int32_t> tokens = iota_tokens(12, 0);
  publish_all(index, tokens, {0, 1, 2});
  index.forget(1);
  EXPECT_EQ(match(index, tokens), (std::vector<int32_t>{0}));
  // Block 1 is republished with the same tokens: block 2 was computed after the old block 1,
  // and stays cut off (its parent's generation changed).
  std::vector<uint64_t> hashes;
  index.extend_chain(tokens, hashes);
  EXPECT_EQ(index.publish(1, 0, hashes[1], std::span(tokens).subspan(kBlock, kBlock)), 1);
  EXPECT_EQ(match(index, tokens), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(index.size(), 3);  // block 2's entry is stale until it is forgotten
  index.forget(2);
  EXPECT_EQ(index.size(), 2);
}

}  // namespace
}  // namespace nanoserve::engine::prefix_index_test
