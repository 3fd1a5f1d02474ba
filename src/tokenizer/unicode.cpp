#include "tokenizer/unicode.h"

#include <algorithm>

namespace nanoserve::tokenizer {
namespace {

struct CharClassRange {
  char32_t first;
  char32_t last;
  CharClass char_class;
};

#include "tokenizer/char_class_table.inc"

struct LetterCaseRange {
  char32_t first;
  char32_t last;
  LetterCase letter_case;
};

#include "tokenizer/letter_case_table.inc"

constexpr std::array<CharClass, 128> make_ascii_classes() {
  std::array<CharClass, 128> classes{};
  for (const CharClassRange& range : kCharClassRanges)
    for (char32_t cp = range.first; cp <= range.last && cp < 128; ++cp) classes[cp] = range.char_class;
  return classes;
}

}  // namespace

constinit const std::array<CharClass, 128> detail::kAsciiCharClasses = make_ascii_classes();

CharClass detail::non_ascii_char_class(char32_t code_point) {
  const auto* it = std::upper_bound(std::begin(kCharClassRanges), std::end(kCharClassRanges), code_point,
                                    [](char32_t cp, const CharClassRange& r) { return cp < r.first; });
  if (it == std::begin(kCharClassRanges)) return CharClass::kOther;
  --it;
  return code_point <= it->last ? it->char_class : CharClass::kOther;
}

LetterCase letter_case(char32_t code_point) {
  if (code_point < 128) {
    if (code_point >= 'A' && code_point <= 'Z') return LetterCase::kUpper;
    if (code_point >= 'a' && code_point <= 'z') return LetterCase::kLower;
    return LetterCase::kNone;
  }
  const auto* it = std::upper_bound(std::begin(kLetterCaseRanges), std::end(kLetterCaseRanges), code_point,
                                    [](char32_t cp, const LetterCaseRange& r) { return cp < r.first; });
  if (it == std::begin(kLetterCaseRanges)) return LetterCase::kNone;
  --it;
  return code_point <= it->last ? it->letter_case : LetterCase::kNone;
}

std::string_view unicode_version() { return kUnicodeVersion; }

}  // namespace nanoserve::tokenizer
