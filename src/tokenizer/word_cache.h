// A memo of the BPE result of recent words. Text repeats its words, so most words are
// looked up instead of merged. Each thread has its own cache (no locks on the encode path),
// bound to one tokenizer at a time by the tokenizer's serial number.
//
// Direct-mapped, like a CPU cache: a word has one slot (by hash), a slot is one cache line
// holding the word and its ids, and a new word simply replaces the old one. Memory stays
// fixed and a lookup touches one line.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace nanoserve::tokenizer {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 22;  // longer words are not cached
  static constexpr size_t kMaxIds = 10;        // nor words of more tokens

  // The calling thread's cache, emptied first if it last served another tokenizer.
  static WordCache& for_thread(uint64_t tokenizer_serial);

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
