#include "responses/responses_request.h"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "server/api_error.h"
#include "server/generation_params.h"
#include "server/json_fields.h"
#include "grammar/json_schema.h"
#include "server/response_format.h"

namespace nanoserve::responses {
namespace {

using nlohmann::ordered_json;
using server::FieldReader;
using server::invalid_request;

// A message's content: a string, or text parts (input_text, output_text) joined by newlines.
std::string content_text(const ordered_json& content, const std::string& param, const server::ServerLimits& limits) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    throw invalid_request(fmt::format("'{}' must be a string or an array of content parts", param), param,
                          "invalid_type");
  server::check_size(content, limits.max_content_parts, param, "too_many_content_parts");
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const FieldReader part(content[i], fmt::format("{}[{}]", param, i));
    const std::string type = part.required_string("type");
    if (type != "input_text" && type != "output_text" && type != "text" && type != "refusal")
      throw invalid_request(fmt::format("'{}' is \"{}\": only text parts are supported", part.param("type"), type),
                            part.param("type"), "unsupported_content_type");
    if (i > 0) text += '\n';
    text += part.required_string(type == "refusal" ? "refusal" : "text");
  }
  return text;
}

// The conversation so far, as chat messages: function calls join the assistant turn they
// follow (or start one), their outputs become tool messages, reasoning goes to the next
// assistant turn's reasoning_content.
class Conversation {
 public:
  explicit Conversation(const server::ServerLimits& limits) : limits_(limits) {}

  void add(const ordered_json& item, const std::string& param) {
    const FieldReader fields(item, param);
    const std::string type = fields.string("type").value_or("message");
    if (type == "message") {
      add_message(fields);
    } else if (type == "function_call") {
      ordered_json& turn = assistant_turn();
      const std::string arguments = fields.required_string("arguments");
      ordered_json parsed = ordered_json::parse(arguments, nullptr, false);
      turn["tool_calls"].push_back({{"id", fields.required_string("call_id")}, {"type", "function"},
                                    {"function", {{"name", fields.required_string("name")},
                                                  {"arguments", parsed.is_discarded() ? ordered_json(arguments)
                                                                                      : parsed}}}});
    } else if (type == "function_call_output") {
      const nlohmann::ordered_json* output = fields.find("output");
      if (!output)
        throw invalid_request(fmt::format("'{}' is required", fields.param("output")), fields.param("output"),
                              "missing_required_parameter");
      messages_.push_back({{"role", "tool"}, {"tool_call_id", fields.required_string("call_id")},
                           {"content", content_text(*output, fields.param("output"), limits_)}});
    } else if (type == "reasoning") {
      for (const char* key : {"content", "summary"})
        if (const nlohmann::ordered_json* parts = fields.array(key))
          for (const auto& part : *parts)
            if (part.is_object() && part.contains("text") && part["text"].is_string())
              reasoning_ += part["text"].get<std::string>();
    } else if (type == "item_reference") {
      throw invalid_request(fmt::format("'{}' is an item_reference: nanoserve keeps no items; send them whole",
                                        fields.param("type")), fields.param("type"), "unsupported_item_type");
    } else {
      throw invalid_request(fmt::format("'{}' is \"{}\": input items may be message, function_call, "
                                        "function_call_output or reasoning", fields.param("type"), type),
                            fields.param("type"), "unsupported_item_type");
    }
  }

  ordered_json take() { return std::move(messages_); }
  ordered_json& messages() { return messages_; }

 private:
  void add_message(const FieldReader& fields) {
    const std::string role = fields.required_string("role");
    if (role != "user" && role != "assistant" && role != "system" && role != "developer")
      throw invalid_request(fmt::format("'{}' must be user, assistant, system or developer", fields.param("role")),
                            fields.param("role"), "invalid_value");
    const nlohmann::ordered_json* content = fields.find("content");
    if (!content)
      throw invalid_request(fmt::format("'{}' is required", fields.param("content")), fields.param("content"),
                            "missing_required_parameter");
    const std::string text = content_text(*content, fields.param("content"), limits_);
    if (role == "assistant") {
      ordered_json& turn = assistant_turn();
      // Text after the turn's tool calls starts a turn of its own.
      if (turn.contains("tool_calls")) {
        messages_.push_back({{"role", "assistant"}, {"content", text}});
      } else {
        turn["content"] = turn["content"].get<std::string>() + text;
      }
      return;
    }
    messages_.push_back({{"role", role == "developer" ? "system" : role}, {"content", text}});
  }

