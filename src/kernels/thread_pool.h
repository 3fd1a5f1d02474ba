// A small persistent thread pool for data-parallel kernels.
//
// run(n, fn) splits [0, n) into one contiguous range per thread and calls fn(begin, end,
// thread) on each; the calling thread takes range 0 and the call returns when every range
// is done. Between calls the workers spin briefly, then sleep on an atomic (futex), so a
// forward pass that issues many runs back to back pays no OS call and no allocation per run.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace nanoserve::kernels {

class ThreadPool {
 public:
  // n_threads counts the calling thread: 1 = no workers (everything runs inline).
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Not reentrant: fn must not call run() on the same pool. fn must not throw.
  template <class Fn>
  void run(int64_t n, Fn&& fn) {
    if (n <= 0) return;
    if (n_threads_ == 1 || n == 1) {
      fn(int64_t{0}, n, 0);
      return;
    }
    Job job{n, &fn, [](void* f, int64_t b, int64_t e, int t) { (*static_cast<std::remove_reference_t<Fn>*>(f))(b, e, t); }};
    dispatch(job);
  }

  // Physical cores of this machine (logical CPUs when the topology is unknown).
  static int physical_cores();

 private:
  struct Job {
    int64_t n;
    void* fn;
    void (*call)(void* fn, int64_t begin, int64_t end, int thread);
  };

  void dispatch(const Job& job);
  void work(int thread);
  void run_share(const Job& job, int thread) const;

  int n_threads_;
  std::vector<std::thread> workers_;
  const Job* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};  // bumped once per run; workers wait for a change
  std::atomic<int> pending_{0};           // workers still busy with the current run
  std::atomic<bool> stop_{false};
};

}  // namespace nanoserve::kernels
