// The batch engine on real models: a request's tokens do not depend on what else runs beside
// it (greedy and seeded sampling, batches of 1, 3 and 8, with and without preemption); a
// cancelled stream gives its KV blocks back before its final event and disturbs no one; the
// pool is shared (one request may fill it); stats and metrics add up; shutdown never hangs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/batch_engine.h"
#include "engine/engine_factory.h"
#include "engine/stream_reading.h"
#include "model/sanitizer.h"

namespace nanoserve::engine {
namespace {

using namespace std::chrono_literals;
using test::read_to_end;
using test::request;
using test::run_alone;
using test::run_together;
using test::StreamRecord;

// One thread is the quickest when ctest runs tests side by side on a busy machine; the
// thread count does not change the tokens.
constexpr int kThreads = 1;

std::string pycoder_path() { return nanoserve::test::shared_path("models/pycoder/pycoder-q8_0.gguf"); }

BatchOptions tiny_options() {
  return {.model_path = test::tiny_model_path(), .threads = kThreads, .parallel = 8, .step_tokens = 64};
}

// A golden model's llama.cpp sequences (the tiny qwen3's by default): prompts of 1 to 1000
// tokens, 32 greedy tokens each, and their top1-top2 margins.
struct GoldenSequence {
  std::vector<int32_t> prompt, greedy;
  std::vector<float> margin;
};

// A golden's file: ../shared/golden/models/NAME, or the repository's tests/model/data/golden/ for
// names under repo/.
std::string golden_file(const std::string& name, const std::string& extension) {
  if (name.starts_with("repo/"))
    return nanoserve::test::source_path("tests/model/data/golden/" + name.substr(5) + extension);
  return nanoserve::test::shared_path("golden/models/" + name + extension);
}

std::vector<GoldenSequence> tiny_golden(const std::string& name = "tiny-qwen3-Q8_0") {
  const auto golden = nlohmann::json::parse(nanoserve::test::read_file(golden_file(name, ".json")));
  std::vector<GoldenSequence> out;
  for (const auto& seq : golden.at("sequences"))
    out.push_back({seq.at("input_ids").get<std::vector<int32_t>>(), seq.at("greedy_ids").get<std::vector<int32_t>>(),
                   seq.at("greedy_top1_top2_margin").get<std::vector<float>>()});
  return out;
}

// Eight requests of mixed prompt lengths (1 to 1000 tokens), greedy and seeded.
std::vector<GenerationRequest> mixed_requests(const std::vector<GoldenSequence>& golden, int64_t longest_prompt) {
  std::vector<GenerationRequest> out;
  for (const GoldenSequence& g : golden)
    if (static_cast<int64_t>(g.prompt.size()) <= longest_prompt)
      out.push_back(request(g.prompt, static_cast<int32_t>(g.greedy.size())));
  for (size_t i = 0; out.size() < 8; ++i) {  // seeded sampling, from the golden prompts' starts
    const std::vector<int32_t>& p = golden[golden.size() - 2].prompt;
    GenerationRequest r = request({p.begin(), p.begin() + static_cast<std::ptrdiff_t>(20 + 37 * i)}, 24 + 5 * i);
    r.sampling = {.temperature = 0.9f, .top_k = 40, .top_p = 0.95f, .seed = 1000 + i};
    out.push_back(r);
  }
  return out;
}

void expect_same_tokens(const std::vector<StreamRecord>& got, const std::vector<StreamRecord>& alone,
                        const std::string& what) {
  ASSERT_EQ(got.size(), alone.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].last.kind, Event::Kind::Done) << what << " #" << i << ": " << got[i].last.error;
    EXPECT_EQ(got[i].last.finish, FinishReason::Length) << what << " #" << i;
    EXPECT_EQ(got[i].tokens, alone[i].tokens) << what << " #" << i;
    EXPECT_EQ(got[i].text, alone[i].text) << what << " #" << i;
  }
}

// A golden model of each architecture, and how many of llama.cpp's greedy steps come before a
// near tie in its sequences (random weights give some early ties).
struct BatchedModel {
  std::string name;
  int compared_with_llama;
};

void PrintTo(const BatchedModel& m, std::ostream* os) { *os << m.name; }

class BatchedGolden : public testing::TestWithParam<BatchedModel> {};

