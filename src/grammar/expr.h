// A grammar as an expression tree, the form compilers build (json_schema.h, regex.h) before
// GrammarBuilder lowers it to rules (grammar.h). Expressions are values: a part used twice is
// copied, or made a rule of its own (GrammarBuilder::new_rule) and referred to.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "grammar/byte_set.h"

namespace nanoserve::grammar {

struct Expr {
  enum class Kind : uint8_t {
    Bytes,   // one byte from `bytes`
    Seq,     // the children one after another (none: the empty string)
    Alt,     // any one of the children (none: nothing matches)
    Rule,    // the rule numbered `rule`
    Repeat,  // children[0] between `min` and `max` times (max < 0: no limit)
  };
  static constexpr int kUnbounded = -1;

  Kind kind = Kind::Seq;
  ByteSet bytes;
  std::vector<Expr> children;
  uint32_t rule = 0;
  int min = 0, max = 0;
};

inline Expr empty() { return {}; }

inline Expr bytes(const ByteSet& set) {
  Expr e;
  e.kind = Expr::Kind::Bytes;
  e.bytes = set;
  return e;
}

inline Expr literal(std::string_view text) {
  Expr e;
  for (char c : text) e.children.push_back(bytes(ByteSet::of(static_cast<uint8_t>(c))));
  return e;
}

inline Expr seq(std::vector<Expr> parts) {
  Expr e;
  e.children = std::move(parts);
  return e;
}

inline Expr alt(std::vector<Expr> choices) {
  Expr e;
  e.kind = Expr::Kind::Alt;
  e.children = std::move(choices);
  return e;
}

inline Expr rule_ref(uint32_t rule) {
  Expr e;
  e.kind = Expr::Kind::Rule;
  e.rule = rule;
  return e;
}

inline Expr repeat(Expr part, int min, int max) {
  Expr e;
  e.kind = Expr::Kind::Repeat;
  e.children.push_back(std::move(part));
  e.min = min;
  e.max = max;
  return e;
}

inline Expr optional(Expr part) { return repeat(std::move(part), 0, 1); }
inline Expr star(Expr part) { return repeat(std::move(part), 0, Expr::kUnbounded); }

}  // namespace nanoserve::grammar
