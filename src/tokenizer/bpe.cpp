#include "tokenizer/bpe.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>

#include "tokenizer/byte_level.h"
#include "utf8/utf8.h"

namespace nanoserve::tokenizer {
namespace {

// The length in bytes of the character at text[pos] (1 for a byte that starts none).
size_t char_length(std::string_view text, size_t pos) { return utf8::decode(text, pos).length; }

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

BpeModel::BpeModel(const Vocab& vocab)
    : kind_(vocab.kind), unknown_id_(vocab.unknown_id), merges_(0), ignore_merges_(vocab.ignore_merges) {
  // The tokens merges may make and start from: normal ones (and, SentencePiece, user-defined).
  std::unordered_map<std::string_view, int32_t> ids;
  ids.reserve(vocab.tokens.size());
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const Token& token = vocab.tokens[id];
    const bool mergeable = token.type == TokenType::kNormal ||
                           (kind_ == VocabKind::kSentencePiece && token.type == TokenType::kUserDefined);
    if (!mergeable) continue;
    ids.emplace(token.piece, static_cast<int32_t>(id));
    if (!ignore_merges_) continue;
    if (kind_ == VocabKind::kSentencePiece) {
      whole_words_.emplace(token.piece, static_cast<int32_t>(id));
    } else if (const auto bytes = byte_level_decode(token.piece)) {
      whole_words_.emplace(*bytes, static_cast<int32_t>(id));
    }
  }

  if (kind_ == VocabKind::kSentencePiece) {
    byte_tokens_.fill(-1);
    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
      const Token& token = vocab.tokens[id];
      if (token.type == TokenType::kByte) {
        const auto byte = byte_token_value(token.piece);
        if (!byte) throw std::runtime_error("byte token " + std::to_string(id) + " '" + token.piece + "' is not <0xNN>");
        byte_tokens_[*byte] = static_cast<int32_t>(id);
      }
    }
    for (const auto& [piece, id] : ids)
      if (char_length(piece, 0) == piece.size()) character_ids_.emplace(std::string(piece), id);
  } else {
    for (unsigned byte = 0; byte < 256; ++byte) {
      const std::string piece = byte_level_encode(std::string(1, static_cast<char>(byte)));
      const auto it = ids.find(piece);
      if (it == ids.end()) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", byte);
        throw std::runtime_error("the vocabulary has no token for byte " + std::string(hex) + " ('" + piece + "')");
      }
      byte_tokens_[byte] = it->second;
    }
  }

  if (kind_ == VocabKind::kSentencePiece && vocab.merges.empty() && !vocab.scores.empty()) {
    add_merges_from_scores(vocab, ids);
  } else {
    add_merges(vocab, ids);
  }
}

void BpeModel::add_merges(const Vocab& vocab, const std::unordered_map<std::string_view, int32_t>& ids) {
  merges_ = MergeTable(vocab.merges.size());
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const auto [left, right] = vocab.merges[rank];
    const std::string merged = vocab.tokens[left].piece + vocab.tokens[right].piece;
    const auto it = ids.find(merged);
    if (it == ids.end())
      throw std::runtime_error("bad merge " + std::to_string(rank) + " '" + vocab.tokens[left].piece + " " +
                               vocab.tokens[right].piece + "': its result '" + merged + "' is not a token");
    // A repeated pair keeps its last rank, as Hugging Face's merge map does.
    merges_.insert(left, right, {static_cast<int32_t>(rank), it->second});
  }
}

void BpeModel::add_merges_from_scores(const Vocab& vocab, const std::unordered_map<std::string_view, int32_t>& ids) {
  // Every way of cutting a token's piece (at a character boundary) into two tokens is a merge
  // that makes it.
  struct Found {
    int32_t left, right, merged;
  };
  std::vector<Found> found;
  std::vector<float> distinct;
  for (const auto& [piece, id] : ids) {
    bool any = false;
    for (size_t cut = char_length(piece, 0); cut < piece.size(); cut += char_length(piece, cut)) {
      const auto left = ids.find(piece.substr(0, cut));
      if (left == ids.end()) continue;
      const auto right = ids.find(piece.substr(cut));
      if (right == ids.end()) continue;
      found.push_back({left->second, right->second, id});
      any = true;
    }
    if (any) distinct.push_back(vocab.scores[static_cast<size_t>(id)]);
  }
  std::sort(distinct.begin(), distinct.end(), std::greater<>());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  merges_ = MergeTable(found.size());
  for (const Found& f : found) {
    const float score = vocab.scores[static_cast<size_t>(f.merged)];
    const auto rank = std::lower_bound(distinct.begin(), distinct.end(), score, std::greater<>()) - distinct.begin();
    merges_.insert(f.left, f.right, {static_cast<int32_t>(rank), f.merged});
  }
}

void BpeModel::push_candidate(BpeScratch& scratch, int32_t pos, int32_t left, int32_t right) const {
  if (const MergeTable::Merge* merge = merges_.find(left, right)) {
    scratch.heap.push_back({merge->rank, pos, left, right, merge->merged});
    std::push_heap(scratch.heap.begin(), scratch.heap.end(), LowerPriority{});
  }
}

void BpeModel::byte_level_symbols(std::string_view word, BpeScratch& scratch) const {
  auto& symbols = scratch.symbols;
  const auto n = static_cast<int32_t>(word.size());
  symbols.resize(word.size());
  for (int32_t i = 0; i < n; ++i) symbols[i] = {byte_tokens_[static_cast<uint8_t>(word[i])], i - 1, i + 1 < n ? i + 1 : -1};
}

// One symbol a character; a character without a token becomes one symbol a byte (its <0xNN>
// token), or one unknown symbol (runs of them fused, as Hugging Face's fuse_unk does).
void BpeModel::character_symbols(std::string_view word, BpeScratch& scratch) const {
  auto& symbols = scratch.symbols;
  symbols.clear();
  const auto push = [&](int32_t id) {
    const auto i = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, i - 1, -1});
    if (i > 0) symbols[i - 1].next = i;
  };
  for (size_t at = 0; at < word.size();) {
    const size_t length = char_length(word, at);
    const std::string_view character = word.substr(at, length);
    if (const auto it = character_ids_.find(character); it != character_ids_.end()) {
      push(it->second);
    } else {
      for (const char byte : character) {
        const int32_t id = byte_tokens_[static_cast<uint8_t>(byte)];
        if (id >= 0) {
          push(id);
        } else if (!unknown_id_) {
          throw std::runtime_error("the vocabulary has neither a piece nor a byte token for a character, and no "
                                   "unknown token");
        } else if (symbols.empty() || symbols.back().id != *unknown_id_) {
          push(*unknown_id_);
        }
      }
    }
    at += length;
  }
}

void BpeModel::encode_word(std::string_view word, BpeScratch& scratch, std::vector<int32_t>& ids) const {
  const bool by_bytes = kind_ == VocabKind::kByteLevel;
  if (by_bytes && word.size() == 1) {
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
  if (by_bytes) {
    byte_level_symbols(word, scratch);
  } else {
    character_symbols(word, scratch);
  }
  const auto n = static_cast<int32_t>(symbols.size());
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