// Alone, each request's greedy tokens are llama.cpp's up to the first near tie (margin < 0.3,
// the golden README's bound for quantized models); in batches of 1, 3 and 8 submitted
// together, every request's tokens are exactly its tokens alone.
TEST_P(BatchedGolden, EveryRequestGetsItsAloneTokensInBatchesOf1And3And8) {
  const std::vector<GoldenSequence> golden = tiny_golden(GetParam().name);
  BatchOptions options = tiny_options();
  options.model_path = golden_file(GetParam().name, ".gguf");
  BatchEngine engine(options);
  const std::vector<GenerationRequest> requests = mixed_requests(golden, 1000);
  ASSERT_EQ(requests.size(), 8u);
  const std::vector<StreamRecord> alone = run_alone(engine, requests);

  int compared_with_llama = 0;
  for (size_t i = 0; i < golden.size(); ++i) {
    ASSERT_EQ(alone[i].tokens.size(), golden[i].greedy.size());
    for (size_t k = 0; k < golden[i].greedy.size() && golden[i].margin[k] >= 0.3f; ++k, ++compared_with_llama)
      ASSERT_EQ(alone[i].tokens[k], golden[i].greedy[k]) << "prompt of " << golden[i].prompt.size() << ", step " << k;
  }
  EXPECT_GE(compared_with_llama, GetParam().compared_with_llama);

  expect_same_tokens(run_together(engine, {requests[5]}), {alone[5]}, "batch of 1");
  expect_same_tokens(run_together(engine, {requests[5], requests[1], requests[6]}), {alone[5], alone[1], alone[6]},
                     "batch of 3");
  expect_same_tokens(run_together(engine, requests), alone, "batch of 8");
  const EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.kv_used_blocks, 0);
  EXPECT_EQ(m.running, 0);
  EXPECT_EQ(m.preemptions, 0u);  // the default pool holds a whole context per slot
  uint64_t steps = 0, multi = 0;
  for (size_t b = 0; b < m.batch_sequences.counts.size(); ++b) {
    steps += m.batch_sequences.counts[b];
    if (b > 0) multi += m.batch_sequences.counts[b];
  }
  EXPECT_GT(steps, 0u);
  EXPECT_GT(multi, 0u);  // some steps advanced more than one sequence
}

INSTANTIATE_TEST_SUITE_P(Architectures, BatchedGolden,
                         testing::Values(BatchedModel{"tiny-qwen3-Q8_0", 40}, BatchedModel{"archs/tiny-phi3-F16", 17},
                                         BatchedModel{"archs/tiny-gpt2-F16", 10},
                                         BatchedModel{"archs/tiny-gemma3-F16", 17},
                                         BatchedModel{"archs/tiny-qwen3moe-F16", 15},
                                         BatchedModel{"archs/tiny-qwen35moe-F16", 15},
                                         BatchedModel{"repo/tiny-gptoss-F16", 13}),
                         [](const testing::TestParamInfo<BatchedModel>& info) {
                           std::string s = info.param.name;
                           std::replace_if(s.begin(), s.end(), [](char c) { return c == '-' || c == '/'; }, '_');
                           return s;
                         });

// A pool of 32 blocks (512 positions) for eight requests that need about 1100 positions in
// all: the newest give way, recompute later, and still produce exactly their alone tokens.
TEST(BatchEngine, PreemptedRequestsRecomputeAndKeepTheirTokens) {
  const std::vector<GoldenSequence> golden = tiny_golden();
  BatchOptions options = tiny_options();
  options.kv_memory_bytes = 0;  // sized below, in blocks
  BatchEngine probe(options);
  const int64_t block_bytes = probe.metrics().kv_total_bytes / probe.metrics().kv_total_blocks;
  options.kv_memory_bytes = 32 * block_bytes;
  BatchEngine engine(options);
  ASSERT_EQ(engine.metrics().kv_total_blocks, 32);
  EXPECT_EQ(engine.context_size(), 512);

  std::vector<GenerationRequest> requests = mixed_requests(golden, 300);
  for (GenerationRequest& r : requests) r.max_tokens = std::min<int32_t>(r.max_tokens * 3, 100);
  requests[0].max_tokens = 400;  // the oldest, alone at first, grows through the pool
  const std::vector<StreamRecord> alone = run_alone(engine, requests);
  EXPECT_EQ(engine.metrics().preemptions, 0u);
  expect_same_tokens(run_together(engine, requests), alone, "with preemption");
  EXPECT_GT(engine.metrics().preemptions, 0u);
  EXPECT_EQ(engine.metrics().kv_used_blocks, 0);
}

