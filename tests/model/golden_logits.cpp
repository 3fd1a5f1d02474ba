#include "model/golden_logits.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <stdexcept>

#include "support/test_paths.h"

namespace nanoserve::test {

std::vector<std::string> golden_logit_models() {
  std::vector<std::string> names = {"qwen3vocab-qwen3-Q8_0"};
  for (const char* t : {"BF16", "F16", "Q2_K", "Q3_K_M", "Q4_0", "Q4_1", "Q4_K_M", "Q5_0", "Q5_1", "Q5_K_M", "Q6_K", "Q8_0"})
    names.push_back(std::string("tiny-qwen3-") + t);
  for (const char* t : {"F16", "Q4_K_M", "Q8_0"}) {
    names.push_back(std::string("tiny-qwen2-") + t);
    names.push_back(std::string("tiny-llama-") + t);
    names.push_back(std::string("archs/tiny-phi3-") + t);
    names.push_back(std::string("archs/tiny-gpt2-") + t);
    names.push_back(std::string("archs/tiny-gemma3-") + t);
    names.push_back(std::string("archs/tiny-qwen3moe-") + t);
    names.push_back(std::string("archs/tiny-qwen35moe-") + t);
  }
  for (const char* m : {"tiny-qwen3-F16.kvq8", "tiny-qwen3-Q8_0.kvq8", "tiny-llama-F16.kvq8", "tiny-llama-Q8_0.kvq8"})
    names.push_back(m);
  // Phi-4-mini's grouping (3 query heads a KV head), at a context within LongRoPE's original
  // one (short factors) and past it (long factors).
  names.push_back("repo/tiny-phi3g3-F16");
  names.push_back("repo/tiny-phi3g3-F16.ctx8192");
  // The dense Qwen3.5 hybrid (gated delta-net layers and gated attention, a dense feed-forward).
  names.push_back("repo/tiny-qwen35-F16");
  names.push_back("repo/tiny-qwen35-Q4_K_M");
  // With a multi-token-prediction block after its own layers (block_count counts it): not run.
  names.push_back("repo/tiny-qwen35-mtp-F16");
  // gpt-oss: sliding-window (even) and full (odd) layers with attention sinks, YaRN, biases, 4 of
  // 8 experts with the clamped SwiGLU; F16, and the experts in MXFP4 (llama-quantize MXFP4_MOE).
  names.push_back("repo/tiny-gptoss-F16");
  names.push_back("repo/tiny-gptoss-MXFP4");
  return names;
}

namespace {

// A golden's files: ../shared/golden/models/NAME, or the repository's tests/model/data/golden/
// for names under repo/.
std::string golden_path(const std::string& name) {
  const std::string repo = "repo/";
  if (name.starts_with(repo)) return source_path("tests/model/data/golden/" + name.substr(repo.size()));
  return shared_path("golden/models/" + name);
}

}  // namespace

std::string GoldenModel::model_name() const {
  const size_t dot = name.find('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

std::string GoldenModel::gguf_path() const { return golden_path(model_name() + ".gguf"); }

GoldenModel load_golden(const std::string& name) {
  GoldenModel g;
  g.name = name;
  const auto j = nlohmann::json::parse(read_file(golden_path(name + ".json")));
  g.n_vocab = j.at("n_vocab").get<int64_t>();
  g.n_ctx = j.at("n_ctx").get<int64_t>();
  for (const auto& s : j.at("sequences")) {
    GoldenSequence seq;
    s.at("input_ids").get_to(seq.input_ids);
    s.at("logit_positions").get_to(seq.logit_positions);
    seq.bin_offset = s.at("bin_offset_floats").get<int64_t>();
    s.at("argmax_all").get_to(seq.argmax_all);
    s.at("top1_top2_margin_all").get_to(seq.margin_all);
    s.at("last_pos_top32_ids").get_to(seq.top32_ids);
    s.at("last_pos_top32_logits").get_to(seq.top32_logits);
    s.at("greedy_ids").get_to(seq.greedy_ids);
    s.at("greedy_top1_top2_margin").get_to(seq.greedy_margin);
    g.sequences.push_back(std::move(seq));
  }
  const std::string bytes = read_file(golden_path(name + ".bin"));
  if (bytes.size() % sizeof(float)) throw std::runtime_error(name + ".bin is not a whole number of floats");
  g.bin.resize(bytes.size() / sizeof(float));
  std::memcpy(g.bin.data(), bytes.data(), bytes.size());
  for (const auto& s : g.sequences)
    if (s.bin_offset + static_cast<int64_t>(s.logit_positions.size()) * g.n_vocab > static_cast<int64_t>(g.bin.size()))
      throw std::runtime_error(name + ".bin is shorter than its JSON says");
  return g;
}

}  // namespace nanoserve::test
