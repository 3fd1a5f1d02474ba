#include "engine/draft_policy.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace nanoserve::engine {
namespace {

constexpr double kForget = 0.98;         // a step's weight in the line, per newer step (about 50 steps' memory)
constexpr double kMemory = 0.8;          // an older verify outcome's weight, per newer one
constexpr int64_t kMaxPause = 256;       // steps
constexpr double kMargin = 1.03;         // drafts must promise this many times the tokens per second of none
constexpr double kMeasured = 0.01;       // a row count's weight in the line while it counts as measured (~230 steps)

// A step of `rows` rows whose drafts took `rounds` passes (the longest draft), `tokens` in all.
double step_with_drafting(const StepTimes::Line& step, const DraftingTimes::Cost& drafting, int64_t rows,
                          int64_t rounds, int64_t tokens) {
  return step.at(rows) + drafting.at(rounds, tokens);
}

}  // namespace

void DraftingTimes::record(int64_t passes, int64_t tokens, double seconds) {
  if (passes < 1 || tokens < passes || seconds <= 0) return;
  const auto p = static_cast<double>(passes), t = static_cast<double>(tokens);
  for (auto [sum, value] : {std::pair{&w_, 1.0}, {&p_, p}, {&t_, t}, {&y_, seconds}, {&pp_, p * p}, {&pt_, p * t},
                            {&tt_, t * t}, {&py_, p * seconds}, {&ty_, t * seconds}})
    *sum = kForget * *sum + value;
}

DraftingTimes::Cost DraftingTimes::cost() const {
  if (w_ <= 0) return {};
  // About the means: the (co)variances of passes and tokens, and theirs with the seconds.
  const double spp = pp_ - p_ * p_ / w_, spt = pt_ - p_ * t_ / w_, stt = tt_ - t_ * t_ / w_;
  const double spy = py_ - p_ * y_ / w_, sty = ty_ - t_ * y_ / w_;
  const double measured = 1e-9 * w_;  // a spread this small is one value, measured
  const auto passes_alone = [&] { return spp > measured ? std::max(0.0, spy / spp) : 0.0; };
  const auto tokens_alone = [&] { return stt > measured ? std::max(0.0, sty / stt) : 0.0; };
  double per_pass = 0, per_token = 0;
  const double det = spp * stt - spt * spt;
  if (spp > measured && stt > measured && det > 1e-6 * spp * stt) {
    per_pass = (spy * stt - sty * spt) / det;
    per_token = (sty * spp - spy * spt) / det;
    if (per_pass < 0) per_pass = 0, per_token = tokens_alone();  // a part that came out negative: the other alone
    if (per_token < 0) per_token = 0, per_pass = passes_alone();
  } else {  // passes and tokens alike (one sequence's drafts), or one of them a single value
    per_pass = passes_alone();
    if (per_pass == 0) per_token = tokens_alone();
  }
  const double fixed = std::max(0.0, (y_ - per_pass * p_ - per_token * t_) / w_);
  return {.fixed = fixed, .per_pass = per_pass, .per_token = per_token};
}

StepTimes::StepTimes(int64_t max_rows)
    : max_rows_(max_rows),
      weight_(static_cast<size_t>(std::max<int64_t>(0, max_rows)) + 1, 0.0),
      time_(weight_.size(), 0.0) {}

void StepTimes::record(int64_t rows, double seconds) {
  if (rows < 1 || rows > max_rows_ || seconds <= 0) return;
  for (size_t r = 1; r < weight_.size(); ++r) weight_[r] *= kForget, time_[r] *= kForget;
  weight_[static_cast<size_t>(rows)] += 1;
  time_[static_cast<size_t>(rows)] += seconds;
}

