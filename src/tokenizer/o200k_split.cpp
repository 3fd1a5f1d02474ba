#include "tokenizer/o200k_split.h"

#include "tokenizer/unicode.h"
#include "utf8/utf8.h"

namespace nanoserve::tokenizer {
namespace {

struct Char {
  char32_t code_point;  // U+FFFD for a byte that is not UTF-8
  size_t length;
  CharClass char_class;
  LetterCase letter_case;
};

// Both classes of each ASCII character, looked up once: most text is ASCII.
struct AsciiClasses {
  CharClass char_class[128];
  LetterCase letter_case[128];
};
const AsciiClasses kAscii = [] {
  AsciiClasses a{};
  for (char32_t c = 0; c < 128; ++c) a.char_class[c] = char_class(c), a.letter_case[c] = letter_case(c);
  return a;
}();

inline Char char_at(std::string_view text, size_t pos) {
  const auto byte = static_cast<uint8_t>(text[pos]);
  if (byte < 0x80) return {byte, 1, kAscii.char_class[byte], kAscii.letter_case[byte]};
  const utf8::Char c = utf8::decode(text, pos);
  if (c.status != utf8::Status::kValid) return {c.code_point, c.length, CharClass::kOther, LetterCase::kNone};
  return {c.code_point, c.length, char_class(c.code_point), letter_case(c.code_point)};
}

bool is_newline(char32_t cp) { return cp == '\r' || cp == '\n'; }
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}] (lambdas, so that each
// run_end instantiation inlines its test)
constexpr auto in_upper = [](const Char& c) {
  return c.letter_case != LetterCase::kNone && c.letter_case != LetterCase::kLower;
};
constexpr auto in_lower = [](const Char& c) {
  return c.letter_case != LetterCase::kNone && c.letter_case != LetterCase::kUpper;
};
// [^\r\n\p{L}\p{N}]
bool may_lead(const Char& c) {
  return !is_newline(c.code_point) && c.char_class != CharClass::kLetter && c.char_class != CharClass::kNumber;
}

// The end of the run of characters from `pos` that `in` accepts.
template <class In>
size_t run_end(std::string_view text, size_t pos, In in) {
  while (pos < text.size()) {
    const Char c = char_at(text, pos);
    if (!in(c)) break;
    pos += c.length;
  }
  return pos;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)? at `pos`: where it ends (`pos` without one). ASCII case only.
size_t after_contraction(std::string_view text, size_t pos) {
  if (pos >= text.size() || text[pos] != '\'') return pos;
  const auto lower_at = [&](size_t i) { return i < text.size() ? static_cast<char>(text[i] | 0x20) : '\0'; };
  switch (lower_at(pos + 1)) {
    case 's': case 't': case 'm': case 'd':
      return pos + 2;
    case 'r': case 'v':
      return lower_at(pos + 2) == 'e' ? pos + 3 : pos;
    case 'l':
      return lower_at(pos + 2) == 'l' ? pos + 3 : pos;
    default:
      return pos;
  }
}

// [U]*[W]+ contraction? from `pos`: the greedy [U]* gives characters back, last first, until
// [W]+ can start: at the run's end where a [W] character follows it (a lowercase letter, which
// [W]+ then extends), else at the run's last character that is in [W] too (Lm, Lo, M: [W]+
// takes it alone, as what follows it is not [W]); npos when neither exists.
size_t lower_word_end(std::string_view text, size_t pos) {
  size_t at = pos, last_both_end = std::string_view::npos;
  while (at < text.size()) {
    const Char c = char_at(text, at);
    if (!in_upper(c)) {
      if (in_lower(c)) return after_contraction(text, run_end(text, at, in_lower));
      break;
    }
    at += c.length;
    if (in_lower(c)) last_both_end = at;
  }
  return last_both_end == std::string_view::npos ? last_both_end : after_contraction(text, last_both_end);
}

// [U]+[W]* contraction? from `pos`: npos unless a [U] character starts there.
size_t upper_word_end(std::string_view text, size_t pos) {
  if (pos >= text.size() || !in_upper(char_at(text, pos))) return std::string_view::npos;
  return after_contraction(text, run_end(text, run_end(text, pos, in_upper), in_lower));
}

// \s+(?!\S) | \s+ from `start`, which is whitespace: the run, less its last character when a
// non-space follows and the run has more than one.
size_t whitespace_end(std::string_view text, size_t start) {
  size_t end = start, last = start;
  while (end < text.size()) {
    const Char c = char_at(text, end);
    if (c.char_class != CharClass::kWhitespace) break;
    last = end;
    end += c.length;
  }
  return end == text.size() || last == start ? end : last;
}

// [A-Z]* then [a-z]+ is the first letter alternative, [A-Z]+ alone the second (no lowercase
// follows), each with its contraction; npos where the word may go on beyond ASCII.
size_t ascii_word_end(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) -> int { return i < text.size() ? static_cast<uint8_t>(text[i]) : -1; };
  while (byte(at) >= 'A' && byte(at) <= 'Z') ++at;
  while (byte(at) >= 'a' && byte(at) <= 'z') ++at;
  if (byte(at) >= 0x80) return std::string_view::npos;
  return after_contraction(text, at);
}

