#include "http/leader_followers.h"

#include <algorithm>
#include <utility>

namespace nanoserve::http {

LeaderFollowers::LeaderFollowers(size_t workers, std::function<std::vector<Job>()> lead)
    : workers_(workers), lead_(std::move(lead)) {
  for (size_t i = 0; i < workers_ + 1; ++i) threads_.emplace_back([this] { run(); });
}

LeaderFollowers::~LeaderFollowers() { join(); }

void LeaderFollowers::join() {
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void LeaderFollowers::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] {
      return leader_wanted_ || (!jobs_.empty() && busy_ < workers_) || (loop_done_ && jobs_.empty());
    });
    size_t wakes = 0;  // threads to wake once the lock is let go (woken under it, they would wait for it)
    if (leader_wanted_) {
      leader_wanted_ = false;
      lock.unlock();
      std::vector<Job> found = lead_();
      lock.lock();
      if (found.empty()) {  // the loop is over: finish what is queued, then leave
        loop_done_ = true;
        changed_.notify_all();
        continue;
      }
      for (Job& j : found) jobs_.push_back(std::move(j));
      leader_wanted_ = true;
      if (busy_ >= workers_) continue;  // none may run now: lead on
      // This thread answers a request; one other leads and others take the rest (each wake
      // costs CPU: waking every thread would be felt on a machine of two cores).
      wakes = std::min(jobs_.size(), workers_ - busy_);
    } else if (jobs_.empty()) {
      return;  // loop_done_ and nothing left
    }
    if (jobs_.empty() || busy_ >= workers_) continue;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    ++busy_;
    lock.unlock();
    for (size_t i = 0; i < wakes; ++i) changed_.notify_one();
    job();
    job = nullptr;  // what it holds goes before the lock is taken again
    lock.lock();
    --busy_;
  }
}

}  // namespace nanoserve::http
