#include "grammar/matcher.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace nanoserve::grammar {
namespace {

// rows[b][k]: 0 where bit k of b is set, -infinity where it is not.
struct ByteMasks {
  ByteMasks() {
    for (int b = 0; b < 256; ++b)
      for (int k = 0; k < 8; ++k) rows[b][k] = (b >> k) & 1 ? 0.0f : -std::numeric_limits<float>::infinity();
  }
  float rows[256][8];
};
const ByteMasks kByteMasks;

void allow(std::vector<uint64_t>& bits, int32_t token) {
  bits[static_cast<size_t>(token) >> 6] |= uint64_t{1} << (token & 63);
}

}  // namespace

Matcher::Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const Vocabulary> vocabulary)
    : vocabulary_(std::move(vocabulary)), automaton_(std::move(grammar)), state_(automaton_.start()),
      walk_(vocabulary_->trie().max_depth() + 1) {}

void Matcher::compute(Automaton::State state, std::vector<uint64_t>& bits) {
  ++masks_computed_;
  bits.assign((vocabulary_->n_tokens() + 63) / 64, 0);
  if (automaton_.accepts(state))
    for (int32_t token : vocabulary_->end_tokens()) allow(bits, token);
  if (!automaton_.continues(state)) return;
  const std::optional<int> run = plain_run(state);
  if (!run) {
    walk(vocabulary_->trie(), state, bits);
    return;
  }
  // The plain tokens are settled by their length alone; the trie walk is left the others.
  if (*run > 0) {
    const std::vector<uint64_t>& plain = vocabulary_->plain_up_to(*run);
    for (size_t w = 0; w < bits.size(); ++w) bits[w] |= plain[w];
  }
  walk(vocabulary_->other_trie(), state, bits);
}

std::optional<int> Matcher::plain_run(Automaton::State state) {
  int run = 0;
  for (Automaton::State s = state; run < Vocabulary::kMaxPlainCharacters; ++run) {
    const Automaton::State to = automaton_.plain_next(s);
    if (to == Automaton::kMixed) return std::nullopt;
    if (to == Automaton::kDead) return run;
    if (to == s) return Vocabulary::kMaxPlainCharacters;  // a loop: any length
    s = to;
  }
  return run;
}

void Matcher::walk(const TokenTrie& trie, Automaton::State state, std::vector<uint64_t>& bits) {
  const std::span<const TokenTrie::Node> nodes = trie.nodes();
  const std::span<const int32_t> tokens = trie.tokens();
  walk_[0] = state;
  for (size_t i = 1; i < nodes.size();) {
    const TokenTrie::Node& n = nodes[i];
    const Automaton::State s = automaton_.next(walk_[n.depth - 1], n.byte);
    if (s == Automaton::kDead) {
      i = n.subtree_end;
      continue;
    }
    for (uint32_t t = n.tokens_begin; t < n.tokens_end; ++t) allow(bits, tokens[t]);
    walk_[n.depth] = s;
    i = automaton_.continues(s) ? i + 1 : n.subtree_end;
  }
}

const std::vector<uint64_t>& Matcher::allowed() {
  const auto found = masks_.find(state_);
  if (found != masks_.end()) return found->second;
  if (masks_.size() >= kMaxMasks) masks_.clear();
  std::vector<uint64_t>& bits = masks_[state_];
  compute(state_, bits);
  return bits;
}

size_t Matcher::mask(std::span<float> logits) {
  const std::vector<uint64_t>& bits = allowed();
  constexpr float kNever = -std::numeric_limits<float>::infinity();
  size_t n_allowed = 0;
  for (size_t w = 0; w * 64 < logits.size(); ++w) {
    const uint64_t word = w < bits.size() ? bits[w] : 0;
    n_allowed += static_cast<size_t>(std::popcount(word));
    if (word == ~uint64_t{0}) continue;
    const size_t end = std::min(logits.size(), w * 64 + 64);
    if (word == 0) {  // the common case outside strings: a run of forbidden tokens
      std::fill(logits.begin() + static_cast<std::ptrdiff_t>(w * 64), logits.begin() + static_cast<std::ptrdiff_t>(end),
                kNever);
      continue;
    }
    float* row = logits.data() + w * 64;
    if (end - w * 64 < 64) {  // the last, partial word
      for (size_t j = 0; j < end - w * 64; ++j)
        if (!((word >> j) & 1)) row[j] = kNever;
      continue;
    }
    // Eight logits per byte of the word: adding 0 keeps a logit, adding -inf forbids it (a
    // plain add the compiler turns into one vector instruction).
    for (int byte = 0; byte < 8; ++byte) {
      const float* add = kByteMasks.rows[(word >> (8 * byte)) & 0xFF];
      for (int k = 0; k < 8; ++k) row[8 * byte + k] += add[k];
    }
  }
  return n_allowed;
}

bool Matcher::accept(int32_t token) {
  if (token < 0 || static_cast<size_t>(token) >= vocabulary_->n_tokens()) return false;
  const auto& ends = vocabulary_->end_tokens();
  if (std::find(ends.begin(), ends.end(), token) != ends.end()) return can_end();
  const std::string& bytes = vocabulary_->bytes(token);
  return !bytes.empty() && accept_bytes(bytes);
}

bool Matcher::accept_bytes(std::string_view bytes) {
  Automaton::State s = state_;
  for (char c : bytes) {
    s = automaton_.next(s, static_cast<uint8_t>(c));
    if (s == Automaton::kDead) return false;
  }
  state_ = s;
  return true;
}

}  // namespace nanoserve::grammar
