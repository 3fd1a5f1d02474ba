// Speculative decoding with the model's own multi-token-prediction block (engine/mtp_drafter.h)
// on a file that carries one (a Qwen3.5 shape with llama.cpp's nextn tensors): every request
// gets exactly the tokens it gets without speculation (greedy and seeded, alone and together,
// with the prefix cache across turns); a draft is the block's guess from the hidden states the
// engine handed it step by step, the same as from one pass over the whole sequence; it is the
// default drafter where the block is, and refused by name where it is not.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/batch_engine.h"
#include "engine/engine_factory.h"
#include "engine/mtp_drafter.h"
#include "engine/stream_reading.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "support/test_paths.h"

namespace nanoserve::engine {
namespace {

using test::read_to_end;
using test::request;
using test::run_alone;
using test::run_together;
using test::StreamRecord;

std::string mtp_file() { return nanoserve::test::source_path("tests/model/data/golden/tiny-qwen35-mtp-F16.gguf"); }

std::string mtp_json() { return nanoserve::test::source_path("tests/model/data/golden/tiny-qwen35-mtp-F16.json"); }
std::vector<std::vector<int32_t>> golden_prompts() { return test::golden_prompts(mtp_json()); }

void expect_same(const std::vector<StreamRecord>& got, const std::vector<StreamRecord>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].last.kind, Event::Kind::Done) << what << " #" << i << ": " << got[i].last.error;
    EXPECT_EQ(got[i].tokens, want[i].tokens) << what << " #" << i;
    EXPECT_EQ(got[i].last.finish, want[i].last.finish) << what << " #" << i;
  }
}

BatchOptions options_with(SpecMode spec) {
  return {.model_path = mtp_file(), .threads = 1, .parallel = 8, .step_tokens = 128, .spec = spec};
}

// The block drafts one token in every decode step (a fixed-length policy); random weights guess
// badly, and each rejected draft sends the state back: the tokens are those without it.
TEST(MtpDrafter, EveryRequestGetsItsTokensWithoutSpeculation) {
  const std::vector<GenerationRequest> requests = test::golden_requests(mtp_json(), 48);
  BatchEngine plain(options_with(SpecMode::Off));
  const std::vector<StreamRecord> want = run_alone(plain, requests);
  BatchOptions options = options_with(SpecMode::Auto);  // the block, as the file has one
  options.draft_always = true;
  BatchEngine engine(options);
  expect_same(run_alone(engine, requests), want, "alone");
  expect_same(run_together(engine, requests), want, "together");
  const EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.kv_used_blocks, 0);
  // One draft in each decode step but a request's last (no room), and the one before each block's
  // end (a hybrid's drafts stop short of it: engine/batch_drafting.h).
  EXPECT_GE(m.draft_tokens * 10, m.decode_steps * 8);
  EXPECT_LE(m.draft_tokens, m.decode_steps);
  EXPECT_EQ(m.generated_tokens, m.accepted_tokens + m.decode_steps);
}

// A follow-up turn finds the conversation in the prefix cache (the block's keys and values
// with it) and answers as an engine with neither the cache nor speculation.
TEST(MtpDrafter, AFollowUpTurnFromThePrefixCacheKeepsItsTokens) {
  const std::vector<int32_t> prompt = golden_prompts()[4];
  BatchEngine reference(options_with(SpecMode::Off));
  BatchOptions options = options_with(SpecMode::Mtp);
  options.draft_always = true;
  BatchEngine engine(options);
  const GenerationRequest first = request(prompt, 50);
  const StreamRecord a = read_to_end(*engine.submit(first));
  EXPECT_EQ(a.tokens, read_to_end(*reference.submit(first)).tokens);
  std::vector<int32_t> turn = prompt;
  turn.insert(turn.end(), a.tokens.begin(), a.tokens.end());
  for (int32_t t : {401, 402, 403}) turn.push_back(t);
  const StreamRecord b = read_to_end(*engine.submit(request(turn, 30)));
  EXPECT_EQ(b.tokens, read_to_end(*reference.submit(request(turn, 30))).tokens);
  EXPECT_EQ(b.last.stats.cached_tokens, static_cast<int64_t>((prompt.size() + a.tokens.size() - 1) / 16 * 16));
  EXPECT_GT(engine.metrics().draft_tokens, 0u);
}

