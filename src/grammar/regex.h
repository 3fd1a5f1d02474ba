// A JSON Schema "pattern" (ECMAScript syntax) as the grammar of a JSON string's text: the
// characters of every string the pattern matches, written as JSON writes them ('"', '\\' and
// control characters escaped). The pattern searches, as JSON Schema says: without ^ or $ any
// text may come before or after its match.
//
// The subset: literals (UTF-8 included), '.', classes [...] and [^...] of ASCII characters and
// ranges, \d \w \s \D \W \S, escapes \n \t \r \f \v \0 \xHH \uXXXX and of syntax characters,
// groups (...), (?:...) and (?<name>...), '|', the quantifiers ? * + {n} {n,} {n,m} (lazy or
// not: the same strings), '^' only at the start and '$' only at the end. Anything else
// (backreferences, lookaround, \b, \p{...}) is refused with the offset where it stands.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "grammar/expr.h"

namespace nanoserve::grammar {

struct RegexError : std::invalid_argument {
  RegexError(size_t offset, const std::string& message)
      : std::invalid_argument(message + " at offset " + std::to_string(offset)), offset(offset) {}
  size_t offset;
};

// A bound on {n,m} counts, so a pattern cannot ask for a grammar of millions of elements.
inline constexpr int kMaxRegexRepeat = 1000;
// Groups nested deeper are refused (the parser and the grammar's closure recurse on them).
inline constexpr int kMaxRegexNesting = 64;

// `any_character`: one character of JSON string text (json_string_character() or a rule of it),
// used around an unanchored pattern.
Expr json_string_matching(std::string_view pattern, const Expr& any_character);

}  // namespace nanoserve::grammar
