// Speculative decoding in the batch engine: whatever the drafts (right, wrong, partly right),
// every request gets exactly its tokens without speculation (greedy and seeded sampling, alone,
// in batches, with preemption, with stop strings, max_tokens and logit_bias inside an accepted
// run); rejected drafts never reach the prefix cache and no block is left behind; prompt lookup
// and a draft model find real repeats on pycoder; a sampled token's distribution is the model's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/batch_engine.h"
#include "engine/draft_model.h"
#include "engine/engine_factory.h"
#include "engine/stream_reading.h"
#include "model/model.h"
#include "model/sanitizer.h"

namespace nanoserve::engine {
namespace {

using test::read_to_end;
using test::request;
using test::run_alone;
using test::run_together;
using test::StreamRecord;

constexpr int kThreads = 1;

std::string pycoder(const char* type) {
  return nanoserve::test::shared_path(std::string("models/pycoder/pycoder-") + type + ".gguf");
}

// Drafts from a script: for a sequence that begins with a known prompt, the tokens that a run
// without speculation generated after it, each one wrong (+1) where `wrong(position)` says so.
class ScriptedDrafter final : public Drafter {
 public:
  using Wrong = bool (*)(int64_t position);
  ScriptedDrafter(std::vector<std::vector<int32_t>> scripts, Wrong wrong) : scripts_(std::move(scripts)), wrong_(wrong) {}

  int64_t available(std::span<const int32_t> tokens, int64_t max) const override {
    const std::vector<int32_t>* s = script_of(tokens);
    return s ? std::min<int64_t>(max, static_cast<int64_t>(s->size() - tokens.size())) : 0;
  }
  PromptIntake propose(std::span<const DraftAsk> asks) override {
    for (const DraftAsk& ask : asks) {
      ask.out->clear();
      const std::vector<int32_t>* s = script_of(ask.tokens);
      for (int64_t i = 0; s && i < available(ask.tokens, ask.max); ++i) {
        const auto pos = static_cast<int64_t>(ask.tokens.size()) + i;
        const int32_t token = (*s)[static_cast<size_t>(pos)];
        ask.out->push_back(wrong_(pos) ? (token + 1) % 1000 : token);
      }
      ++asked_;
    }
    return {};
  }
  int asked() const { return asked_; }

 private:
  // The script whose tokens the sequence's are a proper prefix of.
  const std::vector<int32_t>* script_of(std::span<const int32_t> tokens) const {
    for (const std::vector<int32_t>& s : scripts_)
      if (s.size() > tokens.size() && std::equal(tokens.begin(), tokens.end(), s.begin())) return &s;
    return nullptr;
  }
  std::vector<std::vector<int32_t>> scripts_;
  Wrong wrong_;
  int asked_ = 0;
};

bool never(int64_t) { return false; }
bool every_third(int64_t pos) { return pos % 3 == 2; }
bool mostly(int64_t pos) { return pos % 7 != 0; }  // wrong nearly everywhere


std::vector<std::vector<int32_t>> tiny_prompts() {
  return test::golden_prompts(nanoserve::test::shared_path("golden/models/tiny-qwen3-Q8_0.json"));
}

// Eight requests on the tiny golden model: greedy ones and seeded sampled ones, prompts of 3 to
// 300 tokens.
std::vector<GenerationRequest> mixed_requests() {
  std::vector<GenerationRequest> out;
  for (const std::vector<int32_t>& p : tiny_prompts())
    if (p.size() <= 300) out.push_back(request(p, 60));
  const std::vector<int32_t> base = tiny_prompts().back();
  for (size_t i = 0; out.size() < 8; ++i) {
    GenerationRequest r = request({base.begin(), base.begin() + static_cast<std::ptrdiff_t>(20 + 37 * i)}, 50);
    r.sampling = {.temperature = 0.9f, .top_k = 40, .top_p = 0.95f, .seed = 500 + i};
    out.push_back(r);
  }
  return out;
}

BatchOptions tiny_options(SpecMode spec) {
  return {.model_path = test::tiny_model_path(), .threads = kThreads, .parallel = 8, .step_tokens = 128,
          .spec = spec};
}

// Each request's prompt followed by what it generated.
std::vector<std::vector<int32_t>> scripts_of(const std::vector<GenerationRequest>& requests,
                                             const std::vector<StreamRecord>& records) {
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < requests.size(); ++i) {
    out.push_back(requests[i].prompt);
    out.back().insert(out.back().end(), records[i].tokens.begin(), records[i].tokens.end());
  }
  return out;
}

void expect_same(const std::vector<StreamRecord>& got, const std::vector<StreamRecord>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].last.kind, Event::Kind::Done) << what << " #" << i << ": " << got[i].last.error;
    EXPECT_EQ(got[i].tokens, want[i].tokens) << what << " #" << i;
    EXPECT_EQ(got[i].text, want[i].text) << what << " #" << i;
    EXPECT_EQ(got[i].last.finish, want[i].last.finish) << what << " #" << i;
    EXPECT_EQ(got[i].last.stats.completion_tokens, want[i].last.stats.completion_tokens) << what << " #" << i;
  }
}

