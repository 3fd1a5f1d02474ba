#include "engine/draft_policy.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nanoserve::engine {
namespace {

constexpr double kTimeWeight = 0.2;      // a new step time's weight in its row count's average
constexpr double kMemory = 0.8;          // an older verify outcome's weight, per newer one
constexpr int64_t kMaxPause = 256;       // steps

}  // namespace

StepTimes::StepTimes(int64_t max_rows) : mean_(static_cast<size_t>(std::max<int64_t>(1, max_rows)) + 1, 0.0) {}

void StepTimes::record(int64_t rows, double seconds) {
  if (rows < 1 || seconds <= 0) return;
  const auto i = static_cast<size_t>(std::min<int64_t>(rows, static_cast<int64_t>(mean_.size()) - 1));
  mean_[i] = mean_[i] == 0 ? seconds : mean_[i] + kTimeWeight * (seconds - mean_[i]);
}

double StepTimes::predict(int64_t rows) const {
  const auto last = std::min<int64_t>(rows, static_cast<int64_t>(mean_.size()) - 1);
  double t = 0;
  for (int64_t r = 1; r <= last; ++r) t = std::max(t, mean_[static_cast<size_t>(r)]);
  return t;
}

DraftPolicy::DraftPolicy(int n_slots, int64_t max_rows)
    : times_(max_rows), slots_(static_cast<size_t>(std::max(0, n_slots))) {}

void DraftPolicy::start(int slot) { slots_.at(static_cast<size_t>(slot)) = SlotState{}; }

double DraftPolicy::acceptance(int slot) const {
  const SlotState& s = slots_.at(static_cast<size_t>(slot));
  return s.trials > 0 ? s.accepted / s.trials : kPrior;
}

void DraftPolicy::record_verify(int slot, int64_t drafted, int64_t accepted) {
  if (drafted <= 0) return;
  SlotState& s = slots_.at(static_cast<size_t>(slot));
  // Tokens after the first wrong one were never judged: `accepted` rights and at most one wrong.
  const double judged = static_cast<double>(accepted) + (accepted < drafted ? 1.0 : 0.0);
  s.accepted = kMemory * s.accepted + static_cast<double>(accepted);
  s.trials = kMemory * s.trials + judged;
  if (accepted > 0) s.next_pause = 1;
}

std::vector<int64_t> DraftPolicy::allocate(int64_t base_rows, int64_t base_tokens, int64_t max_extra_rows,
                                           std::span<const Candidate> candidates) {
  std::vector<int64_t> drafts(candidates.size(), 0);
  std::vector<double> next_gain(candidates.size(), 0.0), accept(candidates.size(), 0.0);
  std::vector<bool> eligible(candidates.size(), false);
  for (size_t i = 0; i < candidates.size(); ++i) {
    SlotState& s = slots_.at(static_cast<size_t>(candidates[i].slot));
    if (candidates[i].available <= 0) continue;
    if (s.pause > 0) {
      --s.pause;
      if (s.pause == 0) s.accepted += kPrior, s.trials += 1;  // give drafting the benefit of the doubt again
      continue;
    }
    eligible[i] = true;
    accept[i] = acceptance(candidates[i].slot);
    next_gain[i] = accept[i];
  }
  double tokens = static_cast<double>(std::max<int64_t>(1, base_tokens));
  int64_t rows = std::max<int64_t>(1, base_rows);
  double time = times_.predict(rows);
  bool cost_stopped = false;  // the next draft was not worth its row (rather than no room or none left)
  for (int64_t extra = 0; extra < max_extra_rows; ++extra) {
    size_t best = candidates.size();
    for (size_t i = 0; i < candidates.size(); ++i)
      if (eligible[i] && drafts[i] < candidates[i].available &&
          (best == candidates.size() || next_gain[i] > next_gain[best]))
        best = i;
    if (best == candidates.size()) break;
    const double next_time = times_.predict(rows + 1);
    // Worth it when tokens per second grow: (tokens + gain) / next_time > tokens / time.
    if (time > 0 && (tokens + next_gain[best]) * time <= tokens * next_time) {
      cost_stopped = true;
      break;
    }
    tokens += next_gain[best];
    next_gain[best] *= accept[best];
    ++drafts[best];
    ++rows;
    time = next_time;
  }
  for (size_t i = 0; i < candidates.size() && cost_stopped; ++i) {
    if (!eligible[i] || drafts[i] > 0) continue;
    SlotState& s = slots_[static_cast<size_t>(candidates[i].slot)];  // drafts do not pay now: pause
    s.pause = s.next_pause;
    s.next_pause = std::min(kMaxPause, 2 * s.next_pause);
  }
  return drafts;
}

}  // namespace nanoserve::engine
