// `nanoserve logits`, `nanoserve run` and `nanoserve bench-engine`, run as a user runs them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "kernels/simd_target.h"
#include "support/run_nanoserve.h"
#include "support/test_paths.h"

namespace nanoserve {
namespace {

using test::CommandResult;

CommandResult run_binary(const std::string& args) { return test::run_nanoserve(args); }

// `nanoserve logits --all` for sequence `seq` of a golden (GOLDEN.json / .bin, computed by
// llama.cpp, in `model`), every stored position within `rel` of the logit range.
void expect_logits_match(const std::string& golden, const std::string& model, int seq_index,
                         const std::string& args, double rel) {
  const auto j = nlohmann::json::parse(test::read_file(golden + ".json"));
  const auto& seq = j["sequences"][seq_index];
  std::string ids;
  for (const auto& id : seq["input_ids"]) {
    if (!ids.empty()) ids += ',';
    ids += std::to_string(id.get<int>());
  }
  const CommandResult o = run_binary("logits -m " + model + " --ids " + ids + " --all " + args);
  ASSERT_EQ(o.status, 0) << o.err;
  const auto result = nlohmann::json::parse(o.out);
  const auto n_vocab = j["n_vocab"].get<size_t>();
  ASSERT_EQ(result["n_vocab"], n_vocab);
  ASSERT_EQ(result["logits"].size(), seq["input_ids"].size());

  const std::string bin = test::read_file(golden + ".bin");
  const int64_t offset = seq["bin_offset_floats"].get<int64_t>();
  const auto& positions = seq["logit_positions"];
  ASSERT_FALSE(positions.empty());
  for (size_t i = 0; i < positions.size(); ++i) {
    const int p = positions[i].get<int>();
    const float* ref = reinterpret_cast<const float*>(bin.data()) + offset + i * n_vocab;
    const auto& row = result["logits"][p];
    ASSERT_EQ(row.size(), n_vocab);
    float lo = ref[0], hi = ref[0], diff = 0;
    for (size_t v = 0; v < n_vocab; ++v) {
      lo = std::min(lo, ref[v]);
      hi = std::max(hi, ref[v]);
      diff = std::max(diff, std::fabs(row[v].get<float>() - ref[v]));
    }
    EXPECT_LE(diff / (hi - lo), rel) << "position " << p << " (" << args << ")";
  }
}

TEST(LogitsCommand, EveryPositionMatchesLlamaCpp) {
  // Sequence 1 of the golden file (7 tokens): all positions are stored in the .bin.
  std::string golden = test::shared_path("golden/models/tiny-qwen3-Q8_0.json");
  golden.resize(golden.size() - 5);  // without ".json"
  expect_logits_match(golden, golden + ".gguf", 1, "-t 2", 3e-2);
  // Without --all: the last position only.
  const CommandResult all = run_binary("logits -m " + golden + ".gguf --ids 5,9,300 --all");
  const CommandResult last = run_binary("logits -m " + golden + ".gguf --ids 5,9,300");
  ASSERT_EQ(last.status, 0) << last.err;
  EXPECT_EQ(nlohmann::json::parse(last.out)["logits"], nlohmann::json::array({nlohmann::json::parse(all.out)["logits"][2]}));
}

// Phi-3's LongRoPE rotates by its short factors in a context up to the original one (4096) and
// by its long factors past it, as llama.cpp picks them by its context size: the logits of one
// file differ by the context asked for, and each is llama.cpp's at that context. (Phi-4-mini's
// grouping, 3 query heads a KV head.)
TEST(LogitsCommand, APhi3ModelsRopeFactorsFollowTheContextAsInLlamaCpp) {
  const std::string golden = test::source_path("tests/model/data/golden/tiny-phi3g3-F16");
  expect_logits_match(golden, golden + ".gguf", 2, "-c 2048 -t 1", 3e-3);
  expect_logits_match(golden + ".ctx8192", golden + ".gguf", 2, "-c 8192 -t 1", 3e-3);
  // The default is run's and serve's: the trained context, at most 4096 (short factors).
  expect_logits_match(golden, golden + ".gguf", 2, "-t 1", 3e-3);
  const CommandResult too_long = run_binary("logits -m " + golden + ".gguf --ids 1,2,3 -c 2");
  EXPECT_EQ(too_long.status, 1);
  EXPECT_NE(too_long.err.find("3 ids do not fit a context of 2 positions"), std::string::npos) << too_long.err;
}

TEST(RunCommand, StreamsGreedyTextThenTimings) {
  // The start of llama.cpp's greedy continuation of "def fibonacci(n):\n" with this file
  // (pycoder's README; digits are single tokens).
  const std::string model = test::shared_path("models/pycoder/pycoder-f16.gguf");
  const CommandResult o = run_binary("run -m " + model + " -p 'def fibonacci(n):\n' -n 12 -t 1");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "    return _get_end((1000\n");
  EXPECT_NE(o.err.find("prompt 8 tokens | TTFT "), std::string::npos) << o.err;
  for (const char* field : {"prefill ", "decode ", "(12 tokens, ", " per step, ", " drafts accepted)", "1 threads",
                            "peak RSS "})
    EXPECT_NE(o.err.find(field), std::string::npos) << field << " missing in " << o.err;