// Drafts right, wrong at every third position, or wrong nearly everywhere: alone and all eight
// together, every request's tokens are those without speculation; steps fall below tokens
// only where drafts were right.
TEST(Speculative, AnyDraftsGiveTheTokensOfPlainDecodingAloneAndInABatch) {
  const std::vector<GenerationRequest> requests = mixed_requests();
  BatchEngine plain(tiny_options(SpecMode::Off));
  const std::vector<StreamRecord> want = run_alone(plain, requests);
  EXPECT_EQ(plain.metrics().draft_tokens, 0u);
  for (const auto& [name, wrong] : std::vector<std::pair<std::string, ScriptedDrafter::Wrong>>{
           {"right", never}, {"every third wrong", every_third}, {"mostly wrong", mostly}}) {
    BatchOptions options = tiny_options(SpecMode::Lookup);
    auto drafter = std::make_shared<ScriptedDrafter>(scripts_of(requests, want), wrong);
    options.test_drafter = drafter;
    options.draft_always = true;
    BatchEngine engine(options);
    const std::vector<StreamRecord> alone = run_alone(engine, requests);
    expect_same(alone, want, name + ", alone");
    expect_same(run_together(engine, requests), want, name + ", together");
    const EngineMetrics m = engine.metrics();
    EXPECT_GT(drafter->asked(), 0) << name;
    EXPECT_GT(m.draft_tokens, 0u) << name;
    EXPECT_EQ(m.kv_used_blocks, 0) << name;
    const RequestStats& s = alone[0].last.stats;
    if (wrong == never) {
      EXPECT_EQ(m.accepted_tokens, m.draft_tokens);
      EXPECT_LE(s.decode_steps * 4, s.completion_tokens) << "8 drafts a step, all right";
    } else {
      EXPECT_GT(m.accepted_tokens, 0u) << name;
      EXPECT_LT(m.accepted_tokens, m.draft_tokens) << name;
    }
    EXPECT_EQ(s.accepted_tokens + s.decode_steps, s.completion_tokens) << name;
    EXPECT_EQ(m.generated_tokens, m.accepted_tokens + m.decode_steps) << name;
  }
}

