// Decode's weight traffic without the rest of a forward pass: one activation row against a
// stream of weight matrices (interleaved where the type is) larger than the last-level cache, on the pool's
// threads, as a decode step reads them. Reports weight GB/s and its fraction of the memory read
// bandwidth measured in the same process (machine::read_bandwidth, as bench-engine does):
// how close each weight type's kernel comes to the machine's limit when streaming.
//   type/...: one type on a 0.5B-like shape (896 × 4864 for floats and blocks of 32, 4864 × 896 for the
//             K-quants and IQ4_XS, whose 256-element super-blocks need the longer rows), 512 MB;
//   one_call/...: type/'s matrices of Q8_0, Q4_0 and Q4_K as one matrix read in one call: against
//             type/, what the calls' starts and ends cost. AVX2 on the Zen 4 VM, three runs of
//             type/ then one_call/, of the bandwidth: Q8_0 0.76 0.89 0.67 -> 0.95 0.79 0.79, Q4_0
//             0.65 0.65 0.56 -> 0.96 0.80 0.68, Q4_K 0.67 0.62 0.63 -> 0.95 0.90 0.72 (a stream of
//             byte dots with as much arithmetic per byte, without calls, read 92-94%);
//   long_rows/...: F16 and BF16 in rows of 4864 (the down projection's), 512 MB;
//   qwen2.5-0.5b-Q8_0, -Q4_K_M: the 24 layers' matmuls and the output matrix of those files,
//             with their types, in a decode step's order and calls;
//   qwen3-30b-a3b-experts: a mixture of experts' matrices (BM_MoeExperts).
// The calls follow each other with nothing between them, where a forward pass has norms and
// attention: what a kernel fetches ahead of the next call shows up differently than in decode,
// so confirm such changes with bench-engine too. Google Benchmark prints of_bandwidth as a
// rate ("/s"); it is a plain fraction.
// ./build/bench/decode_stream_bench --benchmark_repetitions=5 (read the medians; on a shared
// machine compare two builds by alternating runs, or two settings within one run).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernel_bench_main.h"
#include "kernels/huge_pages.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "machine/bandwidth.h"
#include "tensor/quant.h"

