#include "engine/engine_trace.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace nanoserve::engine {

std::vector<BlockRun> block_runs(std::span<const int32_t> blocks) {
  std::vector<BlockRun> runs;
  for (const int32_t b : blocks) {
    if (!runs.empty() && runs.back().first + runs.back().count == b)
      ++runs.back().count;
    else
      runs.push_back({.first = b, .count = 1});
  }
  return runs;
}

std::optional<EngineSnapshot> TraceSubscription::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return !queued_.empty() || closed_; });
  if (queued_.empty()) return std::nullopt;
  EngineSnapshot snapshot = std::move(queued_.front());
  queued_.pop_front();
  return snapshot;
}

bool TraceSubscription::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

void TraceSubscription::push(const EngineSnapshot& snapshot) {
  std::lock_guard lock(mutex_);
  if (queued_.size() == kMaxQueued) {
    // The oldest goes; what only it said (its preemptions and steps) moves into the next.
    EngineSnapshot oldest = std::move(queued_.front());
    queued_.pop_front();
    EngineSnapshot& next = queued_.front();
    next.preempted.insert(next.preempted.begin(), oldest.preempted.begin(), oldest.preempted.end());
    next.recent_steps.insert(next.recent_steps.begin(), oldest.recent_steps.begin(), oldest.recent_steps.end());
    if (next.recent_steps.size() > EngineTrace::kMaxSteps)
      next.recent_steps.erase(next.recent_steps.begin(),
                              next.recent_steps.end() - static_cast<std::ptrdiff_t>(EngineTrace::kMaxSteps));
  }
  queued_.push_back(snapshot);
  ready_.notify_one();
}

void TraceSubscription::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  ready_.notify_all();
}

EngineTrace::EngineTrace() = default;

EngineTrace::~EngineTrace() {
  std::lock_guard lock(mutex_);
  for (const auto& w : watchers_)
    if (auto s = w.lock()) s->close();
}

std::shared_ptr<RequestTimeline> EngineTrace::open(const std::string& id, Clock::time_point submitted) {
  auto timeline = std::make_shared<RequestTimeline>(id, submitted);
  std::lock_guard lock(mutex_);
  timelines_.push_back(timeline);
  if (timelines_.size() > kKeptTimelines) timelines_.pop_front();
  return timeline;
}

std::vector<std::shared_ptr<const RequestTimeline>> EngineTrace::find(const std::string& id) const {
  std::vector<std::shared_ptr<const RequestTimeline>> found;
  std::lock_guard lock(mutex_);
  for (const auto& t : timelines_)
    if (t->id() == id) found.push_back(t);
  return found;
}

std::vector<std::shared_ptr<const RequestTimeline>> EngineTrace::recent(size_t n) const {
  std::vector<std::shared_ptr<const RequestTimeline>> found;
  std::lock_guard lock(mutex_);
  for (auto it = timelines_.rbegin(); it != timelines_.rend() && found.size() < n; ++it) found.push_back(*it);
  return found;
}

std::shared_ptr<TraceSubscription> EngineTrace::subscribe(size_t max_watchers) {
  std::lock_guard lock(mutex_);
  std::erase_if(watchers_, [](const std::weak_ptr<TraceSubscription>& w) { return w.expired(); });
  if (watchers_.size() >= max_watchers) return nullptr;
  auto subscription = std::make_shared<TraceSubscription>();
  if (last_) {
    EngineSnapshot first = *last_;
    first.recent_steps.clear();  // they were news to the watchers of the time, not to this one
    first.preempted.clear();
    subscription->push(first);
  }
  watchers_.push_back(subscription);
  return subscription;
}

bool EngineTrace::watched() const {
  std::lock_guard lock(mutex_);
  return std::any_of(watchers_.begin(), watchers_.end(),
                     [](const std::weak_ptr<TraceSubscription>& w) { return !w.expired(); });
}

double EngineTrace::ms_since_start(Clock::time_point t) const {
  return std::chrono::duration<double, std::milli>(t - start_).count();
}

void EngineTrace::publish(EngineSnapshot snapshot) {
  std::lock_guard lock(mutex_);
  for (const auto& w : watchers_)
    if (auto s = w.lock()) s->push(snapshot);
  last_ = std::move(snapshot);
}

}  // namespace nanoserve::engine