// A hybrid model's recurrent state cannot drop rejected drafts: it goes back to its copy after
// the last token and computes the accepted ones again. Drafts right, partly right or mostly
// wrong, alone and together, with the prefix cache on and off: every request's tokens are
// those without speculation, and fewer steps than tokens where drafts were right.
TEST(Speculative, AHybridModelsStateGoesBackAfterRejectedDrafts) {
  // Sanitizer builds run the mixture of experts only, its drafts right and partly right.
  const std::vector<std::string> models = nanoserve::test::kSanitized ? std::vector<std::string>{"archs/tiny-qwen35moe-F16"}
                                                     : std::vector<std::string>{"archs/tiny-qwen35moe-F16",
                                                                                "repo/tiny-qwen35-F16"};
  for (const std::string& name : models) {
    const auto path = [&](const std::string& ext) {
      return name.starts_with("repo/") ? nanoserve::test::source_path("tests/model/data/golden/" + name.substr(5) + ext)
                                       : nanoserve::test::shared_path("golden/models/" + name + ext);
    };
    const std::vector<GenerationRequest> requests = test::golden_requests(path(".json"), 40);
    BatchOptions off = tiny_options(SpecMode::Off);
    off.model_path = path(".gguf");
    BatchEngine plain(off);
    const std::vector<StreamRecord> want = run_alone(plain, requests);
    for (const auto& [what, wrong] : std::vector<std::pair<std::string, ScriptedDrafter::Wrong>>{
             {"right", never}, {"every third wrong", every_third}, {"mostly wrong", mostly}}) {
      for (const bool cache : {true, false}) {
        if (nanoserve::test::kSanitized && (wrong == mostly || !cache)) continue;
        const std::string label = name + ", " + what + (cache ? ", cache on" : ", cache off");
        BatchOptions options = off;
        options.spec = SpecMode::Lookup;
        options.prefix_cache = cache;
        options.test_drafter = std::make_shared<ScriptedDrafter>(scripts_of(requests, want), wrong);
        options.draft_always = true;
        BatchEngine engine(options);
        expect_same(run_alone(engine, requests), want, label + ", alone");
        expect_same(run_together(engine, requests), want, label + ", together");
        const EngineMetrics m = engine.metrics();
        EXPECT_GT(m.draft_tokens, 0u) << label;
        EXPECT_EQ(m.kv_used_blocks, 0) << label;
        if (wrong == never) {
          EXPECT_LT(m.decode_steps * 2, m.generated_tokens) << label;
        } else if (wrong == every_third) {
          EXPECT_GT(m.accepted_tokens, 0u) << label;
        }
      }
    }
  }
}

// A pool of 32 blocks for requests that need far more: preempted sequences recompute and keep
// their tokens while drafts come and go.
TEST(Speculative, PreemptionMidSpeculationKeepsTheTokensAndLeavesNoBlock) {
  std::vector<GenerationRequest> requests = mixed_requests();
  for (GenerationRequest& r : requests) r.max_tokens = 90;
  BatchEngine plain(tiny_options(SpecMode::Off));
  const std::vector<StreamRecord> want = run_alone(plain, requests);
  BatchOptions options = tiny_options(SpecMode::Lookup);
  options.kv_memory_bytes = 32 * (plain.metrics().kv_total_bytes / plain.metrics().kv_total_blocks);
  options.test_drafter = std::make_shared<ScriptedDrafter>(scripts_of(requests, want), every_third);
  options.draft_always = true;
  BatchEngine engine(options);
  ASSERT_EQ(engine.metrics().kv_total_blocks, 32);
  expect_same(run_together(engine, requests), want, "with preemption");
  const EngineMetrics m = engine.metrics();
  EXPECT_GT(m.preemptions, 0u);
  EXPECT_GT(m.accepted_tokens, 0u);
  EXPECT_EQ(m.kv_used_blocks, 0);
}

// A stop string, max_tokens and a logit_bias inside runs of right drafts end and steer the text
// exactly where plain decoding does.
TEST(Speculative, StopStringsMaxTokensAndLogitBiasInsideAnAcceptedRun) {
  const std::vector<int32_t> prompt = tiny_prompts()[3];
  BatchEngine plain(tiny_options(SpecMode::Off));
  const StreamRecord full = read_to_end(*plain.submit(request(prompt, 60)));
  ASSERT_GE(full.text.size(), 30u);

  std::vector<GenerationRequest> requests;
  GenerationRequest stop = request(prompt, 60);
  stop.stop = {full.text.substr(17, 3)};  // ends inside the run of drafts
  requests.push_back(stop);
  requests.push_back(request(prompt, 5));  // fewer tokens than one step's drafts
  requests.push_back(request(prompt, 13));
  GenerationRequest biased = request(prompt, 40);
  biased.logit_bias = {{full.tokens[10], -100.0f}, {'e', 3.0f}};
  requests.push_back(biased);
  GenerationRequest eos = request(prompt, 60);
  eos.ignore_eos = false;
  eos.logit_bias = {{test::kTinyEos, 8.0f}};  // the model ends early
  requests.push_back(eos);
  const std::vector<StreamRecord> want = run_alone(plain, requests);
  EXPECT_EQ(want[0].last.finish, FinishReason::Stop);
  EXPECT_LT(want[0].text.size(), 20u);
  EXPECT_EQ(want[1].tokens.size(), 5u);

  // The drafter knows the unbiased continuation and each request's own.
  std::vector<std::vector<int32_t>> scripts = scripts_of(requests, want);
  scripts.insert(scripts.begin(), scripts_of({request(prompt, 60)}, {full})[0]);
  BatchOptions options = tiny_options(SpecMode::Lookup);
  options.test_drafter = std::make_shared<ScriptedDrafter>(scripts, never);
  options.draft_always = true;
  BatchEngine engine(options);
  expect_same(run_alone(engine, requests), want, "alone");
  expect_same(run_together(engine, requests), want, "together");
  EXPECT_GT(engine.metrics().accepted_tokens, 0u);
}

