#include "template/jinja_lexer.h"

#include <array>
#include <charconv>

#include "template/jinja_limits.h"
#include "template/jinja_pystr.h"
#include "utf8/utf8.h"

namespace nanoserve::templates::jinja {
namespace {

enum class TagKind { kExpression, kStatement, kComment };

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Longest first, so "//" wins over "/".
constexpr std::array<std::string_view, 25> kOperators = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*",
                                                       "/",  "%",  "~",  "<",  ">",  "=",  "(", ")", "[",
                                                       "]",  "{",  "}",  ",",  ".",  ":",  "|"};

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      std::string text(src_.substr(pos_, tag - pos_));
      if (tag == src_.size()) {
        emit_text(std::move(text));
        break;
      }
      const TagKind kind = src_[tag + 1] == '{' ? TagKind::kExpression
                           : src_[tag + 1] == '%' ? TagKind::kStatement
                                                  : TagKind::kComment;
      const char modifier = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      if (modifier == '-') {
        text = python_strip(text, std::nullopt, StripSide::kRight);
      } else if (kind != TagKind::kExpression && modifier != '+') {
        lstrip_block(text, pos_ == 0 || src_[pos_ - 1] == '\n');
      }
      emit_text(std::move(text));
      lex_tag(tag, kind, modifier == '-' || modifier == '+' ? tag + 3 : tag + 2);
    }
    tokens_.push_back({TokenKind::kEnd, "", src_.size()});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(size_t offset, const std::string& message) const {
    throw TemplateError(location_prefix(src_, offset) + message);
  }

  size_t find_tag(size_t from) const {
    for (size_t p = src_.find('{', from); p != std::string_view::npos; p = src_.find('{', p + 1))
      if (p + 1 < src_.size() && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#')) return p;
    return src_.size();
  }

  void emit_text(std::string text) {
    if (!text.empty()) tokens_.push_back({TokenKind::kText, std::move(text), pos_});
  }

  // lstrip_blocks: drop the spaces and tabs that are all that precedes the tag on its line.
  static void lstrip_block(std::string& text, bool text_starts_a_line) {
    const size_t newline = text.rfind('\n');
    if (newline == std::string::npos && !text_starts_a_line) return;
    const size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    for (size_t p = line_start; p < text.size();) {
      const utf8::Char c = utf8::decode(text, p);
      if (!is_python_space(c.code_point)) return;
      p += c.length;
    }
    text.resize(line_start);
  }

  size_t skip_whitespace(size_t p) const {
    while (p < src_.size()) {
      const utf8::Char c = utf8::decode(src_, p);
      if (!is_python_space(c.code_point)) break;
      p += c.length;
    }
    return p;
  }

  // Moves past a tag's closing delimiter that ends at `end`, applying -, + and trim_blocks.
  void close_tag(size_t end, char modifier, bool is_block) {
    if (modifier == '-') {
      pos_ = skip_whitespace(end);
    } else {
      pos_ = end;
      if (is_block && modifier != '+' && pos_ < src_.size() && src_[pos_] == '\n') ++pos_;
    }
  }

  void lex_tag(size_t tag, TagKind kind, size_t p) {
    if (kind == TagKind::kComment) {
      const size_t end = src_.find("#}", p);
      if (end == std::string_view::npos) fail(tag, "unclosed comment, expected '#}'");
      const char modifier = end > p ? src_[end - 1] : '\0';
      close_tag(end + 2, modifier, true);
      return;
    }
    const bool expression = kind == TagKind::kExpression;
    tokens_.push_back({expression ? TokenKind::kExpressionOpen : TokenKind::kStatementOpen, "", tag});
    const std::string_view close = expression ? "}}" : "%}";
    std::vector<size_t> brackets;  // open ( [ {: inside them a closing delimiter is an operator, as in Jinja
    for (;;) {
      while (p < src_.size() && (src_[p] == ' ' || src_[p] == '\t' || src_[p] == '\n' || src_[p] == '\r')) ++p;
      if (p >= src_.size() && !brackets.empty())
        fail(brackets.back(), "unclosed '" + std::string(1, src_[brackets.back()]) + "'");
      if (p >= src_.size()) fail(tag, std::string("unclosed tag, expected '") + std::string(close) + "'");
      if (brackets.empty()) {
        const char modifier = src_[p];
        const bool has_modifier = modifier == '-' || (modifier == '+' && !expression);
        if (src_.substr(p + (has_modifier ? 1 : 0), 2) == close) {
          tokens_.push_back({expression ? TokenKind::kExpressionClose : TokenKind::kStatementClose, "", p});
          close_tag(p + (has_modifier ? 3 : 2), has_modifier ? modifier : '\0', !expression);
          return;
        }
      }
      p = lex_token(p, brackets);
    }
  }

  size_t lex_token(size_t p, std::vector<size_t>& brackets) {
    const char c = src_[p];
    if (is_name_start(c)) {
      size_t end = p;
      while (end < src_.size() && is_name_char(src_[end])) ++end;
      tokens_.push_back({TokenKind::kName, std::string(src_.substr(p, end - p)), p});
      return end;
    }
    if (is_digit(c)) return lex_number(p);
    if (c == '\'' || c == '"') return lex_string(p);
    for (std::string_view op : kOperators) {
      if (src_.substr(p, op.size()) != op) continue;
      if (op == "(" || op == "[" || op == "{") brackets.push_back(p);
      if (op == ")" || op == "]" || op == "}") {
        if (brackets.empty()) fail(p, "unexpected '" + std::string(op) + "'");
        const char open = src_[brackets.back()];
        const char expected_close = open == '(' ? ')' : open == '[' ? ']' : '}';
        if (op[0] != expected_close)
          fail(p, "unexpected '" + std::string(op) + "', expected '" + std::string(1, expected_close) + "'");
        brackets.pop_back();
      }
      tokens_.push_back({TokenKind::kOperator, std::string(op), p});
      return p + op.size();
    }
    const utf8::Char ch = utf8::decode(src_, p);
    fail(p, "unexpected character '" + std::string(src_.substr(p, ch.length)) + "'");
  }

  // Digits with optional '_' between them; a float has a fraction and/or an exponent.
  size_t lex_number(size_t start) {
    std::string digits;
    size_t p = start;
    auto take_digits = [&] {
      for (; p < src_.size(); ++p) {
        const bool separator = src_[p] == '_' && p + 1 < src_.size() && is_digit(src_[p + 1]);
        if (!is_digit(src_[p]) && !separator) break;
        if (!separator) digits += src_[p];
      }
    };
    take_digits();
    bool is_float = false;
    if (p + 1 < src_.size() && src_[p] == '.' && is_digit(src_[p + 1])) {
      is_float = true;
      digits += src_[p++];
      take_digits();
    }
    if (p < src_.size() && (src_[p] == 'e' || src_[p] == 'E')) {
      size_t q = p + 1;
      if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
      if (q < src_.size() && is_digit(src_[q])) {
        is_float = true;
        digits += 'e';
        digits.append(src_.substr(p + 1, q - p - 1));
        p = q;
        take_digits();
      }
    }
    Token token{is_float ? TokenKind::kFloat : TokenKind::kInteger, std::string(src_.substr(start, p - start)), start};
    const char* first = digits.data();
    const char* last = digits.data() + digits.size();
    const auto result = is_float ? std::from_chars(first, last, token.number) : std::from_chars(first, last, token.integer);
    if (result.ec != std::errc() || result.ptr != last) fail(start, "number out of range: " + token.text);
    tokens_.push_back(std::move(token));
    return p;
  }

  size_t lex_string(size_t start) {
    const char quote = src_[start];
    std::string value;
    size_t p = start + 1;
    for (;;) {
      if (p >= src_.size()) fail(start, "unclosed string literal");
      const char c = src_[p];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++p;
        continue;
      }
      if (p + 1 >= src_.size()) fail(start, "unclosed string literal");
      p = decode_escape(p, value);
    }
    tokens_.push_back({TokenKind::kString, std::move(value), start});
    return p + 1;
  }

  // Python's escapes (Jinja decodes literals with "unicode-escape"); `p` is at the backslash.
  size_t decode_escape(size_t p, std::string& value) {
    const char e = src_[p + 1];
    switch (e) {
      case '\n': return p + 2;  // a line continuation
      case '\\': value += '\\'; return p + 2;
      case '\'': value += '\''; return p + 2;
      case '"': value += '"'; return p + 2;
      case 'a': value += '\a'; return p + 2;
      case 'b': value += '\b'; return p + 2;
      case 'f': value += '\f'; return p + 2;
      case 'n': value += '\n'; return p + 2;
      case 'r': value += '\r'; return p + 2;
      case 't': value += '\t'; return p + 2;
      case 'v': value += '\v'; return p + 2;
      case 'x': return decode_hex_escape(p, 2, value);
      case 'u': return decode_hex_escape(p, 4, value);
      case 'U': return decode_hex_escape(p, 8, value);
      default: break;
    }
    if (e >= '0' && e <= '7') {
      size_t q = p + 1;
      char32_t code = 0;
      for (int i = 0; i < 3 && q < src_.size() && src_[q] >= '0' && src_[q] <= '7'; ++i) code = code * 8 + (src_[q++] - '0');
      utf8::append(value, code);
      return q;
    }
    value += '\\';  // Python keeps an unknown escape as written
    return p + 1;
  }

  size_t decode_hex_escape(size_t p, int digits, std::string& value) {
    const size_t first = p + 2;
    if (first + digits > src_.size()) fail(p, "truncated \\" + std::string(1, src_[p + 1]) + " escape");
    char32_t code = 0;
    for (int i = 0; i < digits; ++i) {
      const char h = src_[first + i];
      if (!is_hex_digit(h)) fail(p, "truncated \\" + std::string(1, src_[p + 1]) + " escape");
      code = code * 16 + static_cast<char32_t>(is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) fail(p, "escape is not a Unicode scalar value");
    utf8::append(value, code);
    return first + digits;
  }

  std::string_view src_;
  size_t pos_ = 0;
  std::vector<Token> tokens_;
};

}  // namespace

std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] != '\r') {
      out += source[i];
      continue;
    }
    out += '\n';
    if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

std::string location_prefix(std::string_view source, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(source[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

}  // namespace nanoserve::templates::jinja
