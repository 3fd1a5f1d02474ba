// The sequential engine on real models: the same tokens as llama.cpp's golden greedy
// continuations, as a direct Model + Sampler loop and as `nanoserve run`; one request at a
// time with the others queued (and counted in their queue_ms); cancel frees the engine.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine_factory.h"
#include "engine/sequential_engine.h"
#include "engine/stream_reading.h"
#include "model/model.h"
#include "model/sanitizer.h"
#include "support/run_nanoserve.h"

namespace nanoserve::engine {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::read_to_end;
using test::StreamRecord;

// The thread count does not change the tokens; one thread is the quickest when ctest runs
// tests side by side on a busy machine.
constexpr int kSequentialThreads = 1;

std::string pycoder_path() { return nanoserve::test::shared_path("models/pycoder/pycoder-q8_0.gguf"); }

GenerationRequest request_until_eos(std::vector<int32_t> prompt, int32_t max_tokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  return r;
}

// The reference loop: the whole prompt in one forward call, then one token per call.
std::vector<int32_t> direct_greedy(model::Model& model, const std::vector<int32_t>& prompt, int n) {
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  model::KvCache cache(model.config(), n_prompt + n);
  Sampler sampler({});
  model::Batch batch;
  for (int64_t p = 0; p < n_prompt; ++p) batch.add(0, p, prompt[p], p == n_prompt - 1);
  model::Logits logits;
  model.forward(batch, cache, logits);
  std::vector<int32_t> out;
  for (int64_t pos = n_prompt;; ++pos) {
    out.push_back(sampler.sample(logits.row(0)));
    if (static_cast<int>(out.size()) == n) return out;
    batch.clear();
    batch.add(0, pos, out.back(), true);
    model.forward(batch, cache, logits);
  }
}

// llama.cpp's greedy continuations of tiny-qwen3-Q8_0 (../shared/golden/models/README.md):
// ours must equal them up to the first near tie (margin < 0.3, the README's bound for
// quantized models), and equal the direct loop everywhere (sanitizer builds, ten times
// slower, skip the direct loop for the long prompts). Prompts run up to 1000 tokens, so
// prefill takes two chunks.
TEST(SequentialEngine, GreedyTokensAreLlamaCppsAndTheDirectLoops) {
  const std::string path = test::tiny_model_path();
  const auto golden = nlohmann::json::parse(
      nanoserve::test::read_file(nanoserve::test::shared_path("golden/models/tiny-qwen3-Q8_0.json")));
  SequentialEngine engine({.model_path = path, .threads = kSequentialThreads});
  model::Model model(path, {.threads = kSequentialThreads});
  int compared_with_llama = 0;
  for (const auto& seq : golden.at("sequences")) {
    const auto prompt = seq.at("input_ids").get<std::vector<int32_t>>();
    const auto expected = seq.at("greedy_ids").get<std::vector<int32_t>>();
    const auto margin = seq.at("greedy_top1_top2_margin").get<std::vector<float>>();
    GenerationRequest r = request_until_eos(prompt, static_cast<int32_t>(expected.size()));
    r.ignore_eos = true;  // llama.cpp's continuation does not stop at eos either
    const StreamRecord got = read_to_end(*engine.submit(r));
    ASSERT_EQ(got.last.kind, Event::Kind::Done) << got.last.error;
    EXPECT_EQ(got.last.finish, FinishReason::Length);
    ASSERT_EQ(got.tokens.size(), expected.size());
    for (size_t k = 0; k < expected.size() && margin[k] >= 0.3f; ++k, ++compared_with_llama)
      ASSERT_EQ(got.tokens[k], expected[k]) << "prompt of " << prompt.size() << " tokens, step " << k;
    if (!nanoserve::test::kSanitized || prompt.size() <= 100) {
      EXPECT_EQ(got.tokens, direct_greedy(model, prompt, static_cast<int>(expected.size())))
          << "prompt of " << prompt.size() << " tokens";
    }
    EXPECT_EQ(got.last.stats.prompt_tokens, static_cast<int32_t>(prompt.size()));
    EXPECT_EQ(got.last.stats.completion_tokens, static_cast<int32_t>(expected.size()));
  }
  EXPECT_GE(compared_with_llama, 40);
}

// The engine writes exactly what `nanoserve run` writes for the same prompt and sampling.
TEST(SequentialEngine, SameTextAsNanoserveRun) {
  SequentialEngine engine({.model_path = pycoder_path(), .threads = kSequentialThreads});
  const tokenizer::Tokenizer& tok = engine.tokenizer();
  struct Case {
    std::string prompt;
    SamplingParams sampling;
    std::string run_flags;
  };
  const std::vector<Case> cases = {
      {"def fibonacci(n):", {}, ""},
      {"import os\n\nclass ",
       {.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f, .seed = 1234},
       "--temp 0.8 --seed 1234 --top-k 40 --top-p 0.95 --min-p 0.05"},
  };
  for (const Case& c : cases) {
    const std::string args = "run -m " + pycoder_path() + " -t " + std::to_string(kSequentialThreads) + " -n 64 " +
                             c.run_flags + " -p '" + c.prompt + "'";
    const auto run = nanoserve::test::run_nanoserve(args);
    ASSERT_EQ(run.status, 0) << run.err;
    GenerationRequest r = request_until_eos(tok.encode(c.prompt, true), 64);  // pycoder adds no BOS
    r.sampling = c.sampling;
    const StreamRecord got = read_to_end(*engine.submit(r));
    ASSERT_EQ(got.last.kind, Event::Kind::Done) << got.last.error;
    EXPECT_EQ(got.text + "\n", run.out) << c.prompt;
    EXPECT_GT(got.text.size(), 20u);
  }
}

TEST(SequentialEngine, ReportsTheModelsNameTemplateAndContext) {
  SequentialEngine engine({.model_path = pycoder_path(), .threads = kSequentialThreads});
  EXPECT_EQ(engine.model_name(), "pycoder");
  EXPECT_NE(engine.chat_template().find("<|im_start|>"), std::string::npos);
  EXPECT_EQ(engine.context_size(), 512);  // its trained context, under the 4096 default cap
  const EngineMetrics idle = engine.metrics();
  EXPECT_EQ(idle.running, 0);
  EXPECT_EQ(idle.waiting, 0);
  EXPECT_EQ(idle.kv_used_bytes, 0);
  EXPECT_GT(idle.kv_total_bytes, 0);

  const auto tiny = make_engine({.kind = "sequential", .model_path = test::tiny_model_path(), .threads = kSequentialThreads});
  EXPECT_EQ(tiny->context_size(), 4096);
  EXPECT_EQ(tiny->model_name(), "tiny-qwen3-rand");
  EXPECT_THROW(make_engine({.kind = "sequential", .model_path = "/nonexistent.gguf"}), std::exception);
}

// A generation that reaches the end of the context stops with Length: the last token sampled
// fits no position to be fed back.
TEST(SequentialEngine, TheContextEndEndsGenerationWithLength) {
  SequentialEngine engine({.model_path = test::tiny_model_path(), .threads = kSequentialThreads, .context_size = 16});
  GenerationRequest r = request_until_eos({1, 2, 3, 4, 5, 6}, 100);
  r.ignore_eos = true;
  const StreamRecord got = read_to_end(*engine.submit(r));
  EXPECT_EQ(got.last.finish, FinishReason::Length);
  EXPECT_EQ(got.last.stats.completion_tokens, 16 - 6 + 1);
  EXPECT_THROW(engine.submit(request_until_eos(std::vector<int32_t>(16, 1), 1)), std::invalid_argument);
}

// A runs until cancelled (its context is far larger than it gets to use); B waits behind it.
TEST(SequentialEngine, OneAtATimeOthersQueueAndCancelFreesTheEngine) {
  SequentialEngine engine(
      {.model_path = test::tiny_model_path(), .threads = kSequentialThreads, .context_size = 32768, .queue_limit = 1});
  GenerationRequest long_one = request_until_eos({10, 20, 30}, 32768 - 3);
  long_one.ignore_eos = true;
  const GenerationRequest short_one = request_until_eos({40, 50, 60, 70}, 8);

  auto a = engine.submit(long_one);
  ASSERT_TRUE(a->next(test::kPatience));  // A is generating
  auto b = engine.submit(short_one);
  EXPECT_THROW(engine.submit(short_one), QueueFull);  // one running, one waiting: full
  const EngineMetrics busy = engine.metrics();
  EXPECT_EQ(busy.running, 1);
  EXPECT_EQ(busy.waiting, 1);
  EXPECT_GT(busy.kv_used_bytes, 0);
  EXPECT_LT(busy.kv_used_bytes, busy.kv_total_bytes);
  EXPECT_FALSE(b->next(0ms));  // B has not started

  a->cancel();
  const StreamRecord a_rest = read_to_end(*a);
  ASSERT_EQ(a_rest.last.kind, Event::Kind::Done);
  EXPECT_EQ(a_rest.last.finish, FinishReason::Cancelled);
  EXPECT_LT(a_rest.last.stats.completion_tokens, long_one.max_tokens);

  const StreamRecord b_all = read_to_end(*b);
  EXPECT_EQ(b_all.last.finish, FinishReason::Length);
  EXPECT_EQ(b_all.tokens.size(), 8u);
  EXPECT_GT(b_all.last.stats.queue_ms, 0.0);
  EXPECT_GE(b_all.last.stats.ttft_ms, b_all.last.stats.queue_ms);

  // Nothing of A is left behind: B's request alone on the idle engine gives the same tokens.
  const StreamRecord alone = read_to_end(*engine.submit(short_one));
  EXPECT_EQ(alone.tokens, b_all.tokens);
  EXPECT_EQ(engine.metrics().running, 0);
}

// Two requests submitted together: the second is admitted only after the first's last token,
// so its queue time covers at least the first's whole generation.
TEST(SequentialEngine, TheSecondOfTwoConcurrentRequestsWaitsForTheFirst) {
  SequentialEngine engine({.model_path = pycoder_path(), .threads = kSequentialThreads});
  const tokenizer::Tokenizer& tok = engine.tokenizer();
  GenerationRequest first = request_until_eos(tok.encode("def add(a, b):"), 32);
  first.ignore_eos = true;
  const GenerationRequest second = request_until_eos(tok.encode("class Stack:"), 8);

  const auto before = Clock::now();
  auto a = engine.submit(first);
  auto b = engine.submit(second);
  const double submit_gap_ms = std::chrono::duration<double, std::milli>(Clock::now() - before).count();
  const RequestStats sa = read_to_end(*a).last.stats, sb = read_to_end(*b).last.stats;

  // A's last token, relative to A's submit; B was submitted at most submit_gap_ms after A.
  const double a_last_token_ms = sa.ttft_ms + (sa.completion_tokens - 1) / sa.decode_tok_s * 1e3;
  EXPECT_GT(sb.queue_ms, 0.0);
  EXPECT_GE(sb.queue_ms, a_last_token_ms - submit_gap_ms - 0.01);
  EXPECT_GE(sb.ttft_ms, sb.queue_ms);
  EXPECT_GT(sa.prefill_tok_s, 0.0);
  EXPECT_GT(sa.decode_tok_s, 0.0);
}

}  // namespace
}  // namespace nanoserve::engine
