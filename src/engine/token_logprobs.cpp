#include "engine/token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace nanoserve::engine {

TokenLogprobs token_logprobs(std::span<const float> logits, int32_t chosen, int32_t top,
                             const tokenizer::Tokenizer& tokenizer) {
  const auto n = static_cast<int32_t>(std::min(logits.size(), tokenizer.n_tokens()));
  const float max = *std::max_element(logits.begin(), logits.begin() + n);
  double sum = 0.0;
  for (int32_t t = 0; t < n; ++t) sum += std::exp(static_cast<double>(logits[t] - max));
  const double log_norm = static_cast<double>(max) + std::log(sum);
  auto entry = [&](int32_t token) {
    return TokenProbability{std::string(tokenizer.token_piece(token)),
                            static_cast<float>(static_cast<double>(logits[token]) - log_norm)};
  };

  TokenLogprobs out{.chosen = entry(chosen), .top = {}};
  top = std::clamp(top, 0, std::min(kMaxTopLogprobs, n));
  if (top == 0) return out;
  // The best `top` in one pass: a small list kept sorted, best first (ties: lower id first).
  std::vector<std::pair<float, int32_t>> best;
  const float never = -std::numeric_limits<float>::infinity();
  for (int32_t t = 0; t < n; ++t) {
    const float l = logits[t];
    if (l == never || (static_cast<int32_t>(best.size()) == top && l <= best.back().first)) continue;
    auto at = std::upper_bound(best.begin(), best.end(), l,
                               [](float v, const std::pair<float, int32_t>& e) { return v > e.first; });
    best.insert(at, {l, t});
    if (static_cast<int32_t>(best.size()) > top) best.pop_back();
  }
  for (const auto& [l, t] : best) out.top.push_back(entry(t));
  return out;
}

}  // namespace nanoserve::engine
