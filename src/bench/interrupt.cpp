#include "bench/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <array>

namespace nanoserve::bench {
namespace {

std::atomic<bool> g_interrupted{false};
std::array<std::atomic<pid_t>, 32> g_children{};

void on_signal(int) {
  // Only async-signal-safe calls here.
  if (g_interrupted.exchange(true)) _exit(130);
  for (auto& child : g_children)
    if (const pid_t pid = child.load(); pid > 0) kill(pid, SIGKILL);
  constexpr char message[] = "\nnanoserve bench: interrupted; keeping the rows written so far (Ctrl-C again quits at once)\n";
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, message, sizeof(message) - 1);
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a server that dies mid-request must not kill the client
}

bool interrupted() { return g_interrupted.load(); }
const std::atomic<bool>& interrupt_flag() { return g_interrupted; }

void register_child(pid_t pid) {
  for (auto& child : g_children) {
    pid_t empty = 0;
    if (child.compare_exchange_strong(empty, pid)) return;
  }
}

void unregister_child(pid_t pid) {
  for (auto& child : g_children) {
    pid_t expected = pid;
    if (child.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace nanoserve::bench