// Rejected drafts leave the cache before anything is published: the next turn, which finds
// the whole previous conversation in the prefix cache, answers as an engine without either.
TEST(Speculative, RejectedDraftsNeverReachThePrefixCache) {
  const std::vector<int32_t> prompt = tiny_prompts()[4];
  BatchEngine plain(tiny_options(SpecMode::Off));
  GenerationRequest first = request(prompt, 70);
  const StreamRecord first_want = read_to_end(*plain.submit(first));

  BatchOptions options = tiny_options(SpecMode::Lookup);
  options.test_drafter = std::make_shared<ScriptedDrafter>(scripts_of({first}, {first_want}), mostly);
  options.draft_always = true;
  BatchEngine engine(options);
  const StreamRecord first_got = read_to_end(*engine.submit(first));
  EXPECT_EQ(first_got.tokens, first_want.tokens);
  ASSERT_GT(engine.metrics().draft_tokens, engine.metrics().accepted_tokens);

  GenerationRequest next = first;
  next.prompt.insert(next.prompt.end(), first_want.tokens.begin(), first_want.tokens.end());
  next.prompt.insert(next.prompt.end(), {'\n', 'o', 'k'});
  next.max_tokens = 40;
  BatchOptions uncached = tiny_options(SpecMode::Off);
  uncached.prefix_cache = false;
  BatchEngine reference(uncached);
  const StreamRecord want = read_to_end(*reference.submit(next));
  const StreamRecord got = read_to_end(*engine.submit(next));
  EXPECT_GE(got.last.stats.cached_tokens, static_cast<int32_t>(prompt.size() + 64));
  EXPECT_EQ(got.tokens, want.tokens);
}

// A stream cancelled while its drafts are checked gives back every block.
TEST(Speculative, CancellingMidSpeculationLeavesNoBlockBehind) {
  const std::vector<int32_t> prompt = tiny_prompts()[2];
  BatchEngine plain(tiny_options(SpecMode::Off));
  GenerationRequest long_one = request(prompt, 400), other = request(tiny_prompts()[1], 80);
  const std::vector<StreamRecord> want = run_alone(plain, {long_one, other});
  BatchOptions options = tiny_options(SpecMode::Lookup);
  options.test_drafter = std::make_shared<ScriptedDrafter>(scripts_of({long_one, other}, want), every_third);
  options.draft_always = true;
  BatchEngine engine(options);
  auto a = engine.submit(long_one);
  auto b = engine.submit(other);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(a->next(test::kPatience));
  a->cancel();
  EXPECT_EQ(read_to_end(*a).last.finish, FinishReason::Cancelled);
  expect_same({read_to_end(*b)}, {want[1]}, "beside a cancelled stream");
  EXPECT_EQ(engine.metrics().kv_used_blocks, 0);
  EXPECT_EQ(engine.metrics().running, 0);
}

