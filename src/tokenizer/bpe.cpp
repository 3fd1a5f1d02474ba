#include "tokenizer/bpe.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>

#include "tokenizer/byte_level.h"

namespace nanoserve::tokenizer {
namespace {

// Heap order: the lowest rank first, then the leftmost position.
struct LowerPriority {
  bool operator()(const BpeScratch::Candidate& a, const BpeScratch::Candidate& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }
};

}  // namespace

BpeModel::MergeTable::MergeTable(size_t n_merges) {
  // At most half full, so probe sequences stay short.
  const size_t capacity = std::bit_ceil(std::max<size_t>(2 * n_merges, 16));
  slots_.assign(capacity, Slot{kEmpty, {}});
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
}

void BpeModel::MergeTable::insert(int32_t left, int32_t right, Merge merge) {
  const uint64_t key = key_of(left, right);
  for (size_t slot = slot_of(key);; slot = (slot + 1) & (slots_.size() - 1)) {
    if (slots_[slot].key == kEmpty || slots_[slot].key == key) {
      slots_[slot] = {key, merge};
      return;
    }
  }
}

const BpeModel::MergeTable::Merge* BpeModel::MergeTable::find(int32_t left, int32_t right) const {
  const uint64_t key = key_of(left, right);
  for (size_t slot = slot_of(key);; slot = (slot + 1) & (slots_.size() - 1)) {
    if (slots_[slot].key == key) return &slots_[slot].merge;
    if (slots_[slot].key == kEmpty) return nullptr;
  }
}

BpeModel::BpeModel(const Vocab& vocab) : merges_(vocab.merges.size()), ignore_merges_(vocab.ignore_merges) {
  std::unordered_map<std::string_view, int32_t> normal_ids;
  normal_ids.reserve(vocab.tokens.size());
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const Token& token = vocab.tokens[id];
    if (token.type != TokenType::kNormal) continue;
    normal_ids.emplace(token.piece, static_cast<int32_t>(id));
    if (!ignore_merges_) continue;
    if (const auto bytes = byte_level_decode(token.piece)) whole_words_.emplace(*bytes, static_cast<int32_t>(id));
  }

  for (unsigned byte = 0; byte < 256; ++byte) {
    const std::string piece = byte_level_encode(std::string(1, static_cast<char>(byte)));
    const auto it = normal_ids.find(piece);
    if (it == normal_ids.end()) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", byte);
      throw std::runtime_error("the vocabulary has no token for byte " + std::string(hex) + " ('" + piece + "')");
    }
    byte_tokens_[byte] = it->second;
  }

  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const auto [left, right] = vocab.merges[rank];
    const std::string merged = vocab.tokens[left].piece + vocab.tokens[right].piece;
    const auto it = normal_ids.find(merged);
    if (it == normal_ids.end())
      throw std::runtime_error("bad merge " + std::to_string(rank) + " '" + vocab.tokens[left].piece + " " +
                               vocab.tokens[right].piece + "': its result '" + merged + "' is not a token");
    // A repeated pair keeps its last rank, as Hugging Face's merge map does.
    merges_.insert(left, right, {static_cast<int32_t>(rank), it->second});
  }
}

void BpeModel::push_candidate(BpeScratch& scratch, int32_t pos, int32_t left, int32_t right) const {
  if (const MergeTable::Merge* merge = merges_.find(left, right)) {
    scratch.heap.push_back({merge->rank, pos, left, right, merge->merged});
    std::push_heap(scratch.heap.begin(), scratch.heap.end(), LowerPriority{});
  }
}

void BpeModel::encode_word(std::string_view word, BpeScratch& scratch, std::vector<int32_t>& ids) const {
  if (word.size() == 1) {
    ids.push_back(byte_tokens_[static_cast<uint8_t>(word[0])]);
    return;
  }
  if (ignore_merges_) {
    if (const auto it = whole_words_.find(word); it != whole_words_.end()) {
      ids.push_back(it->second);
      return;
    }
  }

  auto& symbols = scratch.symbols;
  symbols.resize(word.size());
  const auto n = static_cast<int32_t>(word.size());
  for (int32_t i = 0; i < n; ++i) symbols[i] = {byte_tokens_[static_cast<uint8_t>(word[i])], i - 1, i + 1 < n ? i + 1 : -1};
  scratch.heap.clear();
  for (int32_t i = 0; i + 1 < n; ++i) push_candidate(scratch, i, symbols[i].id, symbols[i + 1].id);

  while (!scratch.heap.empty()) {
    std::pop_heap(scratch.heap.begin(), scratch.heap.end(), LowerPriority{});
    const BpeScratch::Candidate candidate = scratch.heap.back();
    scratch.heap.pop_back();
    // Skip candidates made stale by an earlier merge: tokens only grow, so an unchanged
    // pair of ids means an unchanged pair of symbols.
    BpeScratch::Symbol& left = symbols[candidate.pos];
    if (left.id != candidate.left || left.next < 0) continue;
    BpeScratch::Symbol& right = symbols[left.next];
    if (right.id != candidate.right) continue;

    left.id = candidate.merged;
    right.id = -1;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = candidate.pos;
    if (left.prev >= 0) push_candidate(scratch, left.prev, symbols[left.prev].id, left.id);
    if (left.next >= 0) push_candidate(scratch, candidate.pos, left.id, symbols[left.next].id);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) ids.push_back(symbols[i].id);
}

}  // namespace nanoserve::tokenizer
