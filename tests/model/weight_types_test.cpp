// Our per-tensor type choice must equal what llama-quantize chose for every golden file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

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

// The IQ4_NL, IQ4_XS and MXFP4_MOE mixes against llama-quantize's choices (--dry-run, no imatrix)
// for synthesized shapes that reach their rules: attn_v of 4 query heads per KV head, ffn_down in
// the first eighth of 16 layers, rows of 320 that fall back, experts' stacks
// (tests/model/data/quantize_types: make.sh wrote them).
TEST(WeightTypes, MatchLlamaQuantizeForTheNonlinearMixes) {
  static const std::regex header_re(R"(# layers=(\d+) gqa=(\d+) tied=(\d) experts=(\d+))");
  static const std::regex layer_re(R"(blk\.(\d+)\.(\w+)\.weight)");
  const std::pair<const char*, TensorRole> roles[] = {
      {"attn_q", TensorRole::AttnQ},          {"attn_k", TensorRole::AttnK},         {"attn_v", TensorRole::AttnV},
      {"attn_output", TensorRole::AttnOutput}, {"ffn_gate", TensorRole::FfnGate},     {"ffn_up", TensorRole::FfnUp},
      {"ffn_down", TensorRole::FfnDown},       {"ffn_gate_exps", TensorRole::FfnGate}, {"ffn_up_exps", TensorRole::FfnUp},
      {"ffn_down_exps", TensorRole::FfnDown}};
  int compared = 0;
  for (const char* model : {"gqa4", "odd", "moe"}) {
    for (const char* ft : {"IQ4_NL", "IQ4_XS", "MXFP4_MOE"}) {
      const std::string file = test::source_path(std::string("tests/model/data/quantize_types/") + model + "-" + ft + ".txt");
      if (!std::filesystem::exists(file)) continue;
      std::ifstream in(file);
      std::string line;
      std::getline(in, line);
      std::smatch h;
      ASSERT_TRUE(std::regex_match(line, h, header_re)) << file;
      TensorSlot base;
      base.n_layer = static_cast<uint32_t>(std::stoul(h[1]));
      base.n_gqa = static_cast<uint32_t>(std::stoul(h[2]));
      base.tied_output = h[3] == "1";
      base.n_expert = static_cast<uint32_t>(std::stoul(h[4]));
      const WeightTypePlan plan = WeightTypePlan::from_name(ft);
      while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string name, dims_text, want;
        fields >> name >> dims_text >> want;
        std::vector<uint64_t> dims;
        std::istringstream d(dims_text);
        for (std::string v; std::getline(d, v, ',');) dims.push_back(std::stoull(v));
        if (dims[1] == 1 || name.find("ffn_gate_inp") != std::string::npos) {  // vectors, routers: kept F32
          EXPECT_EQ(want, "F32") << name;
          continue;
        }
        TensorSlot s = base;
        s.row_length = dims[0];
        s.experts = dims.size() == 3;
        std::smatch m;
        if (name == "token_embd.weight") {
          s.role = TensorRole::TokenEmbd;
        } else if (name == "output.weight") {
          s.role = TensorRole::Output;
        } else if (std::regex_match(name, m, layer_re)) {
          s.layer = static_cast<uint32_t>(std::stoul(m[1]));
          bool found = false;
          for (const auto& [n, r] : roles)
            if (m[2] == n) s.role = r, found = true;
          ASSERT_TRUE(found) << name;
        } else {
          ADD_FAILURE() << "unexpected tensor " << name;
          continue;
        }
        EXPECT_EQ(gguf::type_name(plan.type_for(s)), want) << model << "-" << ft << " " << name;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 250);
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
  EXPECT_TRUE(WeightTypePlan::from_name("iq4_xs").mixed);
  EXPECT_TRUE(WeightTypePlan::from_name("MXFP4_MOE").mixed);
  const WeightTypePlan mxfp4 = WeightTypePlan::from_name("MXFP4");  // every matrix, as --pure
  EXPECT_FALSE(mxfp4.mixed);
  EXPECT_EQ(mxfp4.base, gguf::TensorType::MXFP4);
  EXPECT_EQ(mxfp4.file_type.name, "MXFP4_MOE");
  WeightTypePlan pure = WeightTypePlan::from_name("q4_k");
  EXPECT_FALSE(pure.mixed);
  EXPECT_EQ(pure.base, gguf::TensorType::Q4_K);
  EXPECT_TRUE(WeightTypePlan::from_name("Q4_K_M").mixed);
  EXPECT_FALSE(WeightTypePlan::from_name("F16").mixed);
}

}  // namespace
}  // namespace nanoserve::model
