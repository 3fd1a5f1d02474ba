#include "engine/request_queue.h"

#include <algorithm>
#include <string>

namespace nanoserve::engine {

RequestQueue::RequestQueue(int64_t limit, int64_t slots) : limit_(limit), slots_(slots) {}

std::shared_ptr<Stream> RequestQueue::submit(GenerationRequest request, const tokenizer::Tokenizer& tokenizer,
                                             int64_t n_vocab, int64_t context_size) {
  validate_request(request, n_vocab, context_size);
  auto generation = std::make_unique<Generation>(std::move(request), tokenizer, context_size);
  std::shared_ptr<Stream> stream = generation->stream();
  push(std::move(generation));
  return stream;
}

void RequestQueue::push(std::unique_ptr<Generation> generation) {
  {
    std::lock_guard lock(mutex_);
    drop_cancelled();
    if (closed_) throw QueueFull("the engine is shutting down");
    if (places_held_ >= limit_ + slots_)
      throw QueueFull("the queue is full (" + std::to_string(limit_) + " requests waiting)");
    generation->hold_place(places_held_);
    waiting_.push_back(std::move(generation));
  }
  ready_.notify_one();
}

std::unique_ptr<Generation> RequestQueue::pop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    drop_cancelled();
    if (closed_) return nullptr;
    if (!waiting_.empty()) break;
    ready_.wait(lock);
  }
  std::unique_ptr<Generation> next = std::move(waiting_.front());
  waiting_.pop_front();
  next->admit();
  return next;
}

std::vector<std::unique_ptr<Generation>> RequestQueue::take_all(bool wait) {
  std::unique_lock lock(mutex_);
  for (;;) {
    drop_cancelled();
    if (closed_) return {};
    if (!waiting_.empty() || !wait) break;
    ready_.wait(lock);
  }
  std::vector<std::unique_ptr<Generation>> all;
  all.reserve(waiting_.size());
  for (auto& g : waiting_) all.push_back(std::move(g));
  waiting_.clear();
  return all;
}

void RequestQueue::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    for (auto& g : waiting_) g->finish(FinishReason::Cancelled);
    waiting_.clear();
  }
  ready_.notify_all();
}

int64_t RequestQueue::waiting() const {
  std::lock_guard lock(mutex_);
  return std::count_if(waiting_.begin(), waiting_.end(), [](const auto& g) { return !g->cancelled(); });
}

int64_t RequestQueue::running() const {
  std::lock_guard lock(mutex_);
  return places_held_ - static_cast<int64_t>(waiting_.size());
}

void RequestQueue::drop_cancelled() {
  std::erase_if(waiting_, [](const std::unique_ptr<Generation>& g) {
    if (!g->cancelled()) return false;
    g->finish(FinishReason::Cancelled);
    return true;
  });
}

}  // namespace nanoserve::engine
