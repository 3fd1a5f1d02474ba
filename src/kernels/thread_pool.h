// A small persistent thread pool for data-parallel kernels.
//
// run(n, fn, grain, split) splits [0, n) into chunks (long ones first, shrinking to `grain` at
// the end; each a multiple of `grain` except the last) and calls fn(begin, end, thread) once per
// chunk; `thread` is the index of the pool thread running it (0 = the caller), for per-thread
// scratch memory. The caller and the workers claim chunks from one atomic counter, so the call
// never waits for a worker to wake up: on a machine whose cores are busy with other work, the
// caller simply does more of the chunks itself (a fixed split would stall each call for a
// scheduler time slice). The call returns when every chunk is done. Between calls the workers
// spin briefly, then sleep on an atomic (futex): no OS call and no allocation per run while a
// forward pass is going.
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

  // How run() cuts [0, n) into chunks.
  //   kGuided: each chunk takes the part left ÷ (2 × threads): long chunks first, short at
  //            the end, so that a thread that falls behind leaves the others little to wait for.
  //   kStreams: the first chunk of each thread 7/8 of its share, then as kGuided: for loops
  //            that stream memory, where every chunk start is a new stream for the hardware
  //            prefetchers to pick up (decode's matmuls, kernels/matmul_range.h).
  enum class Split { kGuided, kStreams };

  // Not reentrant: fn must not call run() on the same pool. fn must not throw. Which thread
  // runs which chunk varies from call to call; results must not depend on it.
  template <class Fn>
  void run(int64_t n, Fn&& fn, int64_t grain = 1, Split split = Split::kGuided) {
    if (n <= 0) return;
    if (n_threads_ == 1 || n <= grain) {
      fn(int64_t{0}, n, 0);
      return;
    }
    using F = std::remove_reference_t<Fn>;
    dispatch(n, grain, split, &fn, [](void* f, int64_t b, int64_t e, int t) { (*static_cast<F*>(f))(b, e, t); });
  }

  // Physical cores of this machine (logical CPUs when the topology is unknown).
  static int physical_cores();

 private:
  using Call = void (*)(void* fn, int64_t begin, int64_t end, int thread);

  void dispatch(int64_t n, int64_t grain, Split split, void* fn, Call call);
  void work(int thread);
  // Claims and runs chunks of the job of `generation` until none is left.
  void run_chunks(uint64_t generation, int thread);

  int n_threads_;
  std::vector<std::thread> workers_;
  // The current job; written by the caller before it publishes a new generation in state_,
  // unchanged until every chunk of it is done.
  void* fn_ = nullptr;
  Call call_ = nullptr;
  std::vector<int64_t> bounds_;  // chunk k is [bounds_[k], bounds_[k + 1])
  // generation << 32 | chunk count << 16 | next chunk: claiming is one compare-exchange that
  // fails for a worker still looking at an older generation.
  std::atomic<uint64_t> state_{0};
  std::atomic<int64_t> done_{0};        // chunks of the current job finished
  std::atomic<uint32_t> wake_{0};       // bumped per job; sleeping workers wait on it
  std::atomic<bool> stop_{false};
  uint32_t generation_ = 0;             // the caller's count of jobs
};

}  // namespace nanoserve::kernels
