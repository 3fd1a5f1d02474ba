#include "engine/batch_options.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nanoserve::engine {
namespace {

std::optional<KvDiskOptions> disk_options(const BatchOptions& options, const model::Model& model) {
  if (options.cache_dir.empty()) {
    if (options.cache_disk_bytes != 0) throw std::invalid_argument("--cache-disk needs --cache-dir");
    return std::nullopt;
  }
  if (!options.prefix_cache) throw std::invalid_argument("--cache-dir needs the prefix cache (--prefix-cache on)");
  if (options.cache_disk_bytes <= 0) throw std::invalid_argument("--cache-disk must be positive");
  return KvDiskOptions{.dir = options.cache_dir,
                       .max_bytes = options.cache_disk_bytes,
                       .fingerprint = kv_fingerprint(model.file(), model.config(), model::KvCache::kDefaultBlockSize)};
}

// Prompts whose logits are kept: 4 per slot, 32 at most. An entry is n_vocab floats, a small
// part of the KV blocks that a prompt long enough to matter holds.
constexpr size_t kLastLogitsPerSlot = 4, kLastLogitsMax = 32;

}  // namespace

int64_t pool_positions(const BatchOptions& options, const model::ModelConfig& config) {
  if (options.parallel < 1) throw std::invalid_argument("the batch engine needs at least one parallel sequence");
  if (options.kv_memory_bytes <= 0) return context_size_for(options.context_size, config.n_ctx_train) * options.parallel;
  const int64_t block = model::KvCache::kDefaultBlockSize;
  const int64_t block_bytes = model::kv_bytes_per_position(config) * block;
  // Every slot's delta-net state (none without such layers) comes out of the same memory.
  const int64_t states = model::recurrent_bytes(config) * options.parallel;
  const int64_t blocks = (options.kv_memory_bytes - states) / block_bytes;
  if (blocks < 1)
    throw std::invalid_argument("the KV memory (" + std::to_string(options.kv_memory_bytes) +
                                " bytes) is less than one block of " + std::to_string(block) + " positions (" +
                                std::to_string(block_bytes) + " bytes for this model)" +
                                (states > 0 ? " besides the slots' recurrent states (" + std::to_string(states) +
                                                  " bytes)"
                                            : ""));
  return blocks * block;
}

PrefixCacheOptions prefix_options(const BatchOptions& options, const model::Model& model) {
  return {.enabled = options.prefix_cache,
          .hash = options.prefix_hash,
          .last_logits = std::min(kLastLogitsMax, kLastLogitsPerSlot * static_cast<size_t>(options.parallel)),
          .disk = disk_options(options, model)};
}

}  // namespace nanoserve::engine
