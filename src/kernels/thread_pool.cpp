#include "kernels/thread_pool.h"

#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace nanoserve::kernels {
namespace {

// Spin this many times before sleeping: long enough to bridge the gap between two kernels
// of one forward pass, short enough not to burn a core between requests.
constexpr int kSpinRounds = 1 << 12;
// While spinning, give the core away now and then: with more threads than free cores a
// pure spin would keep the thread we wait for off the CPU for a whole time slice.
constexpr int kYieldEvery = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  workers_.reserve(n_threads_ - 1);
  for (int t = 1; t < n_threads_; ++t) workers_.emplace_back([this, t] { work(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_share(const Job& job, int thread) const {
  const int64_t begin = job.n * thread / n_threads_;
  const int64_t end = job.n * (thread + 1) / n_threads_;
  if (begin < end) job.call(job.fn, begin, end, thread);
}

void ThreadPool::dispatch(const Job& job) {
  job_ = &job;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);  // publishes job_ and pending_
  generation_.notify_all();  // no system call unless a worker is asleep
  run_share(job, 0);
  for (int i = 1; pending_.load(std::memory_order_acquire) != 0; ++i) {
    cpu_relax();
    if (i % kYieldEvery == 0) std::this_thread::yield();
  }
  job_ = nullptr;
}

void ThreadPool::work(int thread) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t now = generation_.load(std::memory_order_acquire);
    for (int i = 1; now == seen && i <= kSpinRounds; ++i) {
      cpu_relax();
      if (i % kYieldEvery == 0) std::this_thread::yield();
      now = generation_.load(std::memory_order_acquire);
    }
    if (now == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      continue;
    }
    seen = now;
    if (stop_.load(std::memory_order_acquire)) return;
    run_share(*job_, thread);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

int ThreadPool::physical_cores() {
  // Count distinct (package, core) pairs; hyper-threads share one.
  std::set<std::pair<std::string, std::string>> cores;
  std::ifstream in("/proc/cpuinfo");
  std::string line, package, core;
  while (std::getline(in, line)) {
    auto value = [&] { return line.substr(line.find(':') + 1); };
    if (line.rfind("physical id", 0) == 0) package = value();
    else if (line.rfind("core id", 0) == 0) core = value();
    else if (line.empty() && !core.empty()) {
      cores.emplace(package, core);
      core.clear();
    }
  }
  if (!core.empty()) cores.emplace(package, core);
  if (!cores.empty()) return static_cast<int>(cores.size());
  const unsigned logical = std::thread::hardware_concurrency();
  return logical ? static_cast<int>(logical) : 1;
}

}  // namespace nanoserve::kernels
