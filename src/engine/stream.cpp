#include "engine/engine.h"

#include <utility>

namespace nanoserve::engine {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Cancelled: return "cancelled";
  }
  return "stop";
}

void Stream::push(Event event) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  ready_.notify_one();
}

bool Stream::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

std::optional<Event> Stream::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
  Event event = std::move(events_.front());
  events_.pop_front();
  return event;
}

bool Stream::wait_for_event(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return ready_.wait_for(lock, timeout, [&] { return !events_.empty(); });
}

void Stream::cancel() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
}

void Stream::set_timeline(std::shared_ptr<RequestTimeline> timeline) {
  std::lock_guard lock(mutex_);
  timeline_ = std::move(timeline);
}

std::shared_ptr<RequestTimeline> Stream::timeline() const {
  std::lock_guard lock(mutex_);
  return timeline_;
}

}  // namespace nanoserve::engine
