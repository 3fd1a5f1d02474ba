// POST /v1/chat/completions: the request body, checked and normalized for the chat template.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "server/generation_params.h"
#include "server/json_fields.h"
#include "server/limits.h"
#include "server/tool_calls.h"

namespace nanoserve::server {

struct ChatRequest {
  // One object per message: "role" (system, user, assistant or tool; "developer" becomes
  // "system") and "content" (a string: text parts joined by "\n"), plus "name", "tool_calls"
  // (each function's arguments as JSON, as templates print them) and "tool_call_id" when given.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;  // null unless tools are offered (and tool_choice is not "none")
  ToolChoice tool_choice;        // "required" and a named function are forced by a grammar
  bool parallel_tool_calls = true;
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();  // chat_template_kwargs
  GenerationParams params;
  // reasoning_format "none": a thinking model's <think>...</think> stays in the content
  // (default "auto", also "deepseek": it goes to reasoning_content).
  bool reasoning_inline = false;
};

// The field `tools`, checked: null when absent or empty, else an array of
// {"type": "function", "function": {"name", "description", "parameters"}} (Ollama's tools too).
nlohmann::ordered_json parse_tools(const FieldReader& fields, const ServerLimits& limits);

// One function tool of another API's flat form ({"name", "description", <schema_field>}) in the
// chat form above. Throws ApiError (400): no name or an empty one; no schema where it is required
// (else an empty object schema).
nlohmann::ordered_json function_tool(const FieldReader& tool, const std::string& schema_field, bool schema_required);

// Throws ApiError (400) naming the field at fault.
ChatRequest parse_chat_request(const nlohmann::ordered_json& body, const ServerLimits& limits, uint64_t random_seed);

}  // namespace nanoserve::server
