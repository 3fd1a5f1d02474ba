// Server-sent events, as a streaming client sees them: bytes arrive in arbitrary pieces,
// events end with a blank line, and an event's data is its "data:" lines joined by "\n".
// Comments (":") and other fields (event:, id:, retry:) are skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nanoserve::bench {

class SseParser {
 public:
  // Appends `bytes` and returns the data of every event they completed, in order.
  std::vector<std::string> feed(std::string_view bytes);
  // Bytes of an event not yet ended by a blank line.
  bool has_partial_event() const { return !buffer_.empty() || !data_.empty() || has_data_; }

 private:
  void take_line(std::string_view line, std::vector<std::string>& events);

  std::string buffer_;  // an unfinished line
  std::string data_;    // the current event's data so far
  bool has_data_ = false;
};

}  // namespace nanoserve::bench
