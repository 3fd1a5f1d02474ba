#include "grammar/automaton.h"

#include <algorithm>

#include "grammar/plain_text.h"

namespace nanoserve::grammar {

size_t Automaton::TopsHash::operator()(const std::vector<uint32_t>& v) const {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
  for (uint32_t x : v) h = (h ^ x) * 0x100000001B3ull + (h >> 29);
  return static_cast<size_t>(h);
}

Automaton::Automaton(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  Closure dead;
  state_of(dead);  // state 0
  Closure first;
  for (uint32_t alternative : grammar_->alternatives(grammar_->root())) expand(alternative, kBottom, first);
  start_ = state_of(first);
}

uint32_t Automaton::node(uint32_t position, uint32_t parent) {
  const uint64_t key = (uint64_t{position} << 32) | parent;
  const auto [it, added] = node_ids_.try_emplace(key, static_cast<uint32_t>(nodes_.size()));
  if (added) nodes_.push_back(Node{position, parent});
  return it->second;
}

// Follows the grammar from `position` (with `parent` below it) to every Bytes element that
// can come next: rules are entered (each alternative), ended rules return to their parent.
void Automaton::expand(uint32_t position, uint32_t parent, Closure& out) {
  for (;;) {
    const Element& e = grammar_->element(position);
    switch (e.kind) {
      case Element::Kind::Bytes:
        out.tops.push_back(node(position, parent));
        return;
      case Element::Kind::End: {
        if (parent == kBottom) {
          out.accepts = true;
          return;
        }
        const Node up = nodes_[parent];
        position = up.position;
        parent = up.parent;
        continue;
      }
      case Element::Kind::Rule: {
        // A rule that can match nothing may lead back here without reading a byte: entering
        // it twice from the same place adds nothing.
        const std::pair<uint32_t, uint32_t> entry{position, parent};
        if (std::find(out.expanded.begin(), out.expanded.end(), entry) != out.expanded.end()) return;
        out.expanded.push_back(entry);
        // A rule last in its alternative returns straight to our parent (no stack growth).
        const uint32_t after = position + 1;
        const uint32_t below =
            grammar_->element(after).kind == Element::Kind::End ? parent : node(after, parent);
        for (uint32_t alternative : grammar_->alternatives(e.value)) expand(alternative, below, out);
        return;
      }
    }
  }
}

Automaton::State Automaton::state_of(Closure& closure) {
  std::vector<uint32_t>& key = closure.tops;
  std::sort(key.begin(), key.end());
  key.erase(std::unique(key.begin(), key.end()), key.end());
  const bool accepts = closure.accepts;
  if (key.empty() && !accepts && !states_.empty()) return kDead;
  if (accepts) key.push_back(kUnknown);
  const auto [it, added] = state_ids_.try_emplace(key, static_cast<State>(states_.size()));
  if (added) {
    if (accepts) key.pop_back();
    states_.push_back(StateInfo{std::move(key), accepts});
    transitions_.emplace_back();
    transitions_.back().fill(kUnknown);
    plain_next_.push_back(kUnknown);
  }
  return it->second;
}

// Bytes that every top takes or refuses alike lead to the same state: the move is worked out
// once for the byte's whole class and stored for each byte in it (a string's content is one
// class of ~200 bytes, so its row costs one closure instead of 200).
Automaton::State Automaton::work_out(State state, uint8_t byte) {
  const std::vector<uint32_t>& tops = states_[state].tops;
  std::array<uint64_t, 256> taken_by{};  // bit i: tops[i] takes the byte (tops past 64: one class each byte)
  const bool classes = tops.size() <= 64;
  if (classes)
    for (size_t i = 0; i < tops.size(); ++i) {
      const ByteSet& set = grammar_->byte_set(grammar_->element(nodes_[tops[i]].position));
      for (unsigned b = 0; b < 256; ++b)
        if (set.has(static_cast<uint8_t>(b))) taken_by[b] |= uint64_t{1} << i;
    }
  Closure reached;
  for (size_t i = 0; i < tops.size(); ++i) {
    const Node n = nodes_[states_[state].tops[i]];
    if (grammar_->byte_set(grammar_->element(n.position)).has(byte)) expand(n.position + 1, n.parent, reached);
  }
  const State to = state_of(reached);
  if (!classes) {
    transitions_[state][byte] = to;
    return to;
  }
  for (unsigned b = 0; b < 256; ++b)
    if (taken_by[b] == taken_by[byte]) transitions_[state][b] = to;
  return to;
}

Automaton::State Automaton::plain_through(State at, int rest, uint8_t lo, uint8_t hi, std::vector<PlainStep>& memo) {
  if (at == kDead) return kDead;
  for (const PlainStep& m : memo)
    if (m.at == at && m.rest == rest && m.lo == lo && m.hi == hi) return m.to;
  State common = kUnknown;
  for (unsigned c = lo; c <= hi; ++c) {
    State to = next(at, static_cast<uint8_t>(c));
    if (rest > 0) to = plain_through(to, rest - 1, 0x80, 0xBF, memo);
    if (to == kMixed || (common != kUnknown && to != common)) {
      common = kMixed;
      break;
    }
    common = to;
  }
  memo.push_back(PlainStep{at, rest, lo, hi, common});
  return common;
}

Automaton::State Automaton::plain_next(State state) {
  if (plain_next_[state] != kUnknown) return plain_next_[state];
  std::vector<PlainStep> memo;
  State common = kUnknown;
  auto join = [&](State to) {
    if (to == kMixed || (common != kUnknown && to != common)) return false;
    common = to;
    return true;
  };
  bool uniform = true;
  for (unsigned b = 0; b < 256 && uniform; ++b)
    if (is_plain_ascii(static_cast<uint8_t>(b))) uniform = join(next(state, static_cast<uint8_t>(b)));
  for (const Utf8Form& form : kUtf8Forms)
    for (unsigned lead = form.lead_lo; lead <= form.lead_hi && uniform; ++lead)
      uniform = join(plain_through(next(state, static_cast<uint8_t>(lead)), form.rest, form.second_lo,
                                   form.second_hi, memo));
  plain_next_[state] = uniform ? common : kMixed;
  return plain_next_[state];
}

}  // namespace nanoserve::grammar
