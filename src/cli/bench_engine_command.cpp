// `nanoserve bench-engine -m MODEL.gguf`: in-process prefill and decode rates (median, min
// and max over repeats after a warm-up), next to this machine's measured memory read
// bandwidth, and decode's weight traffic as a fraction of it.
//
// On a shared machine the bandwidth comes and goes with other tenants' traffic, within
// seconds: a reading taken apart from decode (the best of 15 reads of a buffer of its own,
// also printed) can fall in a burst and differ widely from one run to the next. So the
// fraction is taken against reads made during decode itself: every kReadEvery steps, one read
// of all the model's weights on the model's own threads (not counted in decode's time).
//
// --profile adds where a decode step's time goes: each op's share of the forward pass and the
// bytes per second it read (model/op_profile.h), over every measured decode step.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/kv_type_option.h"
#include "cli/model_argument.h"
#include "kernels/simd_target.h"
#include "machine/bandwidth.h"
#include "machine/host.h"
#include "machine/peak_rss.h"
#include "model/model.h"

namespace nanoserve::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Decode steps between two reads of the weights (each as long as a step): the reads add an
// eighth to the benchmark's time and sample the bandwidth all through decode.
constexpr int kReadEvery = 8;

struct BenchArgs {
  std::string model;
  int prompt = 512;
  int generate = 128;
  int threads = 0;
  int repeats = 3;
  int batch = 1;  // sequences decoded together, one row each per forward call
  bool profile = false;
  bool no_read_test = false;  // skip the best of 15 reads of 1 GiB after decode
  std::string kv_type;
  int warmup_prompt = 0;  // the warm-up's prompt tokens (0: the whole prompt)
};

