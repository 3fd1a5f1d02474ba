#include "http/exchange.h"

#include <utility>

#include "http/socket_send.h"

namespace nanoserve::http {

Exchange::Exchange(int fd, std::string first_bytes, size_t max_pending_bytes, std::function<void()> wake)
    : max_pending_bytes_(max_pending_bytes),
      wake_(std::move(wake)),
      fd_(fd),
      pending_(std::move(first_bytes)),
      last_write_(std::chrono::steady_clock::now()) {}

bool Exchange::send_pending() {
  const size_t before = sent_;
  if (!send_what_fits(fd_, pending_, sent_)) return false;
  if (sent_ > before) last_write_ = std::chrono::steady_clock::now();
  if (sent_ == pending_.size()) {
    pending_.clear();
    sent_ = 0;
  }
  return true;
}

bool Exchange::append(std::string_view bytes) {
  bool must_wake = false;
  bool ok = true;
  {
    std::lock_guard lock(mutex_);
    if (gone_) return false;
    // A first answer bigger than the bound (a whole JSON body) is let through: the bound is
    // for bytes piling up behind a client that does not read.
    const size_t waiting = pending_.size() - sent_;
    if (waiting > 0 && waiting + bytes.size() > max_pending_bytes_) {
      gone_ = true;
      ok = false;
    } else {
      const bool was_waiting = waiting > 0;
      pending_.append(bytes);
      if (!send_pending()) {
        gone_ = true;
        ok = false;
      }
      // The loop watches for a writable socket only once bytes wait.
      must_wake = !was_waiting && sent_ < pending_.size();
    }
    must_wake = must_wake || !ok;
  }
  if (must_wake) wake_();
  return ok;
}

void Exchange::finish(bool keep_alive) {
  bool must_wake = false;
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
    keep_alive_ = keep_alive && !gone_;
    must_wake = !keep_alive_ || sent_ < pending_.size() || wake_on_finish_;
  }
  if (must_wake) wake_();
}

bool Exchange::client_gone() const {
  std::lock_guard lock(mutex_);
  return gone_;
}

Exchange::Progress Exchange::flush() {
  std::lock_guard lock(mutex_);
  if (!gone_ && fd_ >= 0 && !send_pending()) gone_ = true;
  return Progress{.failed = gone_, .pending = sent_ < pending_.size(), .finished = finished_,
                  .keep_alive = keep_alive_, .last_write = last_write_};
}

void Exchange::wake_when_finished() {
  bool finished = false;
  {
    std::lock_guard lock(mutex_);
    wake_on_finish_ = true;
    finished = finished_;
  }
  if (finished) wake_();
}

void Exchange::close_socket() {
  std::lock_guard lock(mutex_);
  gone_ = true;
  fd_ = -1;
  pending_.clear();
  sent_ = 0;
}

}  // namespace nanoserve::http