namespace nanoserve::kernels {
namespace {

using gguf::TensorType;

// One matmul call of a step: the matrices that take the same input in one pass (Q, K and V;
// gate and up), by type and number of rows.
struct Part {
  TensorType type;
  int64_t n_out;
};
struct Call {
  int64_t n_in;
  std::vector<Part> parts;
};

// The calls of type/ and long_rows/, or with `one_call` their matrices as one (one_call/).
std::vector<Call> uniform(TensorType type, bool long_rows, bool one_call = false) {
  const bool k_quant = type == TensorType::Q4_K || type == TensorType::Q6_K || type == TensorType::IQ4_XS;
  Call call = k_quant || long_rows ? Call{4864, {{type, 896}}} : Call{896, {{type, 4864}}};
  const uint64_t bytes = *gguf::row_bytes(type, call.n_in) * call.parts[0].n_out;
  const auto calls = static_cast<int64_t>((512ull << 20) / bytes);
  if (!one_call) return std::vector<Call>(static_cast<size_t>(calls), call);
  call.parts[0].n_out *= calls;
  return {call};
}

// qwen2.5-0.5b's decode step: per layer Q, K and V in one call, the output projection, gate
// and up in one call, down; then the output matrix (the Q8_0 token embedding, tied). Q4_K_M as
// llama.cpp writes it for these shapes: Q5_0 where rows of 896 do not fit K-quant
// super-blocks, V in Q8_0, down in Q6_K and Q4_K on alternate layers.
std::vector<Call> qwen05(bool q4_k_m) {
  const TensorType attn = q4_k_m ? TensorType::Q5_0 : TensorType::Q8_0;
  std::vector<Call> calls;
  for (int layer = 0; layer < 24; ++layer) {
    calls.push_back({896, {{attn, 896}, {attn, 128}, {TensorType::Q8_0, 128}}});
    calls.push_back({896, {{attn, 896}}});
    calls.push_back({896, {{attn, 4864}, {attn, 4864}}});
    const TensorType down = !q4_k_m ? TensorType::Q8_0 : layer % 2 ? TensorType::Q4_K : TensorType::Q6_K;
    calls.push_back({4864, {{down, 896}}});
  }
  calls.push_back({896, {{TensorType::Q8_0, 151936}}});
  return calls;
}

// A matrix of n_out rows at `data` (in a region of writable memory), interleaved as a loaded
// model's are where that pays: 16 quantized random rows repeated, so that the bytes are
// realistic without quantizing hundreds of megabytes row by row.
Matrix random_matrix(TensorType type, int64_t n_in, int64_t n_out, uint8_t* data, std::mt19937& rng,
                     ThreadPool& pool) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const uint64_t row_bytes = *gguf::row_bytes(type, n_in);
  std::vector<float> row(n_in);
  std::vector<uint8_t> rows(16 * row_bytes);
  for (int r = 0; r < 16; ++r) {
    for (auto& x : row) x = dist(rng);
    tensor::quantize_row(type, row.data(), rows.data() + r * row_bytes, n_in);
  }
  for (int64_t o = 0; o < n_out; ++o) std::copy_n(rows.data() + o % 16 * row_bytes, row_bytes, data + o * row_bytes);
  Matrix w{type, data, n_in, n_out, row_bytes};
  if (interleaving_pays() && can_interleave(w)) interleave_rows(w, pool);
  return w;
}

// The weights' rate, and the fraction of the measured bandwidth it reached (the seconds the
// step's bytes take at that bandwidth, per second).
void report_rates(benchmark::State& state, size_t step_bytes, double bandwidth) {
  state.counters["weight_GB/s"] =
      benchmark::Counter(static_cast<double>(step_bytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_bandwidth"] =
      benchmark::Counter(static_cast<double>(step_bytes) / bandwidth, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bandwidth_GB/s"] = bandwidth * 1e-9;
}

void BM_DecodeStream(benchmark::State& state, const std::vector<Call>& calls) {
  ThreadPool pool(ThreadPool::physical_cores());
  size_t total = 0;
  int64_t max_in = 0, max_out = 0;
  for (const Call& c : calls) {
    max_in = std::max(max_in, c.n_in);
    for (const Part& p : c.parts) {
      total += *gguf::row_bytes(p.type, c.n_in) * p.n_out;
      max_out = std::max(max_out, p.n_out);
    }
  }
  HugePageBuffer region(total);  // writable and in huge pages, as a loaded model's interleaved weights are
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<std::vector<Matrix>> matrices;
  size_t offset = 0;
  for (const Call& c : calls) {
    std::vector<Matrix> call;
    for (const Part& p : c.parts) {
      call.push_back(random_matrix(p.type, c.n_in, p.n_out, region.data() + offset, rng, pool));
      offset += call.back().row_bytes * p.n_out;
    }
    matrices.push_back(std::move(call));
  }
  MatmulScratch scratch(pool.size(), max_in);
  std::vector<float> x(max_in), out(3 * max_out);
  for (auto& v : x) v = dist(rng);
  Activations acts;
  const double bandwidth = machine::read_bandwidth(pool, 1ull << 30, machine::kBandwidthPasses);
  for (auto _ : state) {
    for (const auto& m : matrices) {
      acts.set(x.data(), 1, m[0].n_in, m[0].n_in);
      float* o = out.data();
      switch (m.size()) {
        case 1: matmul(m[0], acts, o, m[0].n_out, pool, scratch); break;
        case 2: matmul_many({{&m[0], o, m[0].n_out}, {&m[1], o + max_out, m[1].n_out}}, acts, pool, scratch); break;
        default:
          matmul_many({{&m[0], o, m[0].n_out}, {&m[1], o + max_out, m[1].n_out}, {&m[2], o + 2 * max_out, m[2].n_out}},
                      acts, pool, scratch);
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  report_rates(state, total, bandwidth);
}

// A mixture of experts' decode step (Qwen3-30B-A3B's experts, Q4_K_M): per layer the 8 chosen
// experts' gate and up (768 × 2048, Q4_K) in one kernels::matmul_jobs pass, each with its own
// activations as moe.cpp gives them, then their down (2048 × 768, Q6_K) in another. 12 layers,
// 254 MB read a step: each thread's stream jumps to another 0.9 MB matrix 8 times a pass, where
// a dense model's matrices are long. As in a 3-D expert tensor, the chosen experts lie apart
// (8 of 16 places per tensor here) and come in no order of address.
void BM_MoeExperts(benchmark::State& state) {
  constexpr int kLayers = 12, kChosen = 8, kPlaces = 16;
  constexpr int64_t kEmbd = 2048, kFf = 768;
  ThreadPool pool(ThreadPool::physical_cores());
  const uint64_t up_bytes = *gguf::row_bytes(TensorType::Q4_K, kEmbd) * kFf;
  const uint64_t down_bytes = *gguf::row_bytes(TensorType::Q6_K, kFf) * kEmbd;
  const size_t layer_bytes = kPlaces * (2 * up_bytes + down_bytes);
  const size_t total = kLayers * kChosen * (2 * up_bytes + down_bytes);  // read a step
  HugePageBuffer region(kLayers * layer_bytes);
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  struct Layer {
    std::vector<Matrix> gate, up, down;  // per chosen expert
  };
  std::vector<Layer> layers(kLayers);
  std::vector<int> places(kPlaces);
  std::iota(places.begin(), places.end(), 0);
  for (int l = 0; l < kLayers; ++l) {
    uint8_t* gate = region.data() + l * layer_bytes;
    uint8_t* up = gate + kPlaces * up_bytes;
    uint8_t* down = up + kPlaces * up_bytes;
    std::shuffle(places.begin(), places.end(), rng);  // the chosen experts: the first 8 places
    for (int e = 0; e < kChosen; ++e) {
      layers[l].gate.push_back(random_matrix(TensorType::Q4_K, kEmbd, kFf, gate + places[e] * up_bytes, rng, pool));
      layers[l].up.push_back(random_matrix(TensorType::Q4_K, kEmbd, kFf, up + places[e] * up_bytes, rng, pool));
      layers[l].down.push_back(random_matrix(TensorType::Q6_K, kFf, kEmbd, down + places[e] * down_bytes, rng, pool));
    }
  }
  MatmulScratch scratch(pool.size(), kEmbd);
  std::vector<float> x(kEmbd), hidden(kChosen * kFf), gate(kChosen * kFf), out(kChosen * kEmbd);
  for (auto& v : x) v = dist(rng);
  for (auto& v : hidden) v = dist(rng);
  std::vector<Activations> in(kChosen), mid(kChosen);
  std::vector<MatmulJob> jobs;
  const double bandwidth = machine::read_bandwidth(pool, 1ull << 30, machine::kBandwidthPasses);
  for (auto _ : state) {
    for (const Layer& layer : layers) {
      jobs.clear();
      for (int e = 0; e < kChosen; ++e) {
        in[e].set(x.data(), 1, kEmbd, kEmbd);
        jobs.push_back({&layer.gate[e], &in[e], gate.data() + e * kFf, kFf});
        jobs.push_back({&layer.up[e], &in[e], hidden.data() + e * kFf, kFf});
      }
      matmul_jobs(jobs, pool, scratch);
      jobs.clear();
      for (int e = 0; e < kChosen; ++e) {
        mid[e].set(hidden.data() + e * kFf, 1, kFf, kFf);
        jobs.push_back({&layer.down[e], &mid[e], out.data() + e * kEmbd, kEmbd});
      }
      matmul_jobs(jobs, pool, scratch);
    }
    benchmark::DoNotOptimize(out.data());
  }
  report_rates(state, total, bandwidth);
}

void Register() {
  for (TensorType type : {TensorType::F16, TensorType::BF16, TensorType::Q8_0, TensorType::Q5_0, TensorType::Q4_0,
                          TensorType::Q4_K, TensorType::Q6_K, TensorType::IQ4_NL, TensorType::MXFP4, TensorType::IQ4_XS})
    benchmark::RegisterBenchmark(("type/" + std::string(gguf::type_name(type))).c_str(), BM_DecodeStream,
                                 uniform(type, false))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (TensorType type : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K})  // type/'s bytes in one call
    benchmark::RegisterBenchmark(("one_call/" + std::string(gguf::type_name(type))).c_str(), BM_DecodeStream,
                                 uniform(type, false, true))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (TensorType type : {TensorType::F16, TensorType::BF16})  // rows as long as the down projection's
    benchmark::RegisterBenchmark(("long_rows/" + std::string(gguf::type_name(type))).c_str(), BM_DecodeStream,
                                 uniform(type, true))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  benchmark::RegisterBenchmark("qwen2.5-0.5b-Q8_0", BM_DecodeStream, qwen05(false))
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("qwen2.5-0.5b-Q4_K_M", BM_DecodeStream, qwen05(true))
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("qwen3-30b-a3b-experts", BM_MoeExperts)->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace
}  // namespace nanoserve::kernels

int main(int argc, char** argv) {
  nanoserve::kernels::Register();
  return nanoserve::bench::run_kernel_benchmarks(argc, argv);
}
