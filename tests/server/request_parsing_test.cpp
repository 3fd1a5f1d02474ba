// Request bodies: what is accepted, the defaults, and the 400 (with the field named) for
// everything malformed, out of range or unsupported.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "server/api_error.h"
#include "server/chat_request.h"
#include "server/completion_request.h"
#include "server/generation_request.h"
#include "server/json_fields.h"

namespace nanoserve::server {
namespace {

using json = nlohmann::ordered_json;

const ServerLimits kLimits;
constexpr uint64_t kSeed = 1234;

json chat_body(json extra = json::object()) {
  json body = {{"model", "any"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
  body.update(extra);
  return body;
}

// The error a parse throws: its status, param and code.
template <typename Parse>
ApiError error_of(Parse parse) {
  try {
    parse();
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "no ApiError thrown";
  return ApiError(0, "", "");
}

ApiError chat_error(const json& body) {
  return error_of([&] { parse_chat_request(body, kLimits, kSeed); });
}

TEST(ChatRequest, DefaultsFollowOpenAi) {
  const ChatRequest r = parse_chat_request(chat_body(), kLimits, kSeed);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0], json({{"role", "user"}, {"content", "Hi"}}));
  EXPECT_TRUE(r.tools.is_null());
  const GenerationParams& p = r.params;
  EXPECT_FLOAT_EQ(p.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(p.sampling.top_p, 1.0f);
  EXPECT_EQ(p.sampling.top_k, 0);
  EXPECT_EQ(p.sampling.seed, kSeed);  // no seed given: the server's random one
  EXPECT_FALSE(p.max_tokens.has_value());
  EXPECT_TRUE(p.stop.empty());
  EXPECT_FALSE(p.stream);
  EXPECT_FALSE(p.include_usage);
}

TEST(ChatRequest, ReadsEverySamplingField) {
  const ChatRequest r = parse_chat_request(
      chat_body({{"temperature", 0.5}, {"top_p", 0.9}, {"top_k", 40}, {"min_p", 0.05}, {"seed", 7},
                 {"presence_penalty", 0.5}, {"frequency_penalty", -0.5}, {"max_tokens", 12}, {"stop", "END"},
                 {"logit_bias", {{"42", -100}, {"7", 2.5}}}, {"ignore_eos", true}, {"stream", true},
                 {"stream_options", {{"include_usage", true}}}, {"n", 1}, {"user", "ignored"}, {"logprobs", false},
                 {"response_format", {{"type", "text"}}}}),
      kLimits, kSeed);
  const GenerationParams& p = r.params;
  EXPECT_FLOAT_EQ(p.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(p.sampling.top_p, 0.9f);
  EXPECT_EQ(p.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(p.sampling.min_p, 0.05f);
  EXPECT_EQ(p.sampling.seed, 7u);
  EXPECT_FLOAT_EQ(p.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(p.sampling.frequency_penalty, -0.5f);
  EXPECT_EQ(p.max_tokens, 12);
  EXPECT_EQ(p.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(p.logit_bias, (std::map<int32_t, float>{{7, 2.5f}, {42, -100.0f}}));
  EXPECT_TRUE(p.ignore_eos);
  EXPECT_TRUE(p.stream);
  EXPECT_TRUE(p.include_usage);
}

TEST(ChatRequest, NullMeansAbsent) {
  const ChatRequest r =
      parse_chat_request(chat_body({{"temperature", nullptr}, {"stop", nullptr}, {"max_tokens", nullptr}}), kLimits, kSeed);
  EXPECT_FLOAT_EQ(r.params.sampling.temperature, 1.0f);
  EXPECT_TRUE(r.params.stop.empty());
  EXPECT_FALSE(r.params.max_tokens.has_value());
}

TEST(ChatRequest, MaxCompletionTokensWinsAndIsNamedInErrors) {
  const ChatRequest r = parse_chat_request(chat_body({{"max_tokens", 5}, {"max_completion_tokens", 9}}), kLimits, kSeed);
  EXPECT_EQ(r.params.max_tokens, 9);
  EXPECT_EQ(r.params.max_tokens_param, "max_completion_tokens");
  EXPECT_EQ(chat_error(chat_body({{"max_completion_tokens", 0}})).param, "max_completion_tokens");
}

TEST(ChatRequest, NormalizesMessages) {
  const json messages = {
      {{"role", "developer"}, {"content", "Be brief."}},
      {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "one"}}, {{"type", "text"}, {"text", "two"}}}}},
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls", json::array({{{"id", "c1"}, {"function", {{"name", "f"}, {"arguments", "{\"x\": 1}"}}}}})}},
      {{"role", "tool"}, {"content", "42"}, {"tool_call_id", "c1"}},
  };
  const ChatRequest r = parse_chat_request(chat_body({{"messages", messages}}), kLimits, kSeed);
  EXPECT_EQ(r.messages[0], json({{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(r.messages[1], json({{"role", "user"}, {"content", "one\ntwo"}}));
  // The arguments, sent as a string of JSON, reach the template as JSON (it prints them with tojson).
  EXPECT_EQ(r.messages[2], json({{"role", "assistant"},
                                 {"content", ""},
                                 {"tool_calls", json::array({{{"id", "c1"}, {"function", {{"name", "f"}, {"arguments", {{"x", 1}}}}}}})}}));
  EXPECT_EQ(r.messages[3], json({{"role", "tool"}, {"content", "42"}, {"tool_call_id", "c1"}}));
}

TEST(ChatRequest, ToolsReachTheTemplateUnlessToolChoiceIsNone) {
  const json tools = json::array({{{"type", "function"}, {"function", {{"name", "f"}}}}});
  EXPECT_EQ(parse_chat_request(chat_body({{"tools", tools}}), kLimits, kSeed).tools, tools);
  EXPECT_TRUE(parse_chat_request(chat_body({{"tools", tools}, {"tool_choice", "none"}}), kLimits, kSeed).tools.is_null());
  const ChatRequest forced = parse_chat_request(chat_body({{"tools", tools}, {"tool_choice", "required"}}), kLimits, kSeed);
  EXPECT_EQ(forced.tool_choice.kind, ToolChoice::Kind::Required);
  const ChatRequest named = parse_chat_request(
      chat_body({{"tools", tools}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "f"}}}}}}), kLimits, kSeed);
  EXPECT_EQ(named.tool_choice.kind, ToolChoice::Kind::Function);
  EXPECT_EQ(named.tool_choice.function, "f");
  EXPECT_EQ(chat_error(chat_body({{"tool_choice", "required"}})).param, "tool_choice");
  EXPECT_EQ(chat_error(chat_body({{"tools", tools}, {"tool_choice", "always"}})).param, "tool_choice");
  EXPECT_EQ(chat_error(chat_body({{"tools", tools}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "g"}}}}}}))
                .param,
            "tool_choice.function.name");
  EXPECT_EQ(chat_error(chat_body({{"tools", json::array({{{"type", "function"}}})}})).param, "tools[0].function");
  EXPECT_EQ(chat_error(chat_body({{"tools", json::array({{{"type", "function"}, {"function", {{"description", "x"}}}}})}}))
                .param,
            "tools[0].function.name");
}

