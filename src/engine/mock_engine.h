// An engine without weights, for testing the server: it "generates" a fixed passage (English
// by default, any text a test needs the server to answer with, or the request's own prompt;
// tokenized once with the real tokenizer, so stop strings and UTF-8 split across tokens behave
// as with a real model, and special tokens written in a passage are those tokens: an end of
// turn ends the answer, gpt-oss's channel markup is its markup), over and over. Each step makes a logits row in which the passage's next token leads by a wide
// margin, and sends it through the same sampling, logit_bias and text pipeline as every engine:
// greedy gives the passage, a seed gives the same text every time, logit_bias can ban or force
// tokens.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "engine/defaults.h"
#include "engine/engine.h"
#include "engine/request_queue.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {

// The passage the mock engine repeats by default (English with a few multi-byte characters).
extern const char* const kMockPassage;

struct MockOptions {
  std::string model_name = "mock";
  std::string chat_template = "";  // as a GGUF would give it; may be empty
  ModelFacts facts = {};           // of the file its tokenizer came from
  int64_t context_size = kDefaultContext;  // prompts must fit it, as with a model
  int64_t token_delay_us = 0;   // time one token takes (a pretend forward pass)
  int max_concurrency = 4;      // requests generating at once, each on its own worker thread
  int64_t queue_limit = 64;     // requests waiting beyond those; more: QueueFull
  std::string passage = kMockPassage;  // the text it repeats; not empty
  // Answer each request with its own prompt instead, once, so a test can read what reached the
  // model: its text as the chat template rendered it, control tokens spelled out (so they end
  // nothing).
  bool echo_prompt = false;
};

class MockEngine final : public Engine {
 public:
  MockEngine(tokenizer::Tokenizer tokenizer, MockOptions options);
  ~MockEngine() override;
  MockEngine(const MockEngine&) = delete;
  MockEngine& operator=(const MockEngine&) = delete;

  std::shared_ptr<Stream> submit(GenerationRequest request) override;
  EngineMetrics metrics() const override;
  const tokenizer::Tokenizer& tokenizer() const override { return tokenizer_; }
  std::string model_name() const override { return options_.model_name; }
  ModelFacts model_facts() const override { return options_.facts; }
  int64_t context_size() const override { return options_.context_size; }
  std::string chat_template() const override { return options_.chat_template; }

 private:
  void serve();  // one worker thread: takes requests until the queue closes
  void generate(Generation& generation, std::vector<float>& logits);

  const tokenizer::Tokenizer tokenizer_;
  const MockOptions options_;
  const std::vector<int32_t> passage_;
  RequestQueue queue_;
  std::atomic<bool> stopping_ = false;
  std::vector<std::thread> workers_;  // last: they start once everything above exists
};

}  // namespace nanoserve::engine
