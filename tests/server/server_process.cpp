#include "server/server_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <regex>
#include <stdexcept>
#include <thread>

#include "support/test_paths.h"

namespace nanoserve::test {

std::string mock_server_args(const std::string& extra) {
  return "--engine mock --model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf") + " " + extra;
}

using namespace std::chrono_literals;

ServerProcess::ServerProcess(const std::string& args, bool wait_until_healthy) {
  static std::atomic<int> started{0};
  log_path_ = "/tmp/nanoserve-serve-test-" + std::to_string(getpid()) + "-" + std::to_string(started++) + ".log";
  const std::string command =
      "exec " + nanoserve_binary() + " serve --host 127.0.0.1 --port 0 " + args + " 2> " + log_path_ + " > /dev/null";
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  try {
    wait_until_listening(args);
    if (wait_until_healthy) wait_until_ready(120s);
  } catch (...) {
    stop();  // the destructor does not run when the constructor throws
    std::remove(log_path_.c_str());
    throw;
  }
}

void ServerProcess::wait_until_listening(const std::string& args) {
  const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+))");
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    std::smatch m;
    const std::string text = log();
    if (std::regex_search(text, m, listening)) {
      port_ = std::stoi(m[1]);
      return;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("nanoserve serve " + args + " exited before listening:\n" + text);
    }
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("nanoserve serve did not listen:\n" + text);
    std::this_thread::sleep_for(5ms);
  }
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) stop();
  std::remove(log_path_.c_str());
}

httplib::Client ServerProcess::client() const {
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(60, 0);
  return c;
}

std::string ServerProcess::log() const {
  try {
    return read_file(log_path_);
  } catch (const std::exception&) {
    return "";  // not created yet
  }
}

std::string ServerProcess::wait_for_log(const std::string& text, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::string current = log();
    if (current.find(text) != std::string::npos) return current;
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("the log never said " + text + ":\n" + current);
    std::this_thread::sleep_for(2ms);
  }
}

void ServerProcess::wait_until_ready(std::chrono::seconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto c = client();
    if (auto res = c.Get("/health"); res && res->status == 200) return;
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("nanoserve serve is not ready:\n" + log());
    std::this_thread::sleep_for(10ms);
  }
}

int ServerProcess::stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void ServerProcess::signal(int signal) const {
  if (pid_ > 0) kill(pid_, signal);
}

int ServerProcess::wait_for_exit(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  for (const auto give_up = std::chrono::steady_clock::now() + timeout;;) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() > give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace nanoserve::test