// Real drafters on a trained model. Python repeats itself: prompt lookup finds the repeats with
// its cost model on, and every token is plain decoding's.
TEST(Speculative, PromptLookupOnPycoderRepeatsAndKeepsTheTokens) {
  auto off = make_engine({.kind = "batch", .model_path = pycoder("q8_0"), .threads = kThreads, .spec = "off"});
  auto on = make_engine({.kind = "batch", .model_path = pycoder("q8_0"), .threads = kThreads, .spec = "lookup"});
  const tokenizer::Tokenizer& tok = on->tokenizer();
  const std::string source =
      "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n\n"
      "    def __add__(self, other):\n        return Point(self.x + other.x, self.y + other.y)\n\n"
      "    def __sub__(self, other):\n        return Point(";
  std::vector<GenerationRequest> requests;
  requests.push_back(request(tok.encode(source, true), 120));
  requests.push_back(request(tok.encode("def fibonacci(n):\n", true), 120));
  requests.back().sampling = {.temperature = 0.8f, .top_k = 40, .seed = 3};
  const std::vector<StreamRecord> want = run_alone(*off, requests);
  const std::vector<StreamRecord> got = run_alone(*on, requests);
  expect_same(got, want, "lookup alone");
  expect_same(run_together(*on, requests), want, "lookup together");
  EXPECT_GT(on->metrics().accepted_tokens, 0u);
  EXPECT_LT(got[0].last.stats.decode_steps, got[0].last.stats.completion_tokens);
}

// A draft model (pycoder Q4_K_M for pycoder Q8_0): the same tokens, fewer steps.
TEST(Speculative, ADraftModelKeepsTheTokensAndSavesSteps) {
  auto off = make_engine({.kind = "batch", .model_path = pycoder("q8_0"), .threads = kThreads, .spec = "off"});
  auto on = make_engine({.kind = "batch", .model_path = pycoder("q8_0"), .threads = kThreads, .spec = "draft",
                         .draft_model = pycoder("q4_k_m")});
  const tokenizer::Tokenizer& tok = on->tokenizer();
  std::vector<GenerationRequest> requests;
  for (const char* p : {"import os\n\ndef list_files(path):\n", "for i in range(10):\n", "class Stack:\n"})
    requests.push_back(request(tok.encode(p, true), 80));
  requests[2].sampling = {.temperature = 0.7f, .seed = 11};
  const std::vector<StreamRecord> want = run_alone(*off, requests);
  expect_same(run_alone(*on, requests), want, "draft model alone");
  expect_same(run_together(*on, requests), want, "draft model together");
  const EngineMetrics m = on->metrics();
  EXPECT_GT(m.accepted_tokens, 0u);
  EXPECT_LT(m.decode_steps, m.generated_tokens);
}

// A draft model with sliding-window layers (Gemma 3: window 64) lets go of its windows as it
// drafts ahead: after rejected drafts that went past a block of them, it starts the sequence
// over rather than keep what it no longer holds; the tokens stay those without speculation.
TEST(Speculative, ADraftModelWithSlidingWindowsKeepsTheTokens) {
  const std::string target = nanoserve::test::shared_path("golden/models/archs/tiny-gemma3-F16.gguf");
  const std::string draft = nanoserve::test::shared_path("golden/models/archs/tiny-gemma3-Q4_K_M.gguf");
  auto off = make_engine({.kind = "batch", .model_path = target, .threads = kThreads, .spec = "off"});
  auto on = make_engine(
      {.kind = "batch", .model_path = target, .threads = kThreads, .spec = "draft", .draft_model = draft});
  std::vector<GenerationRequest> requests;
  for (int seed : {1, 2}) {
    std::vector<int32_t> prompt(90);
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 37 + seed * 101) % 1000);
    requests.push_back(request(prompt, 120));
  }
  const std::vector<StreamRecord> want = run_alone(*off, requests);
  expect_same(run_alone(*on, requests), want, "windowed draft model alone");
  expect_same(run_together(*on, requests), want, "windowed draft model together");
  const EngineMetrics m = on->metrics();
  EXPECT_GT(m.draft_tokens, 0u);
  EXPECT_EQ(m.kv_used_blocks, 0);
}

