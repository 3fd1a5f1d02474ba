// The prefix cache in the paged pool: blocks counted by reference, published blocks kept idle
// after their sequence lets go and given to a reservation least recently used first, a shared
// block never freed while another sequence holds it; and on a real model, the logits after a
// hit are a full prefill's, bit for bit (whole blocks shared, a partial one copied).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "model/kv_cache.h"
#include "model/model.h"
#include "support/test_paths.h"

namespace nanoserve::model {
namespace {

ModelConfig prefix_test_config() {
  return ModelConfig{.arch = "qwen3", .n_layer = 2, .n_embd = 64, .n_ff = 128, .n_head = 4, .n_head_kv = 2,
                     .head_dim = 16, .n_vocab = 100, .n_ctx_train = 256, .rope_scaling = std::nullopt};
}

std::vector<int32_t> tokens_from(int n, int32_t first) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

// A sequence as an engine drives it: reserve, "compute" (set the length), publish.
void fill_and_publish(KvCache& cache, int seq, const std::vector<int32_t>& tokens) {
  std::vector<uint64_t> hashes;
  cache.extend_chain(tokens, hashes);
  ASSERT_TRUE(cache.reserve(seq, static_cast<int64_t>(tokens.size())));
  cache.set_length(seq, static_cast<int64_t>(tokens.size()));
  cache.publish(seq, tokens, hashes);
}

KvCache::PrefixHit lookup(const KvCache& cache, const std::vector<int32_t>& tokens, int64_t limit) {
  std::vector<uint64_t> hashes;
  cache.extend_chain(tokens, hashes);
  return cache.find_prefix(tokens, hashes, limit);
}

TEST(KvCachePrefix, FinishedSequencesLeaveTheirWholeBlocksCachedAndFree) {
  KvCache cache(prefix_test_config(), 8 * 16, 3, 16);  // 8 blocks
  const std::vector<int32_t> a = tokens_from(40, 0);  // 2 whole blocks and 8 positions
  fill_and_publish(cache, 0, a);
  EXPECT_EQ(cache.used_blocks(), 3);
  cache.clear(0);
  EXPECT_EQ(cache.used_blocks(), 0);
  EXPECT_EQ(cache.cached_blocks(), 2);  // the partial block went back to the free list
  EXPECT_EQ(cache.free_blocks(), 8);    // cached blocks count as free

  const KvCache::PrefixHit hit = lookup(cache, a, 39);
  EXPECT_EQ(hit.positions, 32);
  EXPECT_EQ(hit.blocks.size(), 2u);
  EXPECT_EQ(hit.copied, -1);
  EXPECT_EQ(hit.pool_cost, 2);  // both idle: holding them takes them from the free count
  cache.attach(1, hit);
  EXPECT_EQ(cache.length(1), 32);
  EXPECT_EQ(cache.cached_blocks(), 0);
  EXPECT_EQ(cache.used_blocks(), 2);
  // Held by sequence 1, the same blocks cost another sequence nothing.
  EXPECT_EQ(lookup(cache, a, 39).pool_cost, 0);
  cache.attach(2, lookup(cache, a, 39));
  EXPECT_EQ(cache.shared_blocks(1), 2);
  EXPECT_EQ(cache.used_blocks(), 2);
}

TEST(KvCachePrefix, AHitThatEndsInsideABlockCopiesIt) {
  KvCache cache(prefix_test_config(), 8 * 16, 2, 16);
  const std::vector<int32_t> a = tokens_from(32, 0);
  fill_and_publish(cache, 0, a);
  const KvCache::PrefixHit hit = lookup(cache, a, 31);  // the last token must be computed again
  EXPECT_EQ(hit.positions, 31);
  EXPECT_EQ(hit.blocks.size(), 1u);
  EXPECT_GE(hit.copied, 0);
  EXPECT_EQ(hit.pool_cost, 1);  // the copy's new block (the shared one is held by sequence 0)
  cache.attach(1, hit);
  EXPECT_EQ(cache.blocks_of(1), 2);
  EXPECT_EQ(cache.shared_blocks(1), 1);
  EXPECT_EQ(cache.used_blocks(), 3);
}

TEST(KvCachePrefix, TokensThatBeginACachedBlockCopyItsFirstPositions) {
  KvCache cache(prefix_test_config(), 8 * 16, 2, 16);
  const std::vector<int32_t> a = tokens_from(48, 0);  // 3 whole blocks
  fill_and_publish(cache, 0, a);
  std::vector<int32_t> b(a.begin(), a.begin() + 37);  // 2 whole blocks, then 5 tokens of a's third
  b.insert(b.end(), {90, 91, 92});
  KvCache::PrefixHit hit = lookup(cache, b, 39);
  EXPECT_EQ(hit.blocks.size(), 2u);
  EXPECT_GE(hit.copied, 0);
  EXPECT_EQ(hit.positions, 37);
  EXPECT_EQ(hit.pool_cost, 1);
  // Never past the limit: the same prompt, the same again.
  const std::vector<int32_t> resend(a.begin(), a.begin() + 40);
  hit = lookup(cache, resend, 39);
  EXPECT_EQ(hit.positions, 39);
  EXPECT_GE(hit.copied, 0);
  cache.attach(1, hit);
  EXPECT_EQ(cache.length(1), 39);
  EXPECT_EQ(cache.blocks_of(1), 3);
}

TEST(KvCachePrefix, LettingGoNeverFreesABlockAnotherSequenceHolds) {
  KvCache cache(prefix_test_config(), 4 * 16, 2, 16);  // 4 blocks
  const std::vector<int32_t> a = tokens_from(32, 0);
  fill_and_publish(cache, 0, a);
  std::vector<int32_t> b = a;
  b.insert(b.end(), 10, 99);
  cache.attach(1, lookup(cache, b, 41));
  ASSERT_TRUE(cache.reserve(1, 42));
  EXPECT_EQ(cache.used_blocks(), 3);
  cache.clear(0);  // a preempted or cancelled sequence lets go
  EXPECT_EQ(cache.used_blocks(), 3);  // sequence 1 still holds the shared two
  EXPECT_EQ(cache.free_blocks(), 1);
  EXPECT_FALSE(cache.reserve(0, 32));  // so they cannot be handed out
  cache.clear(1);
  EXPECT_EQ(cache.used_blocks(), 0);
  EXPECT_EQ(cache.free_blocks(), 4);
}

TEST(KvCachePrefix, AReservationEvictsTheLeastRecentlyUsedIdleBlocks) {
  KvCache cache(prefix_test_config(), 4 * 16, 2, 16);  // 4 blocks
  const std::vector<int32_t> a = tokens_from(32, 0), b = tokens_from(32, 50);
  fill_and_publish(cache, 0, a);
  cache.clear(0);
  fill_and_publish(cache, 0, b);
  cache.clear(0);
  EXPECT_EQ(cache.cached_blocks(), 4);
  EXPECT_EQ(cache.free_blocks(), 4);
  // a was let go of first: its blocks go first, its last block before its first.
  ASSERT_TRUE(cache.reserve(1, 16));
  EXPECT_EQ(cache.evictions(), 1u);
  EXPECT_EQ(lookup(cache, a, 31).positions, 16);  // a's first block is still there
  EXPECT_EQ(lookup(cache, b, 31).positions, 31);
  ASSERT_TRUE(cache.reserve(1, 32));
  EXPECT_EQ(lookup(cache, a, 31).positions, 0);
  EXPECT_EQ(lookup(cache, b, 31).positions, 31);
  EXPECT_EQ(cache.evictions(), 2u);
  cache.clear(1);
  cache.drop_cached();
  EXPECT_EQ(cache.cached_blocks(), 0);
  EXPECT_EQ(cache.free_blocks(), 4);
  EXPECT_EQ(lookup(cache, b, 31).positions, 0);
}

// Speculative decoding's rejected drafts: truncating gives back the blocks past the kept
// positions (a block another sequence holds stays with it) and never cuts into published ones.
TEST(KvCachePrefix, TruncateLetsGoOfTheBlocksPastTheKeptPositionsOnly) {
  KvCache cache(prefix_test_config(), 16 * 8, 2, 16);
  const std::vector<int32_t> prompt = tokens_from(32, 1);
  fill_and_publish(cache, 0, prompt);  // 2 published blocks
  ASSERT_TRUE(cache.reserve(0, 32 + 20));  // drafts: 20 more positions, 2 more blocks
  cache.set_length(0, 52);
  EXPECT_EQ(cache.blocks_of(0), 4);
  EXPECT_EQ(cache.free_blocks(), 4);
  cache.truncate(0, 49);  // keeps 17 of the 20: still 4 blocks
  EXPECT_EQ(cache.length(0), 49);
  EXPECT_EQ(cache.blocks_of(0), 4);
  cache.truncate(0, 33);  // 1 past the published blocks: 3 blocks
  EXPECT_EQ(cache.blocks_of(0), 3);
  EXPECT_EQ(cache.free_blocks(), 5);
  EXPECT_THROW(cache.truncate(0, 34), std::out_of_range);  // beyond its length
  EXPECT_THROW(cache.truncate(0, 31), std::out_of_range);  // inside a published block
  cache.truncate(0, 32);
  EXPECT_EQ(cache.blocks_of(0), 2);
  EXPECT_EQ(cache.free_blocks(), 6);
  // A sequence that attached the published blocks keeps them whatever the first one does.
  const KvCache::PrefixHit hit = lookup(cache, prompt, 32);
  ASSERT_EQ(hit.positions, 32);
  cache.attach(1, hit);
  cache.clear(0);
  EXPECT_EQ(cache.blocks_of(1), 2);
  EXPECT_EQ(cache.used_blocks(), 2);
  EXPECT_EQ(cache.shared_blocks(1), 0);
}

TEST(KvCachePrefix, AttachingWhenOnlyTheCopiedBlockIsIdleTakesItOver) {
  KvCache cache(prefix_test_config(), 2 * 16, 2, 16);  // 2 blocks
  const std::vector<int32_t> a = tokens_from(32, 0);
  fill_and_publish(cache, 0, a);
  cache.clear(0);
  const KvCache::PrefixHit hit = lookup(cache, a, 31);
  ASSERT_EQ(hit.pool_cost, 2);
  cache.attach(1, hit);  // the first block is held; the only block left to take is the copied one
  EXPECT_EQ(cache.length(1), 31);
  EXPECT_EQ(cache.blocks_of(1), 2);
  EXPECT_EQ(cache.free_blocks(), 0);
  EXPECT_EQ(cache.cached_blocks(), 0);
}

// On the tiny golden model: the last position's logits after attaching a cached prefix equal
// those of a full prefill bit for bit, whether the hit ends on a block boundary or inside a
// block (copied: 112 tokens), and for a follow-up prompt that extends the cached one.
class KvCachePrefixModel : public ::testing::Test {
 protected:
  std::vector<float> last_logits(KvCache& cache, int seq, const std::vector<int32_t>& tokens) {
    Batch batch;
    for (auto pos = cache.length(seq); pos < static_cast<int64_t>(tokens.size()); ++pos)
      batch.add(seq, pos, tokens[static_cast<size_t>(pos)], pos + 1 == static_cast<int64_t>(tokens.size()));
    Logits logits;
    model_.forward(batch, cache, logits);
    return {logits.row(0).begin(), logits.row(0).end()};
  }
  // The last logits of `tokens` prefilled in a cache of their own.
  std::vector<float> full_prefill(const std::vector<int32_t>& tokens) {
    KvCache fresh(model_.config(), 512, 1);
    return last_logits(fresh, 0, tokens);
  }
  // Prefills `tokens` into sequence `seq` and publishes its whole blocks; its last logits.
  std::vector<float> prefill_and_publish(KvCache& cache, int seq, const std::vector<int32_t>& tokens) {
    std::vector<float> logits = last_logits(cache, seq, tokens);
    std::vector<uint64_t> hashes;
    cache.extend_chain(tokens, hashes);
    cache.publish(seq, tokens, hashes);
    return logits;
  }