// A hybrid model (qwen35moe: delta-net layers beside attention) keeps a state per sequence, not
// positions: a preempted request starts its state again and recomputes, with its alone tokens.
TEST(BatchEngine, AHybridModelRecomputesItsStateAfterPreemption) {
  const std::string name = "archs/tiny-qwen35moe-F16";
  const std::vector<GoldenSequence> golden = tiny_golden(name);
  BatchOptions options = tiny_options();
  options.model_path = nanoserve::test::shared_path("golden/models/" + name + ".gguf");
  const model::Model probe(options.model_path, {.threads = 1});
  options.kv_memory_bytes = 32 * model::kv_bytes_per_position(probe.config()) * model::KvCache::kDefaultBlockSize +
                            options.parallel * model::recurrent_bytes(probe.config());
  BatchEngine engine(options);
  ASSERT_EQ(engine.metrics().kv_total_blocks, 32);  // the slots' states come out of the same memory
  std::vector<GenerationRequest> requests = mixed_requests(golden, 300);
  for (GenerationRequest& r : requests) r.max_tokens = std::min<int32_t>(r.max_tokens * 3, 100);
  requests[0].max_tokens = 400;
  const std::vector<StreamRecord> alone = run_alone(engine, requests);
  expect_same_tokens(run_together(engine, requests), alone, "hybrid with preemption");
  EXPECT_GT(engine.metrics().preemptions, 0u);
  EXPECT_EQ(engine.metrics().kv_used_blocks, 0);
}

// Its prefixes are cached with a copy of the state at their last block: a resend and a follow-up
// turn start from there and give the tokens they give with the cache off (with drafts:
// Speculative.AHybridModelsStateGoesBackAfterRejectedDrafts, MtpDrafter).
TEST(BatchEngine, AHybridModelResumesFromCachedStates) {
  const std::string path = nanoserve::test::shared_path("golden/models/archs/tiny-qwen35moe-F16.gguf");
  auto on = make_engine({.kind = "batch", .model_path = path, .threads = kThreads, .prefix_cache = "on",
                         .spec = "lookup"});
  auto off = make_engine({.kind = "batch", .model_path = path, .threads = kThreads, .prefix_cache = "off",
                          .spec = "off"});
  std::vector<int32_t> prompt;
  for (int i = 0; i < 12; ++i)
    for (int32_t t : {5, 6, 7, 8, 9, 10, 11, 12}) prompt.push_back(t);  // what prompt lookup drafts from
  prompt.push_back(300);  // 97 tokens: 6 whole blocks and one more
  const GenerationRequest first = request(prompt, 40);
  const StreamRecord want = read_to_end(*off->submit(first));
  const StreamRecord cold = read_to_end(*on->submit(first)), again = read_to_end(*on->submit(first));
  EXPECT_EQ(cold.tokens, want.tokens);
  EXPECT_EQ(again.tokens, want.tokens);
  EXPECT_EQ(cold.last.stats.cached_tokens, 0);
  EXPECT_EQ(again.last.stats.cached_tokens, 96);
  // The next turn: the conversation so far and more, from the state after its last whole block.
  std::vector<int32_t> turn = prompt;
  turn.insert(turn.end(), want.tokens.begin(), want.tokens.end());
  for (int32_t t : {400, 401, 402, 403, 404}) turn.push_back(t);
  const StreamRecord next = read_to_end(*on->submit(request(turn, 30)));
  EXPECT_EQ(next.tokens, read_to_end(*off->submit(request(turn, 30))).tokens);
  EXPECT_EQ(next.last.stats.cached_tokens, static_cast<int64_t>((prompt.size() + want.tokens.size() - 1) / 16 * 16));
}