  // The assistant turn at the end of the conversation (started when the last message is
  // another's), with any reasoning that came before it.
  ordered_json& assistant_turn() {
    if (messages_.empty() || messages_.back()["role"] != "assistant")
      messages_.push_back({{"role", "assistant"}, {"content", ""}});
    ordered_json& turn = messages_.back();
    if (!reasoning_.empty()) turn["reasoning_content"] = std::exchange(reasoning_, {});
    return turn;
  }

  const server::ServerLimits& limits_;
  ordered_json messages_ = ordered_json::array();
  std::string reasoning_;
};

ordered_json chat_messages(const FieldReader& fields, const server::ServerLimits& limits) {
  Conversation conversation(limits);
  if (auto instructions = fields.string("instructions"))
    conversation.messages().push_back({{"role", "system"}, {"content", *instructions}});
  const nlohmann::ordered_json* input = fields.find("input");
  if (!input) throw invalid_request("'input' is required", "input", "missing_required_parameter");
  if (input->is_string()) {
    conversation.messages().push_back({{"role", "user"}, {"content", *input}});
  } else if (input->is_array()) {
    if (input->empty()) throw invalid_request("'input' must not be empty", "input", "empty_array");
    server::check_size(*input, limits.max_messages, "input", "too_many_messages");
    for (size_t i = 0; i < input->size(); ++i) conversation.add((*input)[i], fmt::format("input[{}]", i));
  } else {
    throw invalid_request("'input' must be a string or an array of items", "input", "invalid_type");
  }
  return conversation.take();
}

// Function tools as the chat templates' functions (null when there are none). The others
// (web_search, file_search, namespace, ...) are the service's own to run: not offered.
ordered_json chat_tools(const FieldReader& fields, const server::ServerLimits& limits) {
  const nlohmann::ordered_json* tools = fields.array("tools");
  if (!tools || tools->empty()) return nullptr;
  server::check_size(*tools, limits.max_tools, "tools", "too_many_tools");
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const FieldReader tool((*tools)[i], fmt::format("tools[{}]", i));
    const std::string type = tool.required_string("type");
    if (type != "function") continue;
    tool.boolean("strict");
    out.push_back(server::function_tool(tool, "parameters", false));
  }
  return out.empty() ? ordered_json(nullptr) : out;
}

void read_tool_choice(const FieldReader& fields, server::ChatRequest& chat) {
  using Kind = server::ToolChoice::Kind;
  const nlohmann::ordered_json* choice = fields.find("tool_choice");
  if (!choice) return;
  if (choice->is_string()) {
    if (*choice == "auto") return;
    if (*choice == "none") {
      chat.tool_choice.kind = Kind::None;
      chat.tools = nullptr;
      return;
    }
    if (*choice != "required")
      throw invalid_request("'tool_choice' must be \"auto\", \"none\", \"required\" or a function", "tool_choice",
                            "invalid_value");
    chat.tool_choice.kind = Kind::Required;
  } else {
    const FieldReader named(*choice, "tool_choice");
    if (named.required_string("type") != "function")
      throw invalid_request("'tool_choice.type' must be \"function\"", "tool_choice.type", "invalid_value");
    chat.tool_choice = {.kind = Kind::Function, .function = named.required_string("name")};
  }
  if (chat.tools.is_null())
    throw invalid_request("'tool_choice' asks for a function call but no function 'tools' are given", "tool_choice",
                          "invalid_value");
  if (chat.tool_choice.kind == Kind::Function && !server::offers_function(chat.tools, chat.tool_choice.function))
    throw invalid_request(fmt::format("'tool_choice.name' names '{}', which is not in 'tools'",
                                      chat.tool_choice.function), "tool_choice.name", "invalid_value");
}

