// A memo of the BPE result of recent words. Text repeats its words, so most words are
// looked up instead of merged. An encode borrows a cache from a small pool (as many as the
// cores: a server's dozens of threads must not each keep 2 MiB) and gives it back; no locks on
// the lookups themselves. A cache is bound to one tokenizer at a time by its serial number.
//
// Direct-mapped, like a CPU cache: a word has one slot (by hash), a slot is one cache line
// holding the word and its ids, and a new word simply replaces the old one. Memory stays
// fixed and a lookup touches one line.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace nanoserve::tokenizer {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 22;  // longer words are not cached
  static constexpr size_t kMaxIds = 10;        // nor words of more tokens

  // A cache lent to one caller until the lease ends, emptied first if it last served another
  // tokenizer. When every pooled cache is lent, a new one (given back to the pool if there is
  // room, else freed).
  class Lease {
   public:
    explicit Lease(std::unique_ptr<WordCache> cache) : cache_(std::move(cache)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    WordCache& operator*() const { return *cache_; }

   private:
    std::unique_ptr<WordCache> cache_;
  };
  static Lease borrow(uint64_t tokenizer_serial);
  // Caches the pool keeps at most (the rest are freed as they come back).
  static size_t pool_capacity();

  // The ids of `word`, if it is cached.
  std::optional<std::span<const int32_t>> find(std::string_view word) const;
  // Remembers the ids of `word` unless the word or its ids are too long for a slot.
  void insert(std::string_view word, std::span<const int32_t> ids);

 private:
  struct alignas(64) Slot {
    uint8_t word_length = 0;  // 0: empty (words are never empty)
    uint8_t id_count = 0;
    char word[kMaxWordBytes];
    int32_t ids[kMaxIds];
  };
  static_assert(sizeof(Slot) == 64);
  static constexpr size_t kSlots = 1 << 15;  // 2 MiB

  WordCache() : slots_(kSlots) {}
  static size_t slot_index(std::string_view word);

  uint64_t tokenizer_serial_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace nanoserve::tokenizer
