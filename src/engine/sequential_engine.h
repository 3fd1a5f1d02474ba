// The simplest real engine: one model, one KV cache, one generation at a time on its own
// thread; other requests wait in a bounded FIFO (their wait counts toward queue_ms and
// TTFT). Each generation is the prompt in chunks of kDefaultStepTokens rows, then one token
// per forward call; it checks for cancel between forward calls.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "engine/request_queue.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {

struct SequentialOptions {
  std::string model_path = "";
  int threads = 0;             // 0 = the machine's physical cores
  std::optional<model::KvType> kv_type = std::nullopt;  // model::ModelOptions::kv_type
  int64_t context_size = 0;    // 0 = the default (engine/defaults.h)
  int64_t queue_limit = 64;    // requests waiting beyond the running one; more: QueueFull
};

class SequentialEngine final : public Engine {
 public:
  // Loads the model (throws on a missing, malformed or unsupported file).
  explicit SequentialEngine(const SequentialOptions& options);
  ~SequentialEngine() override;
  SequentialEngine(const SequentialEngine&) = delete;
  SequentialEngine& operator=(const SequentialEngine&) = delete;

  std::shared_ptr<Stream> submit(GenerationRequest request) override;
  EngineMetrics metrics() const override;
  const tokenizer::Tokenizer& tokenizer() const override { return tokenizer_; }
  std::string model_name() const override { return model_name_; }
  ModelFacts model_facts() const override { return model_facts_; }
  int64_t context_size() const override { return context_size_; }
  std::string chat_template() const override { return chat_template_; }

 private:
  void serve();  // the worker thread: takes requests until the queue closes
  void generate(Generation& generation);
  bool should_stop(const Generation& generation) const { return generation.cancelled() || stopping_; }

  model::Model model_;
  const tokenizer::Tokenizer tokenizer_;
  const std::string model_name_, chat_template_;
  const ModelFacts model_facts_;
  const int64_t context_size_;
  model::KvCache cache_;
  model::Batch batch_;
  model::Logits logits_;
  RequestQueue queue_;
  std::atomic<int64_t> kv_positions_ = 0;  // positions the running generation fills
  std::atomic<bool> stopping_ = false;
  std::thread worker_;  // last: it starts once everything above exists
};

}  // namespace nanoserve::engine
