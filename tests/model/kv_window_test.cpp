// The KV cache of a model with sliding-window layers (Gemma 3): those layers keep only their
// window's blocks (KvWindow), the others every position; what is kept reads back intact while
// blocks are recycled, for several sequences at once; prefixes are not shared.
#include <gtest/gtest.h>

#include <vector>

#include "model/kv_cache.h"

namespace nanoserve::model {
namespace {

constexpr int64_t kWindowBlock = 16, kWindow = 40;

// Gemma 3's pattern: layers 0-4 local (windowed), 5 global; 2 KV heads of 8.
ModelConfig gemma_like() {
  ModelConfig c{.arch = "gemma3", .n_layer = 6, .n_embd = 32, .n_ff = 64, .n_head = 4, .n_head_kv = 2,
                .head_dim = 8, .n_vocab = 100, .n_ctx_train = 4096, .rope_scaling = std::nullopt};
  c.sliding_window = kWindow;
  return c;
}

// A value that names its sequence, layer, position and dimension (exact in F16).
float value_of(int seq, int layer, int64_t pos, int64_t d) {
  return static_cast<float>(seq * 512 + layer * 64 + pos % 32 + d) / 8.0f;
}

void store_position(KvCache& cache, const ModelConfig& c, int seq, int64_t pos) {
  std::vector<float> k(c.kv_dim()), v(c.kv_dim());
  for (int layer = 0; layer < static_cast<int>(c.n_layer); ++layer) {
    for (int64_t d = 0; d < c.kv_dim(); ++d) {
      k[d] = value_of(seq, layer, pos, d);
      v[d] = -value_of(seq, layer, pos, d);
    }
    cache.store(seq, layer, pos, k.data(), v.data());
  }
}

// Appends `rows` positions to seq as a forward call does: reserve, store, set the length.
void append(KvCache& cache, const ModelConfig& c, int seq, int64_t rows) {
  const int64_t from = cache.length(seq);
  ASSERT_TRUE(cache.reserve(seq, from + rows));
  for (int64_t p = from; p < from + rows; ++p) store_position(cache, c, seq, p);
  cache.set_length(seq, from + rows);
}

// The key and value of dimension d of `pos` in a layer, read through the view as attention does.
std::pair<float, float> read_back(const KvCache& cache, int seq, int layer, int64_t pos, int64_t d,
                                  int64_t head_dim) {
  const kernels::KvView view = kernels::kv_head_view(cache.view(seq, layer), d / head_dim);
  const int64_t block = kernels::kv_block_offset(view, view.blocks[pos / view.block_size]);
  const int64_t slot = pos % view.block_size, i = d % head_dim;
  const int hd = static_cast<int>(head_dim);
  return {kernels::kv_key_at(view, view.k + block, slot, static_cast<int>(i), hd),
          kernels::kv_value_at(view, view.v + block, slot, static_cast<int>(i), hd)};
}

// Every position a row at `length` sees in each layer (its window in the local ones) reads back.
void expect_intact(const KvCache& cache, const ModelConfig& c, int seq) {
  const int64_t length = cache.length(seq);
  for (int layer = 0; layer < static_cast<int>(c.n_layer); ++layer) {
    const int64_t first = c.windowed(static_cast<uint32_t>(layer)) ? std::max<int64_t>(0, length + 1 - kWindow) : 0;
    for (int64_t p = first; p < length; ++p)
      for (int64_t d = 0; d < c.kv_dim(); ++d) {
        const auto [k, v] = read_back(cache, seq, layer, p, d, c.head_dim);
        ASSERT_EQ(k, value_of(seq, layer, p, d)) << "seq " << seq << " layer " << layer << " pos " << p;
        ASSERT_EQ(v, -value_of(seq, layer, p, d)) << "seq " << seq << " layer " << layer << " pos " << p;
      }
  }
}

TEST(KvWindow, OnlyTheGlobalLayersGrowWithTheSequence) {
  const ModelConfig c = gemma_like();
  ASSERT_EQ(c.n_windowed_layers(), 5u);
  const int64_t layer_bytes = kv_bytes_per_position_layer(c);  // 2 heads x 8 x (K and V) x 2 bytes
  EXPECT_EQ(layer_bytes, 64);
  EXPECT_EQ(kv_bytes_per_position(c), layer_bytes);  // one global layer
  EXPECT_EQ(kv_bytes_for(c, 1000), 1000 * layer_bytes + 5 * kWindow * layer_bytes);
  EXPECT_EQ(kv_bytes_for(c, 10), 6 * 10 * layer_bytes);

  KvCache cache(c, 1024, 1, kWindowBlock);
  EXPECT_FALSE(cache.shares_prefixes());
  EXPECT_EQ(cache.block_bytes(), static_cast<size_t>(kWindowBlock * layer_bytes));
  // A decode at a time: the window's layers hold the blocks of the last kWindow positions and
  // the one being written, never more.
  const int64_t most = (kWindow + kWindowBlock - 1) / kWindowBlock + 1;
  for (int64_t n = 0; n < 1000; ++n) {
    append(cache, c, 0, 1);
    ASSERT_LE(cache.used_bytes(), cache.used_blocks() * cache.block_bytes() +
                                      static_cast<size_t>(most * kWindowBlock * 5 * layer_bytes))
        << "after " << n + 1 << " positions";
  }
  EXPECT_EQ(cache.used_blocks(), 1000 / kWindowBlock + 1);
  EXPECT_EQ(cache.bytes_of(0), cache.used_bytes());  // the only sequence
  EXPECT_GT(cache.bytes_of(0), cache.used_blocks() * cache.block_bytes());
  expect_intact(cache, c, 0);
  cache.clear(0);
  EXPECT_EQ(cache.used_bytes(), 0u);
}

TEST(KvWindow, ChunksAndSequencesKeepTheirWindowsApart) {
  const ModelConfig c = gemma_like();
  KvCache cache(c, 4096, 3, kWindowBlock);
  // Prompt chunks of different sizes interleaved with another sequence's decode rows: each
  // sequence's window reads back its own values after its blocks were recycled many times.
  for (int step = 0; step < 12; ++step) {
    append(cache, c, 0, 37);
    append(cache, c, 1, 1);
    append(cache, c, 2, step % 2 ? 100 : 3);
    // A chunk of r rows needs the window before its first row and the rows: at most
    // kWindow - 1 + r positions, in one block more than they fill.
    EXPECT_LE(cache.used_bytes() - cache.used_blocks() * cache.block_bytes(),
              static_cast<size_t>(((kWindow + 37 + kWindowBlock - 2) / kWindowBlock + 1 + (kWindow + kWindowBlock - 1) / kWindowBlock + 1 +
                                   (kWindow + 100 + kWindowBlock - 2) / kWindowBlock + 1) *
                                  kWindowBlock * 5 * kv_bytes_per_position_layer(c)));
    for (int seq = 0; seq < 3; ++seq) expect_intact(cache, c, seq);
  }
}

TEST(KvWindow, TruncationKeepsTheWindowOrRefuses) {
  const ModelConfig c = gemma_like();
  KvCache cache(c, 1024, 1, kWindowBlock);
  append(cache, c, 0, 200);
  append(cache, c, 0, 9);  // a verify step's rows, then most of them rejected
  cache.truncate(0, 201);
  EXPECT_EQ(cache.length(0), 201);
  append(cache, c, 0, 5);
  expect_intact(cache, c, 0);
  // Position 100's window was let go of when the sequence grew past it.
  EXPECT_TRUE(cache.can_truncate(0, 201));
  EXPECT_FALSE(cache.can_truncate(0, 100));
  EXPECT_THROW(cache.truncate(0, 100), std::out_of_range);
  EXPECT_EQ(cache.length(0), 206);
  expect_intact(cache, c, 0);
  cache.truncate(0, 0);
  EXPECT_EQ(cache.used_bytes(), 0u);
  append(cache, c, 0, 50);
  expect_intact(cache, c, 0);
}

TEST(KvWindow, NoPrefixIsShared) {
  const ModelConfig c = gemma_like();
  KvCache cache(c, 1024, 2, kWindowBlock);
  EXPECT_FALSE(cache.shares_prefixes());
  append(cache, c, 0, 64);
  EXPECT_THROW(cache.keep(cache.block_table(0)[0]), std::logic_error);
  std::vector<uint8_t> block(cache.block_bytes());
  EXPECT_EQ(cache.fill_idle_block(block, -1), -1);
  cache.clear(0);
  EXPECT_EQ(cache.cached_blocks(), 0);
  EXPECT_EQ(cache.used_bytes(), 0u);
}

}  // namespace
}  // namespace nanoserve::model
