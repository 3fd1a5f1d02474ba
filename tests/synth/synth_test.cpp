// Synthesized models have llama.cpp's layout: the same metadata keys, tensor names, shapes
// and per-tensor types as the golden files converted and quantized by llama.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

#include "gguf/file.h"
#include "gguf/file_type.h"
#include "support/test_paths.h"
#include "model/model.h"
#include "synth/presets.h"
#include "synth/synth.h"
#include "tensor/quant.h"

namespace nanoserve::synth {
namespace {

using model::Llama3RopeScaling;
using model::ModelConfig;

// The golden files' "shape A" (see ../shared/golden/models/README.md).
ModelConfig shape_a(const std::string& arch) {
  return ModelConfig{.arch = arch, .n_layer = 4, .n_embd = 256, .n_ff = 768, .n_head = 4, .n_head_kv = 2,
                     .head_dim = 64, .n_vocab = 1024, .n_ctx_train = 4096,
                     .rope_base = arch == "llama" ? 500000.0f : 1000000.0f, .rms_eps = 1e-6f,
                     .tied_output = arch != "llama", .rope_scaling = std::nullopt};
}

std::string synth_to_temp(const ModelConfig& c, const std::string& type, uint64_t seed = 7, unsigned threads = 2) {
  SynthOptions o;
  o.config = c;
  o.name = "test";
  o.type = type;
  o.seed = seed;
  o.threads = threads;
  o.out_path = test::temp_file("synth-" + c.arch + "-" + type + "-" + std::to_string(seed) + "-" + std::to_string(threads) +
                              ".gguf");
  synthesize(o);
  return o.out_path;
}

std::set<std::string> keys_of(const gguf::File& f) {
  std::set<std::string> keys;
  for (const auto& [k, v] : f.metadata().entries()) keys.insert(k);
  return keys;
}

struct GoldenPair {
  const char* arch;
  const char* type;              // the golden file's
  const char* mix = nullptr;     // synth's file type where it differs (the goldens' MXFP4 is MXFP4_MOE)
};

void PrintTo(const GoldenPair& p, std::ostream* os) { *os << p.arch << " " << p.type; }

class SynthLayout : public ::testing::TestWithParam<GoldenPair> {};

// Synthesized from the golden file's own config (model::from_gguf), every architecture's file.
TEST_P(SynthLayout, MatchesLlamaCppFile) {
  const auto [arch, type, mix] = GetParam();
  const std::set<std::string> in_archs = {"phi3", "gpt2", "gemma3", "qwen3moe"};  // the README's archs/ folder
  const std::string dir = in_archs.count(arch) ? "golden/models/archs/tiny-" : "golden/models/tiny-";
  // gpt-oss's goldens are the repository's own (tests/model/data/golden/README.md).
  const std::string path = arch == std::string("gpt-oss")
                               ? test::source_path(std::string("tests/model/data/golden/tiny-gptoss-") + type + ".gguf")
                               : test::shared_path(dir + arch + "-" + type + ".gguf");
  gguf::File golden = gguf::File::open(path);
  gguf::File ours = gguf::File::open(synth_to_temp(model::from_gguf(golden), mix ? mix : type));

  for (const auto& key : keys_of(golden)) EXPECT_TRUE(ours.metadata().contains(key)) << "missing key " << key;
  for (const auto& key : keys_of(ours)) EXPECT_TRUE(golden.metadata().contains(key)) << "extra key " << key;
  EXPECT_EQ(ours.metadata().get_u32("general.file_type"), golden.metadata().get_u32("general.file_type"));

  ASSERT_EQ(ours.tensors().size(), golden.tensors().size());
  for (const auto& g : golden.tensors()) {
    const gguf::TensorInfo* t = ours.find_tensor(g.name);
    ASSERT_NE(t, nullptr) << g.name;
    EXPECT_EQ(t->dims, g.dims) << g.name;
    EXPECT_EQ(gguf::type_name(t->type), gguf::type_name(g.type)) << g.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, SynthLayout,
                         ::testing::Values(GoldenPair{"qwen3", "Q4_K_M"}, GoldenPair{"qwen3", "Q2_K"},
                                           GoldenPair{"qwen3", "Q3_K_M"}, GoldenPair{"qwen3", "Q4_0"},
                                           GoldenPair{"qwen3", "BF16"}, GoldenPair{"qwen2", "Q8_0"},
                                           GoldenPair{"qwen2", "Q4_K_M"}, GoldenPair{"llama", "Q4_K_M"},
                                           GoldenPair{"llama", "F16"}, GoldenPair{"phi3", "Q4_K_M"},
                                           GoldenPair{"phi3", "F16"}, GoldenPair{"gpt2", "Q4_K_M"},
                                           GoldenPair{"gpt2", "Q8_0"}, GoldenPair{"gemma3", "Q4_K_M"},
                                           GoldenPair{"qwen3moe", "Q4_K_M"}, GoldenPair{"qwen3moe", "F16"},
                                           GoldenPair{"gpt-oss", "F16"}, GoldenPair{"gpt-oss", "MXFP4", "MXFP4_MOE"}),
                         [](const auto& info) {
                           std::string s = std::string(info.param.arch) + "_" + info.param.type;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

TEST(Synth, WeightsHaveTheStatedDistribution) {
  gguf::File f = gguf::File::open(synth_to_temp(shape_a("qwen3"), "F32"));
  auto stats = [&](const std::string& name) {
    const gguf::TensorInfo& t = f.tensor(name);
    const float* x = reinterpret_cast<const float*>(t.data);
    double sum = 0, sq = 0;
    for (uint64_t i = 0; i < t.n_elements(); ++i) sum += x[i], sq += x[i] * x[i];
    double mean = sum / t.n_elements();
    return std::pair{mean, std::sqrt(sq / t.n_elements() - mean * mean)};
  };
  auto [m, s] = stats("blk.0.ffn_up.weight");
  EXPECT_NEAR(m, 0.0, 1e-3);
  EXPECT_NEAR(s, 0.02, 1e-3);
  auto [nm, ns] = stats("blk.1.attn_norm.weight");
  EXPECT_NEAR(nm, 1.0, 5e-3);
  EXPECT_NEAR(ns, 0.02, 5e-3);
}

TEST(Synth, SameSeedSameBytesWhateverTheThreadCount) {
  std::string a = test::read_file(synth_to_temp(shape_a("qwen2"), "Q4_K_M", 11, 1));
  std::string b = test::read_file(synth_to_temp(shape_a("qwen2"), "Q4_K_M", 11, 2));
  std::string c = test::read_file(synth_to_temp(shape_a("qwen2"), "Q4_K_M", 12, 2));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Synth, Llama3RopeScalingWritesRopeFreqs) {
  ModelConfig c = shape_a("llama");
  c.rope_scaling = Llama3RopeScaling{};
  gguf::File f = gguf::File::open(synth_to_temp(c, "Q8_0"));
  const gguf::TensorInfo& t = f.tensor("rope_freqs.weight");
  ASSERT_EQ(t.dims, std::vector<uint64_t>{32});
  const float* x = reinterpret_cast<const float*>(t.data);
  EXPECT_FLOAT_EQ(x[0], 1.0f);    // shortest wavelength: unscaled
  EXPECT_FLOAT_EQ(x[31], 32.0f);  // longest: divided by the factor
  for (int i = 1; i < 32; ++i) EXPECT_GE(x[i], x[i - 1]);
}

// The new architectures' presets, shrunk to two layers (a hybrid: one of each kind) and a small vocabulary (every other
// dimension the released model's): they load and run, with finite logits.
TEST(Synth, PresetsOfEveryArchitectureLoadAndRun) {
  for (const char* name : {"qwen3-30b-a3b", "gemma-3-1b", "gemma-3-4b", "phi-4-mini", "gpt2-124m", "qwen3.5-0.8b",
                           "qwen3.6-35b-a3b", "gpt-oss-20b"}) {
    ModelConfig c = preset(name);
    // Small where the architecture does not care: 2 layers, a 1024-token vocabulary, narrow
    // feed-forward layers and 12 experts (8 of them per row); the attention keeps the preset's shape.
    c.n_layer = c.features.delta_net ? c.full_attention_interval : 2;  // a hybrid's layers of each kind
    c.n_vocab = 1024;
    c.n_ff = 512;
    if (c.features.moe) {
      c.n_expert = 12;
      c.n_ff_expert = 128;
    }
    if (c.features.shared_expert) c.n_ff_shared = 128;
    const std::string path = synth_to_temp(c, "Q8_0");
    model::Model m(path, {.threads = 2, .mtp = true});
    EXPECT_EQ(m.config().arch, c.arch) << name;
    // The Qwen3.5 family ships one multi-token-prediction block; it loads and drafts.
    EXPECT_EQ(m.config().n_nextn, c.features.delta_net ? 1u : 0u) << name;
    EXPECT_EQ(m.config().mtp, c.features.delta_net) << name;
    model::KvCache cache(m.config(), 32);
    model::Batch b;
    for (int p = 0; p < 12; ++p) b.add(0, p, (p * 37) % 1024, p == 11);
    model::Logits logits;
    m.forward(b, cache, logits);
    for (float v : logits.row(0)) ASSERT_TRUE(std::isfinite(v)) << name;
    if (!m.config().mtp) continue;
    model::Batch rows;
    for (int p = 0; p + 1 < 12; ++p) rows.add(0, p, ((p + 1) * 37) % 1024, p + 2 == 12);
    std::vector<float> out;
    m.forward_mtp(rows, {logits.hidden.data(), static_cast<size_t>(11 * m.config().n_embd)}, cache, out);
    m.mtp_logits(out, logits);
    for (float v : logits.row(0)) ASSERT_TRUE(std::isfinite(v)) << name;
  }
}

// The IQ4 and MXFP4 file types: a mixture of experts written in each loads and runs; under
// MXFP4_MOE (gpt-oss's mix) only the experts' stacks are MXFP4, every other matrix Q8_0.
TEST(Synth, NonlinearFileTypesLoadAndRun) {
  ModelConfig c = preset("qwen3-30b-a3b");
  c.n_layer = 2;
  c.n_vocab = 1024;
  c.n_expert = 12;
  c.n_ff_expert = 256;
  c.n_embd = 256;  // narrow: the IQ4 search is slow to synthesize
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 64;
  for (const char* type : {"IQ4_NL", "IQ4_XS", "MXFP4_MOE", "MXFP4"}) {
    const std::string path = synth_to_temp(c, type);
    const gguf::File f = gguf::File::open(path);
    const std::string ft = type == std::string("MXFP4") ? "MXFP4_MOE" : type;
    EXPECT_EQ(gguf::file_type_by_id(f.metadata().get_u32("general.file_type"))->name, ft);
    std::map<std::string, int> types;
    for (const auto& t : f.tensors()) {
      const std::string name(gguf::type_name(t.type));
      ++types[name];
      if (type == std::string("MXFP4_MOE") && t.dims.size() >= 2 && t.type != gguf::TensorType::F32) {
        EXPECT_EQ(name, t.dims.size() == 3 ? "MXFP4" : "Q8_0") << t.name;
      }
    }
    EXPECT_GT(types[ft == "MXFP4_MOE" ? "MXFP4" : ft], 0) << type;
    model::Model m(path, {.threads = 2});
    model::KvCache cache(m.config(), 32);
    model::Batch b;
    for (int p = 0; p < 12; ++p) b.add(0, p, (p * 37) % 1024, p == 11);
    model::Logits logits;
    m.forward(b, cache, logits);
    for (float v : logits.row(0)) ASSERT_TRUE(std::isfinite(v)) << type;
  }
}

TEST(Synth, RejectsBadConfigs) {
  ModelConfig c = shape_a("qwen3");
  c.n_head_kv = 3;
  EXPECT_THROW(synth_to_temp(c, "Q8_0"), std::invalid_argument);
  EXPECT_THROW(synth_to_temp(shape_a("mamba"), "Q8_0"), std::invalid_argument);
  EXPECT_THROW(synth_to_temp(shape_a("qwen3"), "Q9_K"), std::invalid_argument);
}

// --chat-template: the file is embedded whole, in place of the built-in vocabulary's ChatML; a
// path that cannot be read fails before any output is written.
TEST(Synth, EmbedsAChatTemplateFile) {
  const std::string source = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}";
  const std::string path = test::temp_file("synth-chat-template.jinja");
  std::ofstream(path, std::ios::binary) << source;
  SynthOptions o;
  o.config = shape_a("qwen3");
  o.chat_template_path = path;
  o.threads = 2;
  o.out_path = test::temp_file("synth-chat-template.gguf");
  synthesize(o);
  EXPECT_EQ(gguf::File::open(o.out_path).metadata().get_string("tokenizer.chat_template"), source);

  o.chat_template_path = path + ".missing";
  o.out_path = test::temp_file("synth-chat-template-missing.gguf");
  EXPECT_THROW(synthesize(o), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(o.out_path + ".partial"));
}

}  // namespace
}  // namespace nanoserve::synth
