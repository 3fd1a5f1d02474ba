#include "engine/mock_engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace nanoserve::engine {

const char* const kMockPassage =
    "The lighthouse keeper climbed the spiral stairs at dusk, counting all one hundred and twelve "
    "steps as he always did. Outside, the sea lay calm and the gulls had gone quiet. He wiped the "
    "great lens, lit the lamp and wrote in the log: \xe2\x80\x9cWind north-east, visibility good, no "
    "ships.\xe2\x80\x9d Then he made tea \xe2\x80\x94 strong, with a spoon of honey \xe2\x80\x94 and "
    "watched the beam sweep the water once every nine seconds until morning. \xf0\x9f\x8c\x8a\xe2\x98\x95\n\n";

MockEngine::MockEngine(tokenizer::Tokenizer tokenizer, MockOptions options)
    : tokenizer_(std::move(tokenizer)),
      options_(std::move(options)),
      passage_(tokenizer_.encode(options_.passage, true)),
      queue_(options_.queue_limit, options_.max_concurrency) {
  if (passage_.empty()) throw std::invalid_argument("mock engine: the passage must not be empty");
  if (options_.max_concurrency < 1) throw std::invalid_argument("mock engine: max_concurrency must be at least 1");
  if (options_.context_size < 2) throw std::invalid_argument("mock engine: context_size must be at least 2");
  for (int i = 0; i < options_.max_concurrency; ++i) workers_.emplace_back([this] { serve(); });
}

MockEngine::~MockEngine() {
  stopping_ = true;
  queue_.close();
  for (std::thread& worker : workers_) worker.join();
}

std::shared_ptr<Stream> MockEngine::submit(GenerationRequest request) {
  return queue_.submit(std::move(request), tokenizer_, static_cast<int64_t>(tokenizer_.n_tokens()),
                       options_.context_size);
}

EngineMetrics MockEngine::metrics() const {
  EngineMetrics m;  // no KV cache: its bytes stay 0
  m.waiting = queue_.waiting();
  m.running = queue_.running();
  return m;
}

void MockEngine::serve() {
  std::vector<float> logits(tokenizer_.n_tokens(), 0.0f);
  while (std::unique_ptr<Generation> generation = queue_.pop()) {
    try {
      generate(*generation, logits);
    } catch (const std::exception& e) {
      generation->fail(e.what());
    }
  }
}

void MockEngine::generate(Generation& generation, std::vector<float>& logits) {
  // With every other logit 0, this lead gives the passage's token e^3 / (e^3 + 1) ≈ 95% of
  // the probability at temperature 1, whatever the vocabulary's size.
  const float lead = std::log(static_cast<float>(logits.size())) + 3.0f;
  const auto delay = std::chrono::microseconds(options_.token_delay_us);
  const std::vector<int32_t> echo =
      options_.echo_prompt ? tokenizer_.encode(tokenizer_.decode(generation.request().prompt), false)
                           : std::vector<int32_t>{};
  const std::vector<int32_t>& text = options_.echo_prompt ? echo : passage_;
  for (int64_t step = 0;; ++step) {
    // The pretend forward pass, cut short by a cancel as a real step's end would notice it.
    const auto step_end = std::chrono::steady_clock::now() + delay;
    while (!generation.cancelled() && !stopping_ && std::chrono::steady_clock::now() < step_end)
      std::this_thread::sleep_for(std::min<std::chrono::microseconds>(delay, std::chrono::milliseconds(2)));
    if (generation.cancelled() || stopping_) return generation.finish(FinishReason::Cancelled);
    if (options_.echo_prompt && static_cast<size_t>(step) == echo.size())
      return generation.finish(FinishReason::Stop);  // the prompt once, then the end of the answer
    const int32_t next = text[static_cast<size_t>(step) % text.size()];
    logits[next] = lead;
    const bool goes_on = generation.step(logits).has_value();
    logits[next] = 0.0f;
    if (!goes_on) return;
  }
}

}  // namespace nanoserve::engine
