#include "engine/last_logits_cache.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string_view>

namespace nanoserve::engine {
namespace {

uint64_t hash_of(std::span<const int32_t> tokens) {
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(tokens.data()), tokens.size_bytes()));
}

}  // namespace

LastLogitsCache::LastLogitsCache(size_t capacity) : capacity_(capacity) {
  if (capacity_ < 1) throw std::invalid_argument("last logits cache: the capacity must be at least 1 entry");
}

std::list<LastLogitsCache::Entry>::const_iterator LastLogitsCache::locate(std::span<const int32_t> tokens,
                                                                           uint64_t hash) const {
  return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return e.hash == hash && std::ranges::equal(e.tokens, tokens);
  });
}

void LastLogitsCache::put(std::span<const int32_t> tokens, std::span<const float> logits) {
  const uint64_t hash = hash_of(tokens);
  auto at = locate(tokens, hash);
  if (at == entries_.end() && entries_.size() >= capacity_) at = std::prev(entries_.end());  // reuses its memory
  if (at == entries_.end()) {
    entries_.emplace_front();
  } else {
    entries_.splice(entries_.begin(), entries_, at);
  }
  Entry& e = entries_.front();
  e.hash = hash;
  e.tokens.assign(tokens.begin(), tokens.end());
  e.logits.assign(logits.begin(), logits.end());
}

bool LastLogitsCache::contains(std::span<const int32_t> tokens) const {
  return locate(tokens, hash_of(tokens)) != entries_.end();
}

std::span<const float> LastLogitsCache::find(std::span<const int32_t> tokens) {
  const auto at = locate(tokens, hash_of(tokens));
  if (at == entries_.end()) return {};
  entries_.splice(entries_.begin(), entries_, at);
  return entries_.front().logits;
}

}  // namespace nanoserve::engine
