#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace nanoserve::engine {
namespace {

bool by_logit_desc(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// Turns the candidates' logits / temperature into probabilities summing to 1.
void softmax(std::vector<std::pair<float, int32_t>>& c, float temperature) {
  float max = -INFINITY;
  for (const auto& [logit, id] : c) max = std::max(max, logit);
  double sum = 0.0;
  for (auto& [logit, id] : c) sum += (logit = std::exp((logit - max) / temperature));
  for (auto& [p, id] : c) p = static_cast<float>(p / sum);
}

}  // namespace

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

void Sampler::remember(int32_t token) {
  history_.push_back(token);
  while (static_cast<int>(history_.size()) > std::max(0, params_.penalty_last_n)) history_.pop_front();
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (params_.temperature <= 0.0f && !penalties_apply()) {
    // Greedy with nothing to adjust: the first largest logit (what the candidate path picks),
    // without building 150k candidates per token.
    int32_t token = 0;
    float best = -INFINITY;
    for (size_t i = 0; i < logits.size(); ++i)
      if (logits[i] > best) best = logits[i], token = static_cast<int32_t>(i);
    remember(token);
    return token;
  }
  candidates_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) candidates_[i] = {logits[i], static_cast<int32_t>(i)};
  apply_penalties();
  sorted_ = false;
  int32_t token;
  if (params_.temperature <= 0.0f) {
    token = std::min_element(candidates_.begin(), candidates_.end(), by_logit_desc)->second;
  } else {
    keep_top_k();
    keep_top_p_and_min_p();
    token = draw();
  }
  remember(token);
  return token;
}

bool Sampler::penalties_apply() const {
  const bool neutral = params_.repeat_penalty == 1.0f && params_.presence_penalty == 0.0f &&
                       params_.frequency_penalty == 0.0f;
  return !neutral && !history_.empty();
}

void Sampler::apply_penalties() {
  if (!penalties_apply()) return;
  std::unordered_map<int32_t, int> count;
  for (int32_t t : history_) ++count[t];
  for (const auto& [t, n] : count) {
    if (t < 0 || t >= static_cast<int32_t>(candidates_.size())) continue;
    float& logit = candidates_[t].first;
    logit = logit > 0 ? logit / params_.repeat_penalty : logit * params_.repeat_penalty;
    logit -= static_cast<float>(n) * params_.frequency_penalty + params_.presence_penalty;
  }
}

void Sampler::keep_top_k() {
  if (params_.top_k <= 0 || params_.top_k >= static_cast<int>(candidates_.size())) return;
  std::partial_sort(candidates_.begin(), candidates_.begin() + params_.top_k, candidates_.end(), by_logit_desc);
  candidates_.resize(params_.top_k);
  sorted_ = true;
}

// Both look at the distribution at temperature 1, as llama.cpp's do.
void Sampler::keep_top_p_and_min_p() {
  if (params_.top_p >= 1.0f && params_.min_p <= 0.0f) return;
  if (!sorted_) std::sort(candidates_.begin(), candidates_.end(), by_logit_desc);
  sorted_ = true;
  // p_i / p_0 = exp(l_i - l_0); the sum of those normalizes.
  const float top = candidates_.front().first;
  double sum = 0.0;
  for (const auto& [logit, id] : candidates_) sum += std::exp(logit - top);
  size_t keep = 1;
  double cumulative = 1.0 / sum;
  while (keep < candidates_.size()) {
    const double ratio = std::exp(candidates_[keep].first - top);
    if (cumulative >= params_.top_p || ratio < params_.min_p) break;
    cumulative += ratio / sum;
    ++keep;
  }
  candidates_.resize(keep);
}

int32_t Sampler::draw() {
  softmax(candidates_, params_.temperature);
  // 53 random bits -> [0, 1): the same on every standard library (distributions are not).
  const double u = static_cast<double>(rng_() >> 11) * 0x1p-53;
  double cumulative = 0.0;
  for (const auto& [p, id] : candidates_) {
    cumulative += p;
    if (u < cumulative) return id;
  }
  return candidates_.back().second;
}

}  // namespace nanoserve::engine