TEST(MtpDrafter, IsRefusedByNameForAFileWithoutTheBlock) {
  BatchOptions options = options_with(SpecMode::Mtp);
  options.model_path = nanoserve::test::source_path("tests/model/data/golden/tiny-qwen35-F16.gguf");
  try {
    BatchEngine engine(options);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("multi-token-prediction"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_engine({.kind = "batch", .model_path = mtp_file(), .spec = "nextn"}), std::invalid_argument);
}

// Two sequences in one pool, fed as the engine feeds them (a prompt in two chunks beside another
// sequence's rows, then decode steps): the block's draft for each is the argmax of its head
// after one pass of the block over the whole sequence.
TEST(MtpDrafter, ADraftIsTheBlocksGuessOverTheWholeSequence) {
  model::Model m(mtp_file(), {.threads = 1, .mtp = true});
  model::KvCache pool(m.config(), 256, 2);
  MtpDrafter drafter(m, pool);
  std::vector<std::vector<int32_t>> tokens = {golden_prompts()[3], golden_prompts()[2]};  // 100 and 32 tokens
  std::vector<int64_t> cached = {0, 0};
  model::Logits step;
  const auto argmax = [](std::span<const float> v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
  };
  // Each step: up to `chunk` rows of each sequence, a token chosen after its last.
  auto run_step = [&](int64_t chunk) {
    model::Batch batch;
    std::vector<StepKept> kept(2);
    for (int s = 0; s < 2; ++s) {
      std::vector<int32_t>& t = tokens[static_cast<size_t>(s)];
      const int64_t from = cached[static_cast<size_t>(s)];
      const int64_t to = std::min<int64_t>(from + chunk, static_cast<int64_t>(t.size()));
      kept[static_cast<size_t>(s)] = {.slot = s, .from = from, .to = to, .first_row = batch.size(), .tokens = {}};
      for (int64_t p = from; p < to; ++p) batch.add(s, p, t[static_cast<size_t>(p)], p + 1 == to);
    }
    m.forward(batch, pool, step);
    for (int s = 0; s < 2; ++s) {
      std::vector<int32_t>& t = tokens[static_cast<size_t>(s)];
      cached[static_cast<size_t>(s)] = kept[static_cast<size_t>(s)].to;
      if (cached[static_cast<size_t>(s)] == static_cast<int64_t>(t.size())) t.push_back(argmax(step.row(static_cast<size_t>(s))));
      kept[static_cast<size_t>(s)].tokens = t;
    }
    drafter.follow(kept, step);
  };
  run_step(60);
  run_step(60);
  for (int i = 0; i < 5; ++i) run_step(1);
  std::vector<int32_t> drafts[2];
  const std::vector<DraftAsk> asks = {{.slot = 0, .tokens = tokens[0], .max = 3, .out = &drafts[0]},
                                      {.slot = 1, .tokens = tokens[1], .max = 1, .out = &drafts[1]}};
  drafter.propose(asks);

  for (int s = 0; s < 2; ++s) {
    const std::vector<int32_t>& t = tokens[static_cast<size_t>(s)];
    ASSERT_EQ(drafts[s].size(), 1u) << "one block guesses one token";
    model::KvCache alone(m.config(), 256);
    model::Batch all;
    for (size_t p = 0; p + 1 < t.size(); ++p) all.add(0, static_cast<int64_t>(p), t[p], false);
    model::Logits l;
    m.forward(all, alone, l);
    model::Batch rows;
    for (size_t p = 0; p + 1 < t.size(); ++p) rows.add(0, static_cast<int64_t>(p), t[p + 1], p + 2 == t.size());
    std::vector<float> out;
    m.forward_mtp(rows, l.hidden, alone, out);
    m.mtp_logits(out, l);
    EXPECT_EQ(drafts[s][0], argmax(l.row(0))) << "sequence " << s;
  }
  // A sequence the drafter has not followed to its last token gets none.
  std::vector<int32_t> none;
  std::vector<int32_t> longer = tokens[0];
  longer.push_back(5);
  drafter.propose(std::vector<DraftAsk>{{.slot = 0, .tokens = longer, .max = 1, .out = &none}});
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace nanoserve::engine
