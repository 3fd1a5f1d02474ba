// The prefix cache over the paged pool: blocks counted by reference, published blocks kept idle
// after their sequence lets go and given to a reservation least recently used first, a shared
// block never freed while another sequence holds it, a kept state found only with its block; and
// on a real model, the logits after a hit are a full prefill's, bit for bit (whole blocks shared,
// a partial one copied).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "engine/prefix_cache.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "support/test_paths.h"

namespace nanoserve::engine::prefix_cache_blocks_test {
namespace {

using model::Batch;
using model::KvCache;
using model::Logits;
using model::Model;
using model::ModelConfig;

// A pool and the prefix cache over it.
struct Cached {
  Cached(const ModelConfig& c, int64_t capacity, int n_seq, int64_t block = 16, PrefixCacheOptions o = {})
      : pool(c, capacity, n_seq, block), prefix(pool, o) {}
  KvCache pool;
  PrefixCache prefix;
};

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
void fill_and_publish(Cached& c, int seq, const std::vector<int32_t>& tokens) {
  std::vector<uint64_t> hashes;
  c.prefix.extend_chain(tokens, hashes);
  ASSERT_TRUE(c.pool.reserve(seq, static_cast<int64_t>(tokens.size())));
  c.pool.set_length(seq, static_cast<int64_t>(tokens.size()));
  c.prefix.publish(seq, tokens, hashes);
}

PrefixCache::Hit lookup(const Cached& c, const std::vector<int32_t>& tokens, int64_t limit) {
  std::vector<uint64_t> hashes;
  c.prefix.extend_chain(tokens, hashes);
  return c.prefix.find(tokens, hashes, limit);
}

void release(Cached& c, int seq) { c.prefix.release(seq, {}, {}); }

TEST(PrefixCacheBlocks, FinishedSequencesLeaveTheirWholeBlocksCachedAndFree) {
  Cached c(prefix_test_config(), 8 * 16, 3, 16);
  KvCache& cache = c.pool;  // 8 blocks
  const std::vector<int32_t> a = tokens_from(40, 0);  // 2 whole blocks and 8 positions
  fill_and_publish(c, 0, a);
  EXPECT_EQ(cache.used_blocks(), 3);
  release(c, 0);
  EXPECT_EQ(cache.used_blocks(), 0);
  EXPECT_EQ(cache.cached_blocks(), 2);  // the partial block went back to the free list
  EXPECT_EQ(cache.free_blocks(), 8);    // cached blocks count as free

  const PrefixCache::Hit hit = lookup(c, a, 39);
  EXPECT_EQ(hit.attachment.positions, 32);
  EXPECT_EQ(hit.attachment.blocks.size(), 2u);
  EXPECT_EQ(hit.attachment.copied, -1);
  EXPECT_EQ(hit.pool_cost, 2);  // both idle: holding them takes them from the free count
  c.prefix.attach(1, hit);
  EXPECT_EQ(cache.length(1), 32);
  EXPECT_EQ(cache.cached_blocks(), 0);
  EXPECT_EQ(cache.used_blocks(), 2);
  // Held by sequence 1, the same blocks cost another sequence nothing.
  EXPECT_EQ(lookup(c, a, 39).pool_cost, 0);
  c.prefix.attach(2, lookup(c, a, 39));
  EXPECT_EQ(cache.shared_blocks(1), 2);
  EXPECT_EQ(cache.used_blocks(), 2);
}

TEST(PrefixCacheBlocks, AHitThatEndsInsideABlockCopiesIt) {
  Cached c(prefix_test_config(), 8 * 16, 2, 16);
  KvCache& cache = c.pool;
  const std::vector<int32_t> a = tokens_from(32, 0);
  fill_and_publish(c, 0, a);
  const PrefixCache::Hit hit = lookup(c, a, 31);  // the last token must be computed again
  EXPECT_EQ(hit.attachment.positions, 31);
  EXPECT_EQ(hit.attachment.blocks.size(), 1u);
  EXPECT_GE(hit.attachment.copied, 0);
  EXPECT_EQ(hit.pool_cost, 1);  // the copy's new block (the shared one is held by sequence 0)
  c.prefix.attach(1, hit);
  EXPECT_EQ(cache.blocks_of(1), 2);
  EXPECT_EQ(cache.shared_blocks(1), 1);
  EXPECT_EQ(cache.used_blocks(), 3);
}

TEST(PrefixCacheBlocks, TokensThatBeginACachedBlockCopyItsFirstPositions) {
  Cached c(prefix_test_config(), 8 * 16, 2, 16);
  KvCache& cache = c.pool;
  const std::vector<int32_t> a = tokens_from(48, 0);  // 3 whole blocks
  fill_and_publish(c, 0, a);
  std::vector<int32_t> b(a.begin(), a.begin() + 37);  // 2 whole blocks, then 5 tokens of a's third
  b.insert(b.end(), {90, 91, 92});
  PrefixCache::Hit hit = lookup(c, b, 39);
  EXPECT_EQ(hit.attachment.blocks.size(), 2u);
  EXPECT_GE(hit.attachment.copied, 0);
  EXPECT_EQ(hit.attachment.positions, 37);
  EXPECT_EQ(hit.pool_cost, 1);
  // Never past the limit: the same prompt, the same again.
  const std::vector<int32_t> resend(a.begin(), a.begin() + 40);
  hit = lookup(c, resend, 39);
  EXPECT_EQ(hit.attachment.positions, 39);
  EXPECT_GE(hit.attachment.copied, 0);
  c.prefix.attach(1, hit);
  EXPECT_EQ(cache.length(1), 39);
  EXPECT_EQ(cache.blocks_of(1), 3);
}

TEST(PrefixCacheBlocks, LettingGoNeverFreesABlockAnotherSequenceHolds) {
  Cached c(prefix_test_config(), 4 * 16, 2, 16);
  KvCache& cache = c.pool;  // 4 blocks
  const std::vector<int32_t> a = tokens_from(32, 0);
  fill_and_publish(c, 0, a);
  std::vector<int32_t> b = a;
  b.insert(b.end(), 10, 99);
  c.prefix.attach(1, lookup(c, b, 41));
  ASSERT_TRUE(cache.reserve(1, 42));
  EXPECT_EQ(cache.used_blocks(), 3);
  release(c, 0);  // a preempted or cancelled sequence lets go
  EXPECT_EQ(cache.used_blocks(), 3);  // sequence 1 still holds the shared two
  EXPECT_EQ(cache.free_blocks(), 1);
  EXPECT_FALSE(cache.reserve(0, 32));  // so they cannot be handed out
  release(c, 1);
  EXPECT_EQ(cache.used_blocks(), 0);
  EXPECT_EQ(cache.free_blocks(), 4);
}

TEST(PrefixCacheBlocks, AReservationEvictsTheLeastRecentlyUsedIdleBlocks) {
  Cached c(prefix_test_config(), 4 * 16, 2, 16);
  KvCache& cache = c.pool;  // 4 blocks
  const std::vector<int32_t> a = tokens_from(32, 0), b = tokens_from(32, 50);
  fill_and_publish(c, 0, a);
  release(c, 0);
  fill_and_publish(c, 0, b);
  release(c, 0);
  EXPECT_EQ(cache.cached_blocks(), 4);
  EXPECT_EQ(cache.free_blocks(), 4);
  // a was let go of first: its blocks go first, its last block before its first.
  ASSERT_TRUE(cache.reserve(1, 16));
  EXPECT_EQ(cache.evictions(), 1u);
  EXPECT_EQ(lookup(c, a, 31).attachment.positions, 16);  // a's first block is still there
  EXPECT_EQ(lookup(c, b, 31).attachment.positions, 31);
  ASSERT_TRUE(cache.reserve(1, 32));
  EXPECT_EQ(lookup(c, a, 31).attachment.positions, 0);
  EXPECT_EQ(lookup(c, b, 31).attachment.positions, 31);
  EXPECT_EQ(cache.evictions(), 2u);
  release(c, 1);
  cache.drop_idle();
  EXPECT_EQ(cache.cached_blocks(), 0);
  EXPECT_EQ(cache.free_blocks(), 4);
  EXPECT_EQ(lookup(c, b, 31).attachment.positions, 0);
}

// Speculative decoding's rejected drafts: truncating gives back the blocks past the kept
// positions (a block another sequence holds stays with it) and never cuts into published ones.
TEST(PrefixCacheBlocks, TruncateLetsGoOfTheBlocksPastTheKeptPositionsOnly) {
  Cached c(prefix_test_config(), 16 * 8, 2, 16);
  KvCache& cache = c.pool;
  const std::vector<int32_t> prompt = tokens_from(32, 1);
  fill_and_publish(c, 0, prompt);  // 2 published blocks
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
  const PrefixCache::Hit hit = lookup(c, prompt, 32);
  ASSERT_EQ(hit.attachment.positions, 32);
  c.prefix.attach(1, hit);
  release(c, 0);
  EXPECT_EQ(cache.blocks_of(1), 2);
  EXPECT_EQ(cache.used_blocks(), 2);
  EXPECT_EQ(cache.shared_blocks(1), 0);
}

TEST(PrefixCacheBlocks, AttachingWhenOnlyTheCopiedBlockIsIdleTakesItOver) {
  Cached c(prefix_test_config(), 2 * 16, 2, 16);
  KvCache& cache = c.pool;  // 2 blocks
  const std::vector<int32_t> a = tokens_from(32, 0);
  fill_and_publish(c, 0, a);
  release(c, 0);
  const PrefixCache::Hit hit = lookup(c, a, 31);
  ASSERT_EQ(hit.pool_cost, 2);
  c.prefix.attach(1, hit);  // the first block is held; the only block left to take is the copied one
  EXPECT_EQ(cache.length(1), 31);
  EXPECT_EQ(cache.blocks_of(1), 2);
  EXPECT_EQ(cache.free_blocks(), 0);
  EXPECT_EQ(cache.cached_blocks(), 0);
}

// A model with recurrent state: a prefix is found only up to the last block whose state was
// kept, whole blocks only, and a state goes with its block when the block is evicted.
TEST(PrefixCacheBlocks, WithBlockStatesAHitEndsAtTheLastBlockWithAState) {
  Cached c(prefix_test_config(), 4 * 16, 2, 16, {.block_states = true});
  const std::vector<int32_t> a = tokens_from(48, 0);  // 3 whole blocks
  fill_and_publish(c, 0, a);
  EXPECT_EQ(lookup(c, a, 47).attachment.positions, 0);  // no state kept yet
  c.prefix.keep_state(0, 1, {7, 8});
  const std::vector<float> two = {7, 8};
  PrefixCache::Hit hit = lookup(c, a, 47);
  EXPECT_EQ(hit.attachment.positions, 32);  // not 47: a state cannot be cut inside a block
  EXPECT_EQ(hit.attachment.copied, -1);
  ASSERT_EQ(hit.attachment.blocks.size(), 2u);
  const std::span<const float> state = c.prefix.state_after(hit.attachment.blocks.back());
  EXPECT_TRUE(std::equal(state.begin(), state.end(), two.begin(), two.end()));
  EXPECT_THROW(c.prefix.keep_state(0, 3, {1}), std::out_of_range);  // not a published block
  release(c, 0);
  // Other tokens take the whole pool: the blocks, and their states, are evicted.
  fill_and_publish(c, 1, tokens_from(64, 500));
  EXPECT_EQ(lookup(c, a, 47).attachment.positions, 0);
  EXPECT_TRUE(c.prefix.state_after(hit.attachment.blocks.back()).empty());
}

// The kept states stay within their bound: the least recently used goes first, its block stays
// cached (a hit then ends at the last block that still has a state).
TEST(PrefixCacheBlocks, KeptStatesStayWithinTheirBound) {
  Cached c(prefix_test_config(), 8 * 16, 2, 16, {.block_states = true, .max_state_bytes = 2 * sizeof(float)});
  const std::vector<int32_t> a = tokens_from(48, 0);
  fill_and_publish(c, 0, a);
  c.prefix.keep_state(0, 0, {1, 2});
  c.prefix.keep_state(0, 2, {3, 4});  // over the bound: the first goes
  const std::span<const int32_t> table = c.pool.block_table(0);
  EXPECT_TRUE(c.prefix.state_after(table[0]).empty());
  EXPECT_EQ(c.prefix.state_after(table[2]).size(), 2u);
  EXPECT_EQ(lookup(c, a, 48).attachment.positions, 48);
  c.prefix.keep_state(0, 1, {5, 6});  // the last kept stays, whatever its size
  EXPECT_TRUE(c.prefix.state_after(table[2]).empty());
  EXPECT_EQ(lookup(c, a, 48).attachment.positions, 32);
}

// On the tiny golden model: the last position's logits after attaching a cached prefix equal
// those of a full prefill bit for bit, whether the hit ends on a block boundary or inside a
// block (copied: 112 tokens), and for a follow-up prompt that extends the cached one.
class PrefixCacheBlocksModel : public ::testing::Test {
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
  std::vector<float> prefill_and_publish(Cached& c, int seq, const std::vector<int32_t>& tokens) {
    std::vector<float> logits = last_logits(c.pool, seq, tokens);
    std::vector<uint64_t> hashes;
    c.prefix.extend_chain(tokens, hashes);
    c.prefix.publish(seq, tokens, hashes);
    return logits;
  }

