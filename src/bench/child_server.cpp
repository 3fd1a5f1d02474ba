#include "bench/child_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bench/interrupt.h"
#include "bench/stream_client.h"

namespace nanoserve::bench {
namespace {

using namespace std::chrono_literals;

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// In the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_server(char* const* argv, int log_fd, pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the suite died before prctl
  const int null_fd = open("/dev/null", O_RDWR);
  dup2(null_fd, STDIN_FILENO);
  dup2(null_fd, STDOUT_FILENO);
  dup2(log_fd, STDERR_FILENO);
  execv(argv[0], argv);
  _exit(127);
}

}  // namespace

std::string this_binary() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

ChildServer::ChildServer(const std::vector<std::string>& serve_args, std::chrono::seconds ready_timeout,
                         const std::string& binary) {
  std::vector<std::string> argv = {binary, "serve", "--host", "127.0.0.1", "--port", "0"};
  argv.insert(argv.end(), serve_args.begin(), serve_args.end());
  for (const auto& a : argv) command_ += (command_.empty() ? "" : " ") + a;
  std::string log_template = (std::filesystem::temp_directory_path() / "nanoserve-bench-serve-XXXXXX").string();
  const int log_fd = mkstemp(log_template.data());
  if (log_fd < 0) throw std::runtime_error("cannot create a log file for " + command_);
  log_path_ = log_template;
  std::vector<char*> exec_argv;  // built before fork: the child may not allocate
  for (auto& a : argv) exec_argv.push_back(a.data());
  exec_argv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) {
    close(log_fd);
    throw std::runtime_error("fork failed for " + command_);
  }
  if (pid_ == 0) exec_server(exec_argv.data(), log_fd, parent);
  close(log_fd);
  register_child(pid_);
  try {
    wait_until_listening();
    wait_until_healthy(ready_timeout);
  } catch (...) {
    stop();
    std::filesystem::remove(log_path_);
    throw;
  }
}

ChildServer::~ChildServer() {
  stop();
  std::error_code ignored;
  std::filesystem::remove(log_path_, ignored);
}

bool ChildServer::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    unregister_child(pid_);
    pid_ = -1;
    return false;
  }
  return true;
}

std::string ChildServer::log_tail(size_t lines) const {
  std::vector<std::string> all;
  std::istringstream in(read_whole(log_path_));
  for (std::string line; std::getline(in, line);) all.push_back("    " + line + "\n");
  std::string tail;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) tail += all[i];
  return tail;
}

void ChildServer::fail(const std::string& what) {
  const std::string tail = log_tail();
  throw std::runtime_error(what + "\n  command: " + command_ + "\n  its log ends with:\n" +
                           (tail.empty() ? "(nothing)" : tail));
}

void ChildServer::wait_until_listening() {
  const std::string marker = "listening on http://127.0.0.1:";
  const auto deadline = Clock::now() + 60s;
  for (;;) {
    const std::string log = read_whole(log_path_);
    if (const size_t at = log.find(marker); at != std::string::npos) {
      const size_t digits = at + marker.size();
      const size_t end = log.find_first_not_of("0123456789", digits);
      if (end != std::string::npos && end > digits) {
        port_ = std::stoi(log.substr(digits, end - digits));
        return;
      }
    }
    if (!running()) fail("the server exited before it listened");
    if (interrupted()) fail("interrupted while the server started");
    if (Clock::now() > deadline) fail("the server did not listen within 60 s");
    std::this_thread::sleep_for(10ms);
  }
}

void ChildServer::wait_until_healthy(std::chrono::seconds timeout) {
  StreamClient client(endpoint(), {.connect_s = 2, .read_s = 5});
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (client.get("/health") == 200) return;
    if (!running()) fail("the server exited while loading");
    if (interrupted()) fail("interrupted while the server loaded");
    if (Clock::now() > deadline)
      fail("the server was not healthy within " + std::to_string(timeout.count()) + " s");
    std::this_thread::sleep_for(50ms);
  }
}

void ChildServer::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const auto deadline = Clock::now() + 5s;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  unregister_child(pid_);
  pid_ = -1;
}

}  // namespace nanoserve::bench
