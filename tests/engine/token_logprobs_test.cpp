// logprobs in the engine: the log-softmax of the logits a token was chosen from, the top ones
// best first; one entry per text token; the same with speculation as without.
#include "engine/token_logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/batch_engine.h"
#include "engine/generation.h"
#include "engine/stream_reading.h"

namespace nanoserve::engine {
namespace {

TEST(TokenLogprobs, LogSoftmaxAndTheBestFirstWithTiesByLowerId) {
  const tokenizer::Tokenizer tok = test::tiny_tokenizer();
  std::vector<float> logits(tok.n_tokens(), -std::numeric_limits<float>::infinity());
  logits['a'] = 2.0f;
  logits['b'] = 1.0f;
  logits['c'] = 2.0f;  // ties with 'a': 'a' (the lower id) first
  logits['d'] = 0.0f;
  const double norm = std::log(2 * std::exp(2.0) + std::exp(1.0) + 1.0);
  const TokenLogprobs lp = token_logprobs(logits, 'b', 3, tok);
  EXPECT_EQ(lp.chosen.bytes, "b");
  EXPECT_NEAR(lp.chosen.logprob, 1.0 - norm, 1e-6);
  ASSERT_EQ(lp.top.size(), 3u);
  EXPECT_EQ(lp.top[0].bytes, "a");
  EXPECT_EQ(lp.top[1].bytes, "c");
  EXPECT_EQ(lp.top[2].bytes, "b");
  EXPECT_NEAR(lp.top[0].logprob, 2.0 - norm, 1e-6);
  EXPECT_TRUE(token_logprobs(logits, 'a', 0, tok).top.empty());
}

TEST(TokenLogprobs, TheSameWithSpeculationAsWithout) {
  const tokenizer::Tokenizer tok = test::tiny_tokenizer();
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 4; ++i) {
    GenerationRequest r = test::request(tok.encode(i % 2 ? "the license the license the" : "abc abc abc"), 40);
    r.logprobs = true;
    r.top_logprobs = 2;
    if (i >= 2) r.sampling = {.temperature = 0.8f, .seed = static_cast<uint64_t>(i)};
    requests.push_back(r);
  }
  std::vector<std::vector<std::vector<float>>> runs;  // run, request, each token's logprob and its top two
  int64_t drafted = 0;
  for (const SpecMode spec : {SpecMode::Off, SpecMode::Lookup}) {
    BatchEngine engine({.model_path = test::tiny_model_path(), .threads = 1, .parallel = 4, .step_tokens = 64,
                        .spec = spec, .draft_always = true});
    runs.emplace_back();
    for (const GenerationRequest& r : requests) {
      std::shared_ptr<Stream> stream = engine.submit(r);
      std::vector<float> values;
      size_t text_tokens = 0;
      for (;;) {
        std::optional<Event> e = stream->next(test::kPatience);
        ASSERT_TRUE(e);
        if (e->kind != Event::Kind::Text) {
          drafted += e->stats.draft_tokens;
          break;
        }
        text_tokens += e->tokens.size();
        for (const TokenLogprobs& t : e->logprobs) {
          values.push_back(t.chosen.logprob);
          for (const TokenProbability& p : t.top) values.push_back(p.logprob);
        }
      }
      EXPECT_EQ(values.size(), 3 * text_tokens);  // one entry per text token
      runs.back().push_back(values);
    }
  }
  EXPECT_GT(drafted, 0);  // the second run verified drafts
  EXPECT_EQ(runs[0], runs[1]);
}

}  // namespace
}  // namespace nanoserve::engine
