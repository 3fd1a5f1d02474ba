// Tool calls, served by the golden Qwen3-vocabulary model (random weights, Qwen3's own chat
// template): tool_choice "required" or a named function makes even this model call a tool
// from its first token, with arguments of the function's schema; streamed, the deltas add up
// to the same calls; a conversation with calls and their results in its history renders.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

const json kServedTools = json::parse(R"([
  {"type":"function","function":{"name":"get_weather","description":"The weather in a city",
    "parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":12},"unit":{"enum":["c","f"]}},
    "required":["city","unit"]}}},
  {"type":"function","function":{"name":"add","parameters":{"type":"object",
    "properties":{"a":{"type":"integer","minimum":0,"maximum":99},"b":{"type":"integer","minimum":0,"maximum":99}},
    "required":["a","b"]}}}])");

json chat(json tool_choice, json extra = json::object()) {
  json body = {{"messages", {{{"role", "user"}, {"content", "What is the weather in Paris?"}}}},
               {"max_tokens", 200}, {"tools", kServedTools}, {"tool_choice", tool_choice}};
  for (const auto& [k, v] : extra.items()) body[k] = v;
  return body;
}

// A call's arguments satisfy its function's schema (the fields these schemas ask for).
void expect_valid_call(const json& call, const std::string& want_name = "") {
  EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_")) << call;
  EXPECT_EQ(call["type"], "function");
  const std::string name = call["function"]["name"];
  if (!want_name.empty()) {
    EXPECT_EQ(name, want_name);
  }
  const json args = json::parse(call["function"]["arguments"].get<std::string>());
  if (name == "get_weather") {
    EXPECT_TRUE(args["city"].is_string()) << args;
    EXPECT_TRUE(args["unit"] == "c" || args["unit"] == "f") << args;
  } else {
    ASSERT_EQ(name, "add");
    EXPECT_TRUE(args["a"].is_number_integer() && args["b"].is_number_integer()) << args;
  }
}

TEST(ToolsServe, RequiredAndNamedChoicesCallFromTheFirstToken) {
  ServerProcess server("-t 2 --model " + shared_path("golden/models/qwen3vocab-qwen3-Q8_0.gguf"));
  auto c = server.client();
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const JsonResponse r = post_json(c, "/v1/chat/completions", chat("required", {{"seed", seed}, {"temperature", 1}}));
    ASSERT_EQ(r.status, 200) << r.text;
    const json& choice = r.body["choices"][0];
    EXPECT_EQ(choice["finish_reason"], "tool_calls") << r.text;
    EXPECT_TRUE(choice["message"]["content"].is_null()) << r.text;
    ASSERT_GE(choice["message"]["tool_calls"].size(), 1u) << r.text;
    for (const json& call : choice["message"]["tool_calls"]) expect_valid_call(call);
  }
  const JsonResponse named = post_json(
      c, "/v1/chat/completions",
      chat({{"type", "function"}, {"function", {{"name", "get_weather"}}}}, {{"parallel_tool_calls", false}}));
  ASSERT_EQ(named.status, 200) << named.text;
  ASSERT_EQ(named.body["choices"][0]["message"]["tool_calls"].size(), 1u) << named.text;
  expect_valid_call(named.body["choices"][0]["message"]["tool_calls"][0], "get_weather");
}

