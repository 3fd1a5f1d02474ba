// Picks the next token from a row of logits: greedy, or sampled with temperature after the
// usual filters, in llama.cpp's order: repetition penalties, top-k, top-p, min-p (on the
// untempered distribution), then temperature. Seeded: the same seed and logits give the same
// tokens on every machine.
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace nanoserve::engine {

struct SamplingParams {
  float temperature = 0.0f;        // <= 0: greedy (the lowest id wins a tie)
  int top_k = 0;                   // keep the k most likely tokens; 0 = all
  float top_p = 1.0f;              // keep the fewest tokens whose probability reaches p
  float min_p = 0.0f;              // drop tokens less likely than min_p × the most likely one
  float repeat_penalty = 1.0f;     // recent tokens: positive logits divided, negative multiplied
  float presence_penalty = 0.0f;   // subtracted once from each recent token's logit
  float frequency_penalty = 0.0f;  // subtracted per occurrence
  int penalty_last_n = 64;         // how many recent tokens the penalties look at
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  // The next token; it also joins the history the penalties see.
  int32_t sample(std::span<const float> logits);
  // Adds tokens the model was given (the prompt) to the penalty history.
  void remember(int32_t token);

 private:
  bool penalties_apply() const;  // a penalty is set and there is history to apply it to
  void apply_penalties();
  void keep_top_k();
  void keep_top_p_and_min_p();
  int32_t draw();

  SamplingParams params_;
  std::mt19937_64 rng_;
  std::deque<int32_t> history_;
  std::vector<std::pair<float, int32_t>> candidates_;  // (logit, then probability; token)
  bool sorted_ = false;                                // candidates_ best first
};

}  // namespace nanoserve::engine
