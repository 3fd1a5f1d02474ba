// Small helpers for the readers that find tags in streamed output (reasoning_split.h,
// tool_calls.h).
#pragma once

#include <algorithm>
#include <string_view>

namespace nanoserve::server {

inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The length of the longest end of `text` that begins `tag`: a tag the next piece may finish.
inline size_t partial_tag_at_end(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n)
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

}  // namespace nanoserve::server
