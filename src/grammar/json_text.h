// The pieces of JSON text every schema grammar is made of (RFC 8259): whitespace, a string's
// characters, numbers. Bounded where the JSON is not, so that a model cannot run on forever
// inside one token class: whitespace is one space or a newline and up to 20 spaces or tabs,
// a number has at most 16 digits before its point, 15 after it and 2 in its exponent (so that
// it stays finite as a double: 1e999 would parse as infinity in JavaScript).
#pragma once

#include <cstdint>
#include <optional>

#include "grammar/expr.h"
#include "grammar/grammar.h"

namespace nanoserve::grammar {

inline constexpr int kMaxIntegerDigits = 16;
inline constexpr int kMaxFractionDigits = 15;

// Whitespace between tokens: nothing, " ", or "\n" and indentation.
Expr json_whitespace();
// One whole UTF-8 character: `ascii` are the one-byte ones allowed (the caller's set, no
// control bytes or '"' or '\\' there), then every well-formed multi-byte sequence.
Expr utf8_characters(const ByteSet& ascii);
// A JSON escape: \" \\ \/ \b \f \n \r \t or \uXXXX (not a surrogate: one escape, one character).
Expr json_escape();
// One character of a JSON string's text, as written in JSON (raw or escaped).
Expr json_string_character();
// A number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? within the digit bounds above.
Expr json_number();
// An integer in [lo, hi] (none: no bound, up to 16 digits), written without a leading zero.
// The caller checks lo <= hi.
Expr json_integer(std::optional<int64_t> lo, std::optional<int64_t> hi);

// Rules for any JSON value (objects and arrays nest any values), any object and any string.
struct AnyJsonRules {
  uint32_t value, object, string;
};
AnyJsonRules add_any_json_rules(GrammarBuilder& builder);

}  // namespace nanoserve::grammar
