#include "server/chat_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>

#include "engine/token_logprobs.h"
#include "server/api_error.h"
#include "server/json_fields.h"

namespace nanoserve::server {
namespace {

// Text parts joined by newlines; other part types (images, audio) are refused.
std::string joined_text_parts(const nlohmann::ordered_json& parts, const std::string& param, const ServerLimits& limits) {
  check_size(parts, limits.max_content_parts, param, "too_many_content_parts");
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

// An assistant turn's tool calls as templates print them: each function's arguments as JSON
// (clients send them as a string of JSON).
nlohmann::ordered_json templated_tool_calls(nlohmann::ordered_json calls, const std::string& param) {
  for (size_t i = 0; i < calls.size(); ++i) {
    nlohmann::ordered_json& call = calls[i];
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object())
      throw invalid_request(fmt::format("'{}[{}].function' must be an object", param, i),
                            fmt::format("{}[{}].function", param, i), "invalid_type");
    nlohmann::ordered_json& arguments = call["function"]["arguments"];
    if (arguments.is_string()) {
      nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(arguments.get<std::string>(), nullptr, false);
      if (!parsed.is_discarded()) arguments = std::move(parsed);
    }
  }
  return calls;
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
  if (tool_calls) out["tool_calls"] = templated_tool_calls(*tool_calls, fields.param("tool_calls"));
  if (auto name = fields.string("name")) out["name"] = *name;
  if (*role == "tool")
    if (auto id = fields.string("tool_call_id")) out["tool_call_id"] = *id;
  return out;
}

}  // namespace

nlohmann::ordered_json parse_tools(const FieldReader& fields, const ServerLimits& limits) {
  const nlohmann::ordered_json* tools = fields.array("tools");
  if (!tools || tools->empty()) return nullptr;
  check_size(*tools, limits.max_tools, "tools", "too_many_tools");
  for (size_t i = 0; i < tools->size(); ++i) {
    const FieldReader tool((*tools)[i], fmt::format("tools[{}]", i));
    if (tool.string("type").value_or("function") != "function")
      throw invalid_request(fmt::format("'{}' must be \"function\"", tool.param("type")), tool.param("type"),
                            "invalid_value");
    const nlohmann::ordered_json* function = tool.object("function");
    if (!function)
      throw invalid_request(fmt::format("'{}' is required", tool.param("function")), tool.param("function"),
                            "missing_required_parameter");
    const FieldReader f(*function, tool.param("function"));
    const auto name = f.string("name");
    if (!name || name->empty())
      throw invalid_request(fmt::format("'{}' is required", f.param("name")), f.param("name"),
                            "missing_required_parameter");
    f.object("parameters");  // an object when given
  }
  return *tools;
}

nlohmann::ordered_json function_tool(const FieldReader& tool, const std::string& schema_field, bool schema_required) {
  const std::string name = tool.required_string("name");
  if (name.empty())
    throw invalid_request(fmt::format("'{}' must not be empty", tool.param("name")), tool.param("name"),
                          "invalid_value");
  const nlohmann::ordered_json* schema = tool.object(schema_field);
  if (!schema && schema_required)
    throw invalid_request(fmt::format("'{}' is required", tool.param(schema_field)), tool.param(schema_field),
                          "missing_required_parameter");
  nlohmann::ordered_json function = {{"name", name}};
  if (auto description = tool.string("description")) function["description"] = *description;
  function["parameters"] =
      schema ? *schema : nlohmann::ordered_json{{"type", "object"}, {"properties", nlohmann::ordered_json::object()}};
  return {{"type", "function"}, {"function", std::move(function)}};
}

namespace {

ToolChoice tool_choice_of(const FieldReader& fields, const nlohmann::ordered_json& tools) {
  const nlohmann::ordered_json* choice = fields.find("tool_choice");
  if (!choice) return {};
  ToolChoice out;
  if (choice->is_string()) {
    if (*choice == "auto") return out;
    if (*choice == "none") out.kind = ToolChoice::Kind::None;
    else if (*choice == "required") out.kind = ToolChoice::Kind::Required;
    else
      throw invalid_request("'tool_choice' must be \"auto\", \"none\", \"required\" or a function", "tool_choice",
                            "invalid_value");
  } else {
    const FieldReader named(*choice, "tool_choice");
    const nlohmann::ordered_json* function = named.object("function");
    const auto name = function ? FieldReader(*function, "tool_choice.function").string("name") : std::nullopt;
    if (!name)
      throw invalid_request("'tool_choice.function.name' is required", "tool_choice.function.name",
                            "missing_required_parameter");
    out.kind = ToolChoice::Kind::Function;
    out.function = *name;
  }
  if (out.kind == ToolChoice::Kind::None) return out;
  if (tools.is_null())
    throw invalid_request("'tool_choice' asks for a tool call but no 'tools' are given", "tool_choice",
                          "invalid_value");
  if (out.kind == ToolChoice::Kind::Function && !offers_function(tools, out.function))
    throw invalid_request(fmt::format("'tool_choice' names '{}', which is not in 'tools'", out.function),
                          "tool_choice.function.name", "invalid_value");
  return out;
}

}  // namespace

ChatRequest parse_chat_request(const nlohmann::ordered_json& body, const ServerLimits& limits, uint64_t random_seed) {
  const FieldReader fields(body);
  const nlohmann::ordered_json* messages = fields.array("messages");
  if (!messages) throw invalid_request("'messages' is required", "messages", "missing_required_parameter");
  if (messages->empty()) throw invalid_request("'messages' must not be empty", "messages", "empty_array");
  check_size(*messages, limits.max_messages, "messages", "too_many_messages");
  ChatRequest r;
  for (size_t i = 0; i < messages->size(); ++i) r.messages.push_back(normalized_message((*messages)[i], i, limits));
  r.tools = parse_tools(fields, limits);
  r.tool_choice = tool_choice_of(fields, r.tools);
  if (r.tool_choice.kind == ToolChoice::Kind::None) r.tools = nullptr;
  r.parallel_tool_calls = fields.boolean("parallel_tool_calls").value_or(true);
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
