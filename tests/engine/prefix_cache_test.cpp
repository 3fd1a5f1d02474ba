// The batch engine's prefix cache on real models: a request's tokens are the same with the
// cache on and off (conversation replays, exact resends, sharers at the same time with one
// cancelled and some preempted, a forced hash collision, a pool under pressure), and the
// cached_tokens it reports are exactly the whole blocks that earlier requests computed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/batch_engine.h"
#include "engine/engine_factory.h"
#include "engine/stream_reading.h"
#include "support/test_paths.h"

namespace nanoserve::engine {
namespace {

using test::read_to_end;
using test::request;
using test::run_together;
using test::StreamRecord;

constexpr int kThreads = 1;
constexpr int64_t kBlock = 16;

std::string pycoder_path() { return nanoserve::test::shared_path("models/pycoder/pycoder-q8_0.gguf"); }

BatchOptions tiny_options(bool prefix_cache) {
  return {.model_path = test::tiny_model_path(), .threads = kThreads, .parallel = 8, .step_tokens = 64,
          .prefix_cache = prefix_cache};
}

// Deterministic token ids in the tiny model's vocabulary (0..999: text tokens).
std::vector<int32_t> tokens(int n, int seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<size_t>(i)] = (i * 131 + seed * 977 + 7) % 1000;
  return t;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Positions of `computed` tokens that whole blocks hold.
int64_t whole_blocks(int64_t computed) { return computed / kBlock * kBlock; }

StreamRecord run(Engine& engine, const GenerationRequest& r) {
  StreamRecord out = read_to_end(*engine.submit(r));
  EXPECT_EQ(out.last.kind, Event::Kind::Done) << out.last.error;
  return out;
}

// A conversation of three turns on pycoder: each turn's prompt is the last prompt, the answer,
// and a new message. With the cache, each turn finds every position the turn before computed
// (prompt and answer: the answer's last token was never fed, so prompt + answer - 1; the last
// block's too, kept as a tail), and its tokens equal those without the cache.
TEST(PrefixCache, AConversationFindsEachTurnBeforeAndAnswersTheSame) {
  auto on = make_engine({.kind = "batch", .model_path = pycoder_path(), .threads = kThreads, .prefix_cache = "on"});
  auto off = make_engine({.kind = "batch", .model_path = pycoder_path(), .threads = kThreads, .prefix_cache = "off"});
  const tokenizer::Tokenizer& tok = on->tokenizer();
  std::vector<int32_t> prompt = tok.encode("import numpy as np\n\ndef moving_average(values, window):\n", true);
  const char* messages[] = {"\n\nclass Stack:\n    def __init__(self):\n", "\n\ndef parse_args(argv):\n    "};
  int64_t computed_before = 0;
  for (int turn = 0; turn < 3; ++turn) {
    GenerationRequest r = request(prompt, 40);
    const StreamRecord with = run(*on, r), without = run(*off, r);
    EXPECT_EQ(with.tokens, without.tokens) << "turn " << turn;
    EXPECT_EQ(with.text, without.text) << "turn " << turn;
    EXPECT_EQ(with.last.stats.cached_tokens, computed_before) << "turn " << turn;
    EXPECT_EQ(without.last.stats.cached_tokens, 0);
    if (turn == 2) break;
    computed_before = static_cast<int64_t>(prompt.size() + with.tokens.size()) - 1;
    prompt = concat(concat(prompt, with.tokens), tok.encode(messages[turn], false));
  }
  const EngineMetrics m = on->metrics();
  EXPECT_EQ(m.prefix_lookups, 3u);
  EXPECT_GT(m.prefix_hit_tokens, 0u);
  EXPECT_EQ(off->metrics().prefix_lookups, 0u);
  EXPECT_EQ(m.kv_used_blocks, 0);
  EXPECT_GT(m.kv_cached_blocks, 0);
}

// The same prompt again computes nothing, whatever its length and wherever the first run's
// answer stopped (inside the prompt's last block or past it, a prompt shorter than a block too):
// the positions the first run computed past its last whole block stay cached as a tail, and the
// logits after the prompt are cached too, so its first token takes no step. Its tokens are those
// without the cache.
TEST(PrefixCache, AnExactResendComputesNothing) {
  BatchEngine on(tiny_options(true)), off(tiny_options(false));
  for (const int max_tokens : {1, 2, 12}) {
    for (const int n : {1, 15, 16, 17, 32, 33, 200}) {
      const int seed = n + 300 * (max_tokens == 1 ? 0 : max_tokens == 2 ? 1 : 2);  // a first token of its own
      GenerationRequest r = request(tokens(n, seed), max_tokens);
      r.speculative = false;  // one token per step
      const StreamRecord first = run(on, r), again = run(on, r), without = run(off, r);
      EXPECT_EQ(first.last.stats.cached_tokens, 0) << n << " " << max_tokens;
      EXPECT_EQ(again.last.stats.cached_tokens, n) << n << " " << max_tokens;
      EXPECT_EQ(again.last.stats.decode_steps, max_tokens - 1) << n << " " << max_tokens;
      EXPECT_EQ(first.tokens, without.tokens) << n;
      EXPECT_EQ(again.tokens, without.tokens) << n;
    }
  }
  EXPECT_EQ(on.metrics().prefix_logits_hits, 21u);
  EXPECT_EQ(on.metrics().kv_used_blocks, 0);
}

// A tail is found by what its positions hold: a prompt that agrees with a kept tail for only
// some of its tokens takes those and computes the rest, with the tokens it would have without
// the cache.
TEST(PrefixCache, AKeptTailServesOnlyThePositionsThatAgree) {
  BatchEngine on(tiny_options(true)), off(tiny_options(false));
  std::vector<int32_t> prompt = tokens(40, 7);  // 2 whole blocks and 8 positions
  GenerationRequest first = request(prompt, 4);
  first.speculative = false;
  run(on, first);
  std::vector<int32_t> other = prompt;
  other[36] = other[36] + 1;  // agrees with the tail for positions 32..35
  GenerationRequest r = request(other, 4);
  r.speculative = false;
  const StreamRecord again = run(on, r), without = run(off, r);
  EXPECT_EQ(again.last.stats.cached_tokens, 36);
  EXPECT_EQ(again.tokens, without.tokens);
}

// The cached logits are the model's own: a resend with a logit_bias that bans the first run's
// first token, or with seeded sampling, or with a repeat penalty, chooses what it would have
// chosen without the cache.
TEST(PrefixCache, AResendAppliesItsOwnBiasAndSamplerToTheCachedLogits) {
  BatchEngine on(tiny_options(true)), off(tiny_options(false));
  const GenerationRequest plain = request(tokens(100, 5), 20);
  const StreamRecord first = run(on, plain);
  GenerationRequest banned = plain;
  banned.logit_bias[first.tokens[0]] = -100.0f;
  GenerationRequest seeded = plain;
  seeded.sampling = {.temperature = 1.5f, .top_k = 40, .seed = 42};
  GenerationRequest penalised = plain;
  penalised.sampling.repeat_penalty = 1.5f;
  for (const GenerationRequest* r : {&banned, &seeded, &penalised}) {
    const StreamRecord again = run(on, *r), without = run(off, *r);
    EXPECT_EQ(again.last.stats.cached_tokens, 100);
    EXPECT_EQ(again.tokens, without.tokens);
  }
  EXPECT_NE(run(off, banned).tokens[0], first.tokens[0]);
  EXPECT_EQ(on.metrics().prefix_logits_hits, 3u);
}

// A resend whose whole answer is its first token (max_tokens 1, alone and eight at once) ends
// as it starts, with no step; the engine goes on serving and holds no block afterwards. A
// prompt that differs only in its last token computes that token.
TEST(PrefixCache, AResendAnsweredAsItStartsAndANearMiss) {
  BatchOptions plain = tiny_options(true);
  plain.spec = SpecMode::Off;  // one token per step
  BatchEngine on(plain), off(tiny_options(false));
  const std::vector<int32_t> prompt = tokens(64, 9);
  run(on, request(prompt, 8));
  const StreamRecord one = run(on, request(prompt, 1));
  EXPECT_EQ(one.tokens, run(off, request(prompt, 1)).tokens);
  EXPECT_EQ(one.last.stats.decode_steps, 0);
  EXPECT_EQ(one.last.stats.cached_tokens, 64);
  const std::vector<StreamRecord> eight = run_together(on, std::vector<GenerationRequest>(8, request(prompt, 1)));
  for (const StreamRecord& s : eight) {
    EXPECT_EQ(s.last.kind, Event::Kind::Done) << s.last.error;
    EXPECT_EQ(s.tokens, one.tokens);
  }
  std::vector<int32_t> near = prompt;
  near.back() = (near.back() + 1) % 1000;
  const StreamRecord miss = run(on, request(near, 8));
  EXPECT_EQ(miss.tokens, run(off, request(near, 8)).tokens);
  EXPECT_EQ(miss.last.stats.cached_tokens, 63);
  EXPECT_EQ(miss.last.stats.decode_steps, 8);
  EXPECT_EQ(on.metrics().prefix_logits_hits, 9u);
  EXPECT_EQ(on.metrics().kv_used_blocks, 0);
  EXPECT_EQ(run(on, request(prompt, 8)).tokens, run(off, request(prompt, 8)).tokens);
}

// cache_prompt false: the request neither finds nor leaves anything.
TEST(PrefixCache, CachePromptFalseSkipsLookupAndPublication) {
  BatchEngine engine(tiny_options(true));
  GenerationRequest r = request(tokens(100, 1), 8);
  r.cache_prompt = false;
  run(engine, r);
  EXPECT_EQ(engine.metrics().kv_cached_blocks, 0);
  EXPECT_EQ(run(engine, r).last.stats.cached_tokens, 0);
  r.cache_prompt = true;
  EXPECT_EQ(run(engine, r).last.stats.cached_tokens, 0);
  EXPECT_EQ(run(engine, r).last.stats.cached_tokens, 100);
  r.cache_prompt = false;
  EXPECT_EQ(run(engine, r).last.stats.cached_tokens, 0);
  EXPECT_EQ(engine.metrics().prefix_lookups, 2u);
}

// Eight requests that share a 200-token system prompt, submitted at once, with a step budget
// that could take several whole prompts: the first computes the shared blocks, the others
// wait for them (rather than computing them beside it) and compute only their own tokens;
// every request's tokens equal its tokens without the cache.
TEST(PrefixCache, SharersAtTheSameTimePrefillTheSharedPrefixOnce) {
  const std::vector<int32_t> system = tokens(200, 3);
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 8; ++i) requests.push_back(request(concat(system, tokens(30 + i, 100 + i)), 16));
  BatchOptions wide = tiny_options(true);
  wide.step_tokens = 1024;
  BatchEngine on(wide), off(tiny_options(false));
  const std::vector<StreamRecord> with = run_together(on, requests), without = run_together(off, requests);
  int64_t cached = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_EQ(with[i].last.kind, Event::Kind::Done) << with[i].last.error;
    EXPECT_EQ(with[i].tokens, without[i].tokens) << i;
    cached += with[i].last.stats.cached_tokens;
  }
  // The others find the system prompt: 12 whole blocks, and the first 8 positions of the first
  // request's 13th block (copied); each computes its own 30 + i tokens only.
  EXPECT_EQ(cached, 7 * 200);
  uint64_t computed = 230;
  for (int i = 1; i < 8; ++i) computed += 30 + i;
  EXPECT_EQ(on.metrics().prefix_miss_tokens, computed);
}

