#include "grammar/matcher.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace nanoserve::grammar {

Matcher::Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const Vocabulary> vocabulary)
    : vocabulary_(std::move(vocabulary)), automaton_(std::move(grammar)), state_(automaton_.start()),
      walk_(vocabulary_->trie.max_depth() + 1) {}

void Matcher::compute(Automaton::State state, std::vector<uint64_t>& bits) {
  ++masks_computed_;
  bits.assign((vocabulary_->n_tokens() + 63) / 64, 0);
  auto allow = [&](int32_t token) { bits[static_cast<size_t>(token) >> 6] |= uint64_t{1} << (token & 63); };
  if (automaton_.accepts(state))
    for (int32_t token : vocabulary_->end_tokens) allow(token);
  if (!automaton_.continues(state)) return;

  const std::span<const TokenTrie::Node> nodes = vocabulary_->trie.nodes();
  const std::span<const int32_t> tokens = vocabulary_->trie.tokens();
  walk_[0] = state;
  for (size_t i = 1; i < nodes.size();) {
    const TokenTrie::Node& n = nodes[i];
    const Automaton::State s = automaton_.next(walk_[n.depth - 1], n.byte);
    if (s == Automaton::kDead) {
      i = n.subtree_end;
      continue;
    }
    for (uint32_t t = n.tokens_begin; t < n.tokens_end; ++t) allow(tokens[t]);
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
    for (size_t t = w * 64; t < end; ++t)
      if (!((word >> (t - w * 64)) & 1)) logits[t] = kNever;
  }
  return n_allowed;
}

bool Matcher::accept(int32_t token) {
  if (token < 0 || static_cast<size_t>(token) >= vocabulary_->n_tokens()) return false;
  const auto& ends = vocabulary_->end_tokens;
  if (std::find(ends.begin(), ends.end(), token) != ends.end()) return can_end();
  const std::string& bytes = vocabulary_->bytes[static_cast<size_t>(token)];
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
