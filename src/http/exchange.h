// One request's answer on its way from the worker that makes it to the client. The worker
// writes to the socket itself while the socket takes the bytes (no hand-off, no wake-up of
// the event loop on the way to the first token); what the socket does not take waits here,
// bounded, and the event loop writes it when the socket is writable again. When a client
// stops reading and its answer grows past the bound, the client is dropped like one that
// left, so a slow reader never holds up its worker, nor the engine that feeds it.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace nanoserve::http {

class Exchange {
 public:
  // `fd` is the connection's socket (non-blocking); `wake` tells the event loop to look at
  // this exchange again: bytes wait for a writable socket, or the answer is complete.
  Exchange(int fd, std::string first_bytes, size_t max_pending_bytes, std::function<void()> wake);

  // Worker side. False once the client is gone (left, too slow, or the server closed it).
  bool append(std::string_view bytes);
  // The answer is complete; `keep_alive` false closes the connection once it is written.
  // A complete answer that is all written and keeps the connection wakes nobody: the loop
  // sees it at the connection's next event (its next request) or its next sweep.
  void finish(bool keep_alive);
  bool client_gone() const;

  // Event loop side.
  struct Progress {
    bool failed = false;    // the socket failed or the client was dropped: close the connection
    bool pending = false;   // bytes wait for the socket to become writable
    bool finished = false;  // the answer is complete (and, without `pending`, written)
    bool keep_alive = false;
    std::chrono::steady_clock::time_point last_write;  // the last time bytes went out (or the start)
  };
  Progress flush();  // writes what waits
  // The loop is about to close the socket: no write may touch it from now on.
  void close_socket();
  // A request is waiting behind this answer (pipelined, or sent as the answer's last bytes
  // went out): the loop wants to hear of the answer's end at once.
  void wake_when_finished();

 private:
  bool send_pending();  // under the lock; false on a socket error

  const size_t max_pending_bytes_;
  const std::function<void()> wake_;
  mutable std::mutex mutex_;
  int fd_;
  std::string pending_;
  size_t sent_ = 0;  // of pending_
  std::chrono::steady_clock::time_point last_write_;
  bool finished_ = false;
  bool keep_alive_ = false;
  bool gone_ = false;
  bool wake_on_finish_ = false;
};

}  // namespace nanoserve::http