// text.format: free text, any JSON object, or JSON held to a schema.
std::shared_ptr<const grammar::Grammar> text_format(const FieldReader& fields) {
  const nlohmann::ordered_json* text = fields.object("text");
  if (!text) return nullptr;
  const nlohmann::ordered_json* format = FieldReader(*text, "text").object("format");
  if (!format) return nullptr;
  const FieldReader f(*format, "text.format");
  const std::string type = f.required_string("type");
  if (type == "text") return nullptr;
  if (type == "json_object") return std::make_shared<const grammar::Grammar>(grammar::any_json_object_grammar());
  if (type != "json_schema")
    throw invalid_request("'text.format.type' must be \"text\", \"json_object\" or \"json_schema\"",
                          "text.format.type", "invalid_value");
  f.required_string("name");
  f.boolean("strict");
  const nlohmann::ordered_json* schema = f.object("schema");
  if (!schema)
    throw invalid_request("'text.format.schema' is required", "text.format.schema", "missing_required_parameter");
  return server::schema_grammar(*schema, "text.format.schema");
}

void refuse_state(const FieldReader& fields) {
  for (const char* name : {"previous_response_id", "conversation"})
    if (fields.find(name))
      throw invalid_request(fmt::format("'{}' is not supported: nanoserve keeps no responses (as with store: false); "
                                        "send the whole conversation as 'input'", name), name, "unsupported_parameter");
  if (fields.boolean("background").value_or(false))
    throw invalid_request("'background' is not supported: nanoserve keeps no responses to poll", "background",
                          "unsupported_parameter");
}

}  // namespace

ResponsesRequest parse_responses_request(const nlohmann::ordered_json& body, const server::ServerLimits& limits,
                                         uint64_t random_seed) {
  const FieldReader fields(body);
  refuse_state(fields);
  ResponsesRequest r;
  server::ChatRequest& chat = r.chat;
  chat.messages = chat_messages(fields, limits);
  chat.tools = chat_tools(fields, limits);
  read_tool_choice(fields, chat);
  chat.parallel_tool_calls = fields.boolean("parallel_tool_calls").value_or(true);
  if (const nlohmann::ordered_json* reasoning = fields.object("reasoning")) {
    if (auto effort = FieldReader(*reasoning, "reasoning").string("effort"))
      chat.template_kwargs["enable_thinking"] = *effort != "none" && *effort != "minimal";
  }
  server::GenerationParams& p = chat.params;
  p.sampling = server::read_sampling(fields, random_seed);
  // A cap: past what the server and the context allow, the response is cut there (status
  // "incomplete", reason max_output_tokens).
  server::read_max_tokens_cap(fields, "max_output_tokens", limits, p);
  p.grammar = text_format(fields);
  p.stream = fields.boolean("stream").value_or(false);
  fields.boolean("store");

  ordered_json& echo = r.echo;
  echo["instructions"] = fields.find("instructions") ? body["instructions"] : ordered_json(nullptr);
  echo["max_output_tokens"] = p.max_tokens ? ordered_json(*p.max_tokens) : ordered_json(nullptr);
  echo["metadata"] = fields.object("metadata") ? body["metadata"] : ordered_json::object();
  echo["parallel_tool_calls"] = chat.parallel_tool_calls;
  echo["temperature"] = p.sampling.temperature;
  echo["tool_choice"] = fields.find("tool_choice") ? body["tool_choice"] : ordered_json("auto");
  echo["tools"] = fields.array("tools") ? body["tools"] : ordered_json::array();
  echo["top_p"] = p.sampling.top_p;
  echo["text"] = fields.object("text") ? body["text"] : ordered_json{{"format", {{"type", "text"}}}};
  echo["reasoning"] =
      fields.object("reasoning") ? body["reasoning"] : ordered_json{{"effort", nullptr}, {"summary", nullptr}};
  return r;
}

}  // namespace nanoserve::responses