  Model model_{test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf"), {.threads = 1}};
};

TEST_F(KvCachePrefixModel, LogitsAfterAHitEqualAFullPrefill) {
  std::vector<int32_t> prompt(150);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 37 + 11) % 1000);
  for (const size_t n : {size_t{97}, size_t{100}, size_t{112}, size_t{150}}) {
    const std::vector<int32_t> tokens(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(n));
    KvCache cache(model_.config(), 512, 3);
    const std::vector<float> full = prefill_and_publish(cache, 0, tokens);
    cache.clear(0);  // idle: the hit comes from cached blocks nobody holds

    const KvCache::PrefixHit hit = lookup(cache, tokens, static_cast<int64_t>(n) - 1);
    // The whole blocks computed, but never the last token; a prompt of whole blocks copies its last.
    EXPECT_EQ(hit.positions, static_cast<int64_t>(std::min(n - 1, n / 16 * 16))) << n;
    EXPECT_EQ(hit.copied >= 0, n % 16 == 0) << n;
    cache.attach(1, hit);
    EXPECT_TRUE(last_logits(cache, 1, tokens) == full) << n << " tokens, hit of " << hit.positions;

    // A follow-up: the cached prompt and 20 more tokens, against a full prefill of it.
    std::vector<int32_t> longer = tokens;
    for (int i = 0; i < 20; ++i) longer.push_back(500 + i);
    const std::vector<float> longer_full = full_prefill(longer);
    const KvCache::PrefixHit follow = lookup(cache, longer, static_cast<int64_t>(longer.size()) - 1);
    EXPECT_EQ(follow.positions, static_cast<int64_t>(n / 16 * 16)) << n;
    cache.attach(2, follow);
    EXPECT_TRUE(last_logits(cache, 2, longer) == longer_full) << n;
  }
}

// A prompt that leaves the cached one inside a block: the block's agreeing positions are copied,
// and the logits still equal a full prefill's.
TEST_F(KvCachePrefixModel, LogitsAfterAPartlyAgreeingBlockEqualAFullPrefill) {
  std::vector<int32_t> cached(160);
  for (size_t i = 0; i < cached.size(); ++i) cached[i] = static_cast<int32_t>((i * 53 + 5) % 1000);
  KvCache cache(model_.config(), 512, 2);
  prefill_and_publish(cache, 0, cached);
  std::vector<int32_t> other(cached.begin(), cached.begin() + 150);  // 9 whole blocks and 6 tokens
  for (int i = 0; i < 20; ++i) other.push_back(700 + i);
  const std::vector<float> full = full_prefill(other);
  const KvCache::PrefixHit hit = lookup(cache, other, static_cast<int64_t>(other.size()) - 1);
  EXPECT_EQ(hit.positions, 150);
  EXPECT_GE(hit.copied, 0);
  cache.attach(1, hit);
  EXPECT_TRUE(last_logits(cache, 1, other) == full);
}

}  // namespace
}  // namespace nanoserve::model
