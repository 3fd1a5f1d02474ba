#include "engine/scheduler.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

namespace nanoserve::engine {
namespace {

// One plan in the making: the sequences (running, then those admitted), what each gets this
// step, and the pool's free blocks as the plan spends and frees them.
class Planner {
 public:
  Planner(const Scheduler& scheduler, std::span<const SequenceView> running, int64_t free_blocks)
      : scheduler_(scheduler),
        seqs_(running.begin(), running.end()),
        n_running_(running.size()),
        chunk_(running.size(), 0),
        reserved_(running.size(), 0),
        out_(running.size(), false),
        free_(free_blocks) {}

  // Running sequences, oldest first.
  std::vector<size_t> running_by_age() const {
    std::vector<size_t> order(n_running_);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return seqs_[a].arrival < seqs_[b].arrival; });
    return order;
  }

  int64_t pending(size_t i) const { return seqs_[i].tokens - seqs_[i].cached; }
  bool preempted(size_t i) const { return out_[i]; }
  int64_t budget_left() const { return scheduler_.limits().step_tokens - plan_.rows; }

  // A chunk of one row for a sequence with only its last token left; the sequence itself is
  // preempted when the pool cannot give it its next block even after newer ones gave way.
  void decode(size_t i) {
    const int64_t need = blocks_needed(i, 1);
    make_room(i, need);
    if (free_ >= need) {
      give(i, 1, need);
    } else {
      preempt(i);
    }
  }

  // More rows for a decoder's draft tokens, as far as the budget and the free blocks go: they
  // never preempt anyone.
  void draft(size_t i) {
    if (chunk_[i] != 1 || seqs_[i].drafts <= 0) return;
    int64_t d = std::min(seqs_[i].drafts, budget_left());
    while (d > 0 && blocks_needed(i, 1 + d) - reserved_[i] > free_) --d;
    if (d <= 0) return;
    const int64_t more = blocks_needed(i, 1 + d) - reserved_[i];
    free_ -= more;
    reserved_[i] += more;
    chunk_[i] += d;
    plan_.rows += d;
    for (StepPlan::Chunk& c : plan_.chunks)
      if (c.seq == i) c.n += d;
  }

  // The longest chunk the budget and the pool allow (newer sequences give way first).
  void prefill(size_t i) {
    int64_t n = std::min(pending(i), budget_left());
    if (n <= 0) return;
    int64_t need = blocks_needed(i, n);
    make_room(i, need);
    if (free_ < need) {  // what the blocks it holds and the free ones can take
      n = std::min(n, (seqs_[i].blocks + free_) * scheduler_.limits().block_size - seqs_[i].cached);
      if (n <= 0) return;
      need = blocks_needed(i, n);
    }
    give(i, n, need);
  }

  // Admits waiting sequences first come first served; each gets its first chunk at once.
  void admit(std::span<const SequenceView> waiting) {
    if (!plan_.preempted.empty()) return;
    int64_t slots = scheduler_.limits().max_running - static_cast<int64_t>(n_running_);
    int64_t uncommitted = free_;  // free blocks the running prefills will not need
    for (size_t i = 0; i < n_running_; ++i)
      uncommitted -= std::max<int64_t>(0, scheduler_.blocks_for(seqs_[i].tokens) - seqs_[i].blocks - reserved_[i]);
    for (const SequenceView& w : waiting) {
      const int64_t whole = scheduler_.blocks_for(w.tokens) - w.blocks + w.attach_cost;
      if (w.held || slots <= 0 || budget_left() <= 0 || whole > uncommitted) return;
      seqs_.push_back({.arrival = w.arrival, .tokens = w.tokens, .cached = w.cached, .blocks = w.blocks});
      chunk_.push_back(0);
      reserved_.push_back(0);
      out_.push_back(false);
      ++plan_.admitted;
      --slots;
      uncommitted -= whole;
      free_ -= w.attach_cost;
      prefill(seqs_.size() - 1);
    }
  }

  StepPlan take() { return std::move(plan_); }

 private:
  int64_t blocks_needed(size_t i, int64_t n) const {
    return std::max<int64_t>(0, scheduler_.blocks_for(seqs_[i].cached + n) - seqs_[i].blocks);
  }

  // Preempts running sequences newer than i, newest first, until `need` blocks are free.
  void make_room(size_t i, int64_t need) {
    while (free_ < need) {
      std::optional<size_t> victim;
      for (size_t j = 0; j < n_running_; ++j) {
        if (out_[j] || seqs_[j].arrival <= seqs_[i].arrival) continue;
        if (!victim || seqs_[j].arrival > seqs_[*victim].arrival) victim = j;
      }
      if (!victim) return;
      preempt(*victim);
    }
  }

  void preempt(size_t j) {
    free_ += seqs_[j].blocks - seqs_[j].shared + reserved_[j];
    if (chunk_[j] > 0) {
      plan_.rows -= chunk_[j];
      std::erase_if(plan_.chunks, [j](const StepPlan::Chunk& c) { return c.seq == j; });
    }
    chunk_[j] = reserved_[j] = 0;
    out_[j] = true;
    plan_.preempted.push_back(j);
  }

  void give(size_t i, int64_t n, int64_t need) {
    free_ -= need;
    reserved_[i] = need;
    chunk_[i] = n;
    plan_.chunks.push_back({.seq = i, .n = n});
    plan_.rows += n;
  }

  const Scheduler& scheduler_;
  std::vector<SequenceView> seqs_;  // running, then admitted
  size_t n_running_;
  std::vector<int64_t> chunk_;      // rows each sequence gets this step
  std::vector<int64_t> reserved_;   // blocks the plan gives each sequence
  std::vector<bool> out_;           // preempted
  int64_t free_;
  StepPlan plan_;
};

}  // namespace

Scheduler::Scheduler(SchedulerLimits limits) : limits_(limits) {
  if (limits_.max_running < 1 || limits_.step_tokens < 1 || limits_.block_size < 1)
    throw std::invalid_argument("scheduler: max_running, step_tokens and block_size must be positive");
  if (limits_.step_tokens < limits_.max_running)
    throw std::invalid_argument("scheduler: step_tokens (" + std::to_string(limits_.step_tokens) +
                                ") must be at least max_running (" + std::to_string(limits_.max_running) +
                                "), so every running sequence gets its decode row");
}

StepPlan Scheduler::plan(std::span<const SequenceView> running, std::span<const SequenceView> waiting,
                         int64_t free_blocks) const {
  if (running.size() > static_cast<size_t>(limits_.max_running))
    throw std::invalid_argument("scheduler: more running sequences than slots");
  Planner p(*this, running, free_blocks);
  const std::vector<size_t> by_age = p.running_by_age();
  for (size_t i : by_age)
    if (!p.preempted(i) && p.pending(i) == 1) p.decode(i);
  for (size_t i : by_age)
    if (!p.preempted(i)) p.draft(i);
  for (size_t i : by_age)
    if (!p.preempted(i) && p.pending(i) > 1) p.prefill(i);
  p.admit(waiting);
  return p.take();
}

}  // namespace nanoserve::engine