StepTimes::Line StepTimes::line(int64_t from) const {
  // Over the row counts from `first` on: the line, and whether two row counts are measured.
  const auto fit = [&](int64_t first) -> std::pair<Line, bool> {
    double w = 0, x = 0, xx = 0, y = 0, xy = 0;
    int counts = 0;
    for (size_t r = static_cast<size_t>(std::max<int64_t>(1, first)); r < weight_.size(); ++r) {
      const double rr = static_cast<double>(r);
      w += weight_[r], x += weight_[r] * rr, xx += weight_[r] * rr * rr, y += time_[r], xy += time_[r] * rr;
      counts += weight_[r] > kMeasured ? 1 : 0;
    }
    if (w <= 0) return {Line{}, false};
    const double spread = w * xx - x * x;  // w² × the variance of the row counts
    if (counts < 2 || spread <= 1e-9 * w * w) return {Line{.fixed = y / w, .per_row = 0}, false};
    const double per_row = std::max(0.0, (w * xy - x * y) / spread);
    return {Line{.fixed = std::max(0.0, (y - per_row * x) / w), .per_row = per_row}, true};
  };
  const auto [local, measured] = fit(from);
  return measured ? local : fit(1).first;
}

DraftPolicy::DraftPolicy(int n_slots, int64_t max_rows, bool explores)
    : times_(max_rows), slots_(static_cast<size_t>(std::max(0, n_slots))), explores_(explores) {}

void DraftPolicy::start(int slot) {
  SlotState s;
  if (judged_all_ >= kJudgedToKnow) {
    s.accepted = accepted_all_ / judged_all_;  // worth one judged token, as the prior is
    if (s.accepted < kHopeless) {
      s.explore = false;
      s.pause = kPlainEvery;
      s.next_pause = 2 * kPlainEvery;
    }
  }
  slots_.at(static_cast<size_t>(slot)) = s;
}

double DraftPolicy::acceptance(int slot) const {
  const SlotState& s = slots_.at(static_cast<size_t>(slot));
  return s.trials > 0 ? s.accepted / s.trials : kPrior;
}

void DraftPolicy::record_intake(int64_t tokens, double seconds) {
  if (tokens <= 0 || seconds <= 0) return;
  intake_tokens_ = kForget * intake_tokens_ + static_cast<double>(tokens);
  intake_seconds_ = kForget * intake_seconds_ + seconds;
}

double DraftPolicy::intake_share(const Candidate& c, int64_t rows) const {
  if (c.intake <= 0 || rows <= 0 || intake_tokens_ <= 0) return 0;
  const auto gained = static_cast<double>(rows + 1);  // at most its drafts and the step's own token
  return static_cast<double>(c.intake) * (intake_seconds_ / intake_tokens_) *
         std::min(1.0, gained / static_cast<double>(std::max<int64_t>(1, c.remaining)));
}

bool DraftPolicy::could_pay(const Candidate& c, const StepTimes::Line& step, const DraftingTimes::Cost& drafting,
                            int64_t rows, double tokens) const {
  const double now = step.at(rows);
  if (c.intake <= 0 || now <= 0) return true;  // nothing to take in, or no step measured yet: try
  const int64_t k = c.available;
  const double time = step_with_drafting(step, drafting, rows + k, k, k) + intake_share(c, k);
  return (tokens + static_cast<double>(k)) * now > tokens * time;
}

void DraftPolicy::released(bool others_run) {
  if (others_run) {
    ++open_releases_;
    return;
  }
  // The batch ran empty: what comes next starts a new one, and the freed slots were not retaken.
  for (; open_releases_ > 0; --open_releases_) count_release(/*taken_again=*/false);
}

void DraftPolicy::admitted() {
  if (open_releases_ == 0) return;
  --open_releases_;
  count_release(/*taken_again=*/true);
}

void DraftPolicy::count_release(bool taken_again) {
  refilled_ = kMemory * refilled_ + (taken_again ? 1 : 0);
  releases_ = kMemory * releases_ + 1;
}

