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

std::string_view unicode_version() { return kUnicodeVersion; }

}  // namespace nanoserve::tokenizer
