// UTF-8 decoding and the code point classes the pre-split regexes use.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
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
std::string_view unicode_version();

enum class Utf8Status : uint8_t {
  kValid,
  kInvalid,    // not UTF-8: `length` is the maximal subpart to replace by one U+FFFD
  kTruncated,  // a valid start of a sequence cut off by the end of the text
};

struct Utf8Char {
  char32_t code_point;  // U+FFFD unless kValid
  uint32_t length;      // bytes consumed, >= 1
  Utf8Status status;
};

// Decodes the UTF-8 sequence starting at text[pos] (pos < text.size()). Overlong forms,
// surrogates and code points above U+10FFFF are kInvalid.
Utf8Char decode_utf8(std::string_view text, size_t pos);

void append_utf8(std::string& out, char32_t code_point);

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace nanoserve::tokenizer
