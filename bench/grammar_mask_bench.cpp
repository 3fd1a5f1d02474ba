// What a JSON schema costs a generation (grammar/, engine/generation.cpp), at Qwen2.5's
// vocabulary (151,643 tokens + added, 151,936 logits): compiling the schema and the first mask
// (what a schema request's first token waits for beyond a free one), and each step's mask and
// move (logits set to -inf where the grammar forbids, the chosen token accepted) through a
// nested schema's output, a fresh matcher per generation as a request has. Per step: median and
// p99, to compare with a 0.5B Q8_0 decode step (`nanoserve bench-engine`, same run).
//
// Needs ../shared/tokenizers/qwen2_5/tokenizer.json (or $NANOSERVE_SHARED_DIR/tokenizers/...).
#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/grammar_vocabulary.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {
namespace {

constexpr size_t kLogits = 151936;

const char* kSchema = R"({"type":"object","properties":{
  "id":{"type":"integer","minimum":0},
  "name":{"type":"string","maxLength":40},
  "email":{"type":"string","pattern":"^[a-z0-9.]+@[a-z]+\\.[a-z]{2,3}$"},
  "address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},
    "zip":{"type":"string","pattern":"^\\d{5}$"}},"required":["street","city","zip"]},
  "tags":{"type":"array","items":{"enum":["admin","user","guest"]},"maxItems":5},
  "scores":{"type":"array","items":{"type":"number","minimum":0,"maximum":100}},
  "friends":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},
    "since":{"type":"integer","minimum":1800,"maximum":2100}},"required":["name","since"]}},
  "active":{"type":"boolean"}},
  "required":["id","name","email","address","tags","scores","friends","active"]})";

// An output of the schema as a model writes it (indented).
const char* kOutput = R"({
  "id": 4817,
  "name": "Ada Lovelace, Countess of Lovelace",
  "email": "ada.lovelace@example.org",
  "address": {
    "street": "12 St James's Square",
    "city": "London",
    "zip": "10001"
  },
  "tags": ["admin", "user"],
  "scores": [97.5, 88, 100],
  "friends": [
    {"name": "Charles Babbage", "since": 1833},
    {"name": "Mary Somerville", "since": 1834}
  ],
  "active": true
})";

std::string tokenizer_path() {
  const char* dir = std::getenv("NANOSERVE_SHARED_DIR");
  return std::string(dir && *dir ? dir : "../shared") + "/tokenizers/qwen2_5/tokenizer.json";
}

struct Fixture {
  tokenizer::Tokenizer tokenizer = tokenizer::Tokenizer::from_hf_file(tokenizer_path());
  std::shared_ptr<const grammar::Vocabulary> vocabulary = grammar_vocabulary(tokenizer);
  std::shared_ptr<const grammar::Grammar> grammar =
      std::make_shared<const grammar::Grammar>(grammar::compile_json_schema(nlohmann::ordered_json::parse(kSchema)));
  std::vector<int32_t> output = tokenizer.encode(kOutput, false);
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_BuildVocabulary(benchmark::State& state) {
  const Fixture& f = fixture();
  for (auto _ : state) benchmark::DoNotOptimize(grammar_vocabulary(f.tokenizer));
  state.counters["tokens"] = static_cast<double>(f.tokenizer.n_tokens());
  state.counters["trie_nodes"] = static_cast<double>(f.vocabulary->trie().nodes().size());
}
BENCHMARK(BM_BuildVocabulary)->Unit(benchmark::kMillisecond);

// What the first token of a schema request waits for: the schema compiled, a matcher made and
// the first mask applied.
void BM_CompileAndFirstMask(benchmark::State& state) {
  const Fixture& f = fixture();
  std::vector<float> logits(kLogits, 0.0f);
  const auto schema = nlohmann::ordered_json::parse(kSchema);
  for (auto _ : state) {
    auto g = std::make_shared<const grammar::Grammar>(grammar::compile_json_schema(schema));
    grammar::Matcher m(g, f.vocabulary);
    benchmark::DoNotOptimize(m.mask(logits));
  }
}
BENCHMARK(BM_CompileAndFirstMask)->Unit(benchmark::kMillisecond);

// The widest mask: inside a string without bounds nearly every token is allowed, so the walk
// visits nearly the whole trie.
void BM_MaskInsideAString(benchmark::State& state) {
  const Fixture& f = fixture();
  const auto g = std::make_shared<const grammar::Grammar>(
      grammar::compile_json_schema(nlohmann::ordered_json::parse(R"({"type":"string"})")));
  std::vector<float> logits(kLogits, 0.0f);
  size_t allowed = 0;
  for (auto _ : state) {
    grammar::Matcher m(g, f.vocabulary);
    m.accept_bytes("\"");
    allowed = m.mask(logits);
  }
  state.counters["allowed"] = static_cast<double>(allowed);
}
BENCHMARK(BM_MaskInsideAString)->Unit(benchmark::kMillisecond);

// One generation of kOutput per iteration; each step masks a row of logits and accepts the
// next token of the output. Counters: the per-step median and p99 over every step measured.
void BM_MaskStepsOfAGeneration(benchmark::State& state) {
  const Fixture& f = fixture();
  std::vector<float> row(kLogits, 0.25f), logits(kLogits);
  std::vector<double> step_us;
  size_t walks = 0;
  for (auto _ : state) {
    grammar::Matcher m(f.grammar, f.vocabulary);
    for (int32_t token : f.output) {
      logits = row;  // as a decode step hands over fresh logits
      const auto start = std::chrono::steady_clock::now();
      m.mask(logits);
      if (!m.accept(token))
        throw std::logic_error("the output does not follow its schema at token " + std::to_string(token) + " '" +
                               std::string(f.tokenizer.token_piece(token)) + "'");
      step_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    walks += m.masks_computed();
  }
  std::sort(step_us.begin(), step_us.end());
  const auto at = [&](double q) { return step_us[static_cast<size_t>(q * static_cast<double>(step_us.size() - 1))]; };
  state.counters["steps"] = static_cast<double>(f.output.size());
  state.counters["step_median_us"] = at(0.5);
  state.counters["step_p99_us"] = at(0.99);
  state.counters["step_max_us"] = step_us.back();
  state.counters["trie_walks_per_gen"] = static_cast<double>(walks) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_MaskStepsOfAGeneration)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nanoserve::engine

BENCHMARK_MAIN();
