#include "tokenizer/word_cache.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace nanoserve::tokenizer {
namespace {

// Eight bytes at a time, each step a multiply-xorshift mix; words are short.
uint64_t hash_word(std::string_view word) {
  constexpr uint64_t kMultiplier = 0xFF51AFD7ED558CCDull;
  uint64_t hash = word.size() * 0x9E3779B97F4A7C15ull;
  for (size_t pos = 0; pos < word.size(); pos += 8) {
    uint64_t chunk = 0;
    std::memcpy(&chunk, word.data() + pos, std::min<size_t>(8, word.size() - pos));
    hash = (hash ^ chunk) * kMultiplier;
    hash ^= hash >> 32;
  }
  return hash;
}

}  // namespace

namespace {

std::mutex pool_mutex;
std::vector<std::unique_ptr<WordCache>>& pool() {
  static std::vector<std::unique_ptr<WordCache>> caches;
  return caches;
}

}  // namespace

size_t WordCache::pool_capacity() { return std::max(2u, std::thread::hardware_concurrency()); }

WordCache::Lease WordCache::borrow(uint64_t tokenizer_serial) {
  std::unique_ptr<WordCache> cache;
  {
    const std::lock_guard lock(pool_mutex);
    if (!pool().empty()) {
      cache = std::move(pool().back());
      pool().pop_back();
    }
  }
  if (!cache) cache.reset(new WordCache());
  if (cache->tokenizer_serial_ != tokenizer_serial) {
    std::fill(cache->slots_.begin(), cache->slots_.end(), Slot{});
    cache->tokenizer_serial_ = tokenizer_serial;
  }
  return Lease(std::move(cache));
}

WordCache::Lease::~Lease() {
  if (!cache_) return;
  const std::lock_guard lock(pool_mutex);
  if (pool().size() < pool_capacity()) pool().push_back(std::move(cache_));
}

size_t WordCache::slot_index(std::string_view word) { return hash_word(word) & (kSlots - 1); }

std::optional<std::span<const int32_t>> WordCache::find(std::string_view word) const {
  const Slot& slot = slots_[slot_index(word)];
  if (slot.word_length != word.size() || std::memcmp(slot.word, word.data(), word.size()) != 0) return std::nullopt;
  return std::span<const int32_t>(slot.ids, slot.id_count);
}

void WordCache::insert(std::string_view word, std::span<const int32_t> ids) {
  if (word.empty() || word.size() > kMaxWordBytes || ids.size() > kMaxIds) return;
  Slot& slot = slots_[slot_index(word)];
  slot.word_length = static_cast<uint8_t>(word.size());
  slot.id_count = static_cast<uint8_t>(ids.size());
  std::memcpy(slot.word, word.data(), word.size());
  std::copy(ids.begin(), ids.end(), slot.ids);
}

}  // namespace nanoserve::tokenizer
