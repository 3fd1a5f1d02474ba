// Which files of a repo a name means: the default quant, a tag, a file, and multi-part models.
#include <gtest/gtest.h>

#include <stdexcept>

#include "hub/repo_files.h"

namespace nanoserve::hub {
namespace {

std::vector<RepoFile> repo(std::initializer_list<const char*> paths) {
  std::vector<RepoFile> files;
  for (const char* p : paths) files.push_back({p, 100, ""});
  return files;
}

std::vector<std::string> chosen(const std::vector<RepoFile>& files, const std::string& quant,
                                const std::string& file = "") {
  std::vector<std::string> paths;
  for (const RepoFile& f : select_files(files, {"o/r", quant, file})) paths.push_back(f.path);
  return paths;
}

std::string error_of(const std::vector<RepoFile>& files, const std::string& quant) {
  try {
    select_files(files, {"o/r", quant, ""});
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(RepoFiles, QuantOfAFileName) {
  EXPECT_EQ(quant_of("qwen2.5-0.5b-instruct-q4_k_m.gguf"), "Q4_K_M");
  EXPECT_EQ(quant_of("llama-2-7b.Q5_K_S.gguf"), "Q5_K_S");
  EXPECT_EQ(quant_of("Q4_K_M/big-Q4_K_M-00002-of-00003.gguf"), "Q4_K_M");
}

TEST(RepoFiles, DefaultIsQ8_0ElseQ4_K_M) {
  const auto both = repo({"README.md", "m-q4_k_m.gguf", "m-q8_0.gguf", "m-f16.gguf"});
  EXPECT_EQ(chosen(both, ""), std::vector<std::string>{"m-q8_0.gguf"});
  const auto no_q8 = repo({"m-q4_k_m.gguf", "m-q6_k.gguf"});
  EXPECT_EQ(chosen(no_q8, ""), std::vector<std::string>{"m-q4_k_m.gguf"});
  const std::string neither = error_of(repo({"m-q6_k.gguf", "m-f16.gguf"}), "");
  EXPECT_NE(neither.find("no Q8_0 or Q4_K_M"), std::string::npos) << neither;
  EXPECT_NE(neither.find("F16, Q6_K"), std::string::npos) << neither;
}

TEST(RepoFiles, QuantTagMatchesCaseInsensitivelyAndWholly) {
  const auto files = repo({"m-Q4_K_M.gguf", "m-Q4_K_S.gguf", "m-IQ4_XS.gguf"});
  EXPECT_EQ(chosen(files, "q4_k_m"), std::vector<std::string>{"m-Q4_K_M.gguf"});
  EXPECT_EQ(chosen(files, "iq4_xs"), std::vector<std::string>{"m-IQ4_XS.gguf"});
  const std::string missing = error_of(files, "Q4_K");  // a prefix of a tag is not the tag
  EXPECT_NE(missing.find("o/r has no Q4_K file; its quants: IQ4_XS, Q4_K_M, Q4_K_S"), std::string::npos) << missing;
}

TEST(RepoFiles, MultiPartModelsComeWhole) {
  const auto files =
      repo({"Q4_K_M/m-Q4_K_M-00002-of-00002.gguf", "Q4_K_M/m-Q4_K_M-00001-of-00002.gguf", "m-Q8_0.gguf"});
  const std::vector<std::string> parts = {"Q4_K_M/m-Q4_K_M-00001-of-00002.gguf", "Q4_K_M/m-Q4_K_M-00002-of-00002.gguf"};
  EXPECT_EQ(chosen(files, "Q4_K_M"), parts);
  EXPECT_EQ(chosen(files, "", "Q4_K_M/m-Q4_K_M-00002-of-00002.gguf"), parts);  // any part names the model
  const std::string incomplete =
      error_of(repo({"m-Q4_K_M-00001-of-00003.gguf", "m-Q4_K_M-00002-of-00003.gguf"}), "Q4_K_M");
  EXPECT_NE(incomplete.find("2 of the 3 parts"), std::string::npos) << incomplete;
}

TEST(RepoFiles, SeveralModelsOfOneTagAreNamedToChooseFrom) {
  const std::string several = error_of(repo({"a-Q8_0.gguf", "b-Q8_0.gguf"}), "Q8_0");
  EXPECT_NE(several.find("o/r/a-Q8_0.gguf, o/r/b-Q8_0.gguf"), std::string::npos) << several;
}

TEST(RepoFiles, AFileNotThereListsTheQuants) {
  try {
    select_files(repo({"m-Q8_0.gguf"}), {"o/r", "", "m-q8_0.gguf"});  // paths are case-sensitive
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("o/r has no file m-q8_0.gguf; its quants: Q8_0"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(select_files(repo({"README.md"}), {"o/r", "", ""}), std::runtime_error);
}

}  // namespace
}  // namespace nanoserve::hub
