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
// But not in the first rounds, which cover most gaps between one forward pass's kernels: a
// thread inside a sched_yield answers a new job only once the call returns. Chosen by
// measurement: experiments/kernel-notes.md.
constexpr int kQuietRounds = 256;
// Chunks shrink as the job runs out (guided scheduling): each takes the rows left ÷
// (kShareDivisor × threads), rounded up to the grain. Long first chunks keep decode's weight
// reads in long runs (every chunk start is a new stream for the prefetchers to pick up); the
// last chunks are a grain or two, so a thread that falls behind leaves the others little tail.
constexpr int64_t kShareDivisor = 2;
// Split::kStreams: each thread's first chunk, in eighths of its share (one long stream a thread
// for decode's matmuls; the eighth left over goes in shrinking chunks to whichever thread is
// ahead). Chosen by measurement: experiments/kernel-notes.md.
constexpr int64_t kStreamEighths = 7;
// Room for the chunk bounds of a job, per thread. Each chunk takes at least 1 / (2 × threads)
// of the rows left, so a job of n rows has at most about 2 × threads × (ln n + 1) chunks: 64 per
// thread covers n up to 2^40 or so; a longer schedule gives its last chunk all that is left.
constexpr int64_t kMaxChunksPerThread = 64;
constexpr uint64_t kField = 0xffff;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Round `round` (from 1) of a wait.
inline void spin(int64_t round) {
  cpu_relax();
  if (round > kQuietRounds && round % kYieldEvery == 0) std::this_thread::yield();
}

uint64_t state_of(uint32_t generation, uint64_t count, uint64_t next) {
  return static_cast<uint64_t>(generation) << 32 | count << 16 | next;
}

}  // namespace

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(n_threads < 1 ? 1 : n_threads),
      bounds_(std::min<int64_t>(kMaxChunksPerThread * n_threads_, kField) + 1) {
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
    call_(fn_, bounds_[next], bounds_[next + 1], thread);
    done_.fetch_add(1, std::memory_order_acq_rel);
    cur = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::dispatch(int64_t n, int64_t grain, Split split, void* fn, Call call) {
  const int64_t max_chunks = static_cast<int64_t>(bounds_.size()) - 1;  // below kField
  const int64_t divisor = kShareDivisor * n_threads_;
  int64_t count = 0;
  for (int64_t begin = 0; begin < n; ++count) {
    bounds_[count] = begin;
    const bool stream_start = split == Split::kStreams && count < n_threads_;
    const int64_t share = stream_start ? std::max<int64_t>(1, n / n_threads_ * kStreamEighths / 8)
                                       : (n - begin + divisor - 1) / divisor;
    begin = count + 1 == max_chunks ? n : std::min(n, begin + (share + grain - 1) / grain * grain);
  }
  bounds_[count] = n;

  fn_ = fn;
  call_ = call;
  done_.store(0, std::memory_order_relaxed);
  const uint32_t generation = ++generation_;
  // Publishes the job.
  state_.store(state_of(generation, static_cast<uint64_t>(count), 0), std::memory_order_release);
  wake_.fetch_add(1, std::memory_order_release);
  wake_.notify_all();  // no system call unless a worker is asleep

  run_chunks(generation, 0);
  for (int64_t i = 1; done_.load(std::memory_order_acquire) != count; ++i) spin(i);
}

void ThreadPool::work(int thread) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t now = wake_.load(std::memory_order_acquire);
    for (int64_t i = 1; now == seen && i <= kSpinRounds; ++i) {
      spin(i);
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