// What a draft model must take in before it drafts for a sequence (the policy prices it): a new
// prompt's tokens but the last; nothing after drafts it proposed were accepted; a prompt's worth
// reported by propose() with its seconds, a step's few tokens not.
TEST(Speculative, ADraftModelTellsWhatItMustTakeInFirst) {
  model::Model target(pycoder("q8_0"), {.threads = kThreads});
  DraftModel draft({.path = pycoder("q4_k_m"), .n_seq = 2, .context_size = 128, .draft_max = 4}, target);
  std::vector<int32_t> tokens;
  for (int32_t i = 0; i < 40; ++i) tokens.push_back(100 + 37 * i % 3000);
  EXPECT_EQ(draft.intake(0, tokens), 39);
  std::vector<int32_t> out;
  const PromptIntake prompt =
      draft.propose(std::vector<DraftAsk>{{.slot = 0, .tokens = tokens, .max = 3, .out = &out}});
  EXPECT_EQ(prompt.tokens, 39);
  EXPECT_GT(prompt.seconds, 0.0);
  ASSERT_EQ(out.size(), 3u);
  std::vector<int32_t> accepted = tokens;  // two drafts kept, then the model's own token (never taken in before)
  accepted.insert(accepted.end(), {out[0], out[1], 7});
  EXPECT_EQ(draft.intake(0, accepted), 0);
  std::vector<int32_t> rejected = tokens;  // the second draft wrong: the model's token in its place
  rejected.insert(rejected.end(), {out[0], (out[1] + 1) % 4000, 7});
  EXPECT_EQ(draft.intake(0, rejected), 1);
  EXPECT_EQ(draft.intake(1, rejected), static_cast<int64_t>(rejected.size()) - 1);  // another slot holds nothing
  const PromptIntake step =
      draft.propose(std::vector<DraftAsk>{{.slot = 0, .tokens = rejected, .max = 2, .out = &out}});
  EXPECT_EQ(step.tokens, 0);
  EXPECT_EQ(draft.intake(0, rejected), 0);
}

TEST(Speculative, ADraftModelOfAnotherVocabularyIsRefusedByName) {
  try {
    make_engine({.kind = "batch", .model_path = pycoder("q8_0"), .threads = kThreads, .spec = "draft",
                 .draft_model = test::tiny_model_path()});
    FAIL() << "a draft model of another vocabulary was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("vocabulary"), std::string::npos) << e.what();
  }
}

TEST(Speculative, OptionsAreCheckedByFlagName) {
  const std::string m = test::tiny_model_path();
  auto refused = [&](EngineOptions o, const std::string& flag) {
    try {
      check_engine_options(o);
      ADD_FAILURE() << "accepted: " << flag;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
    }
  };
  refused({.kind = "batch", .model_path = m, .spec = "maybe"}, "--spec");
  refused({.kind = "sequential", .model_path = m, .spec = "lookup"}, "--spec");
  refused({.kind = "batch", .model_path = m, .draft_max = 65}, "--draft-max");
  refused({.kind = "batch", .model_path = m, .draft_max = -1}, "--draft-max");
  refused({.kind = "batch", .model_path = m, .spec = "draft"}, "--draft-model");
  refused({.kind = "batch", .model_path = m, .spec = "lookup", .draft_model = m}, "--draft-model");
  refused({.kind = "mock", .model_path = m, .draft_max = 4}, "--draft-max");
  refused({.kind = "batch", .model_path = m, .draft_policy = "greedy"}, "--draft-policy");
  refused({.kind = "batch", .model_path = m, .spec = "off", .draft_policy = "always"}, "--draft-policy");
  refused({.kind = "sequential", .model_path = m, .draft_policy = "adaptive"}, "--draft-policy");
  EXPECT_NO_THROW(check_engine_options({.kind = "sequential", .model_path = m, .spec = "off"}));
  EXPECT_NO_THROW(check_engine_options({.kind = "batch", .model_path = m, .spec = "off"}));
  EXPECT_NO_THROW(check_engine_options({.kind = "batch", .model_path = m, .draft_policy = "always"}));
  // The policy reaches the engine: fixed lengths for "always" only.
  EXPECT_TRUE(batch_options({.kind = "batch", .model_path = m, .draft_policy = "always"}).draft_always);
  EXPECT_FALSE(batch_options({.kind = "batch", .model_path = m, .draft_policy = "adaptive"}).draft_always);
  EXPECT_FALSE(batch_options({.kind = "batch", .model_path = m}).draft_always);
}

