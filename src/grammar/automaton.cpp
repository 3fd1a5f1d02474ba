#include "grammar/automaton.h"

#include <algorithm>

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
  }
  return it->second;
}

Automaton::State Automaton::work_out(State state, uint8_t byte) {
  Closure reached;
  for (uint32_t top : states_[state].tops) {
    const Node n = nodes_[top];
    if (grammar_->byte_set(grammar_->element(n.position)).has(byte)) expand(n.position + 1, n.parent, reached);
  }
  const State to = state_of(reached);
  transitions_[state][byte] = to;
  return to;
}

}  // namespace nanoserve::grammar