struct BadField {
  json body;
  std::string param;
};

void PrintTo(const BadField& field, std::ostream* os) { *os << field.body.dump(); }

class ChatRequestErrors : public testing::TestWithParam<BadField> {};

TEST_P(ChatRequestErrors, Answer400NamingTheField) {
  const ApiError e = chat_error(GetParam().body);
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.type, "invalid_request_error");
  EXPECT_EQ(e.param, GetParam().param) << e.what();
  const json body = error_body(e);
  EXPECT_EQ(body["error"]["message"], e.what());
  if (GetParam().param.empty()) {
    EXPECT_TRUE(body["error"]["param"].is_null());
  } else {
    EXPECT_EQ(body["error"]["param"], GetParam().param);
  }
}

json messages_with(json message) { return {{"messages", json::array({message})}}; }

INSTANTIATE_TEST_SUITE_P(
    Fields, ChatRequestErrors,
    testing::Values(
        BadField{json::array(), ""}, BadField{json("text"), ""}, BadField{json::object(), "messages"},
        BadField{{{"messages", "hi"}}, "messages"}, BadField{{{"messages", json::array()}}, "messages"},
        BadField{{{"messages", json::array({"hi"})}}, "messages[0]"},
        BadField{messages_with({{"role", "robot"}, {"content", "x"}}), "messages[0].role"},
        BadField{messages_with({{"content", "x"}}), "messages[0].role"},
        BadField{messages_with({{"role", "user"}}), "messages[0].content"},
        BadField{messages_with({{"role", "user"}, {"content", 5}}), "messages[0].content"},
        BadField{messages_with({{"role", "user"}, {"content", {{{"type", "image_url"}}}}}),
                 "messages[0].content[0].type"},
        BadField{messages_with({{"role", "user"}, {"content", {{{"type", "text"}}}}}), "messages[0].content[0].text"},
        BadField{chat_body({{"temperature", "hot"}}), "temperature"}, BadField{chat_body({{"temperature", 2.5}}), "temperature"},
        BadField{chat_body({{"top_p", 1.5}}), "top_p"}, BadField{chat_body({{"top_k", 2.5}}), "top_k"},
        BadField{chat_body({{"top_k", -1}}), "top_k"}, BadField{chat_body({{"min_p", -0.1}}), "min_p"},
        BadField{chat_body({{"seed", "x"}}), "seed"}, BadField{chat_body({{"presence_penalty", 3}}), "presence_penalty"},
        BadField{chat_body({{"frequency_penalty", -3}}), "frequency_penalty"},
        BadField{chat_body({{"max_tokens", 0}}), "max_tokens"}, BadField{chat_body({{"max_tokens", -5}}), "max_tokens"},
        BadField{chat_body({{"max_tokens", 1e9}}), "max_tokens"},
        BadField{chat_body({{"max_tokens", 1000000000}}), "max_tokens"},
        BadField{chat_body({{"max_tokens", "10"}}), "max_tokens"},
        BadField{chat_body({{"stop", 5}}), "stop"}, BadField{chat_body({{"stop", json::array({"a", 5})}}), "stop"},
        BadField{chat_body({{"stop", ""}}), "stop"}, BadField{chat_body({{"stop", std::string(257, 'x')}}), "stop"},
        BadField{chat_body({{"stop", json(std::vector<std::string>(17, "s"))}}), "stop"},
        BadField{chat_body({{"logit_bias", json::array()}}), "logit_bias"},
        BadField{chat_body({{"logit_bias", {{"abc", 1}}}}), "logit_bias"},
        BadField{chat_body({{"logit_bias", {{"-3", 1}}}}), "logit_bias"},
        BadField{chat_body({{"logit_bias", {{"5", 101}}}}), "logit_bias"},
        BadField{chat_body({{"logit_bias", {{"5", "x"}}}}), "logit_bias"},
        BadField{chat_body({{"n", 17}}), "n"}, BadField{chat_body({{"logprobs", 1}}), "logprobs"},
        BadField{chat_body({{"top_logprobs", 2}}), "top_logprobs"},
        BadField{chat_body({{"logprobs", true}, {"top_logprobs", 21}}), "top_logprobs"},
        BadField{chat_body({{"stream", "yes"}}), "stream"},
        BadField{chat_body({{"stream_options", {{"include_usage", true}}}}), "stream_options"},
        BadField{chat_body({{"stream", true}, {"stream_options", {{"include_usage", 1}}}}),
                 "stream_options.include_usage"},
        BadField{chat_body({{"tools", "f"}}), "tools"}, BadField{chat_body({{"tools", {1}}}), "tools[0]"},
        BadField{chat_body({{"chat_template_kwargs", 1}}), "chat_template_kwargs"},
        BadField{chat_body({{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}}}}}}),
                 "response_format.json_schema.schema"},
        BadField{chat_body({{"response_format", {{"type", "json_schema"}}}}), "response_format.json_schema"},
        BadField{chat_body({{"response_format", {{"type", "json_schema"},
                                                  {"json_schema", {{"name", "a b"}, {"schema", json::object()}}}}}}),
                 "response_format.json_schema.name"},
        BadField{chat_body({{"response_format",
                             {{"type", "json_schema"},
                              {"json_schema", {{"name", "x"}, {"schema", {{"properties", {{"a", {{"format", "date"}}}}}}}}}}}}),
                 "response_format.json_schema.schema.properties.a.format"},
        BadField{chat_body({{"response_format", {{"type", "json_object"}}}, {"ignore_eos", true}}), "ignore_eos"},
        BadField{chat_body({{"response_format", {{"type", "nothing"}}}}), "response_format.type"},
        BadField{chat_body({{"response_format", 1}}), "response_format"},
        BadField{chat_body({{"response_format", json::object()}}), "response_format.type"}));