// Streams that share a system prompt, submitted together: those that wait for the first one's
// blocks make it copy its state where their prompts part and start from there (the mechanism is
// PrefixCacheBlocksHybrid's); every stream has the tokens of the cache off.
TEST(BatchEngine, AHybridModelsSharersStartWhereTheirPromptsPart) {
  const std::string path = nanoserve::test::shared_path("golden/models/archs/tiny-qwen35moe-F16.gguf");
  auto on = make_engine({.kind = "batch", .model_path = path, .threads = kThreads, .prefix_cache = "on"});
  auto off = make_engine({.kind = "batch", .model_path = path, .threads = kThreads, .prefix_cache = "off"});
  std::vector<GenerationRequest> requests;
  for (int32_t k = 0; k < 4; ++k) {
    std::vector<int32_t> prompt;
    for (int32_t i = 0; i < 100; ++i) prompt.push_back((i * 37 + 11) % 1000);  // the shared 100 tokens
    for (int32_t i = 0; i < 20; ++i) prompt.push_back(500 + 20 * k + i);
    requests.push_back(request(prompt, 16));
  }
  const std::vector<StreamRecord> want = run_together(*off, requests), got = run_together(*on, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(got[i].tokens, want[i].tokens) << i;
    // After the shared whole blocks when it waited for the first one's; from 0 when it arrived after
    // the first had passed them (which copies its state where prompts part only for those waiting).
    const int64_t cached = got[i].last.stats.cached_tokens;
    EXPECT_TRUE(cached == 0 || cached == 96) << i << ": " << cached;
  }
}

// A cancels mid-generation beside B and C: its blocks are back in the pool by the time its
// final event arrives, and B and C produce their alone tokens.
TEST(BatchEngine, CancellingOneStreamFreesItsBlocksAndDisturbsNoOne) {
  const std::vector<GoldenSequence> golden = tiny_golden();
  BatchEngine engine(tiny_options());
  GenerationRequest a = request(golden[5].prompt, 3000);  // 1000 prompt tokens: 63 blocks and more
  GenerationRequest b = request(golden[1].prompt, 120), c = request(golden[2].prompt, 120);
  c.sampling = {.temperature = 1.0f, .seed = 7};
  const std::vector<StreamRecord> alone = run_alone(engine, {b, c});

  auto sa = engine.submit(a);
  auto sb = engine.submit(b);
  auto sc = engine.submit(c);
  ASSERT_TRUE(sa->next(test::kPatience));  // A is generating
  sa->cancel();
  const StreamRecord a_rest = read_to_end(*sa);
  ASSERT_EQ(a_rest.last.kind, Event::Kind::Done);
  EXPECT_EQ(a_rest.last.finish, FinishReason::Cancelled);
  EXPECT_GE(a_rest.last.stats.kv_blocks, 63);
  // What is left is B's and C's: at most ceil((32 + 120) / 16) = 10 blocks each.
  EXPECT_LE(engine.metrics().kv_used_blocks, 20);
  expect_same_tokens({read_to_end(*sb), read_to_end(*sc)}, alone, "beside a cancelled stream");
  const EngineMetrics idle = engine.metrics();
  EXPECT_EQ(idle.kv_used_blocks, 0);  // each final event comes after its blocks are back
  EXPECT_EQ(idle.kv_used_bytes, 0);
  EXPECT_EQ(idle.running, 0);
  EXPECT_EQ(idle.waiting, 0);
}

TEST(BatchEngine, StatsCountTheBlocksARequestHeld) {
  BatchEngine engine(tiny_options());
  const StreamRecord r = read_to_end(*engine.submit(request(std::vector<int32_t>(100, 'x'), 20)));
  const RequestStats& s = r.last.stats;
  EXPECT_EQ(s.prompt_tokens, 100);
  EXPECT_EQ(s.completion_tokens, 20);
  EXPECT_EQ(s.kv_blocks, 8);  // 100 + 19 positions (the last token is never fed back)
  const EngineMetrics m = engine.metrics();
  EXPECT_EQ(s.kv_peak_bytes, 8 * m.kv_total_bytes / m.kv_total_blocks);
  EXPECT_GE(s.ttft_ms, s.queue_ms);
  EXPECT_GT(s.prefill_tok_s, 0);
  EXPECT_GT(s.decode_tok_s, 0);
}