TEST(ToolsServe, StreamedDeltasAddUpToTheSameCalls) {
  ServerProcess server("-t 2 --model " + shared_path("golden/models/qwen3vocab-qwen3-Q8_0.gguf"));
  auto c = server.client();
  const json body = chat("required", {{"seed", 3}, {"temperature", 1}});
  const JsonResponse whole = post_json(c, "/v1/chat/completions", body);
  ASSERT_EQ(whole.status, 200) << whole.text;
  json streaming = body;
  streaming["stream"] = true;
  std::map<int, json> calls;  // index -> the call as its deltas build it
  std::string finish;
  for (const std::string& payload : sse_payloads(post_json(c, "/v1/chat/completions", streaming).text)) {
    if (payload == "[DONE]") continue;
    const json chunk = json::parse(payload);
    if (chunk["choices"].empty()) continue;
    const json& choice = chunk["choices"][0];
    if (choice["finish_reason"].is_string()) finish = choice["finish_reason"];
    for (const json& d : choice["delta"].value("tool_calls", json::array())) {
      json& call = calls[d["index"].get<int>()];
      if (d.contains("id")) call = {{"id", d["id"]}, {"type", d["type"]}, {"function", {{"name", d["function"]["name"]}, {"arguments", ""}}}};
      call["function"]["arguments"] = call["function"]["arguments"].get<std::string>() +
                                      d["function"].value("arguments", "");
    }
  }
  EXPECT_EQ(finish, "tool_calls");
  const json& want = whole.body["choices"][0]["message"]["tool_calls"];
  ASSERT_EQ(calls.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(calls[static_cast<int>(i)]["function"]["name"], want[i]["function"]["name"]);
    EXPECT_EQ(json::parse(calls[static_cast<int>(i)]["function"]["arguments"].get<std::string>()),
              json::parse(want[i]["function"]["arguments"].get<std::string>()));  // the same seed, the same call
  }
}

// A conversation's earlier call and its result reach the model: a mock engine that answers
// with its own prompt (--mock-echo) shows them as Qwen3's template renders them.
TEST(ToolsServe, HistoryWithCallsAndResultsReachesThePrompt) {
  ServerProcess server("--engine mock --mock-echo --model " + shared_path("golden/models/qwen3vocab-qwen3-Q8_0.gguf"));
  auto c = server.client();
  json body = chat("auto", {{"reasoning_format", "none"}, {"temperature", 0}});
  body["messages"].push_back({{"role", "assistant"}, {"content", nullptr},
                              {"tool_calls", {{{"id", "call_1"}, {"type", "function"},
                                               {"function", {{"name", "add"}, {"arguments", "{\"a\": 17, \"b\": 25}"}}}}}}});
  body["messages"].push_back({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "The sum is 42."}});
  body["max_tokens"] = 2048;  // the echo ends after the prompt
  const JsonResponse r = post_json(c, "/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["choices"][0]["finish_reason"], "tool_calls") << r.text;
  const json& message = r.body["choices"][0]["message"];
  const std::string prompt = message["content"].get<std::string>();
  EXPECT_NE(prompt.find("<tool_response>\nThe sum is 42.\n</tool_response>"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("What is the weather in Paris?"), std::string::npos) << prompt;
  // The earlier call was rendered as a call, which the echo gives back as one.
  ASSERT_TRUE(message.contains("tool_calls")) << r.text;
  const json& calls = message.at("tool_calls");
  ASSERT_EQ(calls.size(), 1u) << r.text;
  EXPECT_EQ(calls.at(0).at("function").at("name"), "add");
  EXPECT_EQ(json::parse(calls.at(0).at("function").at("arguments").get<std::string>()), json({{"a", 17}, {"b", 25}}));
}

TEST(ToolsServe, HistoryWithCallsAndResultsRendersAndBadChoicesAre400) {
  ServerProcess server("-t 2 --model " + shared_path("golden/models/qwen3vocab-qwen3-Q8_0.gguf"));
  auto c = server.client();
  json body = chat("auto", {{"max_tokens", 4}});
  body["messages"].push_back({{"role", "assistant"}, {"content", nullptr},
                              {"tool_calls", {{{"id", "call_1"}, {"type", "function"},
                                               {"function", {{"name", "add"}, {"arguments", "{\"a\": 1, \"b\": 2}"}}}}}}});
  body["messages"].push_back({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "3"}});
  EXPECT_EQ(post_json(c, "/v1/chat/completions", body).status, 200);

  json bad_schema = chat("required");
  bad_schema["tools"][0]["function"]["parameters"]["properties"]["city"]["format"] = "city";
  const JsonResponse r = post_json(c, "/v1/chat/completions", bad_schema);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"]["param"], "tools[0].function.parameters.properties.city.format");
  const JsonResponse both = post_json(c, "/v1/chat/completions",
                                      chat("required", {{"response_format", {{"type", "json_object"}}}}));
  EXPECT_EQ(both.status, 400);
  EXPECT_EQ(both.body["error"]["param"], "tool_choice");
}

}  // namespace
}  // namespace nanoserve::test
