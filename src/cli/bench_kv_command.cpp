// nanoserve bench-kv: a q8_0 KV cache against an F16 one in one process, side by side. The
// model is loaded once per cache type (on one thread pool), both caches take the same prompt
// chunk by chunk, then decode steps alternate between them, in A B B A order from one pair of
// steps to the next. This machine's memory bandwidth moves between states within seconds; run
// by run, one type's figures could fall in a slow state and the other's in a fast one, but here
// every pair of steps shares its state, and the per-pair ratios say how steady they were. A
// warm-up first (a prompt chunk and a few steps on each side, on a cache of its own).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_argument.h"
#include "kernels/simd_target.h"
#include "kernels/thread_pool.h"
#include "machine/host.h"
#include "model/model.h"

namespace nanoserve::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchKvArgs {
  std::string model;
  int prompt = 4096;
  int generate = 128;
  int threads = 0;
};

// One cache type's model, cache, and the seconds its prefill chunks and decode steps took.
struct Side {
  std::unique_ptr<model::Model> model;
  std::unique_ptr<model::KvCache> cache;
  model::Batch batch;
  model::Logits logits;
  int32_t next = 0;
  double prefill_s = 0.0;
  std::vector<double> step_s;

  // Runs `batch` as filled, adds its time to `*seconds` (or pushes it onto step_s when null);
  // the greedy next token from the logits it asked for.
  void forward(double* seconds) {
    const auto t0 = Clock::now();
    model->forward(batch, *cache, logits);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (seconds) *seconds += s;
    else step_s.push_back(s);
    if (logits.batch_rows.empty()) return;  // a prompt chunk before the last asks for none
    const auto row = logits.row(0);
    next = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

void run_bench_kv(const BenchKvArgs& a) {
  if (a.prompt < 1 || a.generate < 2) throw std::invalid_argument("-p must be positive and -n at least 2");
  kernels::ThreadPool pool(a.threads > 0 ? a.threads : machine::physical_cores());
  const std::string path = model_file(a.model);
  Side sides[2];
  const model::KvType types[2] = {model::KvType::F16, model::KvType::Q8_0};
  for (int i = 0; i < 2; ++i) {
    sides[i].model = std::make_unique<model::Model>(path, model::ModelOptions{.pool = &pool, .kv_type = types[i]});
    sides[i].cache = std::make_unique<model::KvCache>(sides[i].model->config(),
                                                      a.prompt + a.generate + model::KvCache::kDefaultBlockSize);
  }
  const model::ModelConfig& c = sides[0].model->config();
  constexpr int64_t kChunk = 512;
  std::mt19937 rng(1234);
  std::vector<int32_t> prompt(a.prompt);
  for (auto& t : prompt) t = static_cast<int32_t>(rng() % c.n_vocab);

  // Warm-up, on a cache of its own: the first forward passes touch the buffers they grow.
  for (Side& s : sides) {
    model::KvCache warm(s.model->config(), kChunk + 8 + model::KvCache::kDefaultBlockSize);
    const int64_t n = std::min<int64_t>(a.prompt, kChunk);
    s.batch.clear();
    for (int64_t p = 0; p < n; ++p) s.batch.add(0, p, prompt[p], p == n - 1);
    s.model->forward(s.batch, warm, s.logits);
    for (int64_t p = n; p < n + 8; ++p) {  // and a few decode steps
      s.batch.clear();
      s.batch.add(0, p, prompt[0], true);
      s.model->forward(s.batch, warm, s.logits);
    }
  }
  // Chunk k of the prompt, then step k of decode: on side order(k)[0] first, then order(k)[1].
  auto order = [](int k) { return (k / 2 + k) % 2 == 0 ? std::array<int, 2>{0, 1} : std::array<int, 2>{1, 0}; };
  for (int64_t begin = 0, k = 0; begin < a.prompt; begin += kChunk, ++k)
    for (int i : order(static_cast<int>(k))) {
      Side& s = sides[i];
      s.batch.clear();
      for (int64_t p = begin; p < std::min<int64_t>(a.prompt, begin + kChunk); ++p)
        s.batch.add(0, p, prompt[p], p == a.prompt - 1);
      s.forward(&s.prefill_s);
    }
  for (int k = 0; k < a.generate; ++k)
    for (int i : order(k)) {
      Side& s = sides[i];
      s.batch.clear();
      s.batch.add(0, a.prompt + k, s.next, true);
      s.forward(nullptr);
    }

  std::vector<double> pair_ratios;  // F16's step time / q8_0's, per step
  for (int k = 0; k < a.generate; ++k) pair_ratios.push_back(sides[0].step_s[k] / sides[1].step_s[k]);
  std::sort(pair_ratios.begin(), pair_ratios.end());
  fmt::print("model      {} ({}, {} layers), {} threads, simd {}\n", a.model, c.arch, c.n_layer, pool.size(),
             kernels::simd_target());
  for (int i = 0; i < 2; ++i) {
    const int64_t kv = model::kv_bytes_for(sides[i].model->config(), a.prompt + a.generate);
    fmt::print("{:<5} KV cache {:.3f} MB; prefill {} tokens {:.1f} tok/s; decode {} steps, median {:.2f} ms = "
               "{:.1f} tok/s\n",
               model::kv_type_name(types[i]), kv / 1e6, a.prompt, a.prompt / sides[i].prefill_s, a.generate,
               1e3 * median(sides[i].step_s), 1.0 / median(sides[i].step_s));
  }
  fmt::print("q8_0/f16   prefill {:.3f}x, decode {:.3f}x (median step times); per pair of steps {:.3f}x median, "
             "{:.3f}x to {:.3f}x between the 10th and 90th percentiles\n",
             sides[0].prefill_s / sides[1].prefill_s, median(sides[0].step_s) / median(sides[1].step_s),
             pair_ratios[pair_ratios.size() / 2], pair_ratios[pair_ratios.size() / 10],
             pair_ratios[pair_ratios.size() * 9 / 10]);
}

}  // namespace

void add_bench_kv_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench-kv", "A q8_0 KV cache against an F16 one, side by side in one process (steps alternating A B B A)");
  auto a = std::make_shared<BenchKvArgs>();
  cmd->add_option("-m,--model", a->model, "GGUF file, or a Hugging Face name (as serve's --model)")->required();
  cmd->add_option("-p,--prompt", a->prompt, "Prompt tokens each cache takes before decode")->capture_default_str();
  cmd->add_option("-n,--n-gen", a->generate, "Decode steps on each cache")->capture_default_str();
  cmd->add_option("-t,--threads", a->threads, "Threads (default: physical cores)");
  cmd->callback([a] { run_bench_kv(*a); });
}

}  // namespace nanoserve::cli