// Sharers beside a cancelled sharer, in a pool so small that some are preempted: the others'
// tokens are their tokens alone without the cache, and every block is let go of at the end.
TEST(PrefixCache, SharersSurviveACancelledAndPreemptedSharer) {
  const std::vector<int32_t> system = tokens(64, 5);
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 5; ++i) requests.push_back(request(concat(system, tokens(20 + 7 * i, 200 + i)), 60));
  BatchOptions small = tiny_options(true);
  BatchEngine probe(small);
  small.kv_memory_bytes = 24 * (probe.metrics().kv_total_bytes / probe.metrics().kv_total_blocks);
  BatchEngine on(small), off(tiny_options(false));
  std::vector<StreamRecord> alone;
  for (const GenerationRequest& r : requests) alone.push_back(run(off, r));

  GenerationRequest doomed = request(concat(system, tokens(40, 300)), 2000);
  auto cancelled = on.submit(doomed);
  ASSERT_TRUE(cancelled->next(test::kPatience));  // it is generating, holding the shared blocks
  std::vector<std::shared_ptr<Stream>> streams;
  for (const GenerationRequest& r : requests) streams.push_back(on.submit(r));
  cancelled->cancel();
  EXPECT_EQ(read_to_end(*cancelled).last.finish, FinishReason::Cancelled);
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamRecord got = read_to_end(*streams[i]);
    ASSERT_EQ(got.last.kind, Event::Kind::Done) << got.last.error;
    EXPECT_EQ(got.tokens, alone[i].tokens) << i;
  }
  const EngineMetrics m = on.metrics();
  EXPECT_GT(m.preemptions, 0u);
  EXPECT_GT(m.prefix_hit_tokens, 0u);
  EXPECT_EQ(m.kv_used_blocks, 0);
  EXPECT_EQ(m.running, 0);
}

