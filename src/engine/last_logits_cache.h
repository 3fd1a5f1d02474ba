// The logits after the last token of recent prompts. When the prefix cache holds every
// position of a prompt sent before, an exact resend (a chat's "regenerate", an agent's retry)
// samples its first token from them at once: without them it computes its last token again only
// for its logits, a whole read of the weights. The logits are the model's own, before any
// request's logit_bias or sampler, so any request with the same tokens may use them. A few
// entries, the least recently used replaced first; a hit is exact (the tokens are compared,
// not only their hash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <span>
#include <vector>

namespace nanoserve::engine {

class LastLogitsCache {
 public:
  explicit LastLogitsCache(size_t capacity);  // entries; at least 1

  // Stores the logits after `tokens` (replacing those stored for the same tokens).
  void put(std::span<const int32_t> tokens, std::span<const float> logits);
  bool contains(std::span<const int32_t> tokens) const;
  // The logits stored after exactly `tokens` (empty when none), valid until the next put();
  // the entry becomes the most recently used.
  std::span<const float> find(std::span<const int32_t> tokens);

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t hash = 0;
    std::vector<int32_t> tokens;
    std::vector<float> logits;
  };
  std::list<Entry>::const_iterator locate(std::span<const int32_t> tokens, uint64_t hash) const;

  size_t capacity_;
  std::list<Entry> entries_;  // the most recently used first
};

}  // namespace nanoserve::engine
