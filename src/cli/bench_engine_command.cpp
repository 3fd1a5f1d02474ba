// `nanoserve bench-engine -m MODEL.gguf`: in-process prefill and decode rates (median, min
// and max over repeats after a warm-up), next to this machine's measured memory read
// bandwidth, and decode's weight traffic as a fraction of it.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "kernels/bandwidth.h"
#include "model/model.h"

namespace nanoserve::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchArgs {
  std::string model;
  int prompt = 512;
  int generate = 128;
  int threads = 0;
  int repeats = 3;
};

struct Rates {
  double prefill;  // tokens per second
  double decode;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One prefill of the prompt, then `n` greedy decode steps, on a fresh cache.
Rates run_once(model::Model& m, const std::vector<int32_t>& prompt, int n) {
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  model::KvCache cache(m.config(), n_prompt + n);
  model::Batch batch;
  model::Logits logits;
  const auto t0 = Clock::now();
  for (int64_t begin = 0; begin < n_prompt; begin += 512) {
    batch.clear();
    for (int64_t p = begin; p < std::min(n_prompt, begin + 512); ++p) batch.add(0, p, prompt[p], p == n_prompt - 1);
    m.forward(batch, cache, logits);
  }
  const double prefill_s = seconds_since(t0);
  const auto t1 = Clock::now();
  for (int k = 0; k < n; ++k) {
    const auto row = logits.row(0);
    const int32_t next = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    batch.clear();
    batch.add(0, n_prompt + k, next, true);
    m.forward(batch, cache, logits);
  }
  return {n_prompt / prefill_s, n / seconds_since(t1)};
}

struct Summary {
  double median, min, max;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

void run_bench(const BenchArgs& a) {
  if (a.prompt < 1 || a.generate < 1 || a.repeats < 1) throw std::invalid_argument("-p, -n and -r must be positive");
  const int threads = a.threads > 0 ? a.threads : kernels::ThreadPool::physical_cores();
  model::Model m(a.model, {.threads = threads});
  const model::ModelConfig& c = m.config();
  std::mt19937 rng(1234);
  std::vector<int32_t> prompt(a.prompt);
  for (auto& t : prompt) t = static_cast<int32_t>(rng() % c.n_vocab);

  run_once(m, prompt, std::min(a.generate, 8));  // warm-up: page in the weights, size the buffers
  std::vector<double> prefill, decode;
  for (int r = 0; r < a.repeats; ++r) {
    const Rates rates = run_once(m, prompt, a.generate);
    prefill.push_back(rates.prefill);
    decode.push_back(rates.decode);
  }
  const Summary p = summarize(prefill), d = summarize(decode);
  // Per decode step: every weight matrix once, plus the KV cache read at the mean position.
  const double kv_bytes = 2.0 * c.n_layer * c.kv_dim() * sizeof(uint16_t) * (a.prompt + a.generate / 2.0);
  const double step_bytes = static_cast<double>(m.weight_bytes_per_token()) + kv_bytes;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);  // before the bandwidth test's buffer inflates it
  kernels::ThreadPool pool(threads);  // the model's workers are asleep by now
  const double bandwidth = kernels::read_bandwidth(pool);

  fmt::print("model      {} ({}, {} layers, {:.1f} MB read per decode step), {} threads\n", a.model, c.arch, c.n_layer,
             step_bytes / 1e6, m.threads());
  fmt::print("bandwidth  {:.1f} GB/s (vector reads on {} threads, best of 5)\n", bandwidth / 1e9, threads);
  fmt::print("prefill    {} tokens: {:.1f} tok/s median (min {:.1f}, max {:.1f}) over {} runs\n", a.prompt, p.median,
             p.min, p.max, a.repeats);
  fmt::print("decode     {} tokens: {:.1f} tok/s median (min {:.1f}, max {:.1f}) = {:.1f} GB/s, {:.0f}% of bandwidth\n",
             a.generate, d.median, d.min, d.max, step_bytes * d.median / 1e9, 100.0 * step_bytes * d.median / bandwidth);
  fmt::print("peak RSS   {:.1f} MB\n", usage.ru_maxrss / 1024.0);
}

}  // namespace

void add_bench_engine_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench-engine", "In-process prefill and decode speed, and memory bandwidth");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("-m,--model", a->model, "GGUF model")->required();
  cmd->add_option("-p,--prompt", a->prompt, "Prompt tokens to prefill")->capture_default_str();
  cmd->add_option("-n,--n-gen", a->generate, "Tokens to decode")->capture_default_str();
  cmd->add_option("-t,--threads", a->threads, "Threads (default: physical cores)");
  cmd->add_option("-r,--repeats", a->repeats, "Measured runs after the warm-up")->capture_default_str();
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace nanoserve::cli
