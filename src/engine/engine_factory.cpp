#include "engine/engine_factory.h"

#include <stdexcept>

#include "engine/mock_engine.h"
#include "engine/model_metadata.h"
#include "engine/sequential_engine.h"
#include "gguf/file.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {
namespace {

constexpr int64_t kMockDefaultContext = 4096;

std::unique_ptr<Engine> make_mock(const EngineOptions& options) {
  const gguf::File file = gguf::File::open(options.model_path);
  const gguf::Metadata& metadata = file.metadata();
  return std::make_unique<MockEngine>(
      tokenizer::Tokenizer::from_gguf(metadata),
      MockOptions{.model_name = model_name(metadata, options.model_path),
                  .chat_template = chat_template(metadata),
                  .context_size = options.context_size > 0 ? options.context_size : kMockDefaultContext,
                  .token_delay_us = options.mock_token_delay_us,
                  .max_concurrency = options.mock_max_concurrency,
                  .queue_limit = options.queue_limit});
}

}  // namespace

std::unique_ptr<Engine> make_engine(const EngineOptions& options) {
  if (options.kind == "mock") return make_mock(options);
  if (options.kind == "sequential")
    return std::make_unique<SequentialEngine>(SequentialOptions{.model_path = options.model_path,
                                                                .threads = options.threads,
                                                                .context_size = options.context_size,
                                                                .queue_limit = options.queue_limit});
  throw std::invalid_argument("unknown engine kind \"" + options.kind + "\" (expected mock or sequential)");
}

}  // namespace nanoserve::engine
