// Quantize every tensor of the F32 master tiny-qwen3-F32.gguf with our quantizers and compare
// the bytes with each tiny-qwen3-* golden that llama-quantize made from the same master (no
// imatrix), using the type the golden stores for that tensor.
//
// Required: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 (ggml's deterministic reference
// quantizers). Beyond the requirement: our K-quant quantizers reimplement ggml's reference
// scale searches too, and are bit-identical on every K-quant tensor of these goldens
// (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K). That is asserted as well, as a regression guard; a
// deliberate change of the K-quant search would move those expectations to a report.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "tensor/golden_models.h"
#include "tensor/quant.h"

namespace nanoserve::tensor {
namespace {

using T = gguf::TensorType;

struct Tally {
  int same = 0;
  int total = 0;
};

// Compares one golden file against our quantization of the master; returns per-type tallies
// and adds a failure for every differing tensor.
std::map<std::string, Tally> compare_with_master(const std::string& file) {
  const gguf::File master = gguf::File::open(test::golden_model_path("tiny-qwen3-F32.gguf"));
  const gguf::File golden = gguf::File::open(test::golden_model_path(file));
  std::map<std::string, Tally> tally;
  for (const gguf::TensorInfo& g : golden.tensors()) {
    const gguf::TensorInfo& m = master.tensor(g.name);
    EXPECT_EQ(m.type, T::F32) << g.name;
    EXPECT_EQ(m.dims, g.dims) << g.name;
    if (m.type != T::F32 || m.dims != g.dims) continue;

    const int64_t row = static_cast<int64_t>(g.row_length());
    const uint64_t row_bytes = *gguf::row_bytes(g.type, g.row_length());
    const auto* src = reinterpret_cast<const float*>(m.data);  // the mapped data section is 32-byte aligned
    std::vector<uint8_t> ours(row_bytes);
    int64_t first_bad_row = -1;
    for (uint64_t r = 0; r < g.n_rows() && first_bad_row < 0; ++r) {
      quantize_row(g.type, src + r * row, ours.data(), row);
      if (std::memcmp(ours.data(), g.data + r * row_bytes, row_bytes) != 0) first_bad_row = static_cast<int64_t>(r);
    }
    Tally& t = tally[std::string(gguf::type_name(g.type))];
    ++t.total;
    if (first_bad_row < 0)
      ++t.same;
    else
      ADD_FAILURE() << file << ": " << g.name << " (" << gguf::type_name(g.type) << ") differs from row "
                    << first_bad_row;
  }
  return tally;
}

void print(const std::string& file, const std::map<std::string, Tally>& tally) {
  std::cout << "  " << file << ":";
  for (const auto& [type, t] : tally) std::cout << " " << type << " " << t.same << "/" << t.total;
  std::cout << " tensors identical\n";
}

class BitIdentity : public ::testing::TestWithParam<std::string> {};

TEST_P(BitIdentity, QuantizingTheMasterReproducesTheGolden) {
  const auto tally = compare_with_master(GetParam());
  print(GetParam(), tally);
  int compared = 0;
  for (const auto& [type, t] : tally) compared += t.total;
  EXPECT_GT(compared, 0);
}

std::vector<std::string> qwen3_goldens() {
  std::vector<std::string> files;
  for (const std::string& f : test::expected_golden_models())
    if (f.starts_with("tiny-qwen3-") && f != "tiny-qwen3-F32.gguf") files.push_back(f);
  return files;
}

INSTANTIATE_TEST_SUITE_P(Qwen3, BitIdentity, ::testing::ValuesIn(qwen3_goldens()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return test::test_name_of(info.param);
                         });

// The legacy files store their own type for every tensor but token_embd (Q6_K, as the tied
// output matrix); make sure the comparison above really saw the required types.
TEST(BitIdentityCoverage, RequiredTypesAreCompared) {
  const std::map<std::string, std::string> file_type = {
      {"tiny-qwen3-F16.gguf", "F16"},   {"tiny-qwen3-BF16.gguf", "BF16"}, {"tiny-qwen3-Q8_0.gguf", "Q8_0"},
      {"tiny-qwen3-Q4_0.gguf", "Q4_0"}, {"tiny-qwen3-Q4_1.gguf", "Q4_1"}, {"tiny-qwen3-Q5_0.gguf", "Q5_0"},
      {"tiny-qwen3-Q5_1.gguf", "Q5_1"}};
  for (const auto& [file, type] : file_type) {
    const gguf::File golden = gguf::File::open(test::golden_model_path(file));
    int with_type = 0;
    for (const gguf::TensorInfo& t : golden.tensors()) with_type += gguf::type_name(t.type) == type;
    EXPECT_GE(with_type, 28) << file;  // 4 layers x 7 matrices
  }
}

}  // namespace
}  // namespace nanoserve::tensor
