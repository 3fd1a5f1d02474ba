#include "grammar/regex.h"

#include <cstdint>
#include <vector>

#include "grammar/json_text.h"

namespace nanoserve::grammar {
namespace {

// A set of characters: some ASCII ones, and perhaps every non-ASCII one. `some_non_ascii`: it
// holds non-ASCII characters that are not written (\s's U+00A0, U+3000, ...), so that its
// complement holds no non-ASCII character either.
struct CharSet {
  ByteSet ascii;
  bool non_ascii = false;
  bool some_non_ascii = false;
};

std::string escaped_control(uint8_t c) {
  switch (c) {
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: {
      static const char* hex = "0123456789abcdef";
      return std::string("\\u00") + hex[c >> 4] + hex[c & 15];
    }
  }
}

// The characters of `set` as JSON text: printable ASCII raw, '"' '\\' and controls escaped.
Expr json_text_of(const CharSet& set) {
  ByteSet plain;
  std::vector<Expr> parts;
  for (unsigned c = 0; c < 128; ++c) {
    const auto b = static_cast<uint8_t>(c);
    if (!set.ascii.has(b)) continue;
    if (c == '"')
      parts.push_back(literal("\\\""));
    else if (c == '\\')
      parts.push_back(literal("\\\\"));
    else if (c < 0x20)
      parts.push_back(literal(escaped_control(b)));
    else
      plain.add(b);
  }
  if (set.non_ascii) {
    Expr multi_byte = utf8_characters(ByteSet{});
    multi_byte.children.erase(multi_byte.children.begin());  // its ASCII part: none here
    for (Expr& e : multi_byte.children) parts.push_back(std::move(e));
  }
  if (!plain.empty()) parts.insert(parts.begin(), bytes(plain));
  return alt(std::move(parts));
}

CharSet ascii_range(uint8_t lo, uint8_t hi) { return CharSet{ByteSet::range(lo, hi), false, false}; }

CharSet complement(const CharSet& s) {
  CharSet out;
  out.ascii = s.ascii.complement();
  for (unsigned c = 128; c < 256; ++c) out.ascii.remove(static_cast<uint8_t>(c));
  out.non_ascii = !s.non_ascii && !s.some_non_ascii;
  return out;
}

class Parser {
 public:
  Parser(std::string_view pattern, const Expr& any_character) : p_(pattern), any_(any_character) {}

  Expr parse() {
    const bool from_start = p_.starts_with('^');
    if (from_start) i_ = 1;
    Expr body = alternation();
    if (i_ < p_.size()) fail(p_[i_] == ')' ? "unbalanced ')'" : "unexpected character");
    std::vector<Expr> parts;
    if (!from_start) parts.push_back(star(any_));
    parts.push_back(std::move(body));
    if (!to_end_) parts.push_back(star(any_));
    return seq(std::move(parts));
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw RegexError(i_, "pattern: " + what); }
  bool at_end() const { return i_ >= p_.size(); }
  char peek() const { return p_[i_]; }

  Expr alternation() {
    std::vector<Expr> choices{sequence()};
    while (!at_end() && peek() == '|') {
      ++i_;
      choices.push_back(sequence());
    }
    return choices.size() == 1 ? std::move(choices[0]) : alt(std::move(choices));
  }

  Expr sequence() {
    std::vector<Expr> parts;
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$') {
        if (i_ + 1 != p_.size()) fail("'$' is supported only at the end of the pattern");
        to_end_ = true;
        ++i_;
        break;
      }
      Expr atom_expr = atom();
      parts.push_back(quantified(std::move(atom_expr)));
    }
    return seq(std::move(parts));
  }

