// Control tokens a grammar can require by name (gpt-oss's harmony markup: <|channel|>,
// <|message|>, ...). The automaton reads bytes, so such a token stands in the vocabulary
// (vocabulary.h) and in grammars as byte 0xFF followed by its text. No well-formed UTF-8 holds
// 0xFF and the grammar compilers write only well-formed UTF-8, so only the token itself can
// match, provided the vocabulary gives no text token holding 0xFF any bytes.
#pragma once

#include <string>
#include <string_view>

#include "grammar/expr.h"

namespace nanoserve::grammar {

inline constexpr char kSpecialTokenLead = '\xFF';

// The bytes that stand for the control token whose text is `text` ("<|channel|>").
inline std::string special_token_bytes(std::string_view text) {
  std::string bytes(1, kSpecialTokenLead);
  bytes += text;
  return bytes;
}

// A grammar part that only that control token matches.
inline Expr special_token(std::string_view text) { return literal(special_token_bytes(text)); }

}  // namespace nanoserve::grammar
