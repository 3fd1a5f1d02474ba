#include "engine/engine_factory.h"

#include <unistd.h>

#include <stdexcept>
#include <string>

#include "engine/batch_engine.h"
#include "engine/defaults.h"
#include "engine/mock_engine.h"
#include "engine/model_metadata.h"
#include "engine/sequential_engine.h"
#include "gguf/file.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {
namespace {

std::unique_ptr<Engine> make_mock(const EngineOptions& options) {
  const gguf::File file = gguf::File::open(options.model_path);
  const gguf::Metadata& metadata = file.metadata();
  return std::make_unique<MockEngine>(
      tokenizer::Tokenizer::from_gguf(metadata),
      MockOptions{.model_name = model_name(metadata, options.model_path),
                  .chat_template = chat_template(metadata),
                  .facts = model_facts(file),
                  .context_size = context_size_for(options.context_size, kDefaultContext),
                  .token_delay_us = options.mock_token_delay_us,
                  .max_concurrency = parallel_of(options),
                  .queue_limit = options.queue_limit,
                  .passage = options.mock_passage.empty() ? kMockPassage : options.mock_passage,
                  .echo_prompt = options.mock_echo});
}

// The batch engine's drafter ("" is its default: the MTP block where the file has one, else lookup).
SpecMode spec_mode(const std::string& spec) {
  if (spec == "off") return SpecMode::Off;
  if (spec == "draft") return SpecMode::Draft;
  if (spec == "lookup") return SpecMode::Lookup;
  if (spec == "mtp") return SpecMode::Mtp;
  return SpecMode::Auto;
}

int64_t physical_memory_bytes() {
  return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGE_SIZE));
}

}  // namespace

void check_engine_options(const EngineOptions& o) {
  if (o.kind != "batch" && o.kind != "sequential" && o.kind != "mock")
    throw std::invalid_argument("unknown engine kind \"" + o.kind + "\" (expected batch, sequential or mock)");
  const int parallel = parallel_of(o);
  if (o.parallel < 0 || parallel > kMaxParallel)
    throw std::invalid_argument("--parallel must be between 1 and " + std::to_string(kMaxParallel));
  if (o.kind == "sequential" && parallel != 1)
    throw std::invalid_argument("the sequential engine generates one request at a time: --parallel must be 1");
  if (o.kind != "mock" && o.mock_token_delay_us != 0)
    throw std::invalid_argument("--mock-token-delay-us applies to --engine mock only");
  if (o.kind != "mock" && !o.mock_passage.empty())
    throw std::invalid_argument("--mock-passage applies to --engine mock only");
  if (o.kind != "mock" && o.mock_echo) throw std::invalid_argument("--mock-echo applies to --engine mock only");
  if (o.mock_echo && !o.mock_passage.empty())
    throw std::invalid_argument("--mock-echo and --mock-passage are two answers: give one");
  if (o.kind != "batch" && (o.kv_memory_bytes != 0 || o.step_tokens != 0))
    throw std::invalid_argument("--kv-memory and --step-tokens apply to --engine batch only");
  if (!o.prefix_cache.empty() && o.prefix_cache != "on" && o.prefix_cache != "off")
    throw std::invalid_argument("--prefix-cache must be on or off, not \"" + o.prefix_cache + "\"");
  if (o.kind != "batch" && o.prefix_cache == "on")
    throw std::invalid_argument("--prefix-cache on applies to --engine batch only");
  if (o.kind != "batch" && (!o.cache_dir.empty() || o.cache_disk_bytes != 0))
    throw std::invalid_argument("--cache-dir and --cache-disk apply to --engine batch only");
  if (o.cache_dir.empty() && o.cache_disk_bytes != 0) throw std::invalid_argument("--cache-disk needs --cache-dir");
  if (!o.cache_dir.empty() && o.prefix_cache == "off")
    throw std::invalid_argument("--cache-dir is the prefix cache's disk tier: it needs --prefix-cache on");
  if (o.cache_disk_bytes < 0) throw std::invalid_argument("--cache-disk must not be negative");
  if (!o.spec.empty() && o.spec != "off" && o.spec != "lookup" && o.spec != "draft" && o.spec != "mtp")
    throw std::invalid_argument("--spec must be off, lookup, draft or mtp, not \"" + o.spec + "\"");
  if (o.kind != "batch" && !o.spec.empty() && o.spec != "off")
    throw std::invalid_argument("--spec " + o.spec + " applies to --engine batch only");
  if (o.kind != "batch" && o.draft_max != 0) throw std::invalid_argument("--draft-max applies to --engine batch only");
  if (o.draft_max < 0 || o.draft_max > kMaxDraftTokens)
    throw std::invalid_argument("--draft-max must be between 1 and " + std::to_string(kMaxDraftTokens));
  if (!o.draft_policy.empty() && o.draft_policy != "adaptive" && o.draft_policy != "always")
    throw std::invalid_argument("--draft-policy must be adaptive or always, not \"" + o.draft_policy + "\"");
  if (!o.draft_policy.empty() && (o.kind != "batch" || o.spec == "off"))
    throw std::invalid_argument("--draft-policy applies to --engine batch with --spec lookup, draft or mtp");
  if (o.spec == "draft" && o.draft_model.empty()) throw std::invalid_argument("--spec draft needs --draft-model FILE");
  if (!o.draft_model.empty() && o.spec != "draft")
    throw std::invalid_argument("--draft-model needs --spec draft");
  if (!o.kv_type.empty()) {
    model::parse_optional_kv_type(o.kv_type);  // throws, naming the types, for another
    if (o.kind == "mock") throw std::invalid_argument("--kv-type applies to the batch and sequential engines");
  }
  if (o.context_size < 0) throw std::invalid_argument("--ctx must not be negative");
  if (o.kv_memory_bytes < 0 || o.kv_memory_bytes > physical_memory_bytes())
    throw std::invalid_argument("--kv-memory must be at most this machine's memory (" +
                                std::to_string(physical_memory_bytes()) + " bytes)");
  if (o.step_tokens < 0 || o.step_tokens > kMaxStepTokens)
    throw std::invalid_argument("--step-tokens must be between 1 and " + std::to_string(kMaxStepTokens));
  if (o.kind == "batch" && o.step_tokens != 0 && o.step_tokens < parallel)
    throw std::invalid_argument("--step-tokens (" + std::to_string(o.step_tokens) + ") must be at least --parallel (" +
                                std::to_string(parallel) + "): every running sequence gets a decode row in each step");
  if (o.queue_limit < 0) throw std::invalid_argument("--max-queue must not be negative");
}

