// Hyperparameters come from GGUF metadata; weight binding names the first tensor that is
// missing, misshapen or of an unsupported type; the forward pass refuses malformed batches.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

#include "gguf/writer.h"
#include "model/model.h"
#include "support/test_paths.h"
#include "synth/synth.h"
#include "tensor/quant.h"

namespace nanoserve::model {
namespace {

std::string golden(const std::string& name) { return test::shared_path("golden/models/" + name + ".gguf"); }

std::string temp_path(const std::string& tag) {
  return test::temp_file("model-loading-" + tag + ".gguf");
}

// A copy of a GGUF file with edits: metadata values replaced, and each tensor kept, changed
// (type, dims, bytes) or dropped (edit returns false).
struct TensorCopy {
  std::string name;
  gguf::TensorType type;
  std::vector<uint64_t> dims;
  std::vector<uint8_t> bytes;
};

std::string edited_copy(const std::string& src, const std::string& tag,
                        const std::vector<std::pair<std::string, gguf::Value>>& metadata,
                        const std::function<bool(TensorCopy&)>& edit) {
  const gguf::File f = gguf::File::open(src);
  const std::string path = temp_path(tag);
  std::ofstream out(path, std::ios::binary);
  gguf::Writer w(out);
  for (const auto& [k, v] : f.metadata().entries()) w.set(k, v);
  for (const auto& [k, v] : metadata) w.set(k, v);
  std::vector<TensorCopy> tensors;
  for (const auto& t : f.tensors()) {
    TensorCopy c{t.name, t.type, t.dims, {t.data, t.data + t.n_bytes}};
    if (edit(c)) tensors.push_back(std::move(c));
  }
  for (const auto& t : tensors) w.add_tensor(t.name, t.type, t.dims);
  w.write_header();
  for (const auto& t : tensors) w.write_data(t.bytes);
  w.finish();
  return path;
}

std::string load_error(const std::string& path) {
  try {
    Model m(path, {.threads = 1});
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(ModelConfig, FromGgufMetadata) {
  const ModelConfig q = from_gguf(gguf::File::open(golden("tiny-qwen3-Q4_K_M")));
  EXPECT_EQ(q.arch, "qwen3");
  EXPECT_EQ(q.n_layer, 4u);
  EXPECT_EQ(q.n_embd, 256u);
  EXPECT_EQ(q.n_ff, 768u);
  EXPECT_EQ(q.n_head, 4u);
  EXPECT_EQ(q.n_head_kv, 2u);
  EXPECT_EQ(q.head_dim, 64u);
  EXPECT_EQ(q.n_vocab, 1024u);
  EXPECT_EQ(q.n_ctx_train, 4096u);
  EXPECT_FLOAT_EQ(q.rms_eps, 1e-6f);
  EXPECT_FLOAT_EQ(q.rope_base, 1e6f);
  EXPECT_TRUE(q.tied_output);
  EXPECT_EQ(q.features.rope_style, kernels::RopeStyle::Halves);
  EXPECT_TRUE(q.features.qk_norm);

  const ModelConfig l = from_gguf(gguf::File::open(golden("tiny-llama-F16")));
  EXPECT_FALSE(l.tied_output);
  EXPECT_EQ(l.features.rope_style, kernels::RopeStyle::Adjacent);
  EXPECT_FLOAT_EQ(l.rope_base, 5e5f);
  EXPECT_EQ(l.rope_dims(), 64u);

  EXPECT_EQ(from_gguf(gguf::File::open(golden("qwen3vocab-qwen3-Q8_0"))).n_vocab, 151936u);  // padding rows count
  EXPECT_TRUE(from_gguf(gguf::File::open(golden("tiny-qwen2-Q8_0"))).features.qkv_bias);

  // pycoder: 8 heads of 64 on a 256-wide model (key_length says so, not n_embd / n_head).
  const ModelConfig p = from_gguf(gguf::File::open(test::shared_path("models/pycoder/pycoder-q8_0.gguf")));
  EXPECT_EQ(p.head_dim, 64u);
  EXPECT_EQ(p.q_dim(), 512u);
  EXPECT_EQ(p.n_vocab, 4096u);

  // Phi-3 (Phi-4-mini's shape): fused q|k|v and gate|up, partial NEOX rope, LongRoPE.
  const ModelConfig phi = from_gguf(gguf::File::open(golden("archs/tiny-phi3-F16")));
  EXPECT_TRUE(phi.features.fused_qkv);
  EXPECT_TRUE(phi.features.fused_gate_up);
  EXPECT_EQ(phi.features.rope_style, kernels::RopeStyle::Halves);
  EXPECT_EQ(phi.rope_dims(), 48u);
  EXPECT_NEAR(phi.rope_attn_factor, 1.190238f, 1e-6f);
  EXPECT_EQ(phi.rope_original_context, 4096u);
  EXPECT_EQ(phi.n_ctx_train, 131072u);

  // Gemma 3: five sliding-window layers to one global, each kind with its RoPE base; linear
  // scaling on the global ones.
  const ModelConfig gemma = from_gguf(gguf::File::open(golden("archs/tiny-gemma3-F16")));
  EXPECT_EQ(gemma.head_dim, 128u);
  EXPECT_EQ(gemma.sliding_window, 64u);
  EXPECT_FLOAT_EQ(gemma.rope_base, 1e6f);
  EXPECT_FLOAT_EQ(gemma.rope_base_swa, 1e4f);
  EXPECT_FLOAT_EQ(gemma.rope_freq_scale, 0.125f);
  for (uint32_t l = 0; l < 12; ++l) EXPECT_EQ(gemma.is_local(l), l % 6 != 5) << "layer " << l;
  EXPECT_FALSE(phi.is_local(0));  // Phi-3 has a sliding_window key, which llama.cpp does not apply

  // Qwen3 MoE: 2 of 8 experts of 64 per row; a decode step reads the router and two experts a layer.
  const ModelConfig moe = from_gguf(gguf::File::open(golden("archs/tiny-qwen3moe-F16")));
  EXPECT_TRUE(moe.features.moe);
  EXPECT_EQ(moe.n_expert, 8u);
  EXPECT_EQ(moe.n_expert_used, 2u);
  EXPECT_EQ(moe.n_ff_expert, 64u);
  const Model m(golden("archs/tiny-qwen3moe-F16"), {.threads = 1});
  const uint64_t expert = 3 * 256 * 64 * 2;  // gate, up and down of one expert, F16
  const uint64_t attention = (256 * 256 + 2 * 256 * 128 + 256 * 256) * 2;
  const uint64_t layer = attention + 256 * 8 * 4 + 2 * expert + 2 * 256 * 4;  // router (F32), two experts, norms
  EXPECT_EQ(m.weight_bytes_per_token(), 4 * layer + 1024 * 256 * 2 + 256 * 2 + 256 * 4);

  // gpt-oss: even layers sliding-window (llama.cpp's pattern of 2, the dense layer last), each
  // rotating as the full ones do (YaRN on both); head size 64 beside n_embd 256; 4 of 8 experts.
  const ModelConfig oss =
      from_gguf(gguf::File::open(test::source_path("tests/model/data/golden/tiny-gptoss-F16.gguf")));
  EXPECT_TRUE(oss.features.attn_sinks);
  EXPECT_FALSE(oss.features.swa_own_rope);
  EXPECT_EQ(oss.head_dim, 64u);
  EXPECT_EQ(oss.q_dim(), 512u);
  EXPECT_EQ(oss.sliding_window, 128u);
  EXPECT_TRUE(oss.is_local(0));
  EXPECT_FALSE(oss.is_local(1));
  EXPECT_TRUE(oss.windowed(0));
  ASSERT_TRUE(oss.rope_yarn.has_value());
  EXPECT_FLOAT_EQ(oss.rope_yarn->factor, 32.0f);
  EXPECT_EQ(oss.rope_yarn->original_context, 4096u);
  EXPECT_FLOAT_EQ(oss.rope_freq_scale, 1.0f);  // YaRN's scale is its own, not linear scaling's
  EXPECT_EQ(oss.n_expert_used, 4u);
  EXPECT_FALSE(oss.tied_output);
}

// A config's features are filled from arch when it is made; one whose arch was set afterwards,
// or names no architecture, fails validate() instead of running as another family.
TEST(ModelConfig, FeaturesComeFromArchWhenMade) {
  const auto shape = [](const std::string& arch) {
    return ModelConfig{.arch = arch, .n_layer = 2, .n_embd = 64, .n_ff = 128, .n_head = 4, .n_head_kv = 2,
                       .head_dim = 16, .n_vocab = 32, .n_ctx_train = 64};
  };
  const ModelConfig qwen3 = shape("qwen3");
  EXPECT_TRUE(qwen3.features.known);
  EXPECT_EQ(qwen3.features, arch_features("qwen3"));
  EXPECT_TRUE(qwen3.features.qk_norm);
  EXPECT_NO_THROW(qwen3.validate());

  ModelConfig late = shape("llama");
  late.arch = "qwen3";  // features still llama's
  EXPECT_THROW(late.validate(), std::invalid_argument);
  ModelConfig unset;
  unset.arch = "llama";
  EXPECT_FALSE(unset.features.known);
  EXPECT_THROW(unset.check_arch(), std::invalid_argument);

  EXPECT_FALSE(arch_features("mamba").known);
  try {
    shape("mamba").validate();
    ADD_FAILURE() << "validated an unknown architecture";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported architecture 'mamba' (supported: llama, qwen2, qwen3, phi3"),
              std::string::npos)
        << e.what();
  }
}

TEST(ModelLoading, UnsupportedArchitectureIsNamed) {
  const std::string path = edited_copy(golden("tiny-qwen3-Q8_0"), "arch", {{"general.architecture", gguf::Value::string("gemma")}},
                                       [](TensorCopy&) { return true; });
  EXPECT_NE(load_error(path).find("unsupported architecture 'gemma'"), std::string::npos) << load_error(path);
}

TEST(ModelLoading, APartOfASplitModelSaysSo) {
  const std::string path = edited_copy(golden("tiny-qwen3-Q8_0"), "split",
                                       {{"split.no", gguf::Value::u16(0)}, {"split.count", gguf::Value::u16(3)}},
                                       [](TensorCopy& t) { return t.name.rfind("blk.3.", 0) != 0; });
  EXPECT_NE(load_error(path).find("this file is part 1 of a model split into 3 files"), std::string::npos)
      << load_error(path);
}

TEST(ModelLoading, MissingTensorIsNamed) {
  const std::string path = edited_copy(golden("tiny-qwen3-Q8_0"), "missing", {},
                                       [](TensorCopy& t) { return t.name != "blk.2.ffn_up.weight"; });
  EXPECT_EQ(load_error(path), "model tensor blk.2.ffn_up.weight is missing");
}

TEST(ModelLoading, WrongShapeIsNamed) {
  const std::string path = edited_copy(golden("tiny-qwen3-F16"), "shape", {}, [](TensorCopy& t) {
    if (t.name == "blk.1.attn_k.weight") std::swap(t.dims[0], t.dims[1]);
    return true;
  });
  EXPECT_EQ(load_error(path), "model tensor blk.1.attn_k.weight has shape [128, 256], expected [256, 128]");
}

// The i-quants whose grids nanoserve does not read yet are refused by name, whatever the tensor.
TEST(ModelLoading, UnsupportedTypesAreNamed) {
  using T = gguf::TensorType;
  for (T type : {T::IQ1_S, T::IQ1_M, T::IQ2_XXS, T::IQ2_XS, T::IQ2_S, T::IQ3_XXS, T::IQ3_S}) {
    const std::string name(gguf::type_name(type));
    const std::string iq = edited_copy(golden("tiny-qwen3-F16"), "iq-" + name, {}, [type](TensorCopy& t) {
      if (t.name == "blk.0.attn_q.weight" || t.name == "blk.1.ffn_down.weight") {
        t.type = type;
        t.bytes.assign(*gguf::row_bytes(t.type, t.dims[0]) * t.dims[1], 0);
      }
      return true;
    });
    EXPECT_EQ(load_error(iq), "model tensor blk.0.attn_q.weight has type " + name + ", which nanoserve does not support yet");
  }
  const std::string norm = edited_copy(golden("tiny-qwen3-F16"), "norm", {}, [](TensorCopy& t) {
    if (t.name == "output_norm.weight") {
      t.type = gguf::TensorType::F16;
      t.bytes.resize(t.bytes.size() / 2);
    }
    return true;
  });
  EXPECT_EQ(load_error(norm), "model tensor output_norm.weight has type F16, expected F32");
}

// The F32 master with every matrix (token_embd too) quantized to `type` by our quantizer.
std::string requantized(gguf::TensorType type) {
  return edited_copy(golden("tiny-qwen3-F32"), std::string("requant-") + std::string(gguf::type_name(type)), {},
                     [type](TensorCopy& t) {
                       if (t.dims.size() != 2) return true;
                       std::vector<uint8_t> q(*gguf::row_bytes(type, t.dims[0]) * t.dims[1]);
                       const auto* x = reinterpret_cast<const float*>(t.bytes.data());
                       for (uint64_t r = 0; r < t.dims[1]; ++r)
                         tensor::quantize_row(type, x + r * t.dims[0], q.data() + r * q.size() / t.dims[1],
                                              static_cast<int64_t>(t.dims[0]));
                       t.type = type;
                       t.bytes = std::move(q);
                       return true;
                     });
}

// The last position's logits of a fixed prompt.
std::vector<float> prompt_logits(const std::string& path) {
  Model m(path, {.threads = 2});
  KvCache cache(m.config(), 32);
  Batch b;
  for (int p = 0; p < 24; ++p) b.add(0, p, (p * 197 + 11) % 1000, p == 23);
  Logits logits;
  m.forward(b, cache, logits);
  return {logits.row(0).begin(), logits.row(0).end()};
}

double rel_rms(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err += (got[i] - want[i]) * static_cast<double>(got[i] - want[i]);
    ref += static_cast<double>(want[i]) * want[i];
  }
  return std::sqrt(err / ref);
}

// A model whose matrices are IQ4_NL, IQ4_XS or MXFP4 (the embedding lookup included) loads and
// computes logits as close to the F32 model's as 4-bit weights allow: no further than Q4_0's
// (IQ4's levels fit Gaussian weights better) or, for MXFP4's coarser grid, twice that.
TEST(ModelLoading, NonlinearFourBitModelsRunCloseToF32) {
  using T = gguf::TensorType;
  const std::vector<float> f32 = prompt_logits(golden("tiny-qwen3-F32"));
  const double q4_0 = rel_rms(prompt_logits(requantized(T::Q4_0)), f32);
  std::cout << "  Q4_0 logits relative RMS error " << q4_0 << "\n";
  for (T type : {T::IQ4_NL, T::IQ4_XS, T::MXFP4}) {
    const double err = rel_rms(prompt_logits(requantized(type)), f32);
    std::cout << "  " << gguf::type_name(type) << " logits relative RMS error " << err << "\n";
    EXPECT_GT(err, 0.0) << gguf::type_name(type);
    EXPECT_LE(err, type == T::MXFP4 ? 2 * q4_0 : q4_0) << gguf::type_name(type);
  }
}

TEST(ModelForward, RejectsBatchesThatDoNotFit) {
  Model m(golden("tiny-qwen2-Q8_0"), {.threads = 1});
  KvCache cache(m.config(), 12, 2, /*block_size=*/4);  // 3 blocks shared by two sequences
  Logits logits;
  auto error = [&](const Batch& b) {
    try {
      m.forward(b, cache, logits);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  Batch b;
  b.add(0, 0, 1024, true);
  EXPECT_EQ(error(b), "batch row 0: token 1024 is outside the vocabulary (1024)");
  b.clear();
  b.add(0, 0, 5, false);
  b.add(0, 2, 6, true);
  EXPECT_EQ(error(b), "batch row 1: position 2 does not continue sequence 0 (expected 1)");
  b.clear();
  b.add(2, 0, 5, true);
  EXPECT_EQ(error(b), "batch row 0: sequence 2 has no cache");
  EXPECT_EQ(cache.length(0), 0);  // nothing was written
  EXPECT_EQ(cache.free_blocks(), 3);

  // Two sequences in one batch, interleaved: each gets the logits it would get alone.
  b.clear();
  for (int p = 0; p < 8; ++p) b.add(p % 2, p / 2, 100 + p % 2 * 7 + p, p >= 6);
  m.forward(b, cache, logits);
  ASSERT_EQ(logits.batch_rows, (std::vector<int32_t>{6, 7}));
  EXPECT_EQ(cache.length(0), 4);
  EXPECT_EQ(cache.length(1), 4);
  EXPECT_EQ(cache.free_blocks(), 1);
  for (int seq = 0; seq < 2; ++seq) {
    KvCache alone(m.config(), 8);
    Batch one;
    for (int p = 0; p < 4; ++p) one.add(0, p, 100 + seq * 7 + 2 * p + seq, p == 3);
    Logits single;
    m.forward(one, alone, single);
    EXPECT_TRUE(std::equal(single.row(0).begin(), single.row(0).end(), logits.row(seq).begin())) << "sequence " << seq;
  }
  b.clear();
  for (int p = 4; p < 8; ++p) b.add(0, p, 1, false);
  m.forward(b, cache, logits);  // takes the last block: no logits wanted, none given
  EXPECT_TRUE(logits.batch_rows.empty());
  EXPECT_EQ(cache.free_blocks(), 0);

  // The pool is empty: sequence 1's next row needs a block, and nothing changes.
  b.clear();
  b.add(1, 4, 1, true);
  EXPECT_EQ(error(b), "the KV cache has 0 free blocks, the batch needs 1");
  EXPECT_EQ(cache.length(1), 4);
  EXPECT_EQ(cache.blocks_of(1), 1);
  // Clearing sequence 1 gives its block back; sequence 0 may then grow into it.
  cache.clear(1);
  b.clear();
  b.add(0, 8, 1, true);
  m.forward(b, cache, logits);
  EXPECT_EQ(cache.length(0), 9);
  b.clear();
  b.add(0, 12, 1, true);
  EXPECT_EQ(error(b), "batch row 0: position 12 does not continue sequence 0 (expected 9)");
  b.clear();
  for (int p = 9; p < 13; ++p) b.add(0, p, 1, p == 12);
  EXPECT_EQ(error(b), "batch row 3: position 12 is beyond the context size");

  ModelConfig other = m.config();
  other.n_head_kv = 4;
  KvCache wrong(other, 8);
  b.clear();
  b.add(0, 0, 1, true);
  try {
    m.forward(b, wrong, logits);
    ADD_FAILURE() << "accepted a cache of another shape";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the KV cache was made for a model of another shape");
  }
}

// A sequence whose blocks are scattered through the pool (others took and gave back blocks
// in between) gets the logits of a sequence stored in order.
TEST(ModelForward, ScatteredBlocksGiveTheSameLogits) {
  Model m(golden("tiny-qwen3-Q8_0"), {.threads = 1});
  std::vector<int32_t> tokens;
  for (int p = 0; p < 40; ++p) tokens.push_back((p * 131 + 7) % 1000);
  auto run = [&](KvCache& cache, int seq) {
    Logits logits;
    Batch b;
    for (int p = 0; p < 40; ++p) {
      b.clear();
      b.add(seq, p, tokens[p], true);
      m.forward(b, cache, logits);
    }
    return std::vector<float>(logits.row(0).begin(), logits.row(0).end());
  };
  KvCache flat(m.config(), 64, 1, 4);
  const auto expected = run(flat, 0);

  KvCache pool(m.config(), 128, 3, 4);
  // Interleave sequence 0's growth with two other sequences that take and free blocks.
  Logits logits;
  Batch b;
  for (int p = 0; p < 40; ++p) {
    b.clear();
    b.add(0, p, tokens[p], true);
    const int other = 1 + p % 2;
    b.add(other, pool.length(other), 5, false);
    m.forward(b, pool, logits);
    if (p % 6 == 5) pool.clear(other);
  }
  ASSERT_EQ(logits.batch_rows.size(), 1u);
  std::vector<int32_t> order;
  const auto view = pool.view(0, 0);
  for (int64_t i = 0; i < pool.blocks_of(0); ++i) order.push_back(view.blocks[i]);
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end())) << "the test should scatter the blocks";
  const std::vector<float> got(logits.row(0).begin(), logits.row(0).end());
  EXPECT_EQ(got, expected);
}

// A profile attached to the model counts each forward call, charges every op some time and the
// bytes it reads (each matrix once a call, each row's keys and values up to its position), and
// changes no logit; once detached it no longer counts.
TEST(ModelForward, ProfileChargesEveryOpItsTimeAndBytes) {
  Model m(golden("tiny-qwen3-Q8_0"), {.threads = 2});
  const ModelConfig& c = m.config();
  auto decode = [&](OpProfile* profile) {
    m.set_profile(profile);
    KvCache cache(c, 16);
    Logits logits;
    Batch b;
    for (int p = 0; p < 5; ++p) b.add(0, p, 11 * p + 3, p == 4);  // a prompt of 5 in one call
    std::vector<float> out;
    for (int step = 0; step < 4; ++step) {  // then 3 decode steps
      m.forward(b, cache, logits);
      out.insert(out.end(), logits.row(0).begin(), logits.row(0).end());
      b.clear();
      b.add(0, 5 + step, 7 * step + 1, true);
    }
    m.set_profile(nullptr);
    return out;
  };
  const std::vector<float> plain = decode(nullptr);
  OpProfile profile;
  EXPECT_EQ(decode(&profile), plain);
  EXPECT_EQ(profile.forwards, 4);

  const gguf::File& f = m.file();
  auto tensor_bytes = [&](const std::string& suffix) {
    double sum = 0.0;
    for (uint32_t l = 0; l < c.n_layer; ++l) sum += f.tensor("blk." + std::to_string(l) + "." + suffix).n_bytes;
    return sum;
  };
  const gguf::TensorInfo* output = f.find_tensor("output.weight");
  const double output_bytes = (output ? *output : f.tensor("token_embd.weight")).n_bytes;
  EXPECT_EQ(profile.bytes_of(Op::kQkv),
            4 * (tensor_bytes("attn_q.weight") + tensor_bytes("attn_k.weight") + tensor_bytes("attn_v.weight")));
  EXPECT_EQ(profile.bytes_of(Op::kWo), 4 * tensor_bytes("attn_output.weight"));
  EXPECT_EQ(profile.bytes_of(Op::kGateUp), 4 * (tensor_bytes("ffn_gate.weight") + tensor_bytes("ffn_up.weight")));
  EXPECT_EQ(profile.bytes_of(Op::kDown), 4 * tensor_bytes("ffn_down.weight"));
  EXPECT_EQ(profile.bytes_of(Op::kOutput), 4 * output_bytes);
  // Positions read: 1 + 2 + ... + 5 for the prompt's rows, then 6, 7 and 8; a key's or value's
  // element in 2 bytes (F16) or 34 per 32 (Q8_0, NANOSERVE_KV_TYPE=q8_0).
  const double element_bytes = c.kv_type == KvType::F16 ? 2.0 : 34.0 / 32;
  EXPECT_EQ(profile.bytes_of(Op::kAttention), (15 + 6 + 7 + 8) * 2.0 * c.kv_dim() * element_bytes * c.n_layer);
  for (int i = 0; i < kOpCount; ++i)  // every op of a dense model's forward pass
    if (static_cast<Op>(i) != Op::kRouter && static_cast<Op>(i) != Op::kDeltaNet) {
      EXPECT_GT(profile.seconds[i], 0.0) << op_name(static_cast<Op>(i));
    }
  EXPECT_EQ(profile.seconds_of(Op::kRouter), 0.0);
  EXPECT_EQ(profile.seconds_of(Op::kDeltaNet), 0.0);

  const OpProfile before = profile;
  decode(nullptr);
  EXPECT_EQ(profile.seconds, before.seconds);
  EXPECT_EQ(profile.forwards, before.forwards);
}

// Llama 3 frequency scaling: the rope_freqs tensor of a synthesized Llama 3.2 shape is bound
// and used (the logits change when it is all ones instead).
TEST(ModelForward, UsesRopeFreqs) {
  ModelConfig c = ModelConfig{.arch = "llama", .n_layer = 2, .n_embd = 256, .n_ff = 512, .n_head = 4, .n_head_kv = 2,
                              .head_dim = 64, .n_vocab = 512, .n_ctx_train = 4096, .rope_base = 500000.0f,
                              .rms_eps = 1e-5f, .tied_output = true, .rope_scaling = Llama3RopeScaling{}};
  synth::SynthOptions o{.config = c, .name = "rope", .type = "Q8_0", .out_path = temp_path("rope"),
                        .tokenizer_json = "", .seed = 3, .threads = 1};
  synth::synthesize(o);
  const std::string ones = edited_copy(o.out_path, "rope-ones", {}, [](TensorCopy& t) {
    if (t.name == "rope_freqs.weight")
      for (size_t i = 0; i < t.bytes.size(); i += 4) std::memcpy(&t.bytes[i], "\x00\x00\x80\x3f", 4);  // 1.0f
    return true;
  });
  auto last_logits = [](const std::string& path) {
    Model m(path, {.threads = 1});
    KvCache cache(m.config(), 64);
    Batch b;
    for (int p = 0; p < 64; ++p) b.add(0, p, (p * 37) % 512, p == 63);
    Logits logits;
    m.forward(b, cache, logits);
    return std::vector<float>(logits.row(0).begin(), logits.row(0).end());
  };
  const auto scaled = last_logits(o.out_path), plain = last_logits(ones);
  for (float v : scaled) ASSERT_TRUE(std::isfinite(v));
  EXPECT_NE(scaled, plain);
}

// Phi-3's rope factors follow the context, as llama.cpp's do: up to the original context the
// short ones (which the golden logits, computed at n_ctx 2048, were made with), beyond it the
// long ones, which move the logits of every position past 0.
TEST(ModelForward, Phi3RopeFactorsFollowTheContext) {
  Model m(golden("archs/tiny-phi3-Q8_0"), {.threads = 1});
  auto last_logits = [&m](int64_t context) {
    m.set_context(context);
    KvCache cache(m.config(), 16);
    Batch b;
    for (int p = 0; p < 16; ++p) b.add(0, p, (p * 37) % 1024, p == 15);
    Logits logits;
    m.forward(b, cache, logits);
    return std::vector<float>(logits.row(0).begin(), logits.row(0).end());
  };
  const auto short_2048 = last_logits(2048), short_4096 = last_logits(4096), long_8192 = last_logits(8192);
  EXPECT_EQ(short_2048, short_4096);
  EXPECT_NE(short_2048, long_8192);
  EXPECT_EQ(last_logits(2048), short_2048);  // and back
}

// GPT-2's positions are a table of context_length rows: no context beyond it, no position past it.
TEST(ModelForward, Gpt2HasNoPositionsBeyondItsLearnedOnes) {
  Model m(golden("archs/tiny-gpt2-Q8_0"), {.threads = 1});
  ASSERT_EQ(m.config().n_ctx_train, 1280u);
  EXPECT_EQ(m.set_context(1280), 1280);
  try {
    m.set_context(1281);
    FAIL() << "a context beyond the learned positions was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("learned embeddings for 1280"), std::string::npos) << e.what();
  }
  KvCache cache(m.config(), 1296);
  Batch b;
  Logits logits;
  for (int p = 0; p < 1280; ++p) b.add(0, p, p % 1024, p == 1279);
  m.forward(b, cache, logits);
  b.clear();
  b.add(0, 1280, 5, true);
  try {
    m.forward(b, cache, logits);
    FAIL() << "position 1280 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has no learned embedding"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nanoserve::model