// --draft-policy always: a draft model's drafts are as long as the room allows in every step
// (fixed-length speculation, no cost model), and the tokens stay those without speculation.
TEST(Speculative, ADraftModelAtFixedLengthsDraftsInEveryStep) {
  constexpr int64_t kDraftMax = 4;
  auto off = make_engine({.kind = "batch", .model_path = pycoder("q8_0"), .threads = kThreads, .spec = "off"});
  auto on = make_engine({.kind = "batch", .model_path = pycoder("q8_0"), .threads = kThreads, .spec = "draft",
                         .draft_max = kDraftMax, .draft_model = pycoder("q4_k_m"), .draft_policy = "always"});
  const std::vector<GenerationRequest> requests = {
      request(on->tokenizer().encode("def parse(text):\n    result = []\n", true), 60)};
  const std::vector<StreamRecord> got = run_alone(*on, requests);
  expect_same(got, run_alone(*off, requests), "fixed-length drafts");
  const RequestStats& s = got[0].last.stats;
  // Every step drafts but the first token's and the last, whose room is 0; only the last few
  // steps' room (tokens left to max_tokens) may be shorter than kDraftMax.
  EXPECT_GE(s.verify_steps, s.decode_steps - 2);
  ASSERT_EQ(s.drafted_at.size(), static_cast<size_t>(kDraftMax));
  EXPECT_EQ(s.drafted_at[0], s.verify_steps);
  EXPECT_GE(s.drafted_at[kDraftMax - 1], s.verify_steps - (kDraftMax - 1));
}

// `speculative: false` opts a request out: no drafts for it, drafts for the other.
TEST(Speculative, ARequestMayOptOut) {
  const std::vector<GenerationRequest> requests = mixed_requests();
  BatchEngine plain(tiny_options(SpecMode::Off));
  const std::vector<StreamRecord> want = run_alone(plain, {requests[0], requests[1]});
  BatchOptions options = tiny_options(SpecMode::Lookup);
  options.test_drafter =
      std::make_shared<ScriptedDrafter>(scripts_of({requests[0], requests[1]}, want), never);
  options.draft_always = true;
  BatchEngine engine(options);
  GenerationRequest out = requests[0];
  out.speculative = false;
  const std::vector<StreamRecord> got = run_together(engine, {out, requests[1]});
  expect_same(got, want, "one opted out");
  EXPECT_EQ(got[0].last.stats.draft_tokens, 0);
  EXPECT_EQ(got[0].last.stats.decode_steps, got[0].last.stats.completion_tokens);
  EXPECT_GT(got[1].last.stats.accepted_tokens, 0);
}

