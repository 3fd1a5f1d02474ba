// The bounded FIFO between submit() and an engine's worker threads. A request holds a place
// from submit until its final event (Done or Error): `slots` places for those generating,
// `limit` more for those waiting. Requests whose reader cancels while they wait are finished
// (Cancelled) and dropped, so they give their place back.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/generation.h"

namespace nanoserve::engine {

class RequestQueue {
 public:
  // `slots`: how many requests the engine generates at once; `limit`: how many may wait.
  RequestQueue(int64_t limit, int64_t slots);

  // Every engine's submit(): checks the request (validate_request: std::invalid_argument),
  // makes its Generation and adds it at the back; throws QueueFull when every place is held.
  std::shared_ptr<Stream> submit(GenerationRequest request, const tokenizer::Tokenizer& tokenizer, int64_t n_vocab,
                                 int64_t context_size);
  // Adds a request at the back; throws QueueFull when every place is held.
  void push(std::unique_ptr<Generation> generation);
  // Blocks until the oldest request can be taken (it is then admitted); nullptr once closed.
  std::unique_ptr<Generation> pop();
  // For an engine that admits requests itself: moves every waiting request out, oldest
  // first, without admitting them. With `wait`, blocks until one waits or the queue closes
  // (then returns none).
  std::vector<std::unique_ptr<Generation>> take_all(bool wait);
  // Ends every pop() and take_all(); the requests still waiting finish Cancelled.
  void close();
  // Requests waiting (not cancelled).
  int64_t waiting() const;
  // Requests holding a place: waiting, here or inside the engine, or generating.
  int64_t held() const { return places_held_; }
  // Requests taken by a worker whose final event is not pushed yet (so a reader who has seen
  // its final event never counts it as running).
  int64_t running() const;

 private:
  void drop_cancelled();  // the caller holds mutex_

  const int64_t limit_, slots_;
  std::atomic<int64_t> places_held_ = 0;  // given back by each Generation's final event
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::unique_ptr<Generation>> waiting_;
  bool closed_ = false;
};

}  // namespace nanoserve::engine