  // Sampling is seeded: the same seed writes the same text.
  const std::string sampled = "run -m " + model + " -p 'import os' -n 24 --temp 0.8 --top-k 40 --seed 7";
  const CommandResult a = run_binary(sampled), b = run_binary(sampled);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(RunCommand, ChatWrapsThePromptAsAUserTurn) {
  const CommandResult o = run_binary("run -m " + test::shared_path("models/pycoder/pycoder-q8_0.gguf") +
                              " -p 'write a function' --chat -n 8");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("prompt 13 tokens"), std::string::npos) << o.err;  // 5 template + 8 text tokens
}

TEST(RunCommand, BadInputIsAnError) {
  const CommandResult missing = run_binary("run -m /nonexistent.gguf -p hi");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("nanoserve: error:"), std::string::npos) << missing.err;
  const CommandResult bad_id = run_binary("logits -m " + test::shared_path("golden/models/tiny-llama-Q8_0.gguf") + " --ids 5,99999");
  EXPECT_EQ(bad_id.status, 1);
  EXPECT_NE(bad_id.err.find("token 99999 is outside the vocabulary"), std::string::npos) << bad_id.err;
}

TEST(BenchEngineCommand, ProfileSaysWhereEachDecodeStepGoes) {
  const CommandResult o = run_binary("bench-engine -m " + test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf") +
                                     " -p 8 -n 16 -t 1 -r 1 --profile");
  ASSERT_EQ(o.status, 0) << o.err;
  for (const char* field :
       {"prefill    8 tokens", "decode     16 tokens", "peak RSS", "profile    decode, per step (16 steps)"})
    EXPECT_NE(o.out.find(field), std::string::npos) << field << " missing in " << o.out;
  // One row per op: name, ms per step, share of the forward pass; the shares add up to it all.
  double shares = 0.0;
  for (const char* op : {"embed", "norms", "q, k, v", "rope, kv store", "attention", "wo", "gate, up", "silu * up",
                         "down", "output"}) {
    const size_t at = o.out.find("\n           " + std::string(op) + "  ");
    ASSERT_NE(at, std::string::npos) << op << " missing in " << o.out;
    std::istringstream row(o.out.substr(at + 12 + std::strlen(op)));
    double ms = -1.0, share = -1.0;
    row >> ms >> share;
    EXPECT_GE(ms, 0.0) << op;
    EXPECT_GE(share, 0.0) << op;
    shares += share;
  }
  EXPECT_NEAR(shares, 100.0, 0.6);
}

// bench-kv fills an F16 and a q8_0 cache with the same prompt and alternates decode steps
// between them: both types' figures, the q8_0 cache's bytes 34/64 of F16's, and their ratios.
TEST(BenchKvCommand, SetsTheQ8_0CacheBesideTheF16One) {
  const CommandResult o =
      run_binary("bench-kv -m " + test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf") + " -p 300 -n 8 -t 1");
  ASSERT_EQ(o.status, 0) << o.err;
  double f16_mb = 0, q8_mb = 0;
  for (const auto& [type, mb] : {std::pair<const char*, double*>{"f16   KV cache ", &f16_mb}, {"q8_0  KV cache ", &q8_mb}}) {
    const size_t at = o.out.find(type);
    ASSERT_NE(at, std::string::npos) << type << " missing in " << o.out;
    std::istringstream(o.out.substr(at + std::strlen(type))) >> *mb;
    EXPECT_NE(o.out.find("prefill 300 tokens", at), std::string::npos) << o.out;
  }
  EXPECT_NEAR(q8_mb / f16_mb, 34.0 / 64.0, 0.01) << o.out;
  EXPECT_NE(o.out.find("q8_0/f16   prefill "), std::string::npos) << o.out;
  EXPECT_NE(run_binary("bench-kv -m " + test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf") + " -n 1").status, 0);
}

// NANOSERVE_SIMD caps the kernels' target: bench-engine says which ran; a target this CPU
// does not run is refused before any command does anything.
TEST(SimdCap, BenchEngineSaysWhichTargetRanAndAnUnknownOneIsRefused) {
  const std::string portable = kernels::supported_simd_targets().back();  // scalar or emu128
  std::string upper = portable;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string bench =
      "bench-engine -m " + test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf") + " -p 8 -n 8 -t 1 -r 1 --no-read-test";
  setenv("NANOSERVE_SIMD", portable.c_str(), 1);
  const CommandResult capped = run_binary(bench);
  setenv("NANOSERVE_SIMD", "avx9000", 1);
  const CommandResult unknown = run_binary("info " + test::shared_path("golden/models/tiny-qwen3-Q8_0.gguf"));
  unsetenv("NANOSERVE_SIMD");
  ASSERT_EQ(capped.status, 0) << capped.err;
  EXPECT_NE(capped.out.find("simd       " + upper + ", as NANOSERVE_SIMD=" + portable + " asks"), std::string::npos)
      << capped.out;
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("NANOSERVE_SIMD=avx9000: not a SIMD target this CPU runs"), std::string::npos)
      << unknown.err;
}

}  // namespace
}  // namespace nanoserve
