// Cuts streamed text at the first stop string. A stop string may arrive split across
// pieces, so text that could still be the start of one is held back until a later piece
// shows it is not (then it is released unchanged); a stop string and everything after it
// is never released.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nanoserve::engine {

class StopMatcher {
 public:
  // Empty stop strings are ignored (they would match before any text).
  explicit StopMatcher(std::vector<std::string> stops);

  struct Result {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string matched: `text` is the last text there will be
    std::string stop;      // stopped: the stop string that matched
  };
  // Adds the next piece of text. After a stop, further pieces release nothing (and say stopped).
  Result push(std::string_view piece);
  // At the end of the text: what is still held back (it turned out not to be a stop string).
  std::string release();

 private:
  // The length of the longest end of held_ that is the start of some stop string.
  size_t possible_stop_start() const;

  std::vector<std::string> stops_;
  std::string held_;  // received, not yet released
  bool stopped_ = false;
};

}  // namespace nanoserve::engine
