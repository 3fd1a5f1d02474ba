#include "anthropic/messages_request.h"

#include <fmt/format.h>

#include <limits>
#include <string>
#include <utility>

#include "server/api_error.h"
#include "server/generation_params.h"
#include "server/json_fields.h"
#include "server/response_format.h"

namespace nanoserve::anthropic {
namespace {

using nlohmann::ordered_json;
using server::FieldReader;
using server::invalid_request;

ordered_json blocks_of(const ordered_json& content, const std::string& param, const server::ServerLimits& limits) {
  if (content.is_string()) return ordered_json::array({{{"type", "text"}, {"text", content}}});
  if (!content.is_array())
    throw invalid_request(fmt::format("'{}' must be a string or an array of content blocks", param), param,
                          "invalid_type");
  server::check_size(content, limits.max_content_parts, param, "too_many_content_parts");
  return content;
}

[[noreturn]] void unsupported_block(const std::string& type, const std::string& param) {
  throw invalid_request(fmt::format("'{}' is a \"{}\" block: only text, thinking, tool_use and tool_result blocks "
                                    "are supported", param, type), param, "unsupported_content_type");
}

// Text blocks joined by newlines (a system prompt, a tool result's content).
std::string joined_text(const ordered_json& content, const std::string& param, const server::ServerLimits& limits) {
  const ordered_json blocks = blocks_of(content, param, limits);
  std::string text;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const FieldReader block(blocks[i], fmt::format("{}[{}]", param, i));
    const std::string type = block.required_string("type");
    if (type != "text") unsupported_block(type, block.param("type"));
    if (i > 0) text += '\n';
    text += block.required_string("text");
  }
  return text;
}

// A user turn: its tool results first (a "tool" message each, as chat templates want them),
// then its text.
void add_user_turn(const ordered_json& blocks, const std::string& param, const server::ServerLimits& limits,
                   ordered_json& messages) {
  std::string text;
  bool has_text = false;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const FieldReader block(blocks[i], fmt::format("{}[{}]", param, i));
    const std::string type = block.required_string("type");
    if (type == "text") {
      if (has_text) text += '\n';
      text += block.required_string("text");
      has_text = true;
    } else if (type == "tool_result") {
      const nlohmann::ordered_json* content = block.find("content");
      messages.push_back({{"role", "tool"},
                          {"tool_call_id", block.required_string("tool_use_id")},
                          {"content", content ? joined_text(*content, block.param("content"), limits) : ""}});
      block.boolean("is_error");
    } else {
      unsupported_block(type, block.param("type"));
    }
  }
  if (has_text) messages.push_back({{"role", "user"}, {"content", text}});
}

// An assistant turn: its text, its thinking (reasoning_content, which templates of thinking
// models print) and its tool calls (arguments as JSON, as templates print them).
void add_assistant_turn(const ordered_json& blocks, const std::string& param, ordered_json& messages) {
  ordered_json message = {{"role", "assistant"}, {"content", ""}};
  std::string text, reasoning;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const FieldReader block(blocks[i], fmt::format("{}[{}]", param, i));
    const std::string type = block.required_string("type");
    if (type == "text") {
      text += block.required_string("text");
    } else if (type == "thinking") {
      reasoning += block.required_string("thinking");
    } else if (type == "redacted_thinking") {
      continue;  // encrypted by Anthropic's service: nothing a local model can read
    } else if (type == "tool_use") {
      const nlohmann::ordered_json* input = block.object("input");
      message["tool_calls"].push_back({{"id", block.required_string("id")}, {"type", "function"},
                                       {"function", {{"name", block.required_string("name")},
                                                     {"arguments", input ? *input : ordered_json::object()}}}});
    } else {
      unsupported_block(type, block.param("type"));
    }
  }
  message["content"] = text;
  if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  messages.push_back(std::move(message));
}

ordered_json chat_messages(const FieldReader& fields, const server::ServerLimits& limits) {
  ordered_json messages = ordered_json::array();
  if (const nlohmann::ordered_json* system = fields.find("system"))
    messages.push_back({{"role", "system"}, {"content", joined_text(*system, "system", limits)}});
  const nlohmann::ordered_json* turns = fields.array("messages");
  if (!turns) throw invalid_request("'messages' is required", "messages", "missing_required_parameter");
  if (turns->empty()) throw invalid_request("'messages' must not be empty", "messages", "empty_array");
  server::check_size(*turns, limits.max_messages, "messages", "too_many_messages");
  for (size_t i = 0; i < turns->size(); ++i) {
    const FieldReader turn((*turns)[i], fmt::format("messages[{}]", i));
    const std::string role = turn.required_string("role");
    const nlohmann::ordered_json* content = turn.find("content");
    if (!content)
      throw invalid_request(fmt::format("'{}' is required", turn.param("content")), turn.param("content"),
                            "missing_required_parameter");
    if (role == "user") {
      add_user_turn(blocks_of(*content, turn.param("content"), limits), turn.param("content"), limits, messages);
    } else if (role == "assistant") {
      add_assistant_turn(blocks_of(*content, turn.param("content"), limits), turn.param("content"), messages);
    } else if (role == "system") {
      messages.push_back({{"role", "system"}, {"content", joined_text(*content, turn.param("content"), limits)}});
    } else {
      throw invalid_request(fmt::format("'{}' must be \"user\" or \"assistant\"", turn.param("role")),
                            turn.param("role"), "invalid_value");
    }
  }
  return messages;
}

