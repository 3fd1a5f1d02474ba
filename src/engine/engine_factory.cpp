#include "engine/engine_factory.h"

#include <stdexcept>

#include "engine/batch_engine.h"
#include "engine/mock_engine.h"
#include "engine/model_metadata.h"
#include "engine/sequential_engine.h"
#include "gguf/file.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {
namespace {

constexpr int64_t kMockDefaultContext = 4096;
constexpr int64_t kDefaultStepTokens = 512;

std::unique_ptr<Engine> make_mock(const EngineOptions& options) {
  const gguf::File file = gguf::File::open(options.model_path);
  const gguf::Metadata& metadata = file.metadata();
  return std::make_unique<MockEngine>(
      tokenizer::Tokenizer::from_gguf(metadata),
      MockOptions{.model_name = model_name(metadata, options.model_path),
                  .chat_template = chat_template(metadata),
                  .context_size = options.context_size > 0 ? options.context_size : kMockDefaultContext,
                  .token_delay_us = options.mock_token_delay_us,
                  .max_concurrency = parallel_of(options),
                  .queue_limit = options.queue_limit});
}

// One code path per option: a setting the kind would ignore is refused.
void check_options(const EngineOptions& o) {
  if (o.parallel < 0) throw std::invalid_argument("parallel must not be negative");
  if (o.kind != "batch" && (o.kv_memory_bytes != 0 || o.step_tokens != 0))
    throw std::invalid_argument("the KV memory and step tokens apply to the batch engine only");
  if (o.kind != "mock" && o.mock_token_delay_us != 0)
    throw std::invalid_argument("the mock token delay applies to the mock engine only");
  if (o.kind == "sequential" && parallel_of(o) != 1)
    throw std::invalid_argument("the sequential engine generates one request at a time: parallel must be 1");
}

}  // namespace

int default_parallel(const std::string& kind) {
  if (kind == "batch") return 8;
  if (kind == "mock") return 4;
  return 1;
}

int parallel_of(const EngineOptions& options) {
  return options.parallel > 0 ? options.parallel : default_parallel(options.kind);
}

std::unique_ptr<Engine> make_engine(const EngineOptions& options) {
  if (options.kind != "batch" && options.kind != "sequential" && options.kind != "mock")
    throw std::invalid_argument("unknown engine kind \"" + options.kind + "\" (expected batch, sequential or mock)");
  check_options(options);
  if (options.kind == "mock") return make_mock(options);
  if (options.kind == "sequential")
    return std::make_unique<SequentialEngine>(SequentialOptions{.model_path = options.model_path,
                                                                .threads = options.threads,
                                                                .context_size = options.context_size,
                                                                .queue_limit = options.queue_limit});
  return std::make_unique<BatchEngine>(
      BatchOptions{.model_path = options.model_path,
                   .threads = options.threads,
                   .context_size = options.context_size,
                   .parallel = parallel_of(options),
                   .kv_memory_bytes = options.kv_memory_bytes,
                   .step_tokens = options.step_tokens > 0 ? options.step_tokens : kDefaultStepTokens,
                   .queue_limit = options.queue_limit});
}

}  // namespace nanoserve::engine