// Every block hashes the same: only the first block published under the one key is ever found,
// for the prompt that published it; other prompts miss, and every answer is the answer
// without the cache.
uint64_t colliding_hash(uint64_t, std::span<const int32_t>) { return 1; }

TEST(PrefixCache, AForcedHashCollisionNeverServesAnotherPromptsBlocks) {
  BatchOptions colliding = tiny_options(true);
  colliding.prefix_hash = colliding_hash;
  BatchEngine on(colliding), off(tiny_options(false));
  const GenerationRequest a = request(tokens(80, 1), 10), b = request(tokens(80, 2), 10);
  std::vector<int32_t> a_tail = a.prompt;  // a's blocks after a's own first one
  a_tail.erase(a_tail.begin(), a_tail.begin() + kBlock);
  const GenerationRequest c = request(a_tail, 10);
  EXPECT_EQ(run(on, a).tokens, run(off, a).tokens);
  for (const GenerationRequest* r : {&b, &c, &a}) {
    const StreamRecord got = run(on, *r);
    EXPECT_EQ(got.tokens, run(off, *r).tokens);
    EXPECT_EQ(got.last.stats.cached_tokens, r == &a ? kBlock : 0);
  }
}

// Many distinct prompts through a pool of 24 blocks: cached blocks are evicted for new ones,
// no request fails or changes its tokens, and nothing is held once all are done.
TEST(PrefixCache, APoolUnderPressureEvictsAndStaysExact) {
  BatchOptions small = tiny_options(true);
  BatchEngine probe(small);
  small.kv_memory_bytes = 24 * (probe.metrics().kv_total_bytes / probe.metrics().kv_total_blocks);
  BatchEngine on(small), off(tiny_options(false));
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 16; ++i) requests.push_back(request(tokens(60 + 13 * i, 40 + i), 20));
  const std::vector<StreamRecord> with = run_together(on, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_EQ(with[i].last.kind, Event::Kind::Done) << with[i].last.error;
    EXPECT_EQ(with[i].tokens, run(off, requests[i]).tokens) << i;
  }
  const EngineMetrics m = on.metrics();
  EXPECT_GT(m.prefix_evictions, 0u);
  EXPECT_EQ(m.kv_used_blocks, 0);
  EXPECT_LE(m.kv_cached_blocks, m.kv_total_blocks);
  EXPECT_GT(m.kv_cached_blocks, 0);
}

