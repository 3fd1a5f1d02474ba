// Model names as pull and --model take them, told apart from local paths.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "hub/model_name.h"
#include "support/test_paths.h"

namespace nanoserve::hub {
namespace {

TEST(ModelName, TheThreeForms) {
  const auto repo = parse_model_name("Qwen/Qwen2.5-0.5B-Instruct-GGUF");
  ASSERT_TRUE(repo);
  EXPECT_EQ(repo->repo, "Qwen/Qwen2.5-0.5B-Instruct-GGUF");
  EXPECT_EQ(repo->quant, "");
  EXPECT_EQ(repo->file, "");

  const auto quant = parse_model_name("Qwen/Qwen2.5-0.5B-Instruct-GGUF:q4_k_m");
  ASSERT_TRUE(quant);
  EXPECT_EQ(quant->repo, "Qwen/Qwen2.5-0.5B-Instruct-GGUF");
  EXPECT_EQ(quant->quant, "q4_k_m");
  EXPECT_EQ(quant->text(), "Qwen/Qwen2.5-0.5B-Instruct-GGUF:q4_k_m");

  const auto file = parse_model_name("unsloth/Big-GGUF/Q4_K_M/big-Q4_K_M-00001-of-00002.gguf");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->repo, "unsloth/Big-GGUF");
  EXPECT_EQ(file->file, "Q4_K_M/big-Q4_K_M-00001-of-00002.gguf");
  EXPECT_EQ(file->text(), "unsloth/Big-GGUF/Q4_K_M/big-Q4_K_M-00001-of-00002.gguf");
}

TEST(ModelName, LocalPathsAreNotNames) {
  for (const char* path :
       {"/models/x.gguf", "./x/y.gguf", "../shared/m.gguf", "~/m.gguf", "model.gguf", "models/m.gguf"})
    EXPECT_FALSE(parse_model_name(path)) << path;
  // A file that exists is a path, whatever it looks like.
  const std::string dir = test::temp_file("name-dir");
  std::filesystem::create_directories(dir + "/owner/repo");
  std::ofstream(dir + "/owner/repo/f.gguf") << "x";
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  EXPECT_FALSE(parse_model_name("owner/repo/f.gguf"));
  EXPECT_TRUE(parse_model_name("owner/repo/g.gguf"));
  std::filesystem::current_path(cwd);
}

TEST(ModelName, MalformedNamesSayWhatANameIs) {
  for (const char* bad :
       {"owner/repo:", "owner/repo/readme.md", "owner/:Q8_0", "owner/../x.gguf", "a b/c", "o/r/../x.gguf"}) {
    try {
      parse_model_name(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("owner/repo:QUANT"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace nanoserve::hub
