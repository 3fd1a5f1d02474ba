// `nanoserve template` renders the golden conversations of ../shared/golden/chat exactly,
// from a template file or from a model's tokenizer.chat_template.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "support/run_nanoserve.h"
#include "support/test_paths.h"

namespace nanoserve {
namespace {

using test::CommandResult;

struct GoldenRun {
  std::string stdin_text;              // one input line per conversation
  std::vector<std::string> expected;   // the rendered prompts
  std::string bos_token, eos_token;    // from special_tokens, when set
};

// The golden conversations of a family as the command's input lines; special tokens other
// than bos/eos go in "extra", as Hugging Face passes them to the template.
GoldenRun golden_run(const std::string& family) {
  std::istringstream golden(test::read_file(test::shared_path("golden/chat/" + family + ".jsonl")));
  GoldenRun run;
  for (std::string line; std::getline(golden, line);) {
    const auto row = nlohmann::ordered_json::parse(line);
    nlohmann::ordered_json input = {{"messages", row["messages"]},
                                    {"tools", row["tools"]},
                                    {"add_generation_prompt", row["add_generation_prompt"]},
                                    {"extra", row["extra"]}};
    for (const auto& [name, value] : row["special_tokens"].items()) {
      if (name == "bos_token") run.bos_token = value;
      else if (name == "eos_token") run.eos_token = value;
      else input["extra"][name] = value;
    }
    run.stdin_text += input.dump() + "\n";
    run.expected.push_back(row["rendered"]);
  }
  return run;
}

std::vector<std::string> output_strings(const std::string& out) {
  std::istringstream lines(out);
  std::vector<std::string> strings;
  for (std::string line; std::getline(lines, line);) strings.push_back(nlohmann::json::parse(line).get<std::string>());
  return strings;
}

void expect_all_rendered(const CommandResult& r, const GoldenRun& run, const std::string& family) {
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rendered = output_strings(r.out);
  ASSERT_EQ(rendered.size(), run.expected.size()) << r.out << r.err;
  for (size_t i = 0; i < rendered.size(); ++i) EXPECT_EQ(rendered[i], run.expected[i]) << family << " line " << i + 1;
}

TEST(TemplateCommand, TemplateFileRendersEveryGoldenConversation) {
  for (const std::string family : {"qwen2_5", "qwen3", "llama3"}) {
    const GoldenRun run = golden_run(family);
    std::string args = "template --template " + test::shared_path("golden/chat/" + family + ".jinja");
    if (!run.bos_token.empty()) args += " --bos '" + run.bos_token + "'";
    if (!run.eos_token.empty()) args += " --eos '" + run.eos_token + "'";
    expect_all_rendered(test::run_nanoserve(args, run.stdin_text), run, family);
  }
}

TEST(TemplateCommand, ModelTemplateRendersEveryGoldenConversation) {
  // This GGUF carries Qwen3's tokenizer and chat template.
  const GoldenRun run = golden_run("qwen3");
  const CommandResult r = test::run_nanoserve(
      "template -m " + test::shared_path("golden/models/qwen3vocab-qwen3-Q8_0.gguf"), run.stdin_text);
  expect_all_rendered(r, run, "qwen3");
}

TEST(TemplateCommand, ModelWithoutTemplateFallsBackToChatMlAndSaysSo) {
  // A copy of a golden model's metadata without tokenizer.chat_template (the command reads no tensors).
  const gguf::File source = gguf::File::open(test::shared_path("golden/models/tiny-qwen3-F16.gguf"));
  const std::string path = ::testing::TempDir() + "/no-template-" + std::to_string(getpid()) + ".gguf";
  {
    std::ofstream out(path, std::ios::binary);
    gguf::Writer writer(out);
    for (const auto& [key, value] : source.metadata().entries())
      if (key != "tokenizer.chat_template") writer.set(key, value);
    writer.write_header();
    writer.finish();
  }
  const CommandResult r = test::run_nanoserve(
      "template -m " + path, R"({"messages": [{"role": "user", "content": "Hi"}]})" "\n");
  std::remove(path.c_str());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(output_strings(r.out), std::vector<std::string>{"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"});
  EXPECT_NE(r.err.find("ChatML"), std::string::npos) << r.err;
}

TEST(TemplateCommand, BadInputLineStopsWithItsLineNumber) {
  const std::string args = "template --template " + test::shared_path("golden/chat/qwen3.jinja");
  const std::string good = R"({"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": false})";
  for (const std::string bad : {"not json", R"({"messages": [], "add_generation_promt": true})",
                                R"({"messages": {"role": "user"}})", R"({"tools": []})"}) {
    const CommandResult r = test::run_nanoserve(args, good + "\n\n" + bad + "\n" + good + "\n");
    EXPECT_NE(r.status, 0) << bad;
    EXPECT_NE(r.err.find("line 3"), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(output_strings(r.out), std::vector<std::string>{"<|im_start|>user\nHi<|im_end|>\n"}) << bad;
  }
}

TEST(TemplateCommand, RenderErrorsCarryTheTemplatesMessage) {
  const std::string path = ::testing::TempDir() + "/raise-" + std::to_string(getpid()) + ".jinja";
  std::ofstream(path) << "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation must start with user') }}"
                         "{% endif %}ok";
  const CommandResult r = test::run_nanoserve("template --template " + path,
                                              R"({"messages": [{"role": "assistant", "content": "x"}]})" "\n");
  std::remove(path.c_str());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("line 1: Conversation must start with user"), std::string::npos) << r.err;
}

TEST(TemplateCommand, NeedsAModelOrATemplate) {
  const CommandResult r = test::run_nanoserve("template", "");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--model or --template"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nanoserve
