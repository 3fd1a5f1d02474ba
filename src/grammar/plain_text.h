// "Plain text": the characters a JSON string holds unescaped — printable ASCII but '"' and
// '\\' (0x20-0x7F), and every well-formed multi-byte UTF-8 character. Most tokens of a
// vocabulary are plain text, and inside a JSON string a grammar usually treats every plain
// character alike (any one, or any one up to maxLength). The matcher uses this to settle most
// of a mask without walking the trie: if from a state every plain character leads to one
// same state (Automaton::plain_next), a token of k plain characters is allowed exactly when
// the chain of k such steps stays alive.
#pragma once

#include <cstdint>
#include <string_view>

namespace nanoserve::grammar {

inline bool is_plain_ascii(uint8_t b) { return b >= 0x20 && b <= 0x7F && b != '"' && b != '\\'; }

// The multi-byte UTF-8 forms (RFC 3629): a lead byte range, the range of the byte after it,
// and how many bytes (all 0x80-0xBF) follow that one.
struct Utf8Form {
  uint8_t lead_lo, lead_hi, second_lo, second_hi;
  int rest;
};
inline constexpr Utf8Form kUtf8Forms[] = {
    {0xC2, 0xDF, 0x80, 0xBF, 0}, {0xE0, 0xE0, 0xA0, 0xBF, 1}, {0xE1, 0xEC, 0x80, 0xBF, 1},
    {0xED, 0xED, 0x80, 0x9F, 1}, {0xEE, 0xEF, 0x80, 0xBF, 1}, {0xF0, 0xF0, 0x90, 0xBF, 2},
    {0xF1, 0xF3, 0x80, 0xBF, 2}, {0xF4, 0xF4, 0x80, 0x8F, 2},
};

// The characters of `bytes` when it is plain text throughout (whole characters only), else 0.
inline int plain_characters(std::string_view bytes) {
  int count = 0;
  for (size_t i = 0; i < bytes.size(); ++count) {
    const auto lead = static_cast<uint8_t>(bytes[i]);
    if (is_plain_ascii(lead)) {
      ++i;
      continue;
    }
    const Utf8Form* form = nullptr;
    for (const Utf8Form& f : kUtf8Forms)
      if (lead >= f.lead_lo && lead <= f.lead_hi) form = &f;
    if (!form || i + 2 + form->rest > bytes.size()) return 0;
    const auto second = static_cast<uint8_t>(bytes[i + 1]);
    if (second < form->second_lo || second > form->second_hi) return 0;
    for (int k = 0; k < form->rest; ++k) {
      const auto c = static_cast<uint8_t>(bytes[i + 2 + k]);
      if (c < 0x80 || c > 0xBF) return 0;
    }
    i += 2 + form->rest;
  }
  return count;
}

}  // namespace nanoserve::grammar