// No per-slot split: with a pool of 256 positions and four slots, one request may use it all.
TEST(BatchEngine, OneRequestMayFillThePoolAndTheContextEndsGeneration) {
  BatchOptions options = tiny_options();
  options.parallel = 4;
  options.context_size = 64;
  BatchEngine engine(options);
  EXPECT_EQ(engine.context_size(), 64);
  EXPECT_EQ(engine.metrics().kv_total_blocks, 16);  // 64 × 4 positions
  const StreamRecord r = read_to_end(*engine.submit(request({1, 2, 3, 4, 5, 6}, 1000)));
  EXPECT_EQ(r.last.finish, FinishReason::Length);
  EXPECT_EQ(r.last.stats.completion_tokens, 64 - 6 + 1);
  EXPECT_THROW(engine.submit(request(std::vector<int32_t>(64, 1), 1)), std::invalid_argument);

  options.context_size = 4096;
  options.kv_memory_bytes = engine.metrics().kv_total_bytes;  // the same 256 positions
  BatchEngine shared(options);
  EXPECT_EQ(shared.context_size(), 256);
  const StreamRecord big = read_to_end(*shared.submit(request(std::vector<int32_t>(200, 'y'), 56)));
  EXPECT_EQ(big.last.finish, FinishReason::Length);
  EXPECT_EQ(big.last.stats.completion_tokens, 56);
  EXPECT_EQ(big.last.stats.kv_blocks, 16);  // 255 positions: the whole pool
}

TEST(BatchEngine, RefusesOptionsThatCannotWork) {
  BatchOptions options = tiny_options();
  options.kv_memory_bytes = 1000;  // less than one block
  EXPECT_THROW(BatchEngine{options}, std::invalid_argument);
  options = tiny_options();
  options.step_tokens = 4;  // fewer than the 8 decode rows
  EXPECT_THROW(BatchEngine{options}, std::invalid_argument);
  EXPECT_THROW(make_engine({.kind = "sequential", .model_path = test::tiny_model_path(), .kv_memory_bytes = 1 << 20}),
               std::invalid_argument);
  EXPECT_THROW(make_engine({.kind = "mock", .model_path = test::tiny_model_path(), .step_tokens = 64}),
               std::invalid_argument);
}

TEST(BatchEngine, AFullQueueThrowsAndShutdownCancelsEveryone) {
  BatchOptions options = tiny_options();
  options.parallel = 2;
  options.step_tokens = 2;
  options.queue_limit = 2;
  std::vector<std::shared_ptr<Stream>> streams;
  {
    BatchEngine engine(options);
    for (int i = 0; i < 4; ++i) streams.push_back(engine.submit(request({10, 20, 30}, 4000)));
    EXPECT_THROW(engine.submit(request({1}, 1)), QueueFull);
    ASSERT_TRUE(streams[0]->next(test::kPatience));
    ASSERT_TRUE(streams[1]->next(test::kPatience));  // two generate, two wait
    const EngineMetrics busy = engine.metrics();
    EXPECT_EQ(busy.running, 2);
    EXPECT_EQ(busy.waiting, 2);
    EXPECT_GT(busy.kv_used_blocks, 0);
  }
  for (auto& s : streams) {
    const StreamRecord rest = read_to_end(*s, 5s);
    ASSERT_EQ(rest.last.kind, Event::Kind::Done);
    EXPECT_EQ(rest.last.finish, FinishReason::Cancelled);
  }
}

// pycoder, a trained model, served through the factory: greedy and seeded code completions
// side by side equal their alone text.
TEST(BatchEngine, PycoderCompletionsTogetherEqualAlone) {
  const auto engine = make_engine({.kind = "batch", .model_path = pycoder_path(), .threads = kThreads});
  EXPECT_EQ(engine->context_size(), 512);
  const tokenizer::Tokenizer& tok = engine->tokenizer();
  std::vector<GenerationRequest> requests;
  for (const char* prompt : {"def fibonacci(n):", "import os\n\nclass ", "for i in range(", "def add(a, b):\n    "}) {
    requests.push_back(request(tok.encode(prompt, true), 48));
    requests.back().ignore_eos = false;
  }
  requests[1].sampling = {.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f, .seed = 1234};
  requests[3].sampling = {.temperature = 0.7f, .seed = 99};
  const std::vector<StreamRecord> alone = run_alone(*engine, requests);
  const std::vector<StreamRecord> together = run_together(*engine, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_GT(alone[i].text.size(), 10u);
    EXPECT_EQ(together[i].text, alone[i].text);
    EXPECT_EQ(together[i].tokens, alone[i].tokens);
    EXPECT_EQ(together[i].last.finish, alone[i].last.finish);
  }
}

}  // namespace
}  // namespace nanoserve::engine
