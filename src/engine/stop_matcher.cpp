#include "engine/stop_matcher.h"

#include <algorithm>

namespace nanoserve::engine {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

StopMatcher::Result StopMatcher::push(std::string_view piece) {
  if (stopped_) return {{}, true, {}};
  held_ += piece;
  // held_ holds no whole stop string before this piece, so the earliest match in it is the
  // first one in the whole text.
  size_t first = std::string::npos;
  const std::string* matched = nullptr;
  for (const std::string& stop : stops_) {
    const size_t at = held_.find(stop);
    if (at < first) {
      first = at;
      matched = &stop;
    }
  }
  if (matched) {
    stopped_ = true;
    Result result{held_.substr(0, first), true, *matched};
    held_.clear();
    return result;
  }
  const size_t keep = possible_stop_start();
  Result result{held_.substr(0, held_.size() - keep), false, {}};
  held_.erase(0, held_.size() - keep);
  return result;
}

std::string StopMatcher::release() {
  std::string rest = std::move(held_);
  held_.clear();
  return rest;
}

size_t StopMatcher::possible_stop_start() const {
  size_t longest = 0;
  for (const std::string& stop : stops_) {
    // Only proper prefixes: a whole stop string would have matched in push().
    for (size_t n = std::min(stop.size() - 1, held_.size()); n > longest; --n) {
      if (std::string_view(held_).ends_with(std::string_view(stop).substr(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

}  // namespace nanoserve::engine
