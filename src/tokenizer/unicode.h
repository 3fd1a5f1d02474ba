// The code point classes the pre-split regexes use.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace nanoserve::tokenizer {

// The classes of \p{L}, \p{N} and \s (Unicode White_Space, which is what Oniguruma's \s
// matches); everything else is kOther. Unicode version: kUnicodeVersion in unicode.cpp.
enum class CharClass : uint8_t { kOther, kLetter, kNumber, kWhitespace };

namespace detail {
extern const std::array<CharClass, 128> kAsciiCharClasses;
CharClass non_ascii_char_class(char32_t code_point);
}  // namespace detail

// Inline for ASCII, which is most text; a table search otherwise.
inline CharClass char_class(char32_t code_point) {
  return code_point < 128 ? detail::kAsciiCharClasses[code_point] : detail::non_ascii_char_class(code_point);
}
// The letter and mark categories the o200k regex tells apart; kNone for everything else.
enum class LetterCase : uint8_t {
  kNone,
  kUpper,        // Lu, Lt
  kLower,        // Ll
  kOtherLetter,  // Lm, Lo (in both of o200k's letter sets)
  kMark,         // Mn, Mc, Me (in both too; not \p{L})
};
LetterCase letter_case(char32_t code_point);

std::string_view unicode_version();

}  // namespace nanoserve::tokenizer
