#include "kernels/thread_pool.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace nanoserve::kernels {
namespace {

// Spin this many times before sleeping: long enough to bridge the gap between two kernels
// of one forward pass, short enough not to burn a core between requests.
constexpr int kSpinRounds = 1 << 12;
// While spinning, give the core away now and then: with more threads than free cores a pure
// spin would keep a thread that has work off the CPU for a whole time slice.
constexpr int kYieldEvery = 64;
// Chunks per thread: enough that a late or preempted thread costs little, few enough that
// claiming them is noise.
constexpr int64_t kChunksPerThread = 16;
constexpr uint64_t kField = 0xffff;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

uint64_t state_of(uint32_t generation, uint64_t count, uint64_t next) {
  return static_cast<uint64_t>(generation) << 32 | count << 16 | next;
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  workers_.reserve(n_threads_ - 1);
  for (int t = 1; t < n_threads_; ++t) workers_.emplace_back([this, t] { work(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  wake_.fetch_add(1, std::memory_order_acq_rel);
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_chunks(uint64_t generation, int thread) {
  uint64_t cur = state_.load(std::memory_order_acquire);
  for (;;) {
    const uint64_t count = (cur >> 16) & kField, next = cur & kField;
    if ((cur >> 32) != generation || next >= count) return;
    if (!state_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // The claim holds the job open, so its fields stay as they were published.
    const int64_t begin = static_cast<int64_t>(next) * chunk_;
    const int64_t end = std::min(n_, begin + chunk_);
    call_(fn_, begin, end, thread);
    done_.fetch_add(1, std::memory_order_acq_rel);
    cur = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::dispatch(int64_t n, int64_t grain, void* fn, Call call) {
  const int64_t wanted = n_threads_ * kChunksPerThread;
  int64_t chunk = (n + wanted - 1) / wanted;
  chunk = (chunk + grain - 1) / grain * grain;
  const int64_t min_chunk = (n + static_cast<int64_t>(kField) - 1) / static_cast<int64_t>(kField);
  chunk = std::max(chunk, min_chunk);  // at most 65535 chunks fit the state word
  const uint64_t count = static_cast<uint64_t>((n + chunk - 1) / chunk);

  fn_ = fn;
  call_ = call;
  n_ = n;
  chunk_ = chunk;
  done_.store(0, std::memory_order_relaxed);
  const uint32_t generation = ++generation_;
  state_.store(state_of(generation, count, 0), std::memory_order_release);  // publishes the job
  wake_.fetch_add(1, std::memory_order_release);
  wake_.notify_all();  // no system call unless a worker is asleep

  run_chunks(generation, 0);
  for (int i = 1; done_.load(std::memory_order_acquire) != static_cast<int64_t>(count); ++i) {
    cpu_relax();
    if (i % kYieldEvery == 0) std::this_thread::yield();
  }
}

void ThreadPool::work(int thread) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t now = wake_.load(std::memory_order_acquire);
    for (int i = 1; now == seen && i <= kSpinRounds; ++i) {
      cpu_relax();
      if (i % kYieldEvery == 0) std::this_thread::yield();
      now = wake_.load(std::memory_order_acquire);
    }
    if (now == seen) {
      wake_.wait(seen, std::memory_order_acquire);
      continue;
    }
    seen = now;
    if (stop_.load(std::memory_order_acquire)) return;
    run_chunks(state_.load(std::memory_order_acquire) >> 32, thread);
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
