// Dequantize every tensor of every golden model and compare it, element by element, with the
// values it was quantized from: the F32 master for qwen3 (exact source), the family's F16 file
// for qwen2 and llama (whose masters are not shipped; the bound then also allows that file's
// own fp16 rounding). Each element must meet the bound of its own block (element_grid.h), so
// a decoder that reads the wrong bits, nibble or scale fails; each tensor must also meet its
// type's RMS quality bound. The type of every tensor comes from its tensor info: the files
// mix types (e.g. Q6_K token_embd in the Q4_0 file, F32 norms everywhere).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "tensor/element_grid.h"
#include "tensor/golden_models.h"
#include "tensor/quant.h"

namespace nanoserve::tensor {
namespace {

using T = gguf::TensorType;

std::vector<float> dequantize_tensor(const gguf::TensorInfo& t) {
  std::vector<float> out(t.n_elements());
  dequantize_row(t.type, t.data, out.data(), static_cast<int64_t>(out.size()));
  return out;
}

TEST(GoldenModels, FolderHoldsTheListedFiles) {
  EXPECT_EQ(test::golden_model_files(), test::expected_golden_models());
}

class GoldenDequantize : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenDequantize, EveryTensorWithinItsBlockBound) {
  const std::string file = GetParam();
  const std::string ref_file = test::golden_reference_file(test::golden_family(file));
  const gguf::File model = gguf::File::open(test::golden_model_path(file));
  const gguf::File ref = gguf::File::open(test::golden_model_path(ref_file));
  ASSERT_FALSE(model.tensors().empty());
  ASSERT_EQ(model.tensors().size(), ref.tensors().size());

  struct Stats {
    int tensors = 0;
    double worst = 0;    // largest |error| / allowed
    double rel_rms = 0;  // largest per-tensor RMS error / RMS reference
  };
  std::map<std::string, Stats> per_type;
  for (const gguf::TensorInfo& t : model.tensors()) {
    SCOPED_TRACE(t.name + " (" + std::string(gguf::type_name(t.type)) + ") vs " + ref_file);
    const gguf::TensorInfo& r = ref.tensor(t.name);
    ASSERT_EQ(t.dims, r.dims);
    ASSERT_TRUE(can_dequantize(t.type));
    ASSERT_EQ(t.n_bytes, *gguf::row_bytes(t.type, t.n_elements()));

    const std::vector<float> x = dequantize_tensor(r);  // F32 or F16 reference
    const std::vector<float> y = dequantize_tensor(t);
    test::RowReport report;
    test::check_row(t.type, x.data(), t.data, y.data(), static_cast<int64_t>(x.size()), r.type == T::F16, report);
    EXPECT_EQ(report.violations, 0) << report.violations << " of " << report.checked << " elements, first "
                                    << report.first_violation;
    // The RMS bound is for Gaussian blocks; the 1-D norm weights (1 + N(0, 0.1^2), F32) are
    // copied exactly, and every 2-D tensor here is Gaussian.
    EXPECT_LE(report.rel_rms(), test::max_rel_rms(t.type));
    Stats& st = per_type[std::string(gguf::type_name(t.type))];
    ++st.tensors;
    st.worst = std::max(st.worst, report.worst);
    st.rel_rms = std::max(st.rel_rms, report.rel_rms());
  }
  std::cout << "  " << file << " vs " << ref_file << ":";
  for (const auto& [type, st] : per_type)
    std::cout << " " << st.tensors << "x" << type << " (err/bound " << st.worst << ", rel rms " << st.rel_rms << ")";
  std::cout << "\n";
}

INSTANTIATE_TEST_SUITE_P(AllModels, GoldenDequantize, ::testing::ValuesIn(test::expected_golden_models()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return test::test_name_of(info.param);
                         });

// The goldens together exercise every weight type a GGUF model file can hold here.
TEST(GoldenModels, CoverEveryWeightType) {
  std::set<T> seen;
  for (const std::string& file : test::expected_golden_models()) {
    const gguf::File model = gguf::File::open(test::golden_model_path(file));
    for (const gguf::TensorInfo& t : model.tensors()) seen.insert(t.type);
  }
  for (T t : {T::F32, T::F16, T::BF16, T::Q8_0, T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1, T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K,
              T::Q6_K})
    EXPECT_TRUE(seen.count(t)) << gguf::type_name(t);
}

}  // namespace
}  // namespace nanoserve::tensor
