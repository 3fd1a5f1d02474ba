#include "server/tool_calls.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "grammar/grammar_matching.h"
#include "server/api_error.h"

namespace nanoserve::server {
namespace {

using json = nlohmann::ordered_json;

ToolCallReader::Pieces read(ToolSyntax syntax, const std::vector<std::string>& pieces) {
  ToolCallReader reader(syntax);
  ToolCallReader::Pieces all;
  auto add = [&](ToolCallReader::Pieces p) {
    all.content += p.content;
    for (ToolCall& c : p.calls) all.calls.push_back(std::move(c));
  };
  for (const std::string& p : pieces) add(reader.push(p));
  add(reader.finish());
  return all;
}

TEST(ToolCallReader, HermesCallsAreReadWhereverThePiecesAreCut) {
  const std::string text =
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"add\", \"arguments\": \"{\\\"a\\\": 1}\"}\n</tool_call>";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    const auto out = read(ToolSyntax::Hermes, {text.substr(0, cut), text.substr(cut)});
    EXPECT_EQ(out.content, "Let me check.") << cut;
    ASSERT_EQ(out.calls.size(), 2u) << cut;
    EXPECT_EQ(out.calls[0].name, "get_weather");
    EXPECT_EQ(out.calls[0].arguments, R"({"city":"Paris"})");
    EXPECT_EQ(out.calls[1].name, "add");
    EXPECT_EQ(out.calls[1].arguments, R"({"a":1})");  // arguments given as a string of JSON
    EXPECT_TRUE(out.calls[0].id.starts_with("call_"));
    EXPECT_NE(out.calls[0].id, out.calls[1].id);
  }
}

TEST(ToolCallReader, WithoutParallelCallsOnlyTheFirstIsKept) {
  ToolCallReader reader(ToolSyntax::Hermes, false);
  auto out = reader.push("<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n"
                         "<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].name, "a");
  EXPECT_TRUE(reader.finish().calls.empty());
}

TEST(ToolCallReader, WhatIsNotACallStaysContent) {
  EXPECT_EQ(read(ToolSyntax::Hermes, {"Just text, ", "no <tool", " calls."}).content, "Just text, no <tool calls.");
  const auto bad = read(ToolSyntax::Hermes, {"<tool_call>{not json}</tool_call>"});
  EXPECT_TRUE(bad.calls.empty());
  EXPECT_EQ(bad.content, "<tool_call>{not json}</tool_call>");
  // An output that ends after the JSON but before the closing tag is still a call.
  EXPECT_EQ(read(ToolSyntax::Hermes, {"<tool_call>\n{\"name\": \"f\", \"arguments\": {}}"}).calls.size(), 1u);
}

TEST(ToolCallReader, Llama3WritesTheWholeOutputAsOneCall) {
  const auto call = read(ToolSyntax::Llama3, {" {\"name\": \"add\", ", "\"parameters\": {\"a\": 1, \"b\": 2}}"});
  ASSERT_EQ(call.calls.size(), 1u);
  EXPECT_EQ(call.calls[0].arguments, R"({"a":1,"b":2})");
  EXPECT_EQ(call.content, "");
  EXPECT_EQ(read(ToolSyntax::Llama3, {"<|python_tag|>{\"name\": \"f\", \"parameters\": {}}"}).calls.size(), 1u);
  EXPECT_EQ(read(ToolSyntax::Llama3, {"Hello {there}"}).content, "Hello {there}");
  EXPECT_EQ(read(ToolSyntax::Llama3, {"{not a call}"}).content, "{not a call}");
}

TEST(ToolSyntax, NamedByTheTemplate) {
  EXPECT_EQ(tool_syntax_of("... <tool_call>\\n{\"name\": ..."), ToolSyntax::Hermes);
  EXPECT_EQ(tool_syntax_of("{{- '<|python_tag|>' }}"), ToolSyntax::Llama3);
  EXPECT_EQ(tool_syntax_of("plain ChatML"), ToolSyntax::Hermes);
}

const json kTools = json::parse(R"([
  {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
    "properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}}},
  {"type":"function","function":{"name":"add","parameters":{"type":"object",
    "properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}}}])");

TEST(ForcedToolCallGrammar, OnlyCallsToTheAllowedFunctionsWithValidArguments) {
  const auto required = forced_tool_call_grammar(kTools, {.kind = ToolChoice::Kind::Required, .function = ""}, ToolSyntax::Hermes, true);
  const std::string weather = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  const std::string add = "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>";
  EXPECT_TRUE(grammar::matches(required, weather));
  EXPECT_TRUE(grammar::matches(required, weather + "\n" + add));
  EXPECT_FALSE(grammar::matches(required, "Sure! " + weather));  // the call from the first token
  EXPECT_FALSE(grammar::matches(required, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n</tool_call>"));
  EXPECT_FALSE(grammar::matches(required, "<tool_call>\n{\"name\": \"sub\", \"arguments\": {}}\n</tool_call>"));

  const auto named = forced_tool_call_grammar(kTools, {.kind = ToolChoice::Kind::Function, .function = "add"},
                                              ToolSyntax::Hermes, false);
  EXPECT_TRUE(grammar::matches(named, add));
  EXPECT_FALSE(grammar::matches(named, weather));
  EXPECT_FALSE(grammar::matches(named, add + "\n" + add));  // parallel_tool_calls false: one

  const auto llama = forced_tool_call_grammar(kTools, {.kind = ToolChoice::Kind::Required, .function = ""}, ToolSyntax::Llama3, true);
  EXPECT_TRUE(grammar::matches(llama, R"({"name": "add", "parameters": {"a": 1, "b": 2}})"));
  EXPECT_FALSE(grammar::matches(llama, R"({"name": "add", "arguments": {"a": 1, "b": 2}})"));
}

TEST(ForcedToolCallGrammar, AParameterKeywordItCannotEnforceIsNamed) {
  json tools = kTools;
  tools[1]["function"]["parameters"]["properties"]["a"]["multipleOf"] = 2;
  try {
    forced_tool_call_grammar(tools, {.kind = ToolChoice::Kind::Required, .function = ""}, ToolSyntax::Hermes, true);
    FAIL() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "tools[1].function.parameters.properties.a.multipleOf");
  }
}

}  // namespace
}  // namespace nanoserve::server
