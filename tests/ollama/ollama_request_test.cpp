// Ollama's bodies into the requests every API shares: messages as the chat template wants them
// (tool calls with JSON arguments, thinking as reasoning_content, tool_name as name), options
// by their shared names, num_predict as a cap, generate's system and raw prompt, the requests
// that only load the model, and refusals that name the field.
#include <gtest/gtest.h>

#include "ollama/ollama_request.h"
#include "ollama/ollama_response.h"
#include "server/api_error.h"
#include "support/api_refusal.h"

namespace nanoserve::ollama {
namespace {

using nlohmann::ordered_json;

constexpr int64_t kContext = 4096;

OllamaRequest chat(const ordered_json& body) { return parse_chat(body, server::ServerLimits{}, 7, kContext); }
OllamaRequest generate(const ordered_json& body) { return parse_generate(body, server::ServerLimits{}, 7, kContext); }

template <typename Parse>
std::string refusal(Parse parse, const ordered_json& body) {
  return test::refused_param(parse, body);
}

TEST(OllamaRequest, ChatMessagesOptionsAndThink) {
  const OllamaRequest r = chat(ordered_json::parse(R"({"model": "qwen3:8b", "think": false, "keep_alive": "5m",
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": "", "thinking": "Look it up.",
       "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
      {"role": "tool", "content": "5 C", "tool_name": "get_weather"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
    "options": {"num_predict": 99999, "temperature": 0.2, "top_k": 5, "seed": 3, "stop": ["END"], "num_ctx": 2048,
                "mirostat": 0}})"));
  EXPECT_EQ(r.model, "qwen3:8b");
  EXPECT_FALSE(r.load_only);
  EXPECT_EQ(r.chat.messages, ordered_json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": "", "reasoning_content": "Look it up.", "tool_calls": [
      {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
    {"role": "tool", "content": "5 C", "name": "get_weather"}])"));
  EXPECT_EQ(r.chat.tools.size(), 1u);
  EXPECT_EQ(r.chat.template_kwargs["enable_thinking"], false);
  const server::GenerationParams& p = r.chat.params;
  EXPECT_EQ(p.max_tokens, server::ServerLimits{}.max_tokens);  // a cap
  EXPECT_TRUE(p.max_tokens_is_cap);
  EXPECT_FLOAT_EQ(p.sampling.temperature, 0.2f);
  EXPECT_EQ(p.sampling.top_k, 5);
  EXPECT_EQ(p.sampling.seed, 3u);
  EXPECT_EQ(p.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(p.stream);  // Ollama streams unless told not to
  const ordered_json unbounded = {
      {"model", "m"}, {"messages", {{{"role", "user"}, {"content", "x"}}}}, {"options", {{"num_predict", -1}}}};
  EXPECT_FALSE(chat(unbounded).chat.params.max_tokens);
  EXPECT_TRUE(chat({{"model", "m"}}).load_only);
  EXPECT_TRUE(chat({{"model", "m"}, {"messages", ordered_json::array()}}).load_only);
}

TEST(OllamaRequest, GenerateTemplatedRawAndFormat) {
  const OllamaRequest templated =
      generate({{"model", "m"}, {"prompt", "Hi"}, {"system", "Be brief."}, {"stream", false}});
  EXPECT_EQ(templated.chat.messages, ordered_json::parse(R"([{"role": "system", "content": "Be brief."},
                                                            {"role": "user", "content": "Hi"}])"));
  EXPECT_FALSE(templated.raw_prompt);
  EXPECT_FALSE(templated.chat.params.stream);
  const OllamaRequest raw = generate({{"model", "m"}, {"prompt", "def f("}, {"raw", true}, {"format", "json"}});
  EXPECT_EQ(raw.raw_prompt, "def f(");
  EXPECT_TRUE(raw.chat.params.grammar);
  EXPECT_TRUE(generate({{"model", "m"}, {"prompt", ""}}).load_only);
  EXPECT_TRUE(generate({{"model", "m"}, {"prompt", "x"}, {"format", {{"type", "object"}}}}).chat.params.grammar);
}

TEST(OllamaRequest, RefusalsNameTheField) {
  const ordered_json ok = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  EXPECT_EQ(refusal(chat, ok), "(accepted)");
  auto with = [&](const std::string& key, ordered_json value) {
    ordered_json b = ok;
    b[key] = std::move(value);
    return b;
  };
  ordered_json no_model = ok;
  no_model.erase("model");
  EXPECT_EQ(refusal(chat, no_model), "model");
  EXPECT_EQ(refusal(chat, with("messages", {{{"role", "robot"}, {"content", "x"}}})), "messages[0].role");
  EXPECT_EQ(refusal(chat, with("messages", {{{"role", "user"}, {"content", "x"}, {"images", {"aGk="}}}})),
            "messages[0].images");
  EXPECT_EQ(refusal(chat, with("options", {{"num_predict", 0}})), "options.num_predict");
  EXPECT_EQ(refusal(chat, with("options", {{"num_ctx", kContext + 1}})), "options.num_ctx");
  EXPECT_EQ(refusal(chat, with("options", {{"temperature", "hot"}})), "options.temperature");
  EXPECT_EQ(refusal(chat, with("format", "yaml")), "format");
  EXPECT_EQ(refusal(chat, with("format", {{"type", "object"}, {"multipleOf", 2}})), "format.multipleOf");
  EXPECT_EQ(refusal(chat, with("think", "max")), "think");
  EXPECT_EQ(refusal(chat, with("logprobs", true)), "logprobs");
  const ordered_json gen = {{"model", "m"}, {"prompt", "hi"}};
  auto gen_with = [&](const std::string& key, ordered_json value) {
    ordered_json b = gen;
    b[key] = std::move(value);
    return b;
  };
  EXPECT_EQ(refusal(generate, gen_with("suffix", "}")), "suffix");
  EXPECT_EQ(refusal(generate, gen_with("template", "{{ .Prompt }}")), "template");
  EXPECT_EQ(refusal(generate, gen_with("context", {1, 2})), "context");
  EXPECT_EQ(refusal(generate, gen_with("images", {"aGk="})), "images");
  ordered_json raw_system = gen_with("raw", true);
  raw_system["system"] = "x";
  EXPECT_EQ(refusal(generate, raw_system), "system");
}

TEST(OllamaResponse, TheLastLineHasTheClockInNanoseconds) {
  server::RelayEnd end;
  end.finish = engine::FinishReason::Length;
  end.stats.prompt_tokens = 20;
  end.stats.completion_tokens = 11;
  end.stats.queue_ms = 1;
  end.stats.ttft_ms = 6;
  end.stats.decode_tok_s = 100;  // 10 tokens after the first in 0.1 s
  const ordered_json line =
      final_line({.model = "m", .chat = true}, {.reasoning = "", .content = "hi", .calls = {}}, end,
                 std::chrono::milliseconds(150));
  EXPECT_EQ(line["message"], ordered_json({{"role", "assistant"}, {"content", "hi"}}));
  EXPECT_EQ(line["done"], true);
  EXPECT_EQ(line["done_reason"], "length");
  EXPECT_EQ(line["total_duration"], 150000000);
  EXPECT_EQ(line["prompt_eval_count"], 20);
  EXPECT_EQ(line["prompt_eval_duration"], 5000000);
  EXPECT_EQ(line["eval_count"], 11);
  EXPECT_EQ(line["eval_duration"], 100000000);
  EXPECT_EQ(rfc3339(std::chrono::system_clock::time_point(std::chrono::nanoseconds(1'700'000'000'123'456'789))),
            "2023-11-14T22:13:20.123456789Z");
  const ordered_json piece = piece_line({.model = "m", .chat = false}, {.reasoning = "r", .content = "t", .calls = {}});
  EXPECT_EQ(piece["response"], "t");
  EXPECT_EQ(piece["thinking"], "r");
  EXPECT_EQ(piece["done"], false);
}

}  // namespace
}  // namespace nanoserve::ollama
