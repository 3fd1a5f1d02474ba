// The Responses API's body into the chat request every API shares: input items as the chat
// template's messages (function calls joining their assistant turn, outputs as tool messages,
// reasoning as reasoning_content), function tools as functions (the service's own tools left
// out), and refusals that name the field.
#include <gtest/gtest.h>

#include "responses/responses_request.h"
#include "server/api_error.h"
#include "support/api_refusal.h"

namespace nanoserve::responses {
namespace {

using nlohmann::ordered_json;

ResponsesRequest parse(const ordered_json& body) { return parse_responses_request(body, server::ServerLimits{}, 7); }

std::string refusal(const ordered_json& body) {
  return test::refused_param([](const ordered_json& b) { return parse(b); }, body);
}

TEST(ResponsesRequest, InputItemsBecomeTheChatTemplatesMessages) {
  const ordered_json body = ordered_json::parse(R"({
    "instructions": "Be brief.", "max_output_tokens": 99999,
    "input": [
      {"role": "developer", "content": "Use tools."},
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
      {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look it up."}]},
      {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"},
      {"type": "function_call_output", "call_id": "call_1", "output": "5 C"},
      {"role": "assistant", "content": [{"type": "output_text", "text": "It is 5 C."}]},
      {"role": "user", "content": "Thanks"}]})");
  const ResponsesRequest r = parse(body);
  const ordered_json expected = ordered_json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "system", "content": "Use tools."},
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": "", "reasoning_content": "Look it up.", "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "5 C"},
    {"role": "assistant", "content": "It is 5 C."},
    {"role": "user", "content": "Thanks"}])");
  EXPECT_EQ(r.chat.messages, expected);
  // max_output_tokens is a cap: past the server's limit the answer is cut there.
  EXPECT_EQ(r.chat.params.max_tokens, server::ServerLimits{}.max_tokens);
  EXPECT_TRUE(r.chat.params.max_tokens_is_cap);
  EXPECT_EQ(r.echo["instructions"], "Be brief.");
}

TEST(ResponsesRequest, FunctionToolsAreOfferedAndTheServicesOwnAreLeftOut) {
  const ordered_json body = ordered_json::parse(R"({"input": "hi",
    "tools": [{"type": "function", "name": "add", "description": "Adds", "parameters": {"type": "object"}, "strict": true},
              {"type": "web_search"}, {"type": "namespace", "name": "agents", "tools": []}],
    "tool_choice": {"type": "function", "name": "add"}, "parallel_tool_calls": false,
    "reasoning": {"effort": "minimal"}, "stream": true})");
  const ResponsesRequest r = parse(body);
  EXPECT_EQ(r.chat.tools, ordered_json::parse(R"([{"type": "function", "function":
    {"name": "add", "description": "Adds", "parameters": {"type": "object"}}}])"));
  EXPECT_EQ(r.chat.tool_choice.kind, server::ToolChoice::Kind::Function);
  EXPECT_FALSE(r.chat.parallel_tool_calls);
  EXPECT_EQ(r.chat.template_kwargs["enable_thinking"], false);
  EXPECT_TRUE(r.chat.params.stream);
}

TEST(ResponsesRequest, RefusalsNameTheField) {
  EXPECT_EQ(refusal({{"input", "hi"}}), "(accepted)");
  EXPECT_EQ(refusal(ordered_json::object()), "input");
  EXPECT_EQ(refusal({{"input", ordered_json::array()}}), "input");
  EXPECT_EQ(refusal({{"input", "hi"}, {"previous_response_id", "resp_1"}}), "previous_response_id");
  EXPECT_EQ(refusal({{"input", "hi"}, {"conversation", "conv_1"}}), "conversation");
  EXPECT_EQ(refusal({{"input", "hi"}, {"background", true}}), "background");
  EXPECT_EQ(refusal({{"input", {{{"role", "user"}, {"content", {{{"type", "input_file"}}}}}}}}),
            "input[0].content[0].type");
  EXPECT_EQ(refusal({{"input", {{{"type", "item_reference"}, {"id", "msg_1"}}}}}), "input[0].type");
  EXPECT_EQ(refusal({{"input", {{{"role", "robot"}, {"content", "x"}}}}}), "input[0].role");
  EXPECT_EQ(refusal({{"input", {{{"type", "function_call_output"}, {"call_id", "c"}}}}}), "input[0].output");
  EXPECT_EQ(refusal({{"input", "hi"}, {"tool_choice", "required"}}), "tool_choice");
  EXPECT_EQ(refusal({{"input", "hi"}, {"max_output_tokens", 0}}), "max_output_tokens");
  EXPECT_EQ(refusal({{"input", "hi"}, {"text", {{"format", {{"type", "json_schema"}, {"name", "x"},
                                                              {"schema", {{"not", {{"type", "string"}}}}}}}}}}),
            "text.format.schema.not");
}

}  // namespace
}  // namespace nanoserve::responses