struct Rates {
  double prefill;  // tokens per second
  double decode;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int32_t argmax(std::span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

// One read of all the model's weights on its own threads, in bytes per second.
double read_weights(model::Model& m) { return machine::read_region(m.pool(), m.file().tensor_data()).bytes_per_s; }

// For each of `n_seq` sequences one prefill of the prompt, then `n` greedy decode steps that
// advance every sequence by one row, on a fresh cache. Rates count the tokens of all sequences.
// With `reads`, a read of the weights every kReadEvery steps appends its bytes per second;
// with `profile`, the decode steps' forward calls add to it.
Rates run_once(model::Model& m, const std::vector<int32_t>& prompt, int n, int n_seq,
               std::vector<double>* reads = nullptr, model::OpProfile* profile = nullptr) {
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  // Each sequence may round up to one more block than its positions need.
  model::KvCache cache(m.config(), n_seq * (n_prompt + n + model::KvCache::kDefaultBlockSize), n_seq);
  model::Batch batch;
  model::Logits logits;
  std::vector<int32_t> next(n_seq);
  const auto t0 = Clock::now();
  for (int s = 0; s < n_seq; ++s) {
    for (int64_t begin = 0; begin < n_prompt; begin += 512) {
      batch.clear();
      for (int64_t p = begin; p < std::min(n_prompt, begin + 512); ++p) batch.add(s, p, prompt[p], p == n_prompt - 1);
      m.forward(batch, cache, logits);
    }
    next[s] = argmax(logits.row(0));
  }
  const double prefill_s = seconds_since(t0);
  double decode_s = 0.0;
  m.set_profile(profile);
  for (int k = 0; k < n; ++k) {
    const auto t1 = Clock::now();
    batch.clear();
    for (int s = 0; s < n_seq; ++s) batch.add(s, n_prompt + k, next[s], true);
    m.forward(batch, cache, logits);
    for (int s = 0; s < n_seq; ++s) next[s] = argmax(logits.row(s));
    decode_s += seconds_since(t1);
    if (reads && k % kReadEvery == kReadEvery - 1)
      reads->push_back(read_weights(m));
  }
  m.set_profile(nullptr);
  return {n_seq * n_prompt / prefill_s, n_seq * n / decode_s};
}

// Multiply-adds of one row through every weight matrix (the output projection included).
double macs_per_row(const model::ModelConfig& c) {
  const double layer = static_cast<double>(c.n_embd) * (2.0 * c.q_dim() + 2.0 * c.kv_dim()) + 3.0 * c.n_embd * c.n_ff;
  return c.n_layer * layer + static_cast<double>(c.n_embd) * c.n_vocab;
}

// Per decode step: each op's time, its share of the forward pass, and what it read.
void print_profile(const model::OpProfile& p) {
  double total = 0.0;
  for (double s : p.seconds) total += s;
  const double steps = static_cast<double>(std::max<int64_t>(p.forwards, 1));
  fmt::print("profile    decode, per step ({} steps): forward {:.3f} ms\n", p.forwards, 1e3 * total / steps);
  fmt::print("           {:<15} {:>8} {:>7} {:>9} {:>7}\n", "op", "ms/step", "share", "MB/step", "GB/s");
  for (int i = 0; i < model::kOpCount; ++i) {
    const double s = p.seconds[i], bytes = p.bytes[i];
    if (s == 0.0) continue;  // an op this model has not (the router of a dense one)
    const std::string rate = bytes > 0.0 && s > 0.0 ? fmt::format("{:.1f}", bytes / s / 1e9) : "-";
    fmt::print("           {:<15} {:>8.3f} {:>6.1f}% {:>9.2f} {:>7}\n", model::op_name(static_cast<model::Op>(i)),
               1e3 * s / steps, total > 0.0 ? 100.0 * s / total : 0.0, bytes / steps / 1e6, rate);
  }
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
  if (a.batch < 1 || a.batch > 256) throw std::invalid_argument("-b must be between 1 and 256");
  if (a.warmup_prompt < 0) throw std::invalid_argument("--warmup-prompt must not be negative");
  const int threads = a.threads > 0 ? a.threads : machine::physical_cores();
  model::Model m(model_file(a.model), {.threads = threads, .kv_type = model::parse_optional_kv_type(a.kv_type)});
  const model::ModelConfig& c = m.config();
  std::mt19937 rng(1234);
  std::vector<int32_t> prompt(a.prompt);
  for (auto& t : prompt) t = static_cast<int32_t>(rng() % c.n_vocab);

  // Warm-up: page in the weights, size the buffers (a long prompt's first tokens do the first).
  const int warm = a.warmup_prompt > 0 ? std::min(a.warmup_prompt, a.prompt) : a.prompt;
  run_once(m, std::vector<int32_t>(prompt.begin(), prompt.begin() + warm), std::min(a.generate, 8), a.batch);
  std::vector<double> prefill, decode, reads;
  model::OpProfile profile;
  for (int r = 0; r < a.repeats; ++r) {
    const Rates rates = run_once(m, prompt, a.generate, a.batch, &reads, a.profile ? &profile : nullptr);
    prefill.push_back(rates.prefill);
    decode.push_back(rates.decode);
  }
  const Summary p = summarize(prefill), d = summarize(decode);
  // Per decode step: every weight matrix once, plus each sequence's KV cache read at the mean
  // position.
  const double kv_bytes =
      static_cast<double>(model::kv_bytes_for(c, a.prompt + a.generate / 2)) * a.batch;
  const double step_bytes = static_cast<double>(m.weight_bytes_per_token()) + kv_bytes;
  const int64_t peak_rss = machine::peak_rss_bytes();  // before the bandwidth test's buffer inflates it
  // Fewer than kReadEvery steps per run: reads now, the nearest to decode there are.
  const bool read_after = reads.empty();
  if (read_after)
    for (int i = 0; i < machine::kBandwidthPasses; ++i) reads.push_back(read_weights(m));
  const Summary bw = summarize(reads);
  const double apart = !a.no_read_test ? machine::read_bandwidth(m.pool()) : 0;

  fmt::print("model      {} ({}, {} layers, {:.1f} MB read per decode step, {} KV cache), {} threads\n", a.model,
             c.arch, c.n_layer, step_bytes / 1e6, model::kv_type_name(c.kv_type), m.threads());
  const char* cap = std::getenv("NANOSERVE_SIMD");
  fmt::print("simd       {}{} (this CPU runs {})\n", kernels::simd_target(),
             cap && *cap ? fmt::format(", as NANOSERVE_SIMD={} asks", cap) : "",
             fmt::join(kernels::supported_simd_targets(), ", "));
  fmt::print("bandwidth  {:.1f} GB/s median (min {:.1f}, max {:.1f}) of {} reads of the weights {}\n", bw.median / 1e9,
             bw.min / 1e9, bw.max / 1e9, reads.size(), read_after ? "after decode" : "between decode steps");
  if (!a.no_read_test)
    fmt::print("           {:.1f} GB/s best of {} reads of 1 GiB after decode (vector reads on {} threads)\n",
               apart / 1e9, machine::kBandwidthPasses, threads);
  fmt::print("prefill    {} tokens: {:.1f} tok/s median (min {:.1f}, max {:.1f}) over {} runs\n", a.prompt, p.median,
             p.min, p.max, a.repeats);
  const double steps_per_s = d.median / a.batch;
  const double decode_bytes_per_s = step_bytes * steps_per_s;
  fmt::print("decode     {} tokens: {:.1f} tok/s median (min {:.1f}, max {:.1f}) = {:.1f} GB/s, {:.0f}% of the bandwidth"
             " reading the weights{}\n",
             a.generate * a.batch, d.median, d.min, d.max, decode_bytes_per_s / 1e9, 100.0 * decode_bytes_per_s / bw.median,
             !a.no_read_test ? fmt::format(" ({:.0f}% of the best read of 1 GiB)", 100.0 * decode_bytes_per_s / apart) : "");
  if (a.batch > 1)
    fmt::print("batch      {} sequences per step: {:.1f} ms per step, {:.1f} GMAC/s\n", a.batch, 1e3 / steps_per_s,
               macs_per_row(c) * d.median / 1e9);
  fmt::print("peak RSS   {:.1f} MB\n", peak_rss / 1048576.0);
  if (a.profile) print_profile(profile);
}

}  // namespace

void add_bench_engine_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench-engine", "In-process prefill and decode speed, and memory bandwidth");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("-m,--model", a->model, "GGUF file, or a Hugging Face name (as serve's --model)")->required();
  cmd->add_option("-p,--prompt", a->prompt, "Prompt tokens to prefill")->capture_default_str();
  cmd->add_option("-n,--n-gen", a->generate, "Tokens to decode")->capture_default_str();
  cmd->add_option("-t,--threads", a->threads, "Threads (default: physical cores)");
  cmd->add_option("-r,--repeats", a->repeats, "Measured runs after the warm-up")->capture_default_str();
  cmd->add_option("--warmup-prompt", a->warmup_prompt,
                  "Prompt tokens of the warm-up run (default: the whole prompt; fewer spare a long prompt's second "
                  "prefill)");
  add_kv_type_option(cmd, a->kv_type);
  cmd->add_option("-b,--batch", a->batch, "Sequences decoded together (one row each per step)")->capture_default_str();
  cmd->add_flag("--profile", a->profile, "Also print where a decode step's time goes, op by op");
  cmd->add_flag("--no-read-test", a->no_read_test,
                "Skip the reads of 1 GiB after decode (seconds on a slow target; decode's share of the bandwidth is "
                "then against the reads of the weights alone)");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace nanoserve::cli