TEST(ChatRequest, BoundsMessageCountAndParts) {
  ServerLimits small;
  small.max_messages = 2;
  small.max_content_parts = 1;
  const json three = json::array({{{"role", "user"}, {"content", "a"}}, {{"role", "user"}, {"content", "b"}},
                                  {{"role", "user"}, {"content", "c"}}});
  EXPECT_EQ(error_of([&] { parse_chat_request({{"messages", three}}, small, kSeed); }).param, "messages");
  const json two_parts = messages_with(
      {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "a"}}, {{"type", "text"}, {"text", "b"}}}}});
  EXPECT_EQ(error_of([&] { parse_chat_request(two_parts, small, kSeed); }).param, "messages[0].content");
}

TEST(CompletionRequest, PromptForms) {
  auto prompt_of = [](json prompt) { return parse_completion_request({{"prompt", prompt}}, kLimits, kSeed).prompt; };
  EXPECT_EQ(std::get<std::string>(prompt_of("def f():")), "def f():");
  EXPECT_EQ(std::get<std::string>(prompt_of({"def f():"})), "def f():");
  EXPECT_EQ(std::get<std::vector<int32_t>>(prompt_of({1, 2, 3})), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(std::get<std::vector<int32_t>>(prompt_of({{4, 5}})), (std::vector<int32_t>{4, 5}));
}

TEST(CompletionRequest, Refusals) {
  auto param_of = [](json body) {
    return error_of([&] { parse_completion_request(body, kLimits, kSeed); }).param;
  };
  EXPECT_EQ(param_of(json::object()), "prompt");
  EXPECT_EQ(param_of({{"prompt", 5}}), "prompt");
  EXPECT_EQ(param_of({{"prompt", json::array()}}), "prompt");
  EXPECT_EQ(param_of({{"prompt", json::array({"a", "b"})}}), "prompt");
  EXPECT_EQ(param_of({{"prompt", {1, -2}}}), "prompt");
  EXPECT_EQ(param_of({{"prompt", {1, 2.5}}}), "prompt");
  EXPECT_EQ(param_of({{"prompt", "x"}, {"echo", true}}), "echo");
  EXPECT_EQ(param_of({{"prompt", "x"}, {"suffix", "y"}}), "suffix");
  EXPECT_EQ(param_of({{"prompt", "x"}, {"best_of", 3}}), "best_of");
  EXPECT_EQ(param_of({{"prompt", "x"}, {"logprobs", 6}}), "logprobs");
  EXPECT_EQ(param_of({{"prompt", "x"}, {"logprobs", true}}), "logprobs");
  EXPECT_EQ(param_of({{"prompt", "x"}, {"max_tokens", 0}}), "max_tokens");
  // echo false and an empty suffix ask for nothing unusual.
  EXPECT_NO_THROW(parse_completion_request({{"prompt", "x"}, {"echo", false}, {"suffix", ""}}, kLimits, kSeed));
}

TEST(JsonBody, MalformedJsonIs400) {
  const ApiError e = error_of([] { parse_json_body("{\"messages\": [", 64); });
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, "invalid_json");
}