// Waits until the disk tier has written `blocks` blocks (its writes are in the background).
void wait_for_disk_writes(const Engine& engine, uint64_t blocks) {
  const auto deadline = std::chrono::steady_clock::now() + test::kPatience;
  while (engine.metrics().prefix_disk.writes < blocks && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GE(engine.metrics().prefix_disk.writes, blocks);
}

// A prompt's blocks, evicted from a small pool by other prompts, come back from the disk tier;
// after a restart on the same folder, they come back again; the answers never change.
TEST(PrefixCache, TheDiskTierServesEvictedBlocksAndSurvivesARestart) {
  const std::string dir = nanoserve::test::temp_file("prefix-disk");
  BatchOptions o = tiny_options(true);
  BatchEngine probe(o);
  o.kv_memory_bytes = 24 * (probe.metrics().kv_total_bytes / probe.metrics().kv_total_blocks);
  o.cache_dir = dir;
  o.cache_disk_bytes = 64 << 20;
  BatchEngine off(tiny_options(false));
  const GenerationRequest a = request(tokens(150, 9), 10);
  const std::vector<int32_t> alone = run(off, a).tokens;
  const int64_t a_cached = whole_blocks(150 + 9);  // its 159 computed positions, in whole blocks
  {
    BatchEngine on(o);
    EXPECT_EQ(run(on, a).tokens, alone);
    wait_for_disk_writes(on, 9);
    for (int i = 0; i < 4; ++i) run(on, request(tokens(200, 20 + i), 10));  // a's blocks leave the pool
    EXPECT_GT(on.metrics().prefix_evictions, 0u);
    const StreamRecord again = run(on, a);
    EXPECT_EQ(again.tokens, alone);
    EXPECT_EQ(again.last.stats.cached_tokens, a_cached);
    EXPECT_EQ(on.metrics().prefix_disk.reads, static_cast<uint64_t>(a_cached / kBlock));
  }
  BatchEngine restarted(o);
  EXPECT_GE(restarted.metrics().prefix_disk.blocks, 9);
  const StreamRecord after_restart = run(restarted, a);
  EXPECT_EQ(after_restart.tokens, alone);
  EXPECT_EQ(after_restart.last.stats.cached_tokens, a_cached);
  EXPECT_EQ(restarted.metrics().prefix_disk.read_errors, 0u);
  std::filesystem::remove_all(dir);
}

// A hybrid model's copies of its state go to the disk tier with the blocks: after a restart on the
// same folder, a resent prompt starts from its last whole block again, with the same tokens.
TEST(PrefixCache, AHybridModelsStatesSurviveARestart) {
  const std::string dir = nanoserve::test::temp_file("prefix-disk-hybrid");
  BatchOptions o = tiny_options(true);
  o.model_path = nanoserve::test::shared_path("golden/models/archs/tiny-qwen35moe-F16.gguf");
  BatchOptions plain = o;
  plain.prefix_cache = false;
  o.cache_dir = dir;
  o.cache_disk_bytes = 64 << 20;
  const GenerationRequest a = request(tokens(97, 4), 20);
  const std::vector<int32_t> alone = run(*std::make_unique<BatchEngine>(plain), a).tokens;
  {
    BatchEngine on(o);
    EXPECT_EQ(run(on, a).tokens, alone);
  }  // its queued writes finish as it goes
  BatchEngine restarted(o);
  const StreamRecord again = run(restarted, a);
  EXPECT_EQ(again.tokens, alone);
  EXPECT_EQ(again.last.stats.cached_tokens, 96);
  std::filesystem::remove_all(dir);
}

TEST(PrefixCache, TheOptionIsForTheBatchEngine) {
  EXPECT_THROW(make_engine({.kind = "sequential", .model_path = test::tiny_model_path(), .prefix_cache = "on"}),
               std::invalid_argument);
  EXPECT_THROW(make_engine({.kind = "batch", .model_path = test::tiny_model_path(), .prefix_cache = "yes"}),
               std::invalid_argument);
  EXPECT_NO_THROW(make_engine({.kind = "sequential", .model_path = test::tiny_model_path(), .prefix_cache = "off"}));
  EXPECT_THROW(make_engine({.kind = "batch", .model_path = test::tiny_model_path(), .cache_disk_bytes = 1 << 20}),
               std::invalid_argument);  // --cache-disk without --cache-dir
  EXPECT_THROW(make_engine({.kind = "batch", .model_path = test::tiny_model_path(), .prefix_cache = "off",
                            .cache_dir = "/tmp"}),
               std::invalid_argument);
}

// A model with sliding-window layers (Gemma 3) keeps only its windows (model::KvWindow): the
// prefix cache is off for it, its resent prompt is computed again with the same tokens, and a
// disk tier is refused with a reason.
TEST(PrefixCache, SlidingWindowModelsCacheNoPrefix) {
  const std::string gemma = nanoserve::test::shared_path("golden/models/archs/tiny-gemma3-F16.gguf");
  try {
    make_engine({.kind = "batch", .model_path = gemma, .threads = kThreads, .cache_dir = "/tmp"});
    ADD_FAILURE() << "--cache-dir was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sliding-window"), std::string::npos) << e.what();
  }
  auto engine = make_engine({.kind = "batch", .model_path = gemma, .threads = kThreads, .prefix_cache = "on"});
  const GenerationRequest r = request(tokens(150, 3), 20);  // past the window of 64
  const StreamRecord first = run(*engine, r), again = run(*engine, r);
  EXPECT_EQ(again.tokens, first.tokens);
  EXPECT_EQ(again.last.stats.cached_tokens, 0);
  EXPECT_EQ(engine->metrics().kv_used_blocks, 0);
}

}  // namespace
}  // namespace nanoserve::engine
