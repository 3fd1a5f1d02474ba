#include "grammar/json_text.h"

#include <algorithm>
#include <string>

namespace nanoserve::grammar {
namespace {

const ByteSet kDigit = ByteSet::range('0', '9');
const ByteSet kContinuation = ByteSet::range(0x80, 0xBF);

Expr digits(int min, int max) { return repeat(bytes(kDigit), min, max); }

int64_t largest_with_digits(int n) {
  int64_t v = 0;
  for (int i = 0; i < n; ++i) v = v * 10 + 9;
  return v;
}

// The numbers from x to y, both written with the same number of digits (leading zeros are part
// of the text: this is for the digits after a number's first).
Expr same_length_range(const std::string& x, const std::string& y) {
  const uint8_t x0 = static_cast<uint8_t>(x[0]), y0 = static_cast<uint8_t>(y[0]);
  if (x.size() == 1) return bytes(ByteSet::range(x0, y0));
  const std::string x_rest = x.substr(1), y_rest = y.substr(1);
  const int rest = static_cast<int>(x_rest.size());
  const bool x_rest_lowest = x_rest.find_first_not_of('0') == std::string::npos;
  const bool y_rest_highest = y_rest.find_first_not_of('9') == std::string::npos;
  if (x_rest_lowest && y_rest_highest) return seq({bytes(ByteSet::range(x0, y0)), digits(rest, rest)});
  if (x0 == y0) return seq({bytes(ByteSet::of(x0)), same_length_range(x_rest, y_rest)});
  std::vector<Expr> parts;
  parts.push_back(seq({bytes(ByteSet::of(x0)), same_length_range(x_rest, std::string(x_rest.size(), '9'))}));
  if (y0 - x0 > 1) parts.push_back(seq({bytes(ByteSet::range(x0 + 1, y0 - 1)), digits(rest, rest)}));
  parts.push_back(seq({bytes(ByteSet::of(y0)), same_length_range(std::string(y_rest.size(), '0'), y_rest)}));
  return alt(std::move(parts));
}

// The numbers from a to b (0 <= a <= b), without leading zeros.
Expr non_negative_range(int64_t a, int64_t b) {
  std::vector<Expr> by_length;
  const int from = static_cast<int>(std::to_string(a).size()), to = static_cast<int>(std::to_string(b).size());
  for (int n = from; n <= to; ++n) {
    const int64_t lowest = n == 1 ? 0 : largest_with_digits(n - 1) + 1;
    by_length.push_back(
        same_length_range(std::to_string(std::max(a, lowest)), std::to_string(std::min(b, largest_with_digits(n)))));
  }
  return alt(std::move(by_length));
}

}  // namespace

Expr json_whitespace() {
  ByteSet indent = ByteSet::of(' ');
  indent.add('\t');
  return optional(alt({literal(" "), seq({literal("\n"), repeat(bytes(indent), 0, 20)})}));
}

Expr utf8_characters(const ByteSet& ascii) {
  const Expr c = bytes(kContinuation);
  return alt({
      bytes(ascii),
      seq({bytes(ByteSet::range(0xC2, 0xDF)), c}),
      seq({bytes(ByteSet::of(0xE0)), bytes(ByteSet::range(0xA0, 0xBF)), c}),
      seq({bytes(ByteSet::range(0xE1, 0xEC)), c, c}),
      seq({bytes(ByteSet::of(0xED)), bytes(ByteSet::range(0x80, 0x9F)), c}),  // no surrogates
      seq({bytes(ByteSet::range(0xEE, 0xEF)), c, c}),
      seq({bytes(ByteSet::of(0xF0)), bytes(ByteSet::range(0x90, 0xBF)), c, c}),
      seq({bytes(ByteSet::range(0xF1, 0xF3)), c, c, c}),
      seq({bytes(ByteSet::of(0xF4)), bytes(ByteSet::range(0x80, 0x8F)), c, c}),
  });
}

Expr json_escape() {
  ByteSet simple;
  for (char c : std::string("\"\\/bfnrt")) simple.add(static_cast<uint8_t>(c));
  ByteSet hex = ByteSet::range('0', '9');
  hex.add_range('a', 'f');
  hex.add_range('A', 'F');
  // \uXXXX but no surrogate (D800-DFFF): one escape is one character, as maxLength counts them.
  ByteSet below_d = ByteSet::range('0', '9');
  below_d.add_range('a', 'c');
  below_d.add_range('A', 'C');
  ByteSet d = ByteSet::of('d');
  d.add('D');
  ByteSet e_f = ByteSet::range('e', 'f');
  e_f.add_range('E', 'F');
  const Expr three_hex = repeat(bytes(hex), 3, 3);
  const Expr code = alt({seq({bytes(below_d), three_hex}), seq({bytes(d), bytes(ByteSet::range('0', '7')),
                         repeat(bytes(hex), 2, 2)}), seq({bytes(e_f), three_hex})});
  return seq({literal("\\"), alt({bytes(simple), seq({literal("u"), code})})});
}

Expr json_string_character() {
  ByteSet plain = ByteSet::range(0x20, 0x7F);
  plain.remove('"');
  plain.remove('\\');
  Expr any = utf8_characters(plain);
  any.children.push_back(json_escape());
  return any;
}

Expr json_number() {
  const Expr integer_part = alt({literal("0"), seq({bytes(ByteSet::range('1', '9')), digits(0, kMaxIntegerDigits - 1)})});
  ByteSet e = ByteSet::of('e');
  e.add('E');
  ByteSet sign = ByteSet::of('+');
  sign.add('-');
  return seq({optional(literal("-")), integer_part, optional(seq({literal("."), digits(1, kMaxFractionDigits)})),
              optional(seq({bytes(e), optional(bytes(sign)), digits(1, 2)}))});
}

Expr json_integer(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  const int64_t largest = largest_with_digits(kMaxIntegerDigits);
  const int64_t a = std::max(lo.value_or(-largest), -largest), b = std::min(hi.value_or(largest), largest);
  std::vector<Expr> parts;
  if (b >= 0) parts.push_back(non_negative_range(std::max<int64_t>(a, 0), b));
  if (a < 0) parts.push_back(seq({literal("-"), non_negative_range(std::max<int64_t>(1, -b), -a)}));
  return alt(std::move(parts));
}

AnyJsonRules add_any_json_rules(GrammarBuilder& builder) {
  AnyJsonRules r;
  r.value = builder.new_rule();
  const uint32_t character = builder.add_rule(json_string_character());
  r.string = builder.add_rule(seq({literal("\""), star(rule_ref(character)), literal("\"")}));
  const Expr member = seq({rule_ref(r.string), json_whitespace(), literal(":"), json_whitespace(), rule_ref(r.value),
                           json_whitespace()});
  r.object = builder.add_rule(seq({literal("{"), json_whitespace(),
                                   optional(seq({member, star(seq({literal(","), json_whitespace(), member}))})),
                                   literal("}")}));
  const Expr item = seq({rule_ref(r.value), json_whitespace()});
  const Expr array = seq({literal("["), json_whitespace(),
                          optional(seq({item, star(seq({literal(","), json_whitespace(), item}))})), literal("]")});
  builder.define(r.value, alt({rule_ref(r.object), array, rule_ref(r.string), json_number(), literal("true"),
                               literal("false"), literal("null")}));
  return r;
}

}  // namespace nanoserve::grammar