TEST(JsonBody, NestingIsBounded) {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_NO_THROW(parse_json_body(nested(64), 64));
  EXPECT_NO_THROW(parse_json_body("[[{\"a\": {\"b\": 1}}]]", 4));
  EXPECT_EQ(error_of([&] { parse_json_body("[[{\"a\": {\"b\": []}}]]", 4); }).code, "json_too_deep");
  const ApiError e = error_of([&] { parse_json_body(nested(100000), 64); });
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, "json_too_deep");
  EXPECT_EQ(error_of([&] { parse_json_body(nested(65), 64); }).code, "json_too_deep");
}

TEST(JsonBody, ValuesKeysAndOrderAreAsGiven) {
  const json body = parse_json_body(
      R"({"z": 1, "a": [true, null, -3, 18446744073709551615, 2.5, "s\u00e9"], "m": {"y": {}, "x": []}})", 64);
  EXPECT_EQ(body.dump(), R"({"z":1,"a":[true,null,-3,18446744073709551615,2.5,"sé"],"m":{"y":{},"x":[]}})");
  EXPECT_EQ(parse_json_body("7", 64), json(7));
  EXPECT_EQ(parse_json_body("[]", 64), json::array());
  // A repeated key keeps its first place and takes the last value, as nlohmann's parser gives it.
  const std::string repeated = R"({"a": 1, "b": 2, "a": {"c": 3}})";
  EXPECT_EQ(parse_json_body(repeated, 64).dump(), R"({"a":{"c":3},"b":2})");
  EXPECT_EQ(parse_json_body(repeated, 64), json::parse(repeated));
  EXPECT_EQ(error_of([] { parse_json_body("{\"a\": 1} x", 64); }).code, "invalid_json");
  EXPECT_EQ(error_of([] { parse_json_body("", 64); }).code, "invalid_json");
}

