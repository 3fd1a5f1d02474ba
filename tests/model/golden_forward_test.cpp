// The forward pass against llama.cpp's logits for every golden model (../shared/golden/models):
// relative logit error at every stored position, top-1 agreement wherever llama.cpp's own
// top-2 margin is clear, and greedy continuations up to the first near tie. Each model runs
// twice: whole prompts on 1 thread, and prompts cut into uneven chunks on 2 threads, which
// must also reproduce the one-shot logits bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "model/golden_logits.h"
#include "model/model.h"
#include "model/sanitizer.h"

namespace nanoserve::model {
namespace {

using test::GoldenModel;
using test::GoldenSequence;

using test::kSanitized;  // sanitizer builds check the long prompts on two models only

struct Tolerance {
  double rel;       // max |Δlogit| / golden logit range, per stored position
  double tie;       // greedy: stop comparing at the first golden margin below this
  double clear;     // top-1 must agree where the golden margin is at least this
  double loose = 0.02;  // the share of positions with a golden margin >= 0.1 whose top-1 may differ
};

Tolerance tolerance_for(const GoldenModel& g) {
  const std::string& name = g.name;
  // A Q8_0 KV cache (.kvq8): the golden README measured llama.cpp's own move from an F16 cache to
  // a Q8_0 one at max rel 9.6e-3 (F16 weights) and 2.1e-2 (Q8_0 weights); ours quantizes the
  // cache too, and its rounding moves the logits as far the other way: twice that move. Top-1
  // agreed in only 94.9% of positions there (llama Q8_0): held where the margin is beyond that,
  // and 5% may flip where it is merely >= 0.1.
  if (name.ends_with(".kvq8"))
    return name.ends_with("-F16.kvq8") ? Tolerance{2e-2, 0.1, 0.3} : Tolerance{4.2e-2, 0.3, 1.0, 0.05};
  // A mixture of experts amplifies float noise: a router near a tie picks another expert. The
  // golden README measured llama.cpp against itself (FA off) at max rel 2.2e-3 (F16), 7.2e-2
  // (Q8_0) and 1.1e-1 (Q4_K_M), top-1 agreement 98.8%, 92.2% and 93.2%: top-1 is held only
  // where llama.cpp's margin is beyond such a flip.
  if (name.find("moe-") != std::string::npos || name.find("gptoss-") != std::string::npos)
    return name.ends_with("-F16") ? Tolerance{3e-3, 0.1, 1.0, 0.05} : Tolerance{1.5e-1, 0.3, 1.0, 0.05};
  if (g.model_name().ends_with("-F16")) return {3e-3, 0.1, 0.3};
  if (g.model_name().ends_with("-BF16")) return {1e-2, 0.1, 0.3};
  return {3e-2, 0.3, 0.3};
}

struct RunOptions {
  int threads = 1;
  std::vector<int> chunks;  // prompt chunk sizes, used in turn; empty = the whole prompt at once
  size_t all_positions_up_to = SIZE_MAX;  // logits at every position of prompts up to this long, else the last
  size_t max_prompt = SIZE_MAX;
};

// What one model computed for one golden sequence.
struct SequenceRun {
  std::vector<int64_t> positions;         // prompt positions with logits
  std::vector<std::vector<float>> logits;  // per entry of positions
  std::vector<std::vector<float>> greedy;  // logits of each greedy step taken
};

int32_t argmax(const std::vector<float>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());  // first = lowest id on ties
}

SequenceRun run_sequence(Model& model, const GoldenSequence& s, const RunOptions& o, double tie) {
  const int64_t n = static_cast<int64_t>(s.input_ids.size());
  KvCache cache(model.config(), n + static_cast<int64_t>(s.greedy_ids.size()));
  SequenceRun out;
  Logits logits;
  Batch batch;
  const bool all_positions = s.input_ids.size() <= o.all_positions_up_to;
  for (int64_t begin = 0, k = 0; begin < n; ++k) {
    const int64_t size = o.chunks.empty() ? n : o.chunks[k % o.chunks.size()];
    const int64_t end = std::min(n, begin + size);
    batch.clear();
    for (int64_t p = begin; p < end; ++p) batch.add(0, p, s.input_ids[p], all_positions || p == n - 1);
    model.forward(batch, cache, logits);
    for (size_t i = 0; i < logits.batch_rows.size(); ++i) {
      out.positions.push_back(begin + logits.batch_rows[i]);
      out.logits.emplace_back(logits.row(i).begin(), logits.row(i).end());
    }
    begin = end;
  }
  // Greedy: llama.cpp's token k is the argmax of step k; continue with the golden token while
  // ours agrees, and stop at the first step whose golden choice was a near tie.
  std::vector<float> last = out.logits.back();
  for (size_t k = 0; k < s.greedy_ids.size() && s.greedy_margin[k] >= tie; ++k) {
    out.greedy.push_back(last);
    if (argmax(last) != s.greedy_ids[k] || k + 1 == s.greedy_ids.size()) break;
    batch.clear();
    batch.add(0, n + static_cast<int64_t>(k), s.greedy_ids[k], true);
    model.forward(batch, cache, logits);
    last.assign(logits.row(0).begin(), logits.row(0).end());
  }
  return out;
}

struct Report {
  double max_rel = 0;
  double first_rel = -1;  // at position 0, where attention is trivial (the output is v); -1: not stored
  int clear_checked = 0, clear_differ = 0;  // top-1 where the golden margin is clear
  int loose_checked = 0, loose_differ = 0;  // top-1 where the golden margin is >= 0.1
  std::vector<int> greedy_steps;            // per sequence: steps compared before a near tie
  int greedy_differ = 0;
};

void compare(const GoldenModel& g, const GoldenSequence& s, const SequenceRun& run, const Tolerance& tol, Report& rep) {
  for (size_t i = 0; i < s.logit_positions.size(); ++i) {
    const auto it = std::find(run.positions.begin(), run.positions.end(), s.logit_positions[i]);
    if (it == run.positions.end()) continue;
    const std::vector<float>& ours = run.logits[it - run.positions.begin()];
    const float* ref = g.stored_logits(s, i);
    const auto [lo, hi] = std::minmax_element(ref, ref + g.n_vocab);
    double max_diff = 0;
    for (int64_t v = 0; v < g.n_vocab; ++v) max_diff = std::max(max_diff, std::fabs(double(ours[v]) - ref[v]));
    rep.max_rel = std::max(rep.max_rel, max_diff / (*hi - *lo));
    if (s.logit_positions[i] == 0) rep.first_rel = std::max(rep.first_rel, max_diff / (*hi - *lo));
  }
  // Where the .bin stores nothing (qwen3vocab), the last position's top-32 stands in; the
  // logit range is then ours.
  if (s.logit_positions.empty() && run.positions.back() + 1 == static_cast<int64_t>(s.input_ids.size())) {
    const std::vector<float>& ours = run.logits.back();
    const auto [lo, hi] = std::minmax_element(ours.begin(), ours.end());
    const double range = *hi - *lo;
    for (size_t i = 0; i < s.top32_ids.size(); ++i)
      rep.max_rel = std::max(rep.max_rel, std::fabs(double(ours[s.top32_ids[i]]) - s.top32_logits[i]) / range);
  }
  for (size_t i = 0; i < run.positions.size(); ++i) {
    const int64_t p = run.positions[i];
    const bool same = argmax(run.logits[i]) == s.argmax_all[p];
    if (s.margin_all[p] >= tol.clear) rep.clear_checked++, rep.clear_differ += !same;
    if (s.margin_all[p] >= 0.1) rep.loose_checked++, rep.loose_differ += !same;
  }
  for (size_t k = 0; k < run.greedy.size(); ++k) rep.greedy_differ += argmax(run.greedy[k]) != s.greedy_ids[k];
  rep.greedy_steps.push_back(static_cast<int>(run.greedy.size()));
}

struct ModelRun {
  Report report;
  std::vector<SequenceRun> sequences;
};

ModelRun run_model(const GoldenModel& g, const RunOptions& o) {
  Model model(g.gguf_path(), {.threads = o.threads, .kv_type = g.kv_q8() ? kernels::KvType::Q8_0 : kernels::KvType::F16});
  // llama.cpp's context size (Phi-3's rope factors follow it), within the positions a model
  // with learned ones has (llama.cpp ran GPT-2 at 2048 of its 1280, reaching position 1031).
  model.set_context(std::min<int64_t>(g.n_ctx, model.config().n_ctx_train));
  EXPECT_EQ(model.config().n_vocab, g.n_vocab);
  const Tolerance tol = tolerance_for(g);
  ModelRun out;
  for (const GoldenSequence& s : g.sequences) {
    if (s.input_ids.size() > o.max_prompt) continue;
    out.sequences.push_back(run_sequence(model, s, o, tol.tie));
    compare(g, s, out.sequences.back(), tol, out.report);
  }
  return out;
}

std::string fmt_sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

void expect_within_tolerance(const GoldenModel& g, const Report& r, const std::string& variant) {
  const Tolerance tol = tolerance_for(g);
  std::string steps;
  for (int n : r.greedy_steps) {
    if (!steps.empty()) steps += ',';
    steps += std::to_string(n);
  }
  const std::string first = r.first_rel < 0 ? "-" : fmt_sci(r.first_rel);
  std::printf("[golden] %-24s %-18s max rel %.2e (position 0: %s) | top-1 margin>=%.1f: %d/%d | margin>=0.1: %d/%d | greedy steps [%s]\n",
              g.name.c_str(), variant.c_str(), r.max_rel, first.c_str(), tol.clear, r.clear_checked - r.clear_differ, r.clear_checked,
              r.loose_checked - r.loose_differ, r.loose_checked, steps.c_str());
  EXPECT_LE(r.max_rel, tol.rel);
  EXPECT_EQ(r.clear_differ, 0);
  // Where llama.cpp's margin is merely >= 0.1 quantized models flip a few: at most tol.loose of
  // them, or 3 on the short samples of sanitizer builds (~125 positions), where 2% is noise.
  EXPECT_LE(r.loose_differ, std::max(3.0, tol.loose * r.loose_checked));
  EXPECT_EQ(r.greedy_differ, 0);
}

class GoldenForward : public testing::TestWithParam<std::string> {
 protected:
  // The real-vocabulary model has 151,936 logits per row: every position of short prompts only.
  RunOptions base() const {
    RunOptions o;
    if (GetParam().starts_with("qwen3vocab")) o.all_positions_up_to = 32;
    if (kSanitized && GetParam() != "tiny-qwen3-Q4_K_M" && GetParam() != "tiny-llama-F16") o.max_prompt = 100;
    return o;
  }
};

TEST_P(GoldenForward, WholePromptOneThread) {
  const GoldenModel g = test::load_golden(GetParam());
  RunOptions o = base();
  expect_within_tolerance(g, run_model(g, o).report, "one-shot 1 thread");
}

TEST_P(GoldenForward, ChunkedPromptTwoThreads) {
  const GoldenModel g = test::load_golden(GetParam());
  RunOptions o = base();
  o.threads = 2;
  o.chunks = {1, 5, 64, 13, 200, 2};
  const ModelRun chunked = run_model(g, o);
  expect_within_tolerance(g, chunked.report, "chunked 2 threads");

  // Bit for bit what the whole prompt on one thread gives (short prompts, to keep it quick).
  RunOptions whole = base();
  whole.max_prompt = std::min<size_t>(o.max_prompt, 100);
  const ModelRun reference = run_model(g, whole);
  ASSERT_LE(reference.sequences.size(), chunked.sequences.size());
  for (size_t i = 0; i < reference.sequences.size(); ++i) {
    EXPECT_EQ(chunked.sequences[i].positions, reference.sequences[i].positions);
    EXPECT_TRUE(chunked.sequences[i].logits == reference.sequences[i].logits) << "sequence " << i;
    EXPECT_TRUE(chunked.sequences[i].greedy == reference.sequences[i].greedy) << "sequence " << i;
  }
}

std::string test_name(const testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  std::replace(s.begin(), s.end(), '-', '_');
  std::replace(s.begin(), s.end(), '/', '_');
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenForward, testing::ValuesIn(test::golden_logit_models()), test_name);

}  // namespace
}  // namespace nanoserve::model