std::vector<DraftPolicy::Worth> DraftPolicy::worth(std::span<const Candidate> candidates,
                                                    const StepTimes::Line& step, int64_t rows, double tokens) const {
  const size_t n = candidates.size();
  // Each one's steps left, at the tokens a step gives it with what its drafter lately offered checked.
  std::vector<double> steps_left(n);
  double most = 0, second = 0;  // the most steps left, and the second most
  for (size_t i = 0; i < n; ++i) {
    const double offered = slots_.at(static_cast<size_t>(candidates[i].slot)).offered;
    const double a = acceptance(candidates[i].slot);
    double per_step = 1, chance = 1;
    for (int64_t k = 0; static_cast<double>(k) < offered; ++k)
      chance *= a, per_step += chance * std::min(1.0, offered - static_cast<double>(k));
    steps_left[i] = static_cast<double>(candidates[i].remaining) / per_step;
    second = std::max(second, std::min(most, steps_left[i]));
    most = std::max(most, steps_left[i]);
  }
  const double now = step.at(rows);
  const double spared = now > 0 ? std::clamp(step.per_row * tokens / now, 0.0, 1.0) : 1.0;
  const double beyond = refills() + (1 - refills()) * spared;
  std::vector<Worth> worth(n);
  for (size_t i = 0; i < n; ++i) {
    const double others = steps_left[i] == most ? second : most;
    worth[i] = {.whole = static_cast<int64_t>(std::max(0.0, static_cast<double>(candidates[i].remaining) - others)),
                .beyond = beyond};
  }
  return worth;
}

void DraftPolicy::pause(SlotState& s) {
  s.pause = s.next_pause;
  s.next_pause = std::min(kMaxPause, 2 * s.next_pause);
}

void DraftPolicy::record_verify(int slot, int64_t drafted, int64_t accepted) {
  if (drafted <= 0) return;
  SlotState& s = slots_.at(static_cast<size_t>(slot));
  // Tokens after the first wrong one were never judged: `accepted` rights and at most one wrong.
  const double judged = static_cast<double>(accepted) + (accepted < drafted ? 1.0 : 0.0);
  s.accepted = kMemory * s.accepted + static_cast<double>(accepted);
  s.trials = kMemory * s.trials + judged;
  accepted_all_ = kForget * accepted_all_ + static_cast<double>(accepted);
  judged_all_ = kForget * judged_all_ + judged;
}

double DraftPolicy::fill(const StepTimes::Line& step, double per_token, int64_t longest, int64_t base_rows,
                         double base_tokens, int64_t max_extra_rows, std::span<const Candidate> candidates,
                         const std::vector<bool>& eligible, const std::vector<double>& accept,
                         const std::vector<Worth>& worth, std::vector<int64_t>& drafts) const {
  const size_t n = candidates.size();
  // What a token of i's draft token k (from 0) is worth: a whole one for its first `whole`.
  const auto worth_at = [&](size_t i, int64_t k) { return k < worth[i].whole ? 1.0 : worth[i].beyond; };
  double tokens = base_tokens;
  std::vector<double> chance(n);  // the next draft token's chance of being accepted
  for (size_t i = 0; i < n; ++i) {
    chance[i] = accept[i];
    for (int64_t k = 0; k < drafts[i]; ++k) tokens += chance[i] * worth_at(i, k), chance[i] *= accept[i];
  }
  int64_t rows = base_rows, extra = 0;
  for (int64_t d : drafts) rows += d, extra += d;
  while (extra < max_extra_rows) {
    size_t best = n;
    double best_gain = 0;  // its expected tokens, times their worth
    for (size_t i = 0; i < n; ++i) {
      if (!eligible[i] || drafts[i] >= std::min(longest, candidates[i].available)) continue;
      const double gain = chance[i] * worth_at(i, drafts[i]);
      if (best == n || gain > best_gain) best = i, best_gain = gain;
    }
    if (best == n) break;
    const double drafted = per_token * static_cast<double>(extra);
    const double now = step.at(rows) + drafted, then = step.at(rows + 1) + drafted + per_token;
    if (now > 0 && (tokens + best_gain) * now <= tokens * then) break;  // its row does not pay
    ++drafts[best];
    ++rows;
    ++extra;
    tokens += best_gain;
    chance[best] *= accept[best];
  }
  return tokens;
}

