// The paged KV cache: blocks from one pool, a block table per sequence, all-or-nothing
// reserve, blocks back on clear, and rows addressed through the table.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "model/kv_cache.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

namespace nanoserve::model {
namespace {

ModelConfig small_config() {
  return ModelConfig{.arch = "qwen3", .n_layer = 3, .n_embd = 64, .n_ff = 128, .n_head = 4, .n_head_kv = 2,
                     .head_dim = 16, .n_vocab = 100, .n_ctx_train = 256, .rope_scaling = std::nullopt};
}

TEST(KvCache, SizesThePoolInBlocks) {
  const KvCache cache(small_config(), 100, 4, 16);
  EXPECT_EQ(cache.n_blocks(), 7);  // ceil(100 / 16)
  EXPECT_EQ(cache.n_ctx(), 112);
  EXPECT_EQ(cache.free_blocks(), 7);
  EXPECT_EQ(cache.used_blocks(), 0);
  // Per block: 16 positions x 3 layers x (2 heads x 16) x (K and V) x 2 bytes.
  EXPECT_EQ(cache.block_bytes(), 16u * 3 * 32 * 2 * 2);
  EXPECT_EQ(cache.bytes(), 7 * cache.block_bytes());
  EXPECT_THROW(KvCache(small_config(), 0), std::invalid_argument);
  EXPECT_THROW(KvCache(small_config(), 16, 0), std::invalid_argument);
  EXPECT_THROW(KvCache(small_config(), 16, 1, 0), std::invalid_argument);
}

TEST(KvCache, ReserveIsAllOrNothingAndClearGivesBlocksBack) {
  KvCache cache(small_config(), 64, 2, 16);  // 4 blocks
  EXPECT_EQ(cache.blocks_needed(0, 17), 2);
  ASSERT_TRUE(cache.reserve(0, 17));
  EXPECT_EQ(cache.blocks_of(0), 2);
  EXPECT_EQ(cache.blocks_needed(0, 32), 0);
  EXPECT_TRUE(cache.reserve(0, 32));  // already holds them
  EXPECT_EQ(cache.free_blocks(), 2);
  EXPECT_FALSE(cache.reserve(1, 33));  // needs 3
  EXPECT_EQ(cache.blocks_of(1), 0);
  EXPECT_EQ(cache.free_blocks(), 2);
  ASSERT_TRUE(cache.reserve(1, 32));
  EXPECT_EQ(cache.free_blocks(), 0);
  cache.set_length(0, 20);
  EXPECT_EQ(cache.length(0), 20);
  EXPECT_THROW(cache.set_length(0, 33), std::out_of_range);  // beyond its blocks

  // One long sequence may take the whole pool once the other is done.
  cache.clear(1);
  EXPECT_EQ(cache.length(1), 0);
  EXPECT_EQ(cache.free_blocks(), 2);
  ASSERT_TRUE(cache.reserve(0, 64));
  EXPECT_EQ(cache.free_blocks(), 0);
  cache.clear(0);
  EXPECT_EQ(cache.free_blocks(), 4);
  EXPECT_THROW(cache.length(2), std::out_of_range);
  EXPECT_THROW(cache.clear(-1), std::out_of_range);
}

// Every (sequence, layer, position) stored keeps its own values, read back where the view says
// they lie (per block a tile per KV head: keys transposed, values as rows), while sequences grow in turn and so
// interleave their blocks in the pool, across several groups of blocks: no two positions share a slot.
TEST(KvCache, StoredPositionsReadBackThroughTheView) {
  const ModelConfig c = small_config();
  const int64_t kv_dim = c.kv_dim();
  constexpr int64_t kPositions = 88;  // 44 blocks of 2 a sequence: 132 blocks, more than two groups
  KvCache cache(c, 3 * kPositions, 3, 2);
  ASSERT_GT(3 * kPositions / 2, 2 * KvTiles::kMaxGroupBlocks);
  // Distinct small integers, exact in F16 (below 2048): keys positive, values negative.
  const auto value_of = [&](int seq, int layer, int64_t pos, int64_t d) {
    return static_cast<float>(((seq * 3 + layer) * kPositions + pos) * 2 + d % 2 + 1);
  };
  std::vector<float> k(kv_dim), v(kv_dim);
  for (int64_t pos = 0; pos < kPositions; ++pos)
    for (int seq = 0; seq < 3; ++seq) {
      ASSERT_TRUE(cache.reserve(seq, pos + 1));
      for (int layer = 0; layer < 3; ++layer) {
        for (int64_t d = 0; d < kv_dim; ++d) k[d] = value_of(seq, layer, pos, d), v[d] = -k[d];
        cache.store(seq, layer, pos, k.data(), v.data());
      }
    }
  for (int seq = 0; seq < 3; ++seq)
    for (int layer = 0; layer < 3; ++layer) {
      const kernels::KvView view = cache.view(seq, layer);
      for (int64_t pos = 0; pos < kPositions; ++pos) {
        const int64_t block = kernels::kv_block_offset(view, view.blocks[pos / view.block_size]);
        const int64_t slot = pos % view.block_size;
        for (int64_t d = 0; d < kv_dim; ++d) {
          const int64_t tile = block + d / c.head_dim * view.head_stride, i = d % c.head_dim;
          const int hd = static_cast<int>(c.head_dim);
          ASSERT_EQ(kernels::kv_key_at(view, view.k + tile, slot, static_cast<int>(i), hd), value_of(seq, layer, pos, d))
              << seq << " " << layer << " " << pos << " " << d;
          ASSERT_EQ(kernels::kv_value_at(view, view.v + tile, slot, static_cast<int>(i), hd), -value_of(seq, layer, pos, d));
        }
      }
    }
  EXPECT_THROW(cache.store(0, 0, kPositions, k.data(), v.data()), std::out_of_range);  // not reserved
}

// A q8_0 cache holds, for each position's key and value, what ggml's Q8_0 quantizer gives back
// (tensor::quantize_row, blocks of 32 with an F16 scale), read through the view as attention
// reads it; a block takes 34 bytes per 32 values where F16 takes 64, and the byte formula
// (kv_bytes_per_position) agrees with the pool.
TEST(KvCache, AQ8_0CacheHoldsWhatTheQ8_0QuantizerGivesBack) {
  ModelConfig c = small_config();
  c.head_dim = 64;
  c.kv_type = kernels::KvType::Q8_0;
  const int64_t kv_dim = c.kv_dim(), kPositions = 40;
  KvCache cache(c, 2 * 48, 2, 16);  // 3 blocks a sequence
  EXPECT_EQ(cache.block_bytes(), 16u * 3 * 2 * (2 * 34 * 2));  // 16 positions x 3 layers x 2 heads x K,V x 2 blocks
  EXPECT_EQ(static_cast<int64_t>(cache.block_bytes()), kv_bytes_per_position(c) * 16);
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  std::vector<std::vector<float>> keys, values;  // per (seq, layer, pos)
  for (int64_t pos = 0; pos < kPositions; ++pos)
    for (int seq = 0; seq < 2; ++seq) {
      ASSERT_TRUE(cache.reserve(seq, pos + 1));
      for (int layer = 0; layer < 3; ++layer) {
        std::vector<float> k(kv_dim), v(kv_dim);
        for (auto* x : {&k, &v})
          for (auto& f : *x) f = dist(rng);
        cache.store(seq, layer, pos, k.data(), v.data());
        keys.push_back(k);
        values.push_back(v);
      }
    }
  const auto decoded = [](const std::vector<float>& x) {
    std::vector<tensor::BlockQ8_0> q(x.size() / 32);
    std::vector<float> y(x.size());
    tensor::quantize_row(tensor::TensorType::Q8_0, x.data(), q.data(), static_cast<int64_t>(x.size()));
    tensor::dequantize_row(tensor::TensorType::Q8_0, q.data(), y.data(), static_cast<int64_t>(x.size()));
    return y;
  };
  size_t at = 0;
  for (int64_t pos = 0; pos < kPositions; ++pos)
    for (int seq = 0; seq < 2; ++seq)
      for (int layer = 0; layer < 3; ++layer, ++at) {
        const std::vector<float> k = decoded(keys[at]), v = decoded(values[at]);
        const kernels::KvView view = cache.view(seq, layer);
        const int64_t block = kernels::kv_block_offset(view, view.blocks[pos / view.block_size]);
        const int64_t slot = pos % view.block_size;
        for (int64_t d = 0; d < kv_dim; ++d) {
          const int64_t tile = block + d / c.head_dim * view.head_stride;
          const int i = static_cast<int>(d % c.head_dim), hd = static_cast<int>(c.head_dim);
          ASSERT_EQ(kernels::kv_key_at(view, view.k + tile, slot, i, hd), k[d]) << seq << " " << layer << " " << pos;
          ASSERT_EQ(kernels::kv_value_at(view, view.v + tile, slot, i, hd), v[d]) << seq << " " << layer << " " << pos;
        }
      }
  // A head dimension that is not whole blocks of 32 cannot be a q8_0 cache.
  c.head_dim = 48;
  EXPECT_THROW(KvCache(c, 16), std::invalid_argument);
}

}  // namespace
}  // namespace nanoserve::model