  int number() {
    const size_t start = i_;
    int64_t n = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      n = n * 10 + (peek() - '0');
      if (n > kMaxRegexRepeat) fail("a repeat count above " + std::to_string(kMaxRegexRepeat));
      ++i_;
    }
    if (i_ == start) fail("a repeat count is missing");
    return static_cast<int>(n);
  }

  Expr quantified(Expr atom_expr) {
    if (at_end()) return atom_expr;
    int min = 1, max = 1;
    switch (peek()) {
      case '*': min = 0, max = Expr::kUnbounded, ++i_; break;
      case '+': min = 1, max = Expr::kUnbounded, ++i_; break;
      case '?': min = 0, max = 1, ++i_; break;
      case '{':
        ++i_;
        min = max = number();
        if (!at_end() && peek() == ',') {
          ++i_;
          max = !at_end() && peek() == '}' ? Expr::kUnbounded : number();
        }
        if (at_end() || peek() != '}') fail("a '{' that does not close a repeat count");
        ++i_;
        if (max != Expr::kUnbounded && max < min) fail("a repeat count {n,m} with m < n");
        break;
      default:
        return atom_expr;
    }
    if (!at_end() && peek() == '?') ++i_;  // lazy: the same strings
    if (!at_end() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{')) fail("nothing to repeat");
    return repeat(std::move(atom_expr), min, max);
  }

  Expr atom() {
    const char c = peek();
    switch (c) {
      case '(': return group();
      case '[': return json_text_of(char_class());
      case '.': {
        ++i_;
        CharSet any = complement(CharSet{ByteSet::of('\n'), false, false});
        any.ascii.remove('\r');
        return dot(any);
      }
      case '\\': return escape();
      case '^': fail("'^' is supported only at the start of the pattern");
      case '*': case '+': case '?': case '{': fail("nothing to repeat");
      default: return literal_character();
    }
  }

  // '.' is every character but line terminators: \n, \r, U+2028 and U+2029.
  static Expr dot(const CharSet& any) {
    Expr e = json_text_of(any);
    const Expr c = bytes(ByteSet::range(0x80, 0xBF));
    ByteSet not_separator = ByteSet::range(0x80, 0xA7);
    not_separator.add_range(0xAA, 0xBF);
    for (Expr& part : e.children) {
      if (part.kind != Expr::Kind::Seq || part.children.empty() || !part.children[0].bytes.has(0xE2)) continue;
      part = alt({seq({bytes(ByteSet::of(0xE1)), c, c}),
                  seq({bytes(ByteSet::of(0xE2)),
                       alt({seq({bytes(ByteSet::of(0x80)), bytes(not_separator)}),
                            seq({bytes(ByteSet::range(0x81, 0xBF)), c})})}),
                  seq({bytes(ByteSet::range(0xE3, 0xEC)), c, c})});
    }
    return e;
  }

  Expr group() {
    if (++depth_ > kMaxRegexNesting) fail("groups nested deeper than " + std::to_string(kMaxRegexNesting));
    ++i_;  // '('
    if (p_.substr(i_).starts_with("?:")) {
      i_ += 2;
    } else if (p_.substr(i_).starts_with("?<") && !p_.substr(i_).starts_with("?<=") &&
               !p_.substr(i_).starts_with("?<!")) {
      const size_t close = p_.find('>', i_);
      if (close == std::string_view::npos) fail("an unterminated group name");
      i_ = close + 1;
    } else if (!at_end() && peek() == '?') {
      fail("lookaround groups are not supported");
    }
    Expr inside = alternation();
    if (at_end() || peek() != ')') fail("a '(' without its ')'");
    ++i_;
    --depth_;
    return inside;
  }

  Expr literal_character() {
    const auto lead = static_cast<uint8_t>(peek());
    if (lead < 0x80) {
      ++i_;
      return json_text_of(CharSet{ByteSet::of(lead), false, false});
    }
    const size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    if (n == 0 || i_ + n > p_.size()) fail("a malformed UTF-8 character");
    Expr e = literal(p_.substr(i_, n));
    i_ += n;
    return e;
  }

  // \d \w \s and their complements, or nullopt-like: false when `c` is none of them.
  static bool class_escape(char c, CharSet& out) {
    CharSet s;
    switch (c) {
      case 'd': case 'D': s = ascii_range('0', '9'); break;
      case 'w': case 'W':
        s = ascii_range('0', '9');
        s.ascii.add_range('a', 'z');
        s.ascii.add_range('A', 'Z');
        s.ascii.add('_');
        break;
      case 's': case 'S':
        // ECMAScript's \s holds non-ASCII spaces too; the grammar keeps to the ASCII ones
        // (a subset: what it writes still matches).
        for (char w : std::string(" \t\n\r\f\v")) s.ascii.add(static_cast<uint8_t>(w));
        s.some_non_ascii = true;
        break;
      default: return false;
    }
    out = (c == 'D' || c == 'W' || c == 'S') ? complement(s) : s;
    return true;
  }

  // The one character an escape stands for (after the backslash), as a code point.
  uint32_t escaped_character() {
    const char c = peek();
    ++i_;
    switch (c) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case '0': return 0;
      case 'x': return hex_digits(2);
      case 'u': return hex_digits(4);
      default:
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
          --i_;
          fail(std::string("the escape \\") + c + " is not supported");
        }
        if (static_cast<uint8_t>(c) >= 0x80) fail("an escaped non-ASCII character");
        return static_cast<uint8_t>(c);  // \. \\ \/ \- ...: the character itself
    }
  }

  uint32_t hex_digits(int n) {
    uint32_t v = 0;
    for (int k = 0; k < n; ++k) {
      if (at_end()) fail("a short hex escape");
      const char h = peek();
      const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0) fail("a bad hex digit");
      v = v * 16 + static_cast<uint32_t>(d);
      ++i_;
    }
    return v;
  }

  static std::string utf8_of(uint32_t cp) {
    std::string s;
    if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
    } else {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    }
    s += static_cast<char>(0x80 | (cp & 0x3F));
    return s;
  }

  Expr escape() {
    ++i_;  // '\\'
    if (at_end()) fail("a pattern that ends with '\\'");
    CharSet set;
    if (class_escape(peek(), set)) {
      ++i_;
      return json_text_of(set);
    }
    const size_t at = i_;
    const uint32_t cp = escaped_character();
    if (cp < 0x80) return json_text_of(CharSet{ByteSet::of(static_cast<uint8_t>(cp)), false, false});
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      i_ = at;
      fail("a surrogate escape");
    }
    return literal(utf8_of(cp));
  }

  CharSet char_class() {
    ++i_;  // '['
    const bool negated = !at_end() && peek() == '^';
    if (negated) ++i_;
    CharSet set;
    bool first = true;
    while (true) {
      if (at_end()) fail("a '[' without its ']'");
      if (peek() == ']') {
        if (first) fail("an empty class");
        ++i_;
        break;
      }
      first = false;
      if (peek() == '\\' && i_ + 1 < p_.size()) {
        CharSet escaped;
        if (class_escape(p_[i_ + 1], escaped)) {
          i_ += 2;
          set.ascii.add_all(escaped.ascii);
          set.non_ascii = set.non_ascii || escaped.non_ascii;
          set.some_non_ascii = set.some_non_ascii || escaped.some_non_ascii;
          continue;
        }
      }
      const uint32_t lo = class_character();
      uint32_t hi = lo;
      if (i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        hi = class_character();
        if (hi < lo) fail("a class range out of order");
      }
      set.ascii.add_range(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi));
    }
    return negated ? complement(set) : set;
  }

  uint32_t class_character() {
    uint32_t cp;
    if (peek() == '\\') {
      ++i_;
      if (at_end()) fail("a class that ends with '\\'");
      if (peek() == 'b') {  // [\b] is backspace
        ++i_;
        return '\b';
      }
      cp = escaped_character();
    } else {
      cp = static_cast<uint8_t>(peek());
      ++i_;
    }
    if (cp >= 0x80) {
      --i_;
      fail("non-ASCII characters in a class are not supported");
    }
    return cp;
  }

  std::string_view p_;
  const Expr& any_;
  size_t i_ = 0;
  int depth_ = 0;  // groups open
  bool to_end_ = false;
};

}  // namespace

Expr json_string_matching(std::string_view pattern, const Expr& any_character) {
  return Parser(pattern, any_character).parse();
}

}  // namespace nanoserve::grammar
