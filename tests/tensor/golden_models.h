// The golden model files of ../shared/golden/models (see its README): random-weight GGUFs that
// llama-quantize produced from an F32 master per family.
#pragma once

#include <string>
#include <vector>

namespace nanoserve::test {

// The tiny-*.gguf files the README lists (file names, sorted). A fixed list, so that test
// names do not depend on the folder; a test checks that the folder holds exactly these.
const std::vector<std::string>& expected_golden_models();

// File names of every tiny-*.gguf in the folder, sorted. Throws when ../shared is missing.
std::vector<std::string> golden_model_files();

// "tiny-qwen3-Q4_0.gguf" -> "qwen3".
std::string golden_family(const std::string& file);

// The file to compare a family's models against: the F32 master where the family has one
// (qwen3), else its F16 file (qwen2, llama).
std::string golden_reference_file(const std::string& family);

// Absolute path of a file in the golden models folder.
std::string golden_model_path(const std::string& file);

// A gtest-safe name for a file: "tiny_qwen3_Q4_K_M".
std::string test_name_of(const std::string& file);

}  // namespace nanoserve::test
