// A compiled grammar: rules of alternatives, each alternative a run of elements that read one
// byte (a ByteSet) or enter a rule, ended by End. Matcher (matcher.h) walks it a byte at a
// time with a stack of return positions. Rules are never left-recursive: compilers build
// repetition as right recursion, which the matcher runs without growing its stack.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "grammar/byte_set.h"
#include "grammar/expr.h"

namespace nanoserve::grammar {

// Thrown when a grammar would pass the builder's size limit (a schema that expands too far,
// such as maxLength: 100000).
struct GrammarTooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Element {
  enum class Kind : uint8_t { Bytes, Rule, End };
  Kind kind = Kind::End;
  uint32_t value = 0;  // Bytes: index of its ByteSet; Rule: the rule
};

class Grammar {
 public:
  const Element& element(uint32_t position) const { return elements_[position]; }
  const ByteSet& byte_set(const Element& e) const { return byte_sets_[e.value]; }
  // Where each alternative of `rule` starts.
  std::span<const uint32_t> alternatives(uint32_t rule) const {
    return {alternatives_.data() + rule_starts_[rule], alternatives_.data() + rule_starts_[rule + 1]};
  }
  uint32_t root() const { return root_; }
  // No text at all is a sentence of the grammar (a schema that nothing can satisfy, a rule
  // that only refers to itself).
  bool matches_nothing() const;

 private:
  friend class GrammarBuilder;
  std::vector<Element> elements_;
  std::vector<ByteSet> byte_sets_;
  std::vector<uint32_t> alternatives_;  // rule r's alternatives: [rule_starts_[r], rule_starts_[r + 1])
  std::vector<uint32_t> rule_starts_;
  uint32_t root_ = 0;
};

class GrammarBuilder {
 public:
  // Elements at most (8 bytes each), whatever the rules.
  static constexpr size_t kMaxElements = 1 << 20;

  // A rule to define later: lets a rule refer to itself or to one not yet built ($ref).
  uint32_t new_rule();
  void define(uint32_t rule, const Expr& body);
  // A new rule defined as `body`.
  uint32_t add_rule(const Expr& body);
  // Every rule must be defined. Throws GrammarTooLarge past kMaxElements.
  Grammar build(uint32_t root);

 private:
  using Alternative = std::vector<Element>;
  void lower(const Expr& e, Alternative& out);
  void lower_repeat(const Expr& e, Alternative& out);
  uint32_t byte_set_index(const ByteSet& set);
  void count(size_t elements);

  std::vector<std::vector<Alternative>> rules_;
  std::vector<bool> defined_;
  std::vector<ByteSet> byte_sets_;
  size_t n_elements_ = 0;
};

}  // namespace nanoserve::grammar
