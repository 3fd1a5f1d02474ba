// UTF-8 decoding and encoding of code points, shared by the tokenizer and the chat templates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nanoserve::utf8 {

enum class Status : uint8_t {
  kValid,
  kInvalid,    // not UTF-8: `length` is the maximal subpart to replace by one U+FFFD
  kTruncated,  // a valid start of a sequence cut off by the end of the text
};

struct Char {
  char32_t code_point;  // U+FFFD unless kValid
  uint32_t length;      // bytes consumed, >= 1
  Status status;
};

// Decodes the UTF-8 sequence starting at text[pos] (pos < text.size()). Overlong forms,
// surrogates and code points above U+10FFFF are kInvalid.
Char decode(std::string_view text, size_t pos);

void append(std::string& out, char32_t code_point);

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace nanoserve::utf8
