// Small helpers for the readers that find tags in streamed output (reasoning_split.h,
// tool_calls.h).
#pragma once

#include <algorithm>
#include <string_view>

namespace nanoserve::server {

// How many whitespace bytes (space, tab, CR, LF) `text` starts with.
inline size_t leading_spaces(std::string_view text) {
  size_t n = 0;
  while (n < text.size() && (text[n] == ' ' || text[n] == '\n' || text[n] == '\r' || text[n] == '\t')) ++n;
  return n;
}

// The length of the longest end of `text` that begins `tag`: a tag the next piece may finish.
inline size_t partial_tag_at_end(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n)
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

}  // namespace nanoserve::server
