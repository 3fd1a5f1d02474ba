// pycoder (../shared/models/pycoder): a small qwen3 model really trained on Python. Its README
// records llama.cpp's greedy continuations of five prompts with the F16 file; we must write
// the same text, and the quantized files must still write Python-looking code.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/sanitizer.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::model {
namespace {

struct Sample {
  std::string prompt;
  std::string greedy;  // prompt + 96 greedy tokens, as the README shows it
};

// The README's "### Prompt N" sections: the prompt in a ```python block, then the greedy
// output in the ```text block after "Greedy (temperature 0), 96 tokens:".
std::vector<Sample> readme_samples() {
  const std::string readme = test::read_file(test::shared_path("models/pycoder/README.md"));
  auto block_after = [&](const std::string& marker, size_t from, size_t& end) {
    const size_t m = readme.find(marker, from);
    if (m == std::string::npos) return std::string();
    const size_t begin = readme.find('\n', readme.find("```", m)) + 1;
    end = readme.find("```", begin);
    return readme.substr(begin, end - begin);
  };
  std::vector<Sample> out;
  size_t pos = 0, end = 0;
  while ((pos = readme.find("### Prompt ", pos)) != std::string::npos) {
    Sample s;
    s.prompt = block_after("```python", pos, end);
    s.greedy = block_after("Greedy (temperature 0), 96 tokens:", end, end);
    out.push_back(s);
    pos = end;
  }
  return out;
}

std::string greedy_text(Model& model, const tokenizer::Tokenizer& tok, const std::string& prompt, int n) {
  const std::vector<int32_t> ids = tok.encode(prompt);
  KvCache cache(model.config(), static_cast<int64_t>(ids.size()) + n);
  Batch batch;
  for (size_t p = 0; p < ids.size(); ++p) batch.add(0, static_cast<int64_t>(p), ids[p], p + 1 == ids.size());
  Logits logits;
  std::vector<int32_t> out;
  for (int k = 0; k < n; ++k) {
    model.forward(batch, cache, logits);
    const auto row = logits.row(0);
    const int32_t next = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    if (next == tok.eos_id()) break;
    out.push_back(next);
    batch.clear();
    batch.add(0, static_cast<int64_t>(ids.size() + out.size() - 1), next, true);
  }
  return prompt + tok.decode(out);
}

std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

std::string model_path(const std::string& type) {
  return test::shared_path("models/pycoder/pycoder-" + type + ".gguf");
}

// Sanitizer builds compare the first 24 tokens only.
constexpr int kTokens = test::kSanitized ? 24 : 96;

TEST(Pycoder, GreedyTextIsLlamaCppsForF32AndF16) {
  const std::vector<Sample> samples = readme_samples();
  ASSERT_EQ(samples.size(), 5u);
  for (const char* type : {"f16", "f32"}) {
    Model model(model_path(type), {.threads = 2});
    const auto tok = tokenizer::Tokenizer::from_gguf(model.file().metadata());
    for (const Sample& s : samples) {
      const std::string ours = trim_end(greedy_text(model, tok, s.prompt, kTokens));
      if (kTokens == 96)
        EXPECT_EQ(ours, trim_end(s.greedy)) << type << " prompt: " << s.prompt;
      else
        EXPECT_TRUE(s.greedy.starts_with(ours)) << type << ": " << ours << "\nis not the start of\n" << s.greedy;
    }
  }
}

// Quantized weights change some greedy choices of this small model, but not its language.
TEST(Pycoder, QuantizedFilesWritePython) {
  const std::vector<Sample> samples = readme_samples();
  for (const char* type : {"q8_0", "q4_k_m"}) {
    Model model(model_path(type), {.threads = 2});
    const auto tok = tokenizer::Tokenizer::from_gguf(model.file().metadata());
    std::string text;  // all five continuations (some prompts send it into a loop)
    for (const Sample& s : samples) text += greedy_text(model, tok, s.prompt, kTokens).substr(s.prompt.size()) + "\n";
    int signs = 0;
    for (const char* word : {"def ", "return ", "self.", "import ", "class ", "    ", "(", "):\n", "\"\"\""})
      signs += text.find(word) != std::string::npos;
    const auto printable = std::count_if(text.begin(), text.end(), [](char c) { return c == '\n' || (c >= 32 && c < 127); });
    EXPECT_GE(signs, test::kSanitized ? 4 : 6) << type << ":\n" << text;
    EXPECT_GE(printable, static_cast<long>(0.95 * text.size())) << type << ":\n" << text;
  }
}

}  // namespace
}  // namespace nanoserve::model
