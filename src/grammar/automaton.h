// A grammar run as a deterministic automaton over bytes, built lazily: a state is the set of
// stacks the grammar can be in after the bytes read so far (the nondeterminism of its
// alternatives), interned so that equal sets are one state, and each (state, byte) move is
// worked out once and remembered. Walking the token trie for a mask is then a table lookup
// per trie node (matcher.h).
//
// A stack is a chain of nodes (position, parent): the top's position is a Bytes element to
// read next; each parent is where to go on when the rule above it ends. Nodes are interned
// too, so stacks that share a bottom share its nodes.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"

namespace nanoserve::grammar {

class Automaton {
 public:
  using State = uint32_t;
  static constexpr State kDead = 0;  // no byte can follow and the grammar cannot end
  static constexpr State kMixed = UINT32_MAX - 1;  // plain_next(): the characters lead apart

  explicit Automaton(std::shared_ptr<const Grammar> grammar);

  State start() const { return start_; }
  State next(State state, uint8_t byte) {
    const State known = transitions_[state][byte];
    return known != kUnknown ? known : work_out(state, byte);
  }
  // The bytes read so far are a whole sentence of the grammar.
  bool accepts(State state) const { return states_[state].accepts; }
  // Some byte can follow.
  bool continues(State state) const { return !states_[state].tops.empty(); }
  size_t n_states() const { return states_.size(); }
  // The one state that every plain character (plain_text.h) leads to from `state` (kDead when
  // none is allowed), or kMixed when they lead to different states. Worked out once per state.
  State plain_next(State state);

 private:
  static constexpr uint32_t kUnknown = UINT32_MAX;
  static constexpr uint32_t kBottom = UINT32_MAX;  // the parent of a stack's last node

  struct Node {
    uint32_t position;
    uint32_t parent;
  };
  struct StateInfo {
    std::vector<uint32_t> tops;  // node ids, sorted
    bool accepts = false;
  };
  // What one step reaches: the stacks' new tops, and whether a stack emptied.
  struct Closure {
    std::vector<uint32_t> tops;
    bool accepts = false;
    std::vector<std::pair<uint32_t, uint32_t>> expanded;  // (rule position, parent) already entered
  };
  struct TopsHash {
    size_t operator()(const std::vector<uint32_t>& v) const;
  };

  State work_out(State state, uint8_t byte);
  void expand(uint32_t position, uint32_t parent, Closure& out);
  uint32_t node(uint32_t position, uint32_t parent);
  State state_of(Closure& closure);
  // The one state that every byte in [lo, hi] followed by `rest` continuation bytes leads to
  // from `at`, or kMixed. `memo` holds what this plain_next() call has worked out.
  struct PlainStep {
    State at;
    int rest;
    uint8_t lo, hi;
    State to;
  };
  State plain_through(State at, int rest, uint8_t lo, uint8_t hi, std::vector<PlainStep>& memo);

  std::shared_ptr<const Grammar> grammar_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, uint32_t> node_ids_;
  std::vector<StateInfo> states_;
  // Key: the sorted tops, with kUnknown appended when the state accepts.
  std::unordered_map<std::vector<uint32_t>, State, TopsHash> state_ids_;
  std::vector<std::array<State, 256>> transitions_;
  std::vector<State> plain_next_;  // by state; kUnknown until worked out
  State start_ = kDead;
};

}  // namespace nanoserve::grammar