// The distribution of a sampled token behind a draft is the model's: the second token of 2000
// seeded runs at temperature 1, with a drafter that always proposes the likeliest second
// token, against the model's own probabilities after the most frequent first token
// (chi-square, p = 0.001). And each seed's tokens are those of plain decoding (the first 400).
// Sanitizer builds, where the kernels run ~20 times slower, take a quarter of the runs: their
// question is the memory the same code paths touch; the Release build keeps the full power.
TEST(Speculative, SampledTokensFollowTheModelsDistribution) {
  const std::string path = pycoder("q8_0");
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(gguf::File::open(path).metadata());
  const std::vector<int32_t> prompt = tok.encode("def add(a, b):\n    return a", true);

  // The model's probabilities after prompt + t, for the likeliest first token t.
  model::Model model(path, {.threads = kThreads});
  auto next_probs = [&](const std::vector<int32_t>& tokens) {
    model::KvCache cache(model.config(), 256, 1);
    model::Batch batch;
    for (size_t i = 0; i < tokens.size(); ++i) batch.add(0, static_cast<int64_t>(i), tokens[i], i + 1 == tokens.size());
    model::Logits logits;
    model.forward(batch, cache, logits);
    const std::span<const float> row = logits.row(0);
    std::vector<double> p(row.begin(), row.end());
    const double top = *std::max_element(p.begin(), p.end());
    double sum = 0;
    for (double& v : p) sum += (v = std::exp(v - top));
    for (double& v : p) v /= sum;
    return p;
  };
  const std::vector<double> first = next_probs(prompt);
  const auto t1 = static_cast<int32_t>(std::max_element(first.begin(), first.end()) - first.begin());
  std::vector<int32_t> after = prompt;
  after.push_back(t1);
  const std::vector<double> second = next_probs(after);
  const auto likeliest = static_cast<int32_t>(std::max_element(second.begin(), second.end()) - second.begin());
  after.push_back(likeliest);

  constexpr int kRuns = nanoserve::test::kSanitized ? 512 : 2000;  // in groups of 8
  constexpr size_t kSameAsPlain = kRuns / 40 * 8;  // seeds also run without speculation, compared token by token
  static_assert(kRuns % 8 == 0 && kSameAsPlain % 8 == 0);
  std::vector<GenerationRequest> requests;
  for (int seed = 0; seed < kRuns; ++seed) {
    GenerationRequest r = request(prompt, 3);
    r.sampling = {.temperature = 1.0f, .seed = static_cast<uint64_t>(seed)};
    requests.push_back(r);
  }
  BatchOptions options{.model_path = path, .threads = kThreads, .parallel = 8, .spec = SpecMode::Lookup};
  options.test_drafter = std::make_shared<ScriptedDrafter>(std::vector<std::vector<int32_t>>{after}, never);
  options.draft_always = true;
  // Every run prefills the prompt: a resend would take its first token from the cached logits,
  // and its one other step, planned before it was admitted, would carry no draft to verify.
  options.prefix_cache = false;
  BatchEngine engine(options);
  BatchOptions plain_options = options;
  plain_options.spec = SpecMode::Off;
  plain_options.test_drafter = nullptr;
  BatchEngine plain(plain_options);

  std::map<int32_t, int> counts;
  int with_t1 = 0;
  for (size_t i = 0; i < requests.size(); i += 8) {
    const std::vector<GenerationRequest> group(requests.begin() + static_cast<std::ptrdiff_t>(i),
                                               requests.begin() + static_cast<std::ptrdiff_t>(i + 8));
    const std::vector<StreamRecord> got = run_together(engine, group);
    if (i < kSameAsPlain) {
      const std::vector<StreamRecord> want = run_together(plain, group);
      for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k].tokens, want[k].tokens) << "seed " << i + k;
    }
    for (size_t k = 0; k < got.size(); ++k) {
      if (got[k].tokens.size() >= 2 && got[k].tokens[0] == t1) ++with_t1, ++counts[got[k].tokens[1]];
    }
  }
  ASSERT_GE(with_t1, kRuns * 3 / 40);
  EXPECT_GT(engine.metrics().accepted_tokens, 0u);

  // Bins of tokens expected at least 5 times; the rest pooled.
  double chi2 = 0, rest_expected = 0;
  int bins = 0, rest_seen = with_t1;
  for (size_t t = 0; t < second.size(); ++t) {
    const double expected = second[t] * with_t1;
    if (expected < 5) continue;
    const int seen = counts.count(static_cast<int32_t>(t)) ? counts[static_cast<int32_t>(t)] : 0;
    chi2 += (seen - expected) * (seen - expected) / expected;
    rest_seen -= seen;
    ++bins;
  }
  rest_expected = with_t1;
  for (size_t t = 0; t < second.size(); ++t)
    if (second[t] * with_t1 >= 5) rest_expected -= second[t] * with_t1;
  if (rest_expected >= 5) {
    chi2 += (rest_seen - rest_expected) * (rest_seen - rest_expected) / rest_expected;
    ++bins;
  }
  ASSERT_GE(bins, 2);
  // The chi-square quantile at p = 0.001 (Wilson-Hilferty).
  const double df = bins - 1, z = 3.09;
  const double critical = df * std::pow(1 - 2 / (9 * df) + z * std::sqrt(2 / (9 * df)), 3);
  EXPECT_LT(chi2, critical) << bins << " bins";
}

}  // namespace
}  // namespace nanoserve::engine
