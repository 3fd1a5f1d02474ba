// The multi-token-prediction block (model/mtp.cpp) of a file that carries one (a Qwen3.5 shape
// with llama.cpp's nextn tensors): running it leaves the model's own logits as they are (the
// goldens hold those), its logits are llama.cpp's, it computes the same over many rows as one row
// at a time, its keys and
// values are one more layer of the cache, and a hybrid's state goes back to its copy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "model/golden_logits.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "support/test_paths.h"

namespace nanoserve::model {
namespace {

std::string mtp_file() { return test::source_path("tests/model/data/golden/tiny-qwen35-mtp-F16.gguf"); }

std::vector<int32_t> prompt_of(size_t n) {
  const test::GoldenModel g = test::load_golden("repo/tiny-qwen35-mtp-F16");
  for (const test::GoldenSequence& s : g.sequences)
    if (s.input_ids.size() >= n) return {s.input_ids.begin(), s.input_ids.begin() + static_cast<std::ptrdiff_t>(n)};
  throw std::runtime_error("no golden prompt that long");
}

std::vector<float> floats_of(const std::string& path) {
  const std::string bytes = test::read_file(path);
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

// Every row's logits of one forward call over `tokens`.
std::vector<std::vector<float>> logits_of(Model& m, KvCache& cache, const std::vector<int32_t>& tokens, Logits& out) {
  Batch batch;
  for (size_t p = 0; p < tokens.size(); ++p) batch.add(0, static_cast<int64_t>(p), tokens[p], true);
  m.forward(batch, cache, out);
  std::vector<std::vector<float>> rows;
  for (size_t i = 0; i < out.batch_rows.size(); ++i) rows.emplace_back(out.row(i).begin(), out.row(i).end());
  return rows;
}

TEST(Mtp, RunningTheBlockLeavesTheModelsOwnLogitsBitForBit) {
  Model plain(mtp_file(), {.threads = 1});
  Model with(mtp_file(), {.threads = 1, .mtp = true});
  ASSERT_FALSE(plain.config().mtp);
  ASSERT_TRUE(with.config().mtp);
  EXPECT_EQ(with.config().n_layer, plain.config().n_layer);
  EXPECT_EQ(with.weight_bytes_per_token(), plain.weight_bytes_per_token());  // a drafter's reads are apart
  const std::vector<int32_t> tokens = prompt_of(100);
  KvCache a(plain.config(), 128), b(with.config(), 128);
  Logits la, lb;
  EXPECT_EQ(logits_of(plain, a, tokens, la), logits_of(with, b, tokens, lb));
  EXPECT_TRUE(la.hidden.empty());
  EXPECT_EQ(lb.hidden.size(), tokens.size() * with.config().n_embd);
}

// llama.cpp's MTP logits (tests/model/data/golden/README.md), fed in llama.cpp's layout of rows
// (the row at position q: token t_q and the hidden state at q - 1, a zero one at q = 0). From
// llama.cpp's own hidden states the block alone gives its logits within float noise; from ours
// (each within the F16 goldens' tolerance of llama.cpp's) within the two stages' errors, and its
// argmax wherever llama.cpp's margin is beyond its own variation (5.1e-3 between batch sizes).
TEST(Mtp, TheBlocksLogitsAreLlamaCpps) {
  const std::string dir = test::source_path("tests/model/data/golden/");
  const auto golden = nlohmann::json::parse(test::read_file(dir + "tiny-qwen35-mtp-F16.mtp.json"));
  const std::vector<float> want_logits = floats_of(dir + "tiny-qwen35-mtp-F16.mtp.bin");
  const std::vector<float> their_hidden = floats_of(dir + "tiny-qwen35-mtp-F16.mtp-h.bin");
  // llama.cpp's cache was F16 (whatever NANOSERVE_KV_TYPE a run of the tests sets).
  Model m(mtp_file(), {.threads = 2, .kv_type = kernels::KvType::F16, .mtp = true});
  const int64_t e = m.config().n_embd, vocab = golden.at("n_vocab").get<int64_t>();
  ASSERT_EQ(vocab, static_cast<int64_t>(m.config().n_vocab));
  size_t hidden_at = 0;
  int checked = 0;
  for (const auto& seq : golden.at("sequences")) {
    const auto tokens = seq.at("input_ids").get<std::vector<int32_t>>();
    const auto argmax = seq.at("argmax").get<std::vector<int32_t>>();
    const auto margin = seq.at("top1_top2_margin").get<std::vector<float>>();
    const float* want = want_logits.data() + seq.at("bin_offset_floats").get<size_t>();
    const auto n = static_cast<int64_t>(tokens.size());
    const std::span<const float> theirs(their_hidden.data() + hidden_at, static_cast<size_t>(n * e));
    hidden_at += theirs.size();
    KvCache cache(m.config(), n);
    Logits step;
    logits_of(m, cache, tokens, step);
    // The block's rows in llama.cpp's layout from `hidden` (n rows), and the worst logit error
    // relative to each row's range.
    const auto run = [&](std::span<const float> hidden, std::vector<std::span<const float>>* rows_out, Logits& got) {
      Batch rows;
      std::vector<float> h(static_cast<size_t>(e), 0.0f);
      for (int64_t q = 0; q < n; ++q) {
        rows.add(0, q, tokens[static_cast<size_t>(q)], q > 0);
        if (q > 0) h.insert(h.end(), hidden.begin() + (q - 1) * e, hidden.begin() + q * e);
      }
      std::vector<float> out;
      m.forward_mtp(rows, h, cache, out);
      m.mtp_logits(out, got);
      double worst = 0;
      for (int64_t p = 0; p + 1 < n; ++p) {
        const float* w = want + p * vocab;
        const auto [lo, hi] = std::minmax_element(w, w + vocab);
        const std::span<const float> row = got.row(static_cast<size_t>(p));
        for (int64_t v = 0; v < vocab; ++v) worst = std::max(worst, std::fabs(double(row[v]) - w[v]) / (*hi - *lo));
        if (rows_out) rows_out->push_back(row);
      }
      return worst;
    };
    Logits from_theirs, from_ours;
    EXPECT_LE(run(theirs, nullptr, from_theirs), 1e-3) << "the block alone, sequence of " << n;
    std::vector<std::span<const float>> rows;
    EXPECT_LE(run(step.hidden, &rows, from_ours), 6e-3) << "model and block, sequence of " << n;
    for (size_t p = 0; p < rows.size(); ++p) {
      if (margin[p] < 0.02f) continue;
      EXPECT_EQ(std::max_element(rows[p].begin(), rows[p].end()) - rows[p].begin(), argmax[p])
          << "sequence of " << n << ", row " << p;
      ++checked;
    }
  }
  EXPECT_GE(checked, 120);
}

// The block's output over a whole prompt in one call equals the one of a row per call after a
// row per forward step (decode), within float noise; so do the drafts it makes.
TEST(Mtp, ManyRowsAtOnceEqualOneRowAtATime) {
  Model m(mtp_file(), {.threads = 2, .mtp = true});
  const int64_t e = m.config().n_embd;
  const std::vector<int32_t> tokens = prompt_of(40);
  const auto n = static_cast<int64_t>(tokens.size());

  KvCache whole(m.config(), 64);
  Logits step;
  logits_of(m, whole, tokens, step);
  Batch rows;
  for (int64_t p = 0; p + 1 < n; ++p) rows.add(0, p, tokens[static_cast<size_t>(p + 1)], true);
  std::vector<float> at_once;
  m.forward_mtp(rows, {step.hidden.data(), static_cast<size_t>((n - 1) * e)}, whole, at_once);
  ASSERT_EQ(at_once.size(), static_cast<size_t>((n - 1) * e));

  KvCache one(m.config(), 64);
  std::vector<float> by_one, out;
  for (int64_t p = 0; p + 1 < n; ++p) {
    Batch b;
    b.add(0, p, tokens[static_cast<size_t>(p)], true);
    m.forward(b, one, step);
    Batch r;
    r.add(0, p, tokens[static_cast<size_t>(p + 1)], true);
    m.forward_mtp(r, step.hidden, one, out);
    by_one.insert(by_one.end(), out.begin(), out.end());
  }
  ASSERT_EQ(by_one.size(), at_once.size());
  double worst = 0, scale = 0;
  for (size_t i = 0; i < by_one.size(); ++i) {
    worst = std::max(worst, std::fabs(double(by_one[i]) - at_once[i]));
    scale = std::max(scale, std::fabs(double(at_once[i])));
  }
  EXPECT_LE(worst, 1e-4 * scale);

  Logits da, db;
  m.mtp_logits({at_once.data() + (n - 2) * e, static_cast<size_t>(e)}, da);
  m.mtp_logits({by_one.data() + (n - 2) * e, static_cast<size_t>(e)}, db);
  ASSERT_EQ(da.batch_rows.size(), 1u);
  const auto argmax = [](std::span<const float> v) { return std::max_element(v.begin(), v.end()) - v.begin(); };
  EXPECT_EQ(argmax(da.row(0)), argmax(db.row(0)));
}

TEST(Mtp, ItsKeysAndValuesAreOneMoreLayerOfTheCache) {
  Model plain(mtp_file(), {.threads = 1});
  Model with(mtp_file(), {.threads = 1, .mtp = true});
  const ModelConfig& c = plain.config();
  const int64_t attention_layers = c.n_layer - c.n_recurrent_layers();
  EXPECT_EQ(kv_bytes_per_position(with.config()) * attention_layers,
            kv_bytes_per_position(c) * (attention_layers + 1));
  EXPECT_EQ(recurrent_bytes(with.config()), recurrent_bytes(c));
  KvCache cache(c, 64);
  EXPECT_FALSE(cache.fits(with.config()));  // a cache without the block's layer is refused
  Batch b;
  b.add(0, 0, 1, true);
  Logits l;
  EXPECT_THROW(with.forward(b, cache, l), std::invalid_argument);
}

TEST(Mtp, AFileWithoutTheBlockRunsNone) {
  Model m(test::source_path("tests/model/data/golden/tiny-qwen35-F16.gguf"), {.threads = 1, .mtp = true});
  EXPECT_FALSE(m.config().mtp);
  KvCache cache(m.config(), 16);
  std::vector<float> out;
  EXPECT_THROW(m.forward_mtp({}, {}, cache, out), std::logic_error);
}

TEST(Mtp, RowsOutsideTheFilledPositionsAreRefused) {
  Model m(mtp_file(), {.threads = 1, .mtp = true});
  KvCache cache(m.config(), 16);
  Logits step;
  logits_of(m, cache, {1, 2, 3}, step);
  Batch beyond;
  beyond.add(0, 3, 4, true);  // position 3 is not filled
  std::vector<float> out, hidden(static_cast<size_t>(m.config().n_embd));
  EXPECT_THROW(m.forward_mtp(beyond, hidden, cache, out), std::invalid_argument);
  Batch bad_token;
  bad_token.add(0, 1, static_cast<int32_t>(m.config().n_vocab), true);
  EXPECT_THROW(m.forward_mtp(bad_token, hidden, cache, out), std::invalid_argument);
}

// Speculative decoding's way back: a hybrid's state copied after position 6 of 10 is where
// truncating to 7 sends it; the next rows then give what they gave the first time. Other
// lengths cannot be reached.
TEST(Mtp, AHybridsStateGoesBackToItsCopyAndNowhereElse) {
  Model m(mtp_file(), {.threads = 1});
  const std::vector<int32_t> tokens = prompt_of(10);
  KvCache cache(m.config(), 32);
  cache.recurrent_states()->capture(0, 7);
  Logits first;
  const std::vector<std::vector<float>> want = logits_of(m, cache, tokens, first);
  EXPECT_FALSE(cache.can_truncate(0, 6));
  EXPECT_FALSE(cache.can_truncate(0, 8));
  EXPECT_THROW(cache.truncate(0, 8), std::out_of_range);
  ASSERT_TRUE(cache.can_truncate(0, 7));
  cache.truncate(0, 7);
  EXPECT_EQ(cache.length(0), 7);
  Batch rest;
  for (int64_t p = 7; p < 10; ++p) rest.add(0, p, tokens[static_cast<size_t>(p)], true);
  Logits again;
  m.forward(rest, cache, again);
  for (size_t i = 0; i < 3; ++i) {
    const std::span<const float> row = again.row(i);
    EXPECT_TRUE(std::equal(row.begin(), row.end(), want[7 + i].begin())) << "position " << 7 + i;
  }
}

}  // namespace
}  // namespace nanoserve::model
