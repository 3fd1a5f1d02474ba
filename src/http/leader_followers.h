// The threads of the HTTP server, taking turns at its event loop (the leader/followers
// pattern): the leader waits on every socket; when it finds complete requests it runs one
// itself and a follower takes over the loop. The thread that read a request answers it, with
// no hand-off between threads on the way to the first token (a hand-off to a worker pool adds
// to TTFT: experiments/serving-notes.md).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nanoserve::http {

class LeaderFollowers {
 public:
  using Job = std::function<void()>;

  // `lead` runs the loop until it has found jobs, and returns them; it returns none once the
  // loop is over for good. At most `workers` jobs run at once (one thread more leads).
  LeaderFollowers(size_t workers, std::function<std::vector<Job>()> lead);
  ~LeaderFollowers();  // join(): waits for the loop to end and every job to finish

  void join();

 private:
  void run();

  const size_t workers_;
  const std::function<std::vector<Job>()> lead_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> jobs_;         // found, waiting for a free thread
  bool leader_wanted_ = true;    // no thread leads: the next free one must
  bool loop_done_ = false;
  size_t busy_ = 0;              // jobs running
  std::vector<std::thread> threads_;
};

}  // namespace nanoserve::http
