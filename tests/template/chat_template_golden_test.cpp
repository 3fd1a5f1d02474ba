// Every conversation of ../shared/golden/chat renders byte for byte as Hugging Face's
// apply_chat_template (Python Jinja2 3.1.6), and tokenizes to the same ids.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "support/test_paths.h"
#include "template/chat_template.h"
#include "tokenizer/golden_data.h"

namespace nanoserve::templates {
namespace {

struct ChatGolden {
  std::string id;
  std::string bos_token, eos_token;
  ChatTemplateInputs inputs;
  std::string rendered;
  std::vector<int32_t> ids;
};

// golden/chat/<family>.jsonl (format: ../shared/golden/README.md, "chat/").
std::vector<ChatGolden> read_chat_goldens(const std::string& family) {
  std::istringstream in(test::read_file(test::shared_path("golden/chat/" + family + ".jsonl")));
  std::vector<ChatGolden> goldens;
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::ordered_json::parse(line);
    ChatGolden g;
    g.id = row.at("id");
    g.inputs.messages = row.at("messages");
    g.inputs.tools = row.at("tools");
    g.inputs.add_generation_prompt = row.at("add_generation_prompt");
    // The special tokens are template variables too: bos/eos through the constructor, the
    // others (pad_token, additional_special_tokens) as extra variables.
    for (const auto& [name, value] : row.at("special_tokens").items()) {
      if (name == "bos_token") g.bos_token = value;
      else if (name == "eos_token") g.eos_token = value;
      else g.inputs.extra[name] = value;
    }
    for (const auto& [name, value] : row.at("extra").items()) g.inputs.extra[name] = value;
    g.rendered = row.at("rendered");
    g.ids = row.at("ids").get<std::vector<int32_t>>();
    goldens.push_back(std::move(g));
  }
  return goldens;
}

class ChatTemplateGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(ChatTemplateGolden, EveryConversationRendersExactly) {
  const std::string family = GetParam();
  const std::string source = test::read_file(test::shared_path("golden/chat/" + family + ".jinja"));
  const auto goldens = read_chat_goldens(family);
  ASSERT_EQ(goldens.size(), 29u);
  for (const ChatGolden& g : goldens) {
    const ChatTemplate chat_template(source, g.bos_token, g.eos_token);
    std::string rendered;
    ASSERT_NO_THROW(rendered = chat_template.render(g.inputs)) << g.id;
    EXPECT_EQ(rendered, g.rendered) << family << " " << g.id;
  }
}

TEST_P(ChatTemplateGolden, RenderedPromptsTokenizeToTheGoldenIds) {
  const std::string family = GetParam();
  const std::string source = test::read_file(test::shared_path("golden/chat/" + family + ".jinja"));
  const tokenizer::Tokenizer& tokenizer = test::hf_tokenizer(family);
  for (const ChatGolden& g : read_chat_goldens(family)) {
    const ChatTemplate chat_template(source, g.bos_token, g.eos_token);
    EXPECT_EQ(tokenizer.encode(chat_template.render(g.inputs)), g.ids) << family << " " << g.id;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, ChatTemplateGolden, ::testing::Values("qwen2_5", "qwen3", "llama3"));

}  // namespace
}  // namespace nanoserve::templates
