// Python's str semantics on UTF-8 text, as chat templates call them (str.strip, split,
// replace, slicing by code point, repr, float repr). Templates were written against Python,
// so these follow CPython, not C or JavaScript: strip() strips Unicode whitespace,
// strip("\n") only newlines, "abc"[::-1] reverses code points, repr(0.1) is "0.1".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nanoserve::templates::jinja {

// Python's str.isspace() for one code point.
bool is_python_space(char32_t code_point);

std::u32string to_code_points(std::string_view text);
std::string from_code_points(std::u32string_view code_points);
size_t code_point_count(std::string_view text);

// str.strip/lstrip/rstrip: without `chars`, Unicode whitespace; with it, only those code points.
enum class StripSide { kBoth, kLeft, kRight };
std::string python_strip(std::string_view text, const std::optional<std::string>& chars, StripSide side);

// str.split / str.rsplit. Without `separator`: runs of whitespace, no empty parts.
// max_splits < 0 means no limit. Throws TemplateError on an empty separator.
std::vector<std::string> python_split(std::string_view text, const std::optional<std::string>& separator,
                                      int64_t max_splits, bool from_right);

// str.replace; count < 0 means all. An empty `old` inserts `replacement` between code points.
// Throws TemplateError when the result would exceed kMaxStringBytes.
std::string python_replace(std::string_view text, std::string_view old, std::string_view replacement, int64_t count);

// Case mapping of ASCII letters only (other code points are kept as they are).
std::string ascii_upper(std::string_view text);
std::string ascii_lower(std::string_view text);
std::string python_title(std::string_view text);       // first letter of each word upper, the rest lower
std::string python_capitalize(std::string_view text);  // first character upper, the rest lower

// The indices a Python slice [start:stop:step] picks from a sequence of `length` items.
// Throws TemplateError when step is 0.
std::vector<size_t> slice_indices(size_t length, std::optional<int64_t> start, std::optional<int64_t> stop,
                                  std::optional<int64_t> step);

// repr() of a str: quoted and escaped the way Python prints it inside a list or dict.
std::string python_repr(std::string_view text);
// repr() (= str()) of a float: shortest round-trip digits, "1.0", "1e+16", "inf", "nan".
std::string python_float_repr(double value);

// Appends `piece`, throwing TemplateError when `out` would exceed kMaxStringBytes.
void append_bounded(std::string& out, std::string_view piece);

}  // namespace nanoserve::templates::jinja
