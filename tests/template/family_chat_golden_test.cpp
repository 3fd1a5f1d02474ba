// The chat templates of Gemma 3 and gpt-oss render every conversation of
// tests/template/data byte for byte as Hugging Face's apply_chat_template (Python Jinja2, made by
// scripts/make-chat-goldens.py), and refuse where it refuses (Gemma's roles must alternate).
#include <gtest/gtest.h>

#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/test_paths.h"
#include "template/chat_template.h"

namespace nanoserve::templates {
namespace {

class FamilyChatGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyChatGolden, EveryConversationRendersOrIsRefusedExactly) {
  const std::string family = GetParam();
  const std::string source = test::read_file(test::source_path("tests/template/data/" + family + ".jinja"));
  std::istringstream lines(test::read_file(test::source_path("tests/template/data/" + family + ".jsonl")));
  size_t rendered = 0, refused = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto row = nlohmann::ordered_json::parse(line);
    const std::string id = row.at("id");
    std::string bos, eos;
    ChatTemplateInputs inputs;
    inputs.messages = row.at("messages");
    inputs.tools = row.at("tools");
    inputs.add_generation_prompt = row.at("add_generation_prompt");
    for (const auto& [name, value] : row.at("special_tokens").items()) {
      if (name == "bos_token") bos = value;
      else if (name == "eos_token") eos = value;
      else inputs.extra[name] = value;
    }
    for (const auto& [name, value] : row.at("extra").items()) inputs.extra[name] = value;
    ChatTemplate chat_template(source, bos, eos);
    std::tm now{};  // the goldens' strftime_now: 2026-12-01 12:00
    now.tm_year = 126, now.tm_mon = 11, now.tm_mday = 1, now.tm_hour = 12, now.tm_wday = 2, now.tm_yday = 334;
    chat_template.set_fixed_now(now);
    if (row.contains("error")) {
      try {
        chat_template.render(inputs);
        ADD_FAILURE() << family << " " << id << ": rendered, but Hugging Face refuses: " << row["error"];
      } catch (const ChatTemplateError& e) {
        EXPECT_NE(std::string(e.what()).find(row["error"].get<std::string>()), std::string::npos)
            << family << " " << id << ": " << e.what();
        ++refused;
      }
      continue;
    }
    std::string text;
    ASSERT_NO_THROW(text = chat_template.render(inputs)) << family << " " << id;
    EXPECT_EQ(text, row.at("rendered").get<std::string>()) << family << " " << id;
    ++rendered;
  }
  std::cout << family << ": " << rendered << " rendered, " << refused << " refused\n";
  EXPECT_EQ(rendered + refused, 29u);
}

INSTANTIATE_TEST_SUITE_P(HuggingFace, FamilyChatGolden, ::testing::Values("gemma3", "gptoss"));

}  // namespace
}  // namespace nanoserve::templates
