#include "template/jinja_pystr.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

#include "template/jinja_limits.h"
#include "utf8/utf8.h"

namespace nanoserve::templates::jinja {
namespace {

// A code point and the byte offset where it starts.
struct PositionedCodePoint {
  size_t offset;
  char32_t code_point;
};

std::vector<PositionedCodePoint> positioned_code_points(std::string_view text) {
  std::vector<PositionedCodePoint> out;
  for (size_t pos = 0; pos < text.size();) {
    const utf8::Char c = utf8::decode(text, pos);
    out.push_back({pos, c.code_point});
    pos += c.length;
  }
  return out;
}

bool is_ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
char to_upper(char c) { return is_ascii_lower(c) ? static_cast<char>(c - 'a' + 'A') : c; }
char to_lower(char c) { return is_ascii_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

// Python's str.isprintable() is false for these (besides controls and whitespace other than
// the space): format characters (Cf) and private use (Co). Unassigned code points are not listed.
bool is_format_or_private(char32_t c) {
  return c == 0xAD || (c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F || c == 0x180E ||
         (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x2064) ||
         (c >= 0x2066 && c <= 0x206F) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) ||
         (c >= 0xE000 && c <= 0xF8FF) || c >= 0xF0000;
}

bool is_python_printable(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0)) return false;
  if (c != ' ' && is_python_space(c)) return false;
  return !is_format_or_private(c);
}

std::vector<std::string> split_on_whitespace(std::string_view text, int64_t max_splits, bool from_right) {
  const auto cps = positioned_code_points(text);
  auto offset = [&](size_t i) { return i < cps.size() ? cps[i].offset : text.size(); };
  auto space = [&](size_t i) { return is_python_space(cps[i].code_point); };
  std::vector<std::string> parts;
  int64_t splits = 0;
  if (!from_right) {
    for (size_t i = 0;;) {
      while (i < cps.size() && space(i)) ++i;
      if (i == cps.size()) break;
      if (max_splits >= 0 && splits == max_splits) {  // the rest, trailing whitespace included
        parts.emplace_back(text.substr(offset(i)));
        break;
      }
      size_t j = i;
      while (j < cps.size() && !space(j)) ++j;
      parts.emplace_back(text.substr(offset(i), offset(j) - offset(i)));
      ++splits;
      i = j;
    }
    return parts;
  }
  for (size_t j = cps.size();;) {
    while (j > 0 && space(j - 1)) --j;
    if (j == 0) break;
    if (max_splits >= 0 && splits == max_splits) {  // the rest, leading whitespace included
      parts.emplace_back(text.substr(0, offset(j)));
      break;
    }
    size_t i = j;
    while (i > 0 && !space(i - 1)) --i;
    parts.emplace_back(text.substr(offset(i), offset(j) - offset(i)));
    ++splits;
    j = i;
  }
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<std::string> split_on_separator(std::string_view text, std::string_view separator, int64_t max_splits,
                                            bool from_right) {
  std::vector<std::string> parts;
  int64_t splits = 0;
  if (!from_right) {
    size_t start = 0;
    for (size_t found; (max_splits < 0 || splits < max_splits) &&
                       (found = text.find(separator, start)) != std::string_view::npos;
         ++splits) {
      parts.emplace_back(text.substr(start, found - start));
      start = found + separator.size();
    }
    parts.emplace_back(text.substr(start));
    return parts;
  }
  size_t end = text.size();
  for (; max_splits < 0 || splits < max_splits; ++splits) {
    if (end < separator.size()) break;
    const size_t found = text.rfind(separator, end - separator.size());
    if (found == std::string_view::npos) break;
    parts.emplace_back(text.substr(found + separator.size(), end - found - separator.size()));
    end = found;
  }
  parts.emplace_back(text.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

void append_hex_escape(std::string& out, char prefix, char32_t value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\%c%0*x", prefix, digits, static_cast<unsigned>(value));
  out += buf;
}

}  // namespace

bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::u32string to_code_points(std::string_view text) {
  std::u32string out;
  for (size_t pos = 0; pos < text.size();) {
    const utf8::Char c = utf8::decode(text, pos);
    out.push_back(c.code_point);
    pos += c.length;
  }
  return out;
}

std::string from_code_points(std::u32string_view code_points) {
  std::string out;
  for (char32_t c : code_points) utf8::append(out, c);
  return out;
}

size_t code_point_count(std::string_view text) {
  size_t count = 0;
  for (size_t pos = 0; pos < text.size(); ++count) pos += utf8::decode(text, pos).length;
  return count;
}

std::string python_strip(std::string_view text, const std::optional<std::string>& chars, StripSide side) {
  const std::u32string strip_set = chars ? to_code_points(*chars) : std::u32string();
  auto strippable = [&](char32_t c) {
    return chars ? strip_set.find(c) != std::u32string::npos : is_python_space(c);
  };
  size_t first_kept = std::string_view::npos, kept_end = 0;
  for (size_t pos = 0; pos < text.size();) {
    const utf8::Char c = utf8::decode(text, pos);
    if (!strippable(c.code_point)) {
      if (first_kept == std::string_view::npos) first_kept = pos;
      kept_end = pos + c.length;
    }
    pos += c.length;
  }
  if (first_kept == std::string_view::npos) return {};  // nothing but strippable code points
  const size_t begin = side == StripSide::kRight ? 0 : first_kept;
  const size_t end = side == StripSide::kLeft ? text.size() : kept_end;
  return std::string(text.substr(begin, end - begin));
}

std::vector<std::string> python_split(std::string_view text, const std::optional<std::string>& separator,
                                      int64_t max_splits, bool from_right) {
  if (!separator) return split_on_whitespace(text, max_splits, from_right);
  if (separator->empty()) throw TemplateError("empty separator");
  return split_on_separator(text, *separator, max_splits, from_right);
}

std::string python_replace(std::string_view text, std::string_view old, std::string_view replacement, int64_t count) {
  std::string out;
  int64_t done = 0;
  auto may_replace = [&] { return count < 0 || done < count; };
  if (old.empty()) {  // Python inserts the replacement before every code point and at the end
    for (size_t pos = 0; pos < text.size();) {
      if (may_replace()) append_bounded(out, replacement), ++done;
      const size_t length = utf8::decode(text, pos).length;
      append_bounded(out, text.substr(pos, length));
      pos += length;
    }
    if (may_replace()) append_bounded(out, replacement);
    return out;
  }
  size_t start = 0;
  for (size_t found; may_replace() && (found = text.find(old, start)) != std::string_view::npos; ++done) {
    append_bounded(out, text.substr(start, found - start));
    append_bounded(out, replacement);
    start = found + old.size();
  }
  append_bounded(out, text.substr(start));
  return out;
}

std::string ascii_upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = to_upper(c);
  return out;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = to_lower(c);
  return out;
}

std::string python_title(std::string_view text) {
  std::string out(text);
  bool previous_is_cased = false;
  for (char& c : out) {
    const bool ascii_letter = is_ascii_upper(c) || is_ascii_lower(c);
    if (ascii_letter) c = previous_is_cased ? to_lower(c) : to_upper(c);
    // Bytes of non-ASCII characters count as cased letters that keep their case.
    previous_is_cased = ascii_letter || static_cast<unsigned char>(c) >= 0x80;
  }
  return out;
}

std::string python_capitalize(std::string_view text) {
  std::string out = ascii_lower(text);
  if (!out.empty()) out[0] = to_upper(out[0]);
  return out;
}

std::vector<size_t> slice_indices(size_t length, std::optional<int64_t> start, std::optional<int64_t> stop,
                                  std::optional<int64_t> step) {
  const int64_t stride = step.value_or(1);
  if (stride == 0) throw TemplateError("slice step cannot be zero");
  const int64_t n = static_cast<int64_t>(length);
  // Python's slice.indices(): clamp into [lower, upper]; negative bounds count from the end.
  const int64_t lower = stride < 0 ? -1 : 0, upper = stride < 0 ? n - 1 : n;
  auto clamp = [&](std::optional<int64_t> bound, int64_t fallback) {
    if (!bound) return fallback;
    int64_t v = *bound;
    if (v < 0) return std::max(v < -n ? lower : v + n, lower);
    return std::min(v, upper);
  };
  const int64_t first = clamp(start, stride < 0 ? upper : lower);
  const int64_t end = clamp(stop, stride < 0 ? lower : upper);
  std::vector<size_t> out;
  const uint64_t abs_stride = stride < 0 ? uint64_t{0} - static_cast<uint64_t>(stride) : static_cast<uint64_t>(stride);
  const bool forward = stride > 0;
  if (forward ? first >= end : first <= end) return out;
  const uint64_t span = forward ? static_cast<uint64_t>(end - first) : static_cast<uint64_t>(first - end);
  const uint64_t count = (span - 1) / abs_stride + 1;
  out.reserve(count);
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t distance = k * abs_stride;
    out.push_back(static_cast<size_t>(forward ? static_cast<uint64_t>(first) + distance
                                              : static_cast<uint64_t>(first) - distance));
  }
  return out;
}

std::string python_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t pos = 0; pos < text.size();) {
    const utf8::Char c = utf8::decode(text, pos);
    const char32_t cp = c.code_point;
    if (cp == '\\' || cp == static_cast<char32_t>(quote)) {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (is_python_printable(cp)) {
      out.append(text.substr(pos, c.length));
    } else if (cp <= 0xFF) {
      append_hex_escape(out, 'x', cp, 2);
    } else if (cp <= 0xFFFF) {
      append_hex_escape(out, 'u', cp, 4);
    } else {
      append_hex_escape(out, 'U', cp, 8);
    }
    pos += c.length;
  }
  out += quote;
  return out;
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // Shortest round-trip digits from to_chars, laid out by Python's rule: positional
  // notation when the decimal point falls within -4 < point <= 16, else an exponent.
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, std::fabs(value), std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(result.ptr - buf));  // "d.ddde+XX"
  const size_t e = sci.find('e');
  std::string digits(sci.substr(0, e));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  int exponent = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  const int point = exponent + 1;  // digits d1 d2 ... mean 0.d1d2... × 10^point
  const int n_digits = static_cast<int>(digits.size());
  std::string out = std::signbit(value) ? "-" : "";
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out += "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (point >= n_digits) {
      out += digits + std::string(static_cast<size_t>(point - n_digits), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (n_digits > 1) out.append(".").append(digits, 1);
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exp_buf;
}

void append_bounded(std::string& out, std::string_view piece) {
  if (out.size() + piece.size() > kMaxStringBytes)
    throw TemplateError("a string grew past the limit of " + std::to_string(kMaxStringBytes >> 20) + " MiB");
  out.append(piece);
}

}  // namespace nanoserve::templates::jinja
