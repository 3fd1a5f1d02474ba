#include "engine/draft_policy.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nanoserve::engine {
namespace {

constexpr double kForget = 0.98;         // a step's weight in the line, per newer step (about 50 steps' memory)
constexpr double kMemory = 0.8;          // an older verify outcome's weight, per newer one
constexpr int64_t kMaxPause = 256;       // steps
constexpr double kMargin = 1.03;         // drafts must promise this many times the tokens per second of none

}  // namespace

void StepTimes::record(int64_t rows, double seconds) {
  if (rows < 1 || rows > max_rows_ || seconds <= 0) return;
  const auto x = static_cast<double>(rows);
  w_ = kForget * w_ + 1;
  x_ = kForget * x_ + x;
  xx_ = kForget * xx_ + x * x;
  y_ = kForget * y_ + seconds;
  xy_ = kForget * xy_ + x * seconds;
}

double StepTimes::per_row() const {
  const double spread = w_ * xx_ - x_ * x_;  // w² × the variance of the row counts
  if (w_ <= 0 || spread <= 1e-9 * w_ * w_) return 0;
  return std::max(0.0, (w_ * xy_ - x_ * y_) / spread);
}

double StepTimes::fixed() const { return w_ > 0 ? std::max(0.0, (y_ - per_row() * x_) / w_) : 0; }

DraftPolicy::DraftPolicy(int n_slots, int64_t max_rows, int64_t max_draft)
    : times_(max_rows), drafting_(max_draft), slots_(static_cast<size_t>(std::max(0, n_slots))) {}

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
}

double DraftPolicy::fill(int64_t longest, int64_t base_rows, double base_tokens, int64_t max_extra_rows,
                         std::span<const Candidate> candidates, const std::vector<bool>& eligible,
                         const std::vector<double>& accept, std::vector<int64_t>& drafts) const {
  const size_t n = candidates.size();
  double tokens = base_tokens;
  std::vector<double> next_gain(n);  // the next draft token's expected tokens
  for (size_t i = 0; i < n; ++i) {
    double gain = accept[i];
    for (int64_t k = 0; k < drafts[i]; ++k) tokens += gain, gain *= accept[i];
    next_gain[i] = gain;
  }
  int64_t rows = base_rows, extra = 0;
  for (int64_t d : drafts) rows += d, extra += d;
  while (extra < max_extra_rows) {
    size_t best = n;
    for (size_t i = 0; i < n; ++i)
      if (eligible[i] && drafts[i] < std::min(longest, candidates[i].available) &&
          (best == n || next_gain[i] > next_gain[best]))
        best = i;
    if (best == n) break;
    const double now = times_.predict(rows), then = times_.predict(rows + 1);
    if (now > 0 && (tokens + next_gain[best]) * now <= tokens * then) break;  // its row does not pay
    ++drafts[best];
    ++rows;
    ++extra;
    tokens += next_gain[best];
    next_gain[best] *= accept[best];
  }
  return tokens;
}

std::vector<int64_t> DraftPolicy::allocate(int64_t base_rows, int64_t base_tokens, int64_t max_extra_rows,
                                           std::span<const Candidate> candidates) {
  const size_t n = candidates.size();
  std::vector<double> accept(n, 0.0);
  std::vector<bool> eligible(n, false);
  std::vector<int64_t> forced(n, 0);  // exploring sequences draft one token, to see
  int64_t forced_rows = 0, longest_offer = 0;
  for (size_t i = 0; i < n; ++i) {
    SlotState& s = slots_.at(static_cast<size_t>(candidates[i].slot));
    if (candidates[i].available <= 0) continue;
    if (s.pause > 0) {
      if (--s.pause == 0) s.explore = true;  // try again
      continue;
    }
    eligible[i] = true;
    accept[i] = acceptance(candidates[i].slot);
    longest_offer = std::max(longest_offer, candidates[i].available);
    if (s.explore && forced_rows < max_extra_rows) {
      s.explore = false;
      forced[i] = 1;
      forced_rows += forced[i];
    }
  }
  if (++steps_since_plain_ >= kPlainEvery && forced_rows == 0) {  // a step without drafts, to measure
    steps_since_plain_ = 0;
    return forced;
  }
  const int64_t rows = std::max<int64_t>(1, base_rows);
  const double tokens = static_cast<double>(std::max<int64_t>(1, base_tokens));
  // The longest draft K whose step gives the most tokens per second (K = 0: only the forced).
  std::vector<int64_t> best = forced;
  double best_rate = 0, rate_without = 0;
  for (int64_t longest = 0; longest <= longest_offer; ++longest) {
    std::vector<int64_t> drafts = forced;
    const double expected = fill(longest, rows, tokens, max_extra_rows, candidates, eligible, accept, drafts);
    int64_t step_rows = rows, rounds = 0;
    for (int64_t d : drafts) step_rows += d, rounds = std::max(rounds, d);
    const double time = times_.predict(step_rows) + drafting_time(rounds);
    const double rate = time > 0 ? expected / time : expected;  // nothing measured yet: the most tokens
    // Against no drafts, a margin for the model's own error: drafts that promise little gain
    // are as likely to lose a little.
    if (longest == 0 || rate > best_rate * (best_rate == rate_without ? kMargin : 1.0))
      best_rate = rate, best = std::move(drafts);
    if (longest == 0) rate_without = rate;
  }
  // Those that get nothing though offered, and not for want of room: drafts do not pay them now.
  int64_t given = 0;
  for (int64_t d : best) given += d;
  if (given == 0) steps_since_plain_ = 0;
  for (size_t i = 0; i < n; ++i)
    if (best[i] > forced[i]) slots_[static_cast<size_t>(candidates[i].slot)].next_pause = 1;  // its drafts pay
  for (size_t i = 0; i < n && given < max_extra_rows; ++i) {
    if (!eligible[i] || best[i] > 0) continue;
    SlotState& s = slots_[static_cast<size_t>(candidates[i].slot)];
    s.pause = s.next_pause;
    s.next_pause = std::min(kMaxPause, 2 * s.next_pause);
  }
  return best;
}

}  // namespace nanoserve::engine