// A logit_bias as large as a body may carry: every key kept, in order. (nlohmann's own parser
// searched an ordered object's keys on every insertion: quadratic, seconds at this size.)
TEST(JsonBody, ObjectsWithManyKeysKeepThemAll) {
  constexpr int kKeys = 200000;
  std::string text = "{\"logit_bias\": {";
  for (int i = 0; i < kKeys; ++i) text += fmt::format("{}\"{}\": {}", i ? ", " : "", kKeys - i, i % 201 - 100);
  text += "}}";
  const json body = parse_json_body(text, 64);
  const json& bias = body.at("logit_bias");
  ASSERT_EQ(bias.size(), static_cast<size_t>(kKeys));
  int i = 0;
  for (const auto& [key, value] : bias.items()) {
    ASSERT_EQ(key, std::to_string(kKeys - i));
    ASSERT_EQ(value.get<int>(), i % 201 - 100);
    ++i;
  }
}

TEST(GenerationRequest, FitsMaxTokensToTheContext) {
  GenerationParams p;
  p.stop = {"\n"};
  p.logit_bias = {{3, 1.0f}};
  const ModelBounds model{.context_size = 100, .n_vocab = 50};
  const auto r = make_generation_request("id-1", {1, 2, 3}, p, model, kLimits, "prompt");
  EXPECT_EQ(r.id, "id-1");
  EXPECT_EQ(r.prompt, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(r.max_tokens, 97);  // the room left
  EXPECT_EQ(r.stop, p.stop);
  EXPECT_EQ(r.logit_bias, p.logit_bias);

  ServerLimits tight;
  tight.max_tokens = 10;
  EXPECT_EQ(make_generation_request("id", {1}, p, model, tight, "prompt").max_tokens, 10);
  p.max_tokens = 97;
  EXPECT_EQ(make_generation_request("id", {1, 2, 3}, p, model, kLimits, "prompt").max_tokens, 97);
}

TEST(GenerationRequest, RefusesWhatCannotFit) {
  GenerationParams p;
  const ModelBounds model{.context_size = 4, .n_vocab = 50};
  auto error = [&](std::vector<int32_t> prompt, const GenerationParams& params) {
    return error_of([&] { make_generation_request("id", prompt, params, model, kLimits, "messages"); });
  };
  EXPECT_EQ(error({}, p).param, "messages");
  const ApiError too_long = error({1, 2, 3, 4}, p);
  EXPECT_EQ(too_long.param, "messages");
  EXPECT_EQ(too_long.code, "context_length_exceeded");
  p.max_tokens = 2;
  p.max_tokens_param = "max_completion_tokens";
  const ApiError beyond = error({1, 2, 3}, p);
  EXPECT_EQ(beyond.param, "max_completion_tokens");
  EXPECT_EQ(beyond.code, "context_length_exceeded");
  p.max_tokens.reset();
  p.logit_bias = {{50, 1.0f}};
  EXPECT_EQ(error({1}, p).param, "logit_bias");
}

}  // namespace
}  // namespace nanoserve::server