int default_parallel(const std::string& kind) {
  if (kind == "batch") return 8;
  if (kind == "mock") return 4;
  return 1;
}

int parallel_of(const EngineOptions& options) {
  return options.parallel > 0 ? options.parallel : default_parallel(options.kind);
}

BatchOptions batch_options(const EngineOptions& options) {
  return BatchOptions{.model_path = options.model_path,
                      .threads = options.threads,
                      .kv_type = model::parse_optional_kv_type(options.kv_type),
                      .context_size = options.context_size,
                      .parallel = parallel_of(options),
                      .kv_memory_bytes = options.kv_memory_bytes,
                      .step_tokens = options.step_tokens > 0 ? options.step_tokens : kDefaultStepTokens,
                      .queue_limit = options.queue_limit,
                      .prefix_cache = options.prefix_cache != "off",
                      .cache_dir = options.cache_dir,
                      .cache_disk_bytes = options.cache_dir.empty()        ? 0
                                          : options.cache_disk_bytes > 0 ? options.cache_disk_bytes
                                                                         : kDefaultCacheDiskBytes,
                      .spec = spec_mode(options.spec),
                      .draft_max = options.draft_max > 0 ? options.draft_max : kDefaultDraftMax,
                      .draft_model_path = options.draft_model,
                      .draft_always = options.draft_policy == "always"};
}

std::unique_ptr<Engine> make_engine(const EngineOptions& options) {
  check_engine_options(options);
  if (options.kind == "mock") return make_mock(options);
  if (options.kind == "sequential")
    return std::make_unique<SequentialEngine>(
        SequentialOptions{.model_path = options.model_path,
                          .threads = options.threads,
                          .kv_type = model::parse_optional_kv_type(options.kv_type),
                          .context_size = options.context_size,
                          .queue_limit = options.queue_limit});
  return std::make_unique<BatchEngine>(batch_options(options));
}

}  // namespace nanoserve::engine
