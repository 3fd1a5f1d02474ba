// What the batch engine (engine/batch_engine.h) is asked to run: the model, its KV pool and
// batch, the prefix cache and speculative decoding.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/defaults.h"
#include "engine/drafter.h"
#include "engine/prefix_cache.h"
#include "engine/prefix_index.h"
#include "model/config.h"
#include "model/model.h"

namespace nanoserve::engine {

// Speculative decoding's drafter: none, prompt lookup, a draft model, the model's own MTP block;
// Auto: the MTP block where the file has one, else prompt lookup.
enum class SpecMode { Off, Lookup, Draft, Mtp, Auto };

struct BatchOptions {
  std::string model_path = "";
  int threads = 0;               // 0 = the machine's physical cores
  std::optional<model::KvType> kv_type = std::nullopt;  // model::ModelOptions::kv_type
  int64_t context_size = 0;      // per request; 0 = the default (engine/defaults.h)
  int parallel = 8;              // sequences generating at once
  int64_t kv_memory_bytes = 0;   // the KV pool; 0 = context_size × parallel positions
  int64_t step_tokens = kDefaultStepTokens;  // rows per forward step (decode rows first); at least parallel
  int64_t queue_limit = 64;      // requests waiting beyond the running ones; more: QueueFull
  bool prefix_cache = true;      // reuse the KV blocks of earlier prompts with the same prefix
  std::string cache_dir = "";    // the prefix cache's disk tier (engine/kv_disk_cache.h); empty: none
  int64_t cache_disk_bytes = 0;  // its bound
  PrefixIndex::HashFn prefix_hash = PrefixIndex::chain_hash;  // a test may force collisions
  SpecMode spec = SpecMode::Auto;            // speculative decoding's drafter
  int64_t draft_max = kDefaultDraftMax;      // draft tokens per sequence and step at most
  std::string draft_model_path = "";         // SpecMode::Draft: a model with the same vocabulary
  // Draft whenever the drafter can, as many as it can up to draft_max (no cost model: fixed-length
  // speculation, --draft-policy always); tests use it to exercise verification in every step.
  bool draft_always = false;
  std::shared_ptr<Drafter> test_drafter = nullptr;  // tests: a drafter of their own instead of spec's
};

// The KV pool's capacity in positions: what --kv-memory buys (whole blocks), else a full context
// for every slot. Throws std::invalid_argument for less than one block or no slot.
int64_t pool_positions(const BatchOptions& options, const model::ModelConfig& config);
// The prefix cache's options, its disk tier's checked (--cache-dir, --cache-disk).
PrefixCacheOptions prefix_options(const BatchOptions& options, const model::Model& model);

}  // namespace nanoserve::engine
