#include "server/chat_request.h"

#include <fmt/format.h>

#include <set>
#include <string>

#include "engine/token_logprobs.h"
#include "server/api_error.h"
#include "server/json_fields.h"

namespace nanoserve::server {
namespace {

// Text parts joined by newlines; other part types (images, audio) are refused.
std::string joined_text_parts(const nlohmann::ordered_json& parts, const std::string& param, const ServerLimits& limits) {
  if (parts.size() > limits.max_content_parts)
    throw invalid_request(fmt::format("'{}' has {} parts; at most {} are allowed", param, parts.size(),
                                      limits.max_content_parts), param, "too_many_content_parts");
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldReader part(parts[i], fmt::format("{}[{}]", param, i));
    const auto type = part.string("type");
    if (type != "text")
      throw invalid_request(fmt::format("'{}' must be \"text\": only text content is supported", part.param("type")),
                            part.param("type"), "unsupported_content_type");
    const auto piece = part.string("text");
    if (!piece) throw invalid_request(fmt::format("'{}' is missing", part.param("text")), part.param("text"));
    if (i > 0) text += '\n';
    text += *piece;
  }
  return text;
}

nlohmann::ordered_json normalized_message(const nlohmann::ordered_json& message, size_t index, const ServerLimits& limits) {
  static const std::set<std::string> kRoles = {"system", "developer", "user", "assistant", "tool"};
  const FieldReader fields(message, fmt::format("messages[{}]", index));
  const auto role = fields.string("role");
  if (!role || !kRoles.contains(*role))
    throw invalid_request(fmt::format("'{}' must be one of system, developer, user, assistant, tool",
                                      fields.param("role")), fields.param("role"), "invalid_value");
  nlohmann::ordered_json out = {{"role", *role == "developer" ? "system" : *role}};

  const nlohmann::ordered_json* tool_calls = *role == "assistant" ? fields.array("tool_calls") : nullptr;
  const nlohmann::ordered_json* content = fields.find("content");
  if (!content) {
    // An assistant turn that only calls tools has no content.
    if (!tool_calls)
      throw invalid_request(fmt::format("'{}' is missing", fields.param("content")), fields.param("content"));
    out["content"] = "";
  } else if (content->is_string()) {
    out["content"] = *content;
  } else if (content->is_array()) {
    out["content"] = joined_text_parts(*content, fields.param("content"), limits);
  } else {
    throw invalid_request(fmt::format("'{}' must be a string or an array of text parts", fields.param("content")),
                          fields.param("content"), "invalid_type");
  }
  if (tool_calls) out["tool_calls"] = *tool_calls;
  if (auto name = fields.string("name")) out["name"] = *name;
  if (*role == "tool")
    if (auto id = fields.string("tool_call_id")) out["tool_call_id"] = *id;
  return out;
}

// The tools the template is told about: none when tool_choice is "none". nanoserve does not
// force or parse tool calls, so "required" and a named function are refused.
nlohmann::ordered_json offered_tools(const FieldReader& fields, const ServerLimits& limits) {
  const auto choice = fields.find("tool_choice");
  if (choice && *choice != "none" && *choice != "auto")
    throw invalid_request("only tool_choice \"auto\" and \"none\" are supported", "tool_choice",
                          "unsupported_value");
  const nlohmann::ordered_json* tools = fields.array("tools");
  if (!tools || tools->empty() || (choice && *choice == "none")) return nullptr;
  if (tools->size() > limits.max_tools)
    throw invalid_request(fmt::format("'tools' has {} entries; at most {} are allowed", tools->size(),
                                      limits.max_tools), "tools", "too_many_tools");
  for (size_t i = 0; i < tools->size(); ++i)
    if (!(*tools)[i].is_object())
      throw invalid_request(fmt::format("'tools[{}]' must be an object", i), fmt::format("tools[{}]", i),
                            "invalid_type");
  return *tools;
}

}  // namespace

ChatRequest parse_chat_request(const nlohmann::ordered_json& body, const ServerLimits& limits, uint64_t random_seed) {
  const FieldReader fields(body);
  const nlohmann::ordered_json* messages = fields.array("messages");
  if (!messages) throw invalid_request("'messages' is required", "messages", "missing_required_parameter");
  if (messages->empty()) throw invalid_request("'messages' must not be empty", "messages", "empty_array");
  if (messages->size() > limits.max_messages)
    throw invalid_request(fmt::format("'messages' has {} entries; at most {} are allowed", messages->size(),
                                      limits.max_messages), "messages", "too_many_messages");
  ChatRequest r;
  for (size_t i = 0; i < messages->size(); ++i) r.messages.push_back(normalized_message((*messages)[i], i, limits));
  r.tools = offered_tools(fields, limits);
  if (const nlohmann::ordered_json* kwargs = fields.object("chat_template_kwargs")) r.template_kwargs = *kwargs;
  r.params = parse_generation_params(body, limits, random_seed);
  if (const auto format = fields.string("reasoning_format")) {
    if (*format != "none" && *format != "auto" && *format != "deepseek")
      throw invalid_request("'reasoning_format' must be \"auto\", \"deepseek\" or \"none\"", "reasoning_format",
                            "invalid_value");
    r.reasoning_inline = *format == "none";
  }
  // logprobs: true, with top_logprobs alternatives (0 to 20; only with logprobs).
  r.params.logprobs = fields.boolean("logprobs").value_or(false);
  if (const auto top = fields.integer("top_logprobs", 0, engine::kMaxTopLogprobs)) {
    if (!r.params.logprobs)
      throw invalid_request("'top_logprobs' needs 'logprobs': true", "top_logprobs", "invalid_value");
    r.params.top_logprobs = static_cast<int32_t>(*top);
  }
  return r;
}

}  // namespace nanoserve::server
