// A `nanoserve serve` process for tests: started on 127.0.0.1 with a free port (--port 0;
// the port is read from its "listening on" log line), stopped with SIGTERM.
#pragma once

#include <httplib.h>
#include <sys/types.h>

#include <chrono>
#include <string>

namespace nanoserve::test {

// `serve` arguments for the mock engine over the tiny golden model's vocabulary, then `extra`.
std::string mock_server_args(const std::string& extra = "");

class ServerProcess {
 public:
  // `nanoserve serve --host 127.0.0.1 --port 0 ARGS` (ARGS may quote). Waits until it
  // listens, and, with wait_until_healthy, until /health says 200. Throws on failure.
  explicit ServerProcess(const std::string& args, bool wait_until_healthy = true);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  httplib::Client client() const;
  // Everything the server wrote to stderr so far.
  std::string log() const;
  // Waits until the log holds `text` (a request's line is written just after its response);
  // returns the log, or throws after `timeout`.
  std::string wait_for_log(const std::string& text, std::chrono::milliseconds timeout) const;
  // Waits until /health answers 200; throws after `timeout`.
  void wait_until_ready(std::chrono::seconds timeout) const;
  // SIGTERM, then the exit status (a clean shutdown is 0).
  int stop();
  // Sends `signal` and returns at once (stop() or wait_for_exit() reaps it).
  void signal(int signal) const;
  // The exit status once it exits on its own (128 + the signal if one killed it); -1 when it has
  // not within `timeout` (it is then killed).
  int wait_for_exit(std::chrono::milliseconds timeout);

 private:
  void wait_until_listening(const std::string& args);

  pid_t pid_ = -1;
  std::string log_path_;
  int port_ = 0;
};

}  // namespace nanoserve::test