// Custom tools as the chat templates' functions; null when there are none.
ordered_json chat_tools(const FieldReader& fields, const server::ServerLimits& limits) {
  const nlohmann::ordered_json* tools = fields.array("tools");
  if (!tools || tools->empty()) return nullptr;
  server::check_size(*tools, limits.max_tools, "tools", "too_many_tools");
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const FieldReader tool((*tools)[i], fmt::format("tools[{}]", i));
    const std::string type = tool.string("type").value_or("custom");
    if (type != "custom")
      throw invalid_request(fmt::format("'{}' is \"{}\": Anthropic's server tools run on Anthropic's service; only "
                                        "custom tools (name, description, input_schema) are supported here",
                                        tool.param("type"), type), tool.param("type"), "unsupported_tool_type");
    out.push_back(server::function_tool(tool, "input_schema", true));
  }
  return out;
}

void read_tool_choice(const FieldReader& fields, server::ChatRequest& chat) {
  const nlohmann::ordered_json* choice = fields.object("tool_choice");
  if (!choice) return;
  const FieldReader reader(*choice, "tool_choice");
  const std::string type = reader.required_string("type");
  chat.parallel_tool_calls = !reader.boolean("disable_parallel_tool_use").value_or(false);
  using Kind = server::ToolChoice::Kind;
  if (type == "auto") return;
  if (type == "none") {
    chat.tool_choice.kind = Kind::None;
    chat.tools = nullptr;
    return;
  }
  if (type == "any") {
    chat.tool_choice.kind = Kind::Required;
  } else if (type == "tool") {
    chat.tool_choice = {.kind = Kind::Function, .function = reader.required_string("name")};
  } else {
    throw invalid_request("'tool_choice.type' must be \"auto\", \"any\", \"tool\" or \"none\"", "tool_choice.type",
                          "invalid_value");
  }
  if (chat.tools.is_null())
    throw invalid_request("'tool_choice' asks for a tool call but no 'tools' are given", "tool_choice",
                          "invalid_value");
  if (type == "tool" && !server::offers_function(chat.tools, chat.tool_choice.function))
    throw invalid_request(fmt::format("'tool_choice.name' names '{}', which is not in 'tools'",
                                      chat.tool_choice.function), "tool_choice.name", "invalid_value");
}

// thinking: the chat template's enable_thinking (absent: the template's own default).
void read_thinking(const FieldReader& fields, server::ChatRequest& chat) {
  const nlohmann::ordered_json* thinking = fields.object("thinking");
  if (!thinking) return;
  const FieldReader reader(*thinking, "thinking");
  const std::string type = reader.required_string("type");
  if (type != "enabled" && type != "disabled" && type != "adaptive" && type != "between_tools")
    throw invalid_request("'thinking.type' must be \"enabled\", \"adaptive\", \"between_tools\" or \"disabled\"",
                          "thinking.type", "invalid_value");
  if (type == "enabled" && !reader.integer("budget_tokens", 1, std::numeric_limits<int64_t>::max()))
    throw invalid_request("'thinking.budget_tokens' is required when thinking is enabled", "thinking.budget_tokens",
                          "missing_required_parameter");
  chat.template_kwargs["enable_thinking"] = type != "disabled";
}

// output_config.format: a JSON schema the answer's text is held to.
std::shared_ptr<const grammar::Grammar> output_format(const FieldReader& fields) {
  const nlohmann::ordered_json* config = fields.object("output_config");
  if (!config) return nullptr;
  const FieldReader reader(*config, "output_config");
  reader.string("effort");
  const nlohmann::ordered_json* format = reader.object("format");
  if (!format) return nullptr;
  const FieldReader f(*format, "output_config.format");
  if (f.required_string("type") != "json_schema")
    throw invalid_request("'output_config.format.type' must be \"json_schema\"", "output_config.format.type",
                          "invalid_value");
  const nlohmann::ordered_json* schema = f.object("schema");
  if (!schema)
    throw invalid_request("'output_config.format.schema' is required", "output_config.format.schema",
                          "missing_required_parameter");
  return server::schema_grammar(*schema, "output_config.format.schema");
}

}  // namespace

MessagesRequest parse_messages_request(const nlohmann::ordered_json& body, const server::ServerLimits& limits,
                                       uint64_t random_seed, bool count_only) {
  const FieldReader fields(body);
  MessagesRequest r;
  server::ChatRequest& chat = r.chat;
  chat.messages = chat_messages(fields, limits);
  chat.tools = chat_tools(fields, limits);
  read_tool_choice(fields, chat);
  read_thinking(fields, chat);
  if (const nlohmann::ordered_json* metadata = fields.object("metadata"))
    FieldReader(*metadata, "metadata").string("user_id");
  server::GenerationParams& p = chat.params;
  p.sampling = server::read_sampling(fields, random_seed);
  // A cap, as Anthropic means it: Claude Code asks for 32000; the reply gets what the server's
  // limit and the context allow.
  server::read_max_tokens_cap(fields, "max_tokens", limits, p);
  if (!p.max_tokens && !count_only)
    throw invalid_request("'max_tokens' is required", "max_tokens", "missing_required_parameter");
  p.stop = server::read_stop_strings(fields, "stop_sequences", limits);
  p.grammar = output_format(fields);
  p.stream = fields.boolean("stream").value_or(false);
  return r;
}

}  // namespace nanoserve::anthropic
