// Our per-tensor type choice must equal what llama-quantize chose for every golden file.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "gguf/file.h"
#include "model/weight_types.h"
#include "support/test_paths.h"

namespace nanoserve::model {
namespace {

TensorSlot slot_of(const gguf::File& f, const gguf::TensorInfo& t) {
  static const std::regex layer_re(R"(blk\.(\d+)\.(\w+)\.weight)");
  const std::string arch = f.metadata().get_string("general.architecture");
  TensorSlot s;
  s.n_layer = f.metadata().get_u32(arch + ".block_count");
  s.row_length = t.dims[0];
  s.n_gqa = f.metadata().get_u32(arch + ".attention.head_count") / f.metadata().get_u32(arch + ".attention.head_count_kv");
  s.tied_output = f.find_tensor("output.weight") == nullptr;
  std::smatch m;
  if (t.dims.size() == 1) {
    s.role = TensorRole::Vector;
  } else if (t.name == "token_embd.weight") {
    s.role = TensorRole::TokenEmbd;
  } else if (t.name == "output.weight") {
    s.role = TensorRole::Output;
  } else if (std::regex_match(t.name, m, layer_re)) {
    s.layer = static_cast<uint32_t>(std::stoul(m[1]));
    const std::string kind = m[2];
    const std::pair<const char*, TensorRole> roles[] = {
        {"attn_q", TensorRole::AttnQ},         {"attn_k", TensorRole::AttnK},     {"attn_v", TensorRole::AttnV},
        {"attn_output", TensorRole::AttnOutput}, {"ffn_gate", TensorRole::FfnGate}, {"ffn_up", TensorRole::FfnUp},
        {"ffn_down", TensorRole::FfnDown}};
    bool found = false;
    for (const auto& [n, r] : roles)
      if (kind == n) s.role = r, found = true;
    EXPECT_TRUE(found) << t.name;
  } else {
    ADD_FAILURE() << "unexpected tensor " << t.name;
  }
  return s;
}

TEST(WeightTypes, MatchLlamaQuantizeOnEveryGoldenFile) {
  int files = 0, tensors = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::shared_path("golden/models"))) {
    if (entry.path().extension() != ".gguf") continue;
    gguf::File f = gguf::File::open(entry.path().string());
    auto ft = gguf::file_type_by_id(f.metadata().get_u32("general.file_type"));
    ASSERT_TRUE(ft) << entry.path();
    WeightTypePlan plan = WeightTypePlan::from_name(std::string(ft->name));
    for (const auto& t : f.tensors()) {
      EXPECT_EQ(gguf::type_name(plan.type_for(slot_of(f, t))), gguf::type_name(t.type))
          << entry.path().filename() << " " << t.name;
      ++tensors;
    }
    ++files;
  }
  EXPECT_EQ(files, 20);
  EXPECT_GT(tensors, 500);
}

TEST(WeightTypes, FallsBackWhenRowsDoNotFitKQuantBlocks) {
  WeightTypePlan plan = WeightTypePlan::from_name("Q4_K_M");
  TensorSlot q{TensorRole::AttnQ, 0, 24, 896, 7, true};
  EXPECT_EQ(plan.type_for(q), gguf::TensorType::Q5_0);  // 896 is not a multiple of 256
  TensorSlot embd{TensorRole::TokenEmbd, 0, 24, 896, 7, true};
  EXPECT_EQ(plan.type_for(embd), gguf::TensorType::Q8_0);
  TensorSlot down{TensorRole::FfnDown, 4, 24, 4864, 7, true};
  EXPECT_EQ(plan.type_for(down), gguf::TensorType::Q4_K);
  down.layer = 1;  // the first eighth of the layers gets more bits
  EXPECT_EQ(plan.type_for(down), gguf::TensorType::Q6_K);
}

TEST(WeightTypes, NamesAreChecked) {
  EXPECT_THROW(WeightTypePlan::from_name("Q7_0"), std::invalid_argument);
  EXPECT_THROW(WeightTypePlan::from_name("IQ2_XXS"), std::invalid_argument);
  WeightTypePlan pure = WeightTypePlan::from_name("q4_k");
  EXPECT_FALSE(pure.mixed);
  EXPECT_EQ(pure.base, gguf::TensorType::Q4_K);
  EXPECT_TRUE(WeightTypePlan::from_name("Q4_K_M").mixed);
  EXPECT_FALSE(WeightTypePlan::from_name("F16").mixed);
}

}  // namespace
}  // namespace nanoserve::model
