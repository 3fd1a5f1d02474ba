#include "engine/prompt_lookup.h"

#include <algorithm>

namespace nanoserve::engine {

PromptLookup::Match PromptLookup::find(std::span<const int32_t> tokens, int64_t max) {
  const auto n_tokens = static_cast<int64_t>(tokens.size());
  if (max <= 0) return {};
  for (int64_t n = std::min(kMaxNgram, n_tokens - 1); n >= kMinNgram; --n) {
    const std::span<const int32_t> suffix = tokens.last(static_cast<size_t>(n));
    // The most recent earlier occurrence with `max` tokens after it, else the one with the most
    // (an occurrence just before the end, in a loop, has only a few tokens after it). It
    // starts at `at` and ends before the suffix itself does (it may overlap it).
    Match best;
    for (int64_t at = n_tokens - n - 1; at >= 0 && best.length < max; --at) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + at)) continue;
      const int64_t start = at + n, length = std::min(max, n_tokens - start);
      if (length > best.length) best = {.start = static_cast<size_t>(start), .length = length};
    }
    if (best.length > 0) return best;
  }
  return {};
}

int64_t PromptLookup::available(std::span<const int32_t> tokens, int64_t max) const {
  return find(tokens, max).length;
}

std::vector<int32_t> PromptLookup::lookup(std::span<const int32_t> tokens, int64_t max) {
  const Match m = find(tokens, max);
  const auto first = tokens.begin() + static_cast<std::ptrdiff_t>(m.start);
  return {first, first + m.length};
}

PromptIntake PromptLookup::propose(std::span<const DraftAsk> asks) {
  for (const DraftAsk& ask : asks) *ask.out = lookup(ask.tokens, ask.max);
  return {};
}

}  // namespace nanoserve::engine
