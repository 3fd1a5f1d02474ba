// A `nanoserve serve` the suite starts for one configuration: this same binary, on
// 127.0.0.1 with a free port (read from its "listening on" log line), in its own process
// group (a terminal's Ctrl-C reaches the suite, which kills it) and killed by the kernel
// if the suite dies. Every wait has a deadline; a server that exits or never becomes
// healthy is reported with the tail of its log.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "bench/endpoint.h"

namespace nanoserve::bench {

// The path of the running nanoserve binary (/proc/self/exe).
std::string this_binary();

class ChildServer {
 public:
  // Starts `BINARY serve --host 127.0.0.1 --port 0 ARGS...` (this nanoserve by default)
  // and waits until /health answers 200. Throws std::runtime_error (with the log's tail)
  // when the server exits, does not listen within 60 s, is not healthy within
  // `ready_timeout`, or on Ctrl-C.
  ChildServer(const std::vector<std::string>& serve_args, std::chrono::seconds ready_timeout,
              const std::string& binary = this_binary());
  ~ChildServer();  // stop()
  ChildServer(const ChildServer&) = delete;
  ChildServer& operator=(const ChildServer&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  Endpoint endpoint() const { return local_endpoint(port_); }
  bool running();
  // The last `lines` lines the server wrote to stderr.
  std::string log_tail(size_t lines = 20) const;
  // SIGTERM; SIGKILL when it has not exited 5 s later.
  void stop();

 private:
  void wait_until_listening();
  void wait_until_healthy(std::chrono::seconds timeout);
  [[noreturn]] void fail(const std::string& what);

  std::string command_;  // for messages
  std::string log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace nanoserve::bench
