// One generation's place in its grammar: which tokens may come next (a bit per token id,
// worked out by walking the token trie through the automaton, and remembered per automaton
// state), and the move past the token chosen.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/automaton.h"
#include "grammar/grammar.h"
#include "grammar/token_trie.h"
#include "grammar/vocabulary.h"

namespace nanoserve::grammar {

class Matcher {
 public:
  Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const Vocabulary> vocabulary);

  // Bit t of word t / 64: token t may come next. End tokens only where the grammar can end.
  const std::vector<uint64_t>& allowed();
  // Sets every logit whose token is not allowed to -infinity (ids past the vocabulary too).
  // Returns how many tokens are allowed.
  size_t mask(std::span<float> logits);
  // Moves past `token`; false (and no move) when the grammar does not allow it here. An end
  // token is allowed where the grammar can end, and leaves the place as it is.
  bool accept(int32_t token);
  // Moves past raw bytes (a prefix the server forces, tests); false and no move if refused.
  bool accept_bytes(std::string_view bytes);
  // What has been accepted is a whole sentence of the grammar.
  bool can_end() const { return automaton_.accepts(state_); }
  // Allowed-token masks worked out so far (one trie walk each).
  size_t masks_computed() const { return masks_computed_; }

 private:
  // Masks kept at most: a 152k-token vocabulary's mask is 19 KB.
  static constexpr size_t kMaxMasks = 256;
  void compute(Automaton::State state, std::vector<uint64_t>& bits);
  // Allows the tokens of `trie` that can follow `state`.
  void walk(const TokenTrie& trie, Automaton::State state, std::vector<uint64_t>& bits);
  // How many plain characters in a row can follow `state` (up to kMaxPlainCharacters), when
  // every plain character leads to one same state at each step; nullopt when they do not.
  std::optional<int> plain_run(Automaton::State state);

  std::shared_ptr<const Vocabulary> vocabulary_;
  Automaton automaton_;
  Automaton::State state_;
  std::unordered_map<Automaton::State, std::vector<uint64_t>> masks_;
  std::vector<Automaton::State> walk_;  // by trie depth: the state after that many bytes
  size_t masks_computed_ = 0;
};

}  // namespace nanoserve::grammar
