// gpt-oss's harmony output read back into reasoning, content and tool calls: whole, and fed a
// character at a time as a stream may cut it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/harmony_reader.h"

namespace nanoserve::server {
namespace {

HarmonyReader::Pieces read_all(std::string_view output, size_t piece_size, bool parallel = true) {
  HarmonyReader reader(parallel);
  HarmonyReader::Pieces all;
  const auto add = [&](HarmonyReader::Pieces p) {
    all.reasoning += p.reasoning;
    all.content += p.content;
    for (ToolCall& c : p.calls) all.calls.push_back(std::move(c));
  };
  for (size_t at = 0; at < output.size(); at += piece_size) add(reader.push(output.substr(at, piece_size)));
  add(reader.finish());
  return all;
}

void expect_read(std::string_view output, const std::string& reasoning, const std::string& content,
                 const std::vector<std::pair<std::string, std::string>>& calls, bool parallel = true) {
  for (size_t piece : {output.size(), size_t{1}, size_t{3}, size_t{7}}) {
    const HarmonyReader::Pieces got = read_all(output, std::max<size_t>(piece, 1), parallel);
    EXPECT_EQ(got.reasoning, reasoning) << output << " in pieces of " << piece;
    EXPECT_EQ(got.content, content) << output << " in pieces of " << piece;
    ASSERT_EQ(got.calls.size(), calls.size()) << output;
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(got.calls[i].name, calls[i].first);
      EXPECT_EQ(nlohmann::json::parse(got.calls[i].arguments), nlohmann::json::parse(calls[i].second));
      EXPECT_TRUE(got.calls[i].id.starts_with("call_"));
    }
  }
}

TEST(HarmonyReader, AnalysisIsReasoningAndFinalIsContent) {
  expect_read("<|channel|>analysis<|message|>User says hi.<|end|><|start|>assistant<|channel|>final<|message|>"
              "Hello! <b>How</b> can I help?",
              "User says hi.", "Hello! <b>How</b> can I help?", {});
  // The output's own end token, where a client asked to see it, closes the body too.
  expect_read("<|channel|>final<|message|>Hi<|return|>", "", "Hi", {});
}

TEST(HarmonyReader, AMessageToAFunctionIsAToolCall) {
  // The recipient after the channel, or in the header before it; <|constrain|> names the format.
  expect_read("<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary "
              "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}",
              "Need the weather.", "", {{"get_weather", R"({"city":"Paris"})"}});
  expect_read("<|channel|>analysis<|message|>Two.<|end|><|start|>assistant to=functions.a<|channel|>commentary json"
              "<|message|>{}<|call|><|start|>assistant to=functions.b<|channel|>commentary json<|message|>{\"x\": 1}",
              "Two.", "", {{"a", "{}"}, {"b", R"({"x":1})"}});
  // parallel_tool_calls false: the first call only.
  expect_read("<|channel|>commentary to=functions.a<|message|>{}<|end|><|start|>assistant<|channel|>commentary "
              "to=functions.b<|message|>{}",
              "", "", {{"a", "{}"}}, /*parallel=*/false);
  // Commentary to no one is for the user; arguments that are not an object stay visible.
  expect_read("<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant<|channel|>commentary "
              "to=functions.f<|message|>not json",
              "", "Checking.not json", {});
}

TEST(HarmonyReader, OutputWithoutHarmonyIsContent) {
  expect_read("Just text, <|not markup.", "", "Just text, <|not markup.", {});
  expect_read("<", "", "<", {});
  expect_read("", "", "", {});
  // A header the output never finishes says nothing.
  expect_read("<|channel|>analysis", "", "", {});
}

TEST(HarmonyReader, TellsHarmonyTemplatesApart) {
  EXPECT_TRUE(is_harmony_template("{{ '<|start|>assistant<|channel|>final<|message|>' }}"));
  EXPECT_FALSE(is_harmony_template("{{ '<|im_start|>assistant\\n' }}"));
}

}  // namespace
}  // namespace nanoserve::server
