// One generation as the batch engine (engine/batch_engine.h) carries it between steps: its
// tokens, where it stands in the KV pool, its prefix-cache chain and this step's drafts.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/generation.h"
#include "engine/timeline.h"

namespace nanoserve::engine {

struct BatchSequence {
  std::unique_ptr<Generation> generation;
  std::vector<int32_t> tokens;  // the prompt, then every sampled token
  uint64_t arrival = 0;         // taken from the inbox in this order
  int64_t cached = 0;           // positions of tokens in the KV cache
  int slot = -1;                // its KV cache sequence while it runs
  bool caching = false;         // uses the prefix cache
  std::vector<uint64_t> hashes; // chain hashes of tokens' whole blocks (PrefixCache::extend_chain)
  int64_t capture_hint = 0;     // where a waiting sequence's prefix parts from this one's (hybrid models)
  bool speculating = false;     // a drafter proposes tokens for it
  std::vector<int32_t> draft;   // this step's draft tokens (to follow tokens)
  std::vector<int32_t> guess;   // without drafts, the drafter's free guess of this step's token
  std::shared_ptr<RequestTimeline> timeline;
  std::chrono::steady_clock::time_point waiting_since;  // submitted, or preempted last
  int64_t preemptions = 0;

  int64_t prompt_size() const { return static_cast<int64_t>(generation->request().prompt.size()); }
  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
};

}  // namespace nanoserve::engine
