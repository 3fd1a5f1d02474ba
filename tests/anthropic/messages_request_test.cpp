// Anthropic's request body into the chat request every API shares: the turns as chat
// templates want them (tool results as tool messages, tool uses as tool calls with JSON
// arguments, thinking as reasoning_content), tools as functions, and refusals that name the
// field.
#include <gtest/gtest.h>

#include "anthropic/messages_request.h"
#include "server/api_error.h"
#include "support/api_refusal.h"

namespace nanoserve::anthropic {
namespace {

using nlohmann::ordered_json;

MessagesRequest parse(const ordered_json& body, bool count_only = false) {
  return parse_messages_request(body, server::ServerLimits{}, 7, count_only);
}

std::string refusal(const ordered_json& body) {
  return test::refused_param([](const ordered_json& b) { return parse(b); }, body);
}

TEST(MessagesRequest, TurnsBecomeTheChatTemplatesMessages) {
  const ordered_json body = ordered_json::parse(R"({
    "max_tokens": 50, "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
    "messages": [
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Look it up.", "signature": "x"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "5 C"}]},
        {"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}}]}]})");
  const MessagesRequest r = parse(body);
  const ordered_json expected = ordered_json::parse(R"([
    {"role": "system", "content": "Be brief.\nBe kind."},
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": "Checking.", "tool_calls": [
      {"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}],
     "reasoning_content": "Look it up."},
    {"role": "tool", "tool_call_id": "toolu_1", "content": "5 C"},
    {"role": "user", "content": "Thanks"}])");
  EXPECT_EQ(r.chat.messages, expected);
  EXPECT_EQ(r.chat.params.max_tokens, 50);
  EXPECT_TRUE(r.chat.tools.is_null());
}

TEST(MessagesRequest, ToolsToolChoiceThinkingAndSampling) {
  const ordered_json body = ordered_json::parse(R"({
    "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "add", "description": "Adds", "input_schema": {"type": "object"}}],
    "tool_choice": {"type": "tool", "name": "add", "disable_parallel_tool_use": true},
    "thinking": {"type": "enabled", "budget_tokens": 1024},
    "temperature": 0.5, "top_p": 0.9, "top_k": 40, "stop_sequences": ["END"], "stream": true})");
  const MessagesRequest r = parse(body);
  EXPECT_EQ(r.chat.tools, ordered_json::parse(R"([{"type": "function", "function":
    {"name": "add", "description": "Adds", "parameters": {"type": "object"}}}])"));
  EXPECT_EQ(r.chat.tool_choice.kind, server::ToolChoice::Kind::Function);
  EXPECT_EQ(r.chat.tool_choice.function, "add");
  EXPECT_FALSE(r.chat.parallel_tool_calls);
  EXPECT_EQ(r.chat.template_kwargs["enable_thinking"], true);
  EXPECT_FLOAT_EQ(r.chat.params.sampling.temperature, 0.5f);
  EXPECT_EQ(r.chat.params.sampling.top_k, 40);
  EXPECT_EQ(r.chat.params.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(r.chat.params.stream);

  ordered_json none = body;
  none["tool_choice"] = {{"type", "none"}};
  none["thinking"] = {{"type", "disabled"}};
  const MessagesRequest n = parse(none);
  EXPECT_TRUE(n.chat.tools.is_null());
  EXPECT_EQ(n.chat.template_kwargs["enable_thinking"], false);
}

TEST(MessagesRequest, RefusalsNameTheField) {
  const ordered_json ok = {{"max_tokens", 5}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  EXPECT_EQ(refusal(ok), "(accepted)");
  EXPECT_EQ(parse(ordered_json{{"messages", ok["messages"]}}, true).chat.messages.size(), 1u);  // count_tokens
  auto with = [&](const std::string& key, ordered_json value) {
    ordered_json b = ok;
    b[key] = std::move(value);
    return b;
  };
  ordered_json no_max = ok;
  no_max.erase("max_tokens");
  EXPECT_EQ(refusal(no_max), "max_tokens");
  EXPECT_EQ(refusal(with("max_tokens", 0)), "max_tokens");
  EXPECT_EQ(refusal(with("messages", ordered_json::array())), "messages");
  EXPECT_EQ(refusal(with("messages", {{{"role", "robot"}, {"content", "x"}}})), "messages[0].role");
  EXPECT_EQ(refusal(with("messages", {{{"role", "user"}, {"content", {{{"type", "image"}}}}}})),
            "messages[0].content[0].type");
  EXPECT_EQ(refusal(with("tools", {{{"type", "web_search_20250305"}, {"name", "web_search"}}})), "tools[0].type");
  EXPECT_EQ(refusal(with("tools", {{{"name", "f"}}})), "tools[0].input_schema");
  EXPECT_EQ(refusal(with("tool_choice", {{"type", "any"}})), "tool_choice");  // no tools
  EXPECT_EQ(refusal(with("thinking", {{"type", "enabled"}})), "thinking.budget_tokens");
  EXPECT_EQ(refusal(with("stop_sequences", {""})), "stop_sequences");
  EXPECT_EQ(refusal(with("output_config", {{"format", {{"type", "json_schema"}, {"schema", {{"type", "object"},
                                                       {"multipleOf", 2}}}}}})),
            "output_config.format.schema.multipleOf");
}

}  // namespace
}  // namespace nanoserve::anthropic
