#include "engine/sequential_engine.h"

#include <algorithm>

#include "engine/defaults.h"
#include "engine/model_metadata.h"

namespace nanoserve::engine {

SequentialEngine::SequentialEngine(const SequentialOptions& options)
    : model_(options.model_path, {.threads = options.threads, .kv_type = options.kv_type}),
      tokenizer_(tokenizer::Tokenizer::from_gguf(model_.file().metadata())),
      model_name_(engine::model_name(model_.file().metadata(), options.model_path)),
      chat_template_(engine::chat_template(model_.file().metadata())),
      model_facts_(engine::model_facts(model_.file(), model::kv_type_name(model_.config().kv_type))),
      context_size_(model_.set_context(context_size_for(options.context_size, model_.config().n_ctx_train))),
      cache_(model_.config(), context_size_),
      queue_(options.queue_limit, 1),
      worker_([this] { serve(); }) {}

SequentialEngine::~SequentialEngine() {
  stopping_ = true;
  queue_.close();
  worker_.join();
}

std::shared_ptr<Stream> SequentialEngine::submit(GenerationRequest request) {
  return queue_.submit(std::move(request), tokenizer_, model_.config().n_vocab, context_size_);
}

EngineMetrics SequentialEngine::metrics() const {
  EngineMetrics m;  // no paging, batching or prefix cache: those stay 0
  m.waiting = queue_.waiting();
  m.running = queue_.running();
  m.kv_used_bytes = model::kv_bytes_for(model_.config(), kv_positions_);
  m.kv_total_bytes = static_cast<int64_t>(cache_.bytes());
  return m;
}

void SequentialEngine::serve() {
  while (std::unique_ptr<Generation> generation = queue_.pop()) {
    try {
      generate(*generation);
    } catch (const std::exception& e) {
      generation->fail(e.what());
    }
    kv_positions_ = 0;
  }
}

void SequentialEngine::generate(Generation& generation) {
  const std::vector<int32_t>& prompt = generation.request().prompt;
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  cache_.clear(0);
  for (int64_t begin = 0; begin < n_prompt; begin += kDefaultStepTokens) {
    if (should_stop(generation)) return generation.finish(FinishReason::Cancelled);
    const int64_t end = std::min(n_prompt, begin + kDefaultStepTokens);
    batch_.clear();
    for (int64_t pos = begin; pos < end; ++pos) batch_.add(0, pos, prompt[pos], pos == n_prompt - 1);
    model_.forward(batch_, cache_, logits_);
    kv_positions_ = end;
  }
  for (int64_t pos = n_prompt;; ++pos) {
    const std::optional<int32_t> token = generation.step(logits_.row(0));
    if (!token) return;
    if (should_stop(generation)) return generation.finish(FinishReason::Cancelled);
    batch_.clear();
    batch_.add(0, pos, *token, true);
    model_.forward(batch_, cache_, logits_);
    kv_positions_ = pos + 1;
  }
}

}  // namespace nanoserve::engine
