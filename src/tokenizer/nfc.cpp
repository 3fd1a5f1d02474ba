#include "tokenizer/nfc.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "utf8/utf8.h"

namespace nanoserve::tokenizer {
namespace {

struct CodePointRange {
  char32_t first;
  char32_t last;
};
struct CombiningClassRange {
  char32_t first;
  char32_t last;
  uint8_t combining_class;
};
struct Decomposition {
  char32_t code_point;
  char32_t first;
  char32_t second;  // 0 for a singleton decomposition
};
struct Composition {
  char32_t first;
  char32_t second;
  char32_t composite;
};

#include "tokenizer/nfc_tables.inc"

// Hangul syllables decompose and compose arithmetically (Unicode chapter 3.12).
constexpr char32_t kSyllableBase = 0xAC00, kLeadingBase = 0x1100, kVowelBase = 0x1161, kTrailingBase = 0x11A7;
constexpr char32_t kLeadingCount = 19, kVowelCount = 21, kTrailingCount = 28;
constexpr char32_t kSyllablesPerLeading = kVowelCount * kTrailingCount;
constexpr char32_t kSyllableCount = kLeadingCount * kSyllablesPerLeading;

// A byte that is not UTF-8 travels through normalization as this value plus the byte: a
// starter that composes with nothing, written back as the original byte.
constexpr char32_t kRawByteBase = 0x110000;

template <typename Range>
const Range* find_range(const Range* begin, const Range* end, char32_t cp) {
  const Range* it = std::upper_bound(begin, end, cp, [](char32_t c, const Range& r) { return c < r.first; });
  if (it == begin || cp > (it - 1)->last) return nullptr;
  return it - 1;
}

uint8_t combining_class(char32_t cp) {
  if (cp < 0x300 || cp >= kRawByteBase) return 0;
  const auto* range = find_range(std::begin(kCombiningClassRanges), std::end(kCombiningClassRanges), cp);
  return range ? range->combining_class : 0;
}

void decompose_into(char32_t cp, std::vector<char32_t>& out) {
  if (cp >= kSyllableBase && cp < kSyllableBase + kSyllableCount) {
    const char32_t index = cp - kSyllableBase;
    out.push_back(kLeadingBase + index / kSyllablesPerLeading);
    out.push_back(kVowelBase + (index % kSyllablesPerLeading) / kTrailingCount);
    if (index % kTrailingCount != 0) out.push_back(kTrailingBase + index % kTrailingCount);
    return;
  }
  const auto* it = std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), cp,
                                    [](const Decomposition& d, char32_t c) { return d.code_point < c; });
  if (it == std::end(kDecompositions) || it->code_point != cp) {
    out.push_back(cp);
    return;
  }
  decompose_into(it->first, out);
  if (it->second != 0) decompose_into(it->second, out);
}

// Canonical ordering: a stable sort by combining class within each run of non-starters.
void reorder_marks(std::vector<char32_t>& cps) {
  size_t i = 0;
  while (i < cps.size()) {
    if (combining_class(cps[i]) == 0) {
      ++i;
      continue;
    }
    size_t run_end = i;
    while (run_end < cps.size() && combining_class(cps[run_end]) != 0) ++run_end;
    std::stable_sort(cps.begin() + static_cast<ptrdiff_t>(i), cps.begin() + static_cast<ptrdiff_t>(run_end),
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = run_end;
  }
}

char32_t compose_pair(char32_t first, char32_t second) {
  if (first >= kLeadingBase && first < kLeadingBase + kLeadingCount && second >= kVowelBase &&
      second < kVowelBase + kVowelCount)
    return kSyllableBase + ((first - kLeadingBase) * kVowelCount + (second - kVowelBase)) * kTrailingCount;
  if (first >= kSyllableBase && first < kSyllableBase + kSyllableCount && (first - kSyllableBase) % kTrailingCount == 0 &&
      second > kTrailingBase && second < kTrailingBase + kTrailingCount)
    return first + (second - kTrailingBase);
  const Composition key{first, second, 0};
  const auto* it = std::lower_bound(std::begin(kCompositions), std::end(kCompositions), key,
                                    [](const Composition& a, const Composition& b) {
                                      return a.first != b.first ? a.first < b.first : a.second < b.second;
                                    });
  if (it != std::end(kCompositions) && it->first == first && it->second == second) return it->composite;
  return 0;
}

// Canonical composition in place: each character combines with the last starter unless a
// character between them blocks it (one with class 0 or with a class >= its own).
void compose(std::vector<char32_t>& cps) {
  size_t out = 0;
  size_t starter = SIZE_MAX;
  uint8_t last_class = 0;
  for (const char32_t cp : cps) {
    const uint8_t cls = combining_class(cp);
    if (starter != SIZE_MAX) {
      const bool adjacent = out == starter + 1;
      if (adjacent || (last_class != 0 && last_class < cls)) {
        if (const char32_t composite = compose_pair(cps[starter], cp)) {
          cps[starter] = composite;
          continue;
        }
      }
    }
    if (cls == 0) starter = out;
    last_class = cls;
    cps[out++] = cp;
  }
  cps.resize(out);
}

bool in_quick_check_set(char32_t cp) {
  return find_range(std::begin(kNfcQuickCheckRanges), std::end(kNfcQuickCheckRanges), cp) != nullptr;
}

}  // namespace

bool may_need_nfc(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    // Lead bytes below 0xCC start code points below U+0300, the first one NFC can touch.
    if (static_cast<uint8_t>(text[pos]) < 0xCC) {
      ++pos;
      continue;
    }
    const utf8::Char c = utf8::decode(text, pos);
    if (c.status == utf8::Status::kValid && in_quick_check_set(c.code_point)) return true;
    pos += c.length;
  }
  return false;
}

std::string nfc_normalize(std::string_view text) {
  std::vector<char32_t> cps;
  cps.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const utf8::Char c = utf8::decode(text, pos);
    if (c.status == utf8::Status::kValid) {
      decompose_into(c.code_point, cps);
    } else {
      for (uint32_t i = 0; i < c.length; ++i) cps.push_back(kRawByteBase + static_cast<uint8_t>(text[pos + i]));
    }
    pos += c.length;
  }
  reorder_marks(cps);
  compose(cps);

  std::string out;
  out.reserve(text.size());
  for (const char32_t cp : cps) {
    if (cp >= kRawByteBase)
      out += static_cast<char>(cp - kRawByteBase);
    else
      utf8::append(out, cp);
  }
  return out;
}

}  // namespace nanoserve::tokenizer