// The match at `start` where ASCII alone decides it (most text): a word of ASCII letters, with
// its optional leading character and contraction, or up to 3 ASCII digits; npos where a byte
// beyond ASCII is within reach, or the match is of another kind.
size_t ascii_match_end(std::string_view text, size_t start) {
  const auto byte = [&](size_t i) -> int { return i < text.size() ? static_cast<uint8_t>(text[i]) : -1; };
  const auto upper = [](int c) { return c >= 'A' && c <= 'Z'; };
  const auto lower = [](int c) { return c >= 'a' && c <= 'z'; };
  const auto digit = [](int c) { return c >= '0' && c <= '9'; };
  const int first = byte(start);
  if (first >= 0x80) return std::string_view::npos;
  if (digit(first)) {
    size_t end = start + 1;
    while (end < start + 3 && digit(byte(end))) ++end;
    return end < start + 3 && byte(end) >= 0x80 ? std::string_view::npos : end;
  }
  const auto space = [](int c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  const auto symbol = [&](int c) { return c >= 0 && c < 0x80 && !upper(c) && !lower(c) && !digit(c) && !space(c); };
  const int second = byte(start + 1);
  if (!upper(first) && !lower(first)) {
    if (second >= 0x80) return std::string_view::npos;  // a letter beyond ASCII may follow
    if (first != '\r' && first != '\n' && (upper(second) || lower(second))) {
      // A leading character ([^\r\n\p{L}\p{N}]) before a letter: a word.
      return ascii_word_end(text, start + 1);
    }
    // " ?[^\s\p{L}\p{N}]+[\r\n/]*": symbols, after one space.
    if (symbol(first) || (first == ' ' && symbol(second))) {
      size_t end = symbol(first) ? start + 1 : start + 2;
      while (symbol(byte(end))) ++end;
      if (byte(end) >= 0x80) return std::string_view::npos;  // more symbols may follow
      while (byte(end) == '\r' || byte(end) == '\n' || byte(end) == '/') ++end;
      return end;
    }
    // Whitespace: up to the run's last newline (\s*[\r\n]+), else the run less its last
    // character before a non-space (\s+(?!\S)), else the run (\s+).
    if (!space(first)) return std::string_view::npos;
    size_t end = start, after_newline = std::string_view::npos;
    while (space(byte(end))) {
      if (byte(end) == '\r' || byte(end) == '\n') after_newline = end + 1;
      ++end;
    }
    if (byte(end) >= 0x80) return std::string_view::npos;  // whitespace beyond ASCII may go on
    if (after_newline != std::string_view::npos) return after_newline;
    return end == text.size() || end == start + 1 ? end : end - 1;
  }
  return ascii_word_end(text, start);
}

}  // namespace

size_t o200k_match_length(std::string_view text, size_t start) {
  if (const size_t end = ascii_match_end(text, start); end != std::string_view::npos) return end - start;
  const Char first = char_at(text, start);
  const size_t next = start + first.length;
  // The two letter alternatives, each with its optional leading character tried first.
  for (size_t (*word_end)(std::string_view, size_t) : {lower_word_end, upper_word_end}) {
    if (may_lead(first) && next < text.size())
      if (const size_t end = word_end(text, next); end != std::string_view::npos) return end - start;
    if (const size_t end = word_end(text, start); end != std::string_view::npos) return end - start;
  }
  // \p{N}{1,3}
  if (first.char_class == CharClass::kNumber) {
    size_t end = next;
    for (int digits = 1; digits < 3 && end < text.size(); ++digits) {
      const Char c = char_at(text, end);
      if (c.char_class != CharClass::kNumber) break;
      end += c.length;
    }
    return end - start;
  }
  // " ?[^\s\p{L}\p{N}]+[\r\n/]*"
  const auto is_symbol = [](const Char& c) { return c.char_class == CharClass::kOther; };
  size_t symbols = std::string_view::npos;
  if (is_symbol(first))
    symbols = start;
  else if (first.code_point == ' ' && next < text.size() && is_symbol(char_at(text, next)))
    symbols = next;
  if (symbols != std::string_view::npos) {
    size_t end = run_end(text, symbols, is_symbol);
    while (end < text.size() && (is_newline(static_cast<uint8_t>(text[end])) || text[end] == '/')) ++end;
    return end - start;
  }
  // Only whitespace is left: \s*[\r\n]+ up to the run's last newline; else \s+(?!\S) | \s+.
  size_t after_newline = std::string_view::npos;
  for (size_t pos = start; pos < text.size();) {
    const Char c = char_at(text, pos);
    if (c.char_class != CharClass::kWhitespace) break;
    pos += c.length;
    if (is_newline(c.code_point)) after_newline = pos;
  }
  if (after_newline != std::string_view::npos) return after_newline - start;
  return whitespace_end(text, start) - start;
}

}  // namespace nanoserve::tokenizer