  Model model_{nanoserve::test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf"), {.threads = 1}};
};

TEST_F(PrefixCacheBlocksModel, LogitsAfterAHitEqualAFullPrefill) {
  std::vector<int32_t> prompt(150);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 37 + 11) % 1000);
  for (const size_t n : {size_t{97}, size_t{100}, size_t{112}, size_t{150}}) {
    const std::vector<int32_t> tokens(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(n));
    Cached c(model_.config(), 512, 3);
    KvCache& cache = c.pool;
    const std::vector<float> full = prefill_and_publish(c, 0, tokens);
    release(c, 0);  // idle: the hit comes from cached blocks nobody holds

    const PrefixCache::Hit hit = lookup(c, tokens, static_cast<int64_t>(n) - 1);
    // The whole blocks computed, but never the last token; a prompt of whole blocks copies its last.
    EXPECT_EQ(hit.attachment.positions, static_cast<int64_t>(std::min(n - 1, n / 16 * 16))) << n;
    EXPECT_EQ(hit.attachment.copied >= 0, n % 16 == 0) << n;
    c.prefix.attach(1, hit);
    EXPECT_TRUE(last_logits(cache, 1, tokens) == full) << n << " tokens, hit of " << hit.attachment.positions;

    // A follow-up: the cached prompt and 20 more tokens, against a full prefill of it.
    std::vector<int32_t> longer = tokens;
    for (int i = 0; i < 20; ++i) longer.push_back(500 + i);
    const std::vector<float> longer_full = full_prefill(longer);
    const PrefixCache::Hit follow = lookup(c, longer, static_cast<int64_t>(longer.size()) - 1);
    EXPECT_EQ(follow.attachment.positions, static_cast<int64_t>(n / 16 * 16)) << n;
    c.prefix.attach(2, follow);
    EXPECT_TRUE(last_logits(cache, 2, longer) == longer_full) << n;
  }
}

// A prompt that leaves the cached one inside a block: the block's agreeing positions are copied,
// and the logits still equal a full prefill's.
TEST_F(PrefixCacheBlocksModel, LogitsAfterAPartlyAgreeingBlockEqualAFullPrefill) {
  std::vector<int32_t> cached(160);
  for (size_t i = 0; i < cached.size(); ++i) cached[i] = static_cast<int32_t>((i * 53 + 5) % 1000);
  Cached c(model_.config(), 512, 2);
  KvCache& cache = c.pool;
  prefill_and_publish(c, 0, cached);
  std::vector<int32_t> other(cached.begin(), cached.begin() + 150);  // 9 whole blocks and 6 tokens
  for (int i = 0; i < 20; ++i) other.push_back(700 + i);
  const std::vector<float> full = full_prefill(other);
  const PrefixCache::Hit hit = lookup(c, other, static_cast<int64_t>(other.size()) - 1);
  EXPECT_EQ(hit.attachment.positions, 150);
  EXPECT_GE(hit.attachment.copied, 0);
  c.prefix.attach(1, hit);
  EXPECT_TRUE(last_logits(cache, 1, other) == full);
}

// A hybrid model (delta-net layers): a prefill copies its state where asked (where another prompt
// parts from it), the copy is kept with the block ending there, and a second prompt sharing those
// blocks starts from it: its last logits equal a full prefill's.
TEST(PrefixCacheBlocksHybrid, AStateCopiedWherePromptsPartServesTheOther) {
  Model model(nanoserve::test::shared_path("golden/models/archs/tiny-qwen35moe-F16.gguf"), {.threads = 1});
  KvCache pool(model.config(), 512, 2);
  PrefixCache prefix(pool);
  std::vector<int32_t> a(120), b;
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int32_t>((i * 37 + 11) % 1000);
  b.assign(a.begin(), a.begin() + 100);
  for (int i = 0; i < 30; ++i) b.push_back(600 + i);
  auto prefill = [&](KvCache& cache, int seq, const std::vector<int32_t>& tokens) {
    Batch batch;
    for (auto pos = cache.length(seq); pos < static_cast<int64_t>(tokens.size()); ++pos)
      batch.add(seq, pos, tokens[static_cast<size_t>(pos)], pos + 1 == static_cast<int64_t>(tokens.size()));
    Logits logits;
    model.forward(batch, cache, logits);
    return std::vector<float>(logits.row(0).begin(), logits.row(0).end());
  };
  std::vector<uint64_t> ha, hb;
  prefix.extend_chain(a, ha);
  prefix.plan_capture(0, 0, 120, /*hint=*/96);  // b parts from a at 100: the last whole block before is 96
  prefill(pool, 0, a);
  prefix.publish(0, a, ha);
  prefix.keep_captured(0);
  prefix.extend_chain(b, hb);
  const PrefixCache::Hit hit = prefix.find_start(b, hb);
  EXPECT_EQ(hit.attachment.positions, 96);
  prefix.attach(1, hit);
  KvCache fresh(model.config(), 512, 1);
  EXPECT_TRUE(prefill(pool, 1, b) == prefill(fresh, 0, b));
}

}  // namespace
}  // namespace nanoserve::engine::prefix_cache_blocks_test