std::vector<int64_t> DraftPolicy::allocate(int64_t base_tokens, int64_t max_extra_rows,
                                           std::span<const Candidate> candidates, int64_t sequences) {
  const size_t n = candidates.size();
  // Drafts are judged on the step without the prompts' chunks it may carry (as exploring is,
  // below): the tokens they save would otherwise come from decode steps, and against those they
  // must pay; beside a chunk each draft row only delays the prompts (measured:
  // experiments/draft-policy.md).
  const int64_t rows = std::max<int64_t>(1, base_tokens);
  const double tokens = static_cast<double>(rows);
  const StepTimes::Line step = times_.line(rows);
  const DraftingTimes::Cost drafting = drafting_.cost();
  // Whether exploring could pay is judged on a decode step of the batch's sequences: beside a
  // prompt's chunk every draft row looks cheap, but the drafts that would repay an intake come
  // in the decode steps after it, which the sequences taking in their prompts now will join.
  const int64_t decode_rows = std::max<int64_t>({1, base_tokens, sequences});
  const StepTimes::Line decode_step = times_.line(decode_rows);
  std::vector<double> accept(n, 0.0);
  std::vector<bool> eligible(n, false);
  std::vector<int64_t> forced(n, 0);  // exploring sequences draft one token, to see
  int64_t forced_rows = 0, longest_offer = 0;
  for (size_t i = 0; i < n; ++i) {
    SlotState& s = slots_.at(static_cast<size_t>(candidates[i].slot));
    s.offered = kMemory * s.offered + (1 - kMemory) * static_cast<double>(candidates[i].available);
    if (candidates[i].available <= 0) continue;
    if (s.pause > 0) {
      if (--s.pause == 0) s.explore = true;  // try again
      continue;
    }
    if (explores_ && s.explore && forced_rows < max_extra_rows) {
      s.explore = false;
      // Not even drafts all right could repay its intake: it waits, as one whose drafts do not pay.
      if (!could_pay(candidates[i], decode_step, drafting, decode_rows, static_cast<double>(decode_rows))) {
        pause(s);
        continue;
      }
      forced[i] = 1;
      forced_rows += forced[i];
    }
    eligible[i] = true;
    accept[i] = acceptance(candidates[i].slot);
    longest_offer = std::max(longest_offer, candidates[i].available);
  }
  if (++steps_since_plain_ >= kPlainEvery && forced_rows == 0) {  // a step without drafts, to measure
    steps_since_plain_ = 0;
    return forced;
  }
  const std::vector<Worth> worth = this->worth(candidates, step, rows, tokens);
  // The longest draft K whose step gives the most tokens per second (K = 0: only the forced).
  std::vector<int64_t> best = forced;
  double best_rate = 0, rate_without = 0;
  for (int64_t longest = 0; longest <= longest_offer; ++longest) {
    std::vector<int64_t> drafts = forced;
    const double expected =
        fill(step, drafting.per_token, longest, rows, tokens, max_extra_rows, candidates, eligible, accept, worth, drafts);
    int64_t step_rows = rows, rounds = 0;
    double intakes = 0;
    for (size_t i = 0; i < n; ++i) {
      step_rows += drafts[i], rounds = std::max(rounds, drafts[i]);
      if (drafts[i] > 0) intakes += intake_share(candidates[i], drafts[i]);
    }
    const double time = step_with_drafting(step, drafting, step_rows, rounds, step_rows - rows) + intakes;
    const double rate = time > 0 ? expected / time : expected;  // nothing measured yet: the most tokens
    // Against no drafts, a margin for the model's own error: drafts that promise little gain
    // are as likely to lose a little.
    if (longest == 0 || rate > best_rate * (best_rate == rate_without ? kMargin : 1.0))
      best_rate = rate, best = std::move(drafts);
    if (longest == 0) rate_without = rate;
  }
  // Those that get nothing though offered, and not for want of room: drafts do not pay them now
  // (those that do not end the batch wait for nothing: they draft again once they do).
  int64_t given = 0;
  for (int64_t d : best) given += d;
  if (given == 0) steps_since_plain_ = 0;
  for (size_t i = 0; i < n; ++i)
    if (best[i] > forced[i]) slots_[static_cast<size_t>(candidates[i].slot)].next_pause = 1;  // its drafts pay
  for (size_t i = 0; i < n && given < max_extra_rows; ++i) {
    if (!eligible[i] || best[i] > 0 || (worth[i].whole == 0 && worth[i].beyond < 1)) continue;
    pause(slots_[static_cast<size_t>(candidates[i].slot)]);
  }
  return best;
}

}  // namespace nanoserve::engine
