#include "anthropic/messages_response.h"

#include <utility>

#include "server/api_error.h"
#include "server/response_json.h"

namespace nanoserve::anthropic {
namespace {

using nlohmann::ordered_json;

// Anthropic's ids for tool uses start "toolu_"; a tool call's own random part follows.
std::string tool_use_id(const server::ToolCall& call) {
  return "toolu_" + (call.id.starts_with("call_") ? call.id.substr(5) : call.id);
}

ordered_json tool_input(const server::ToolCall& call) {
  ordered_json input = ordered_json::parse(call.arguments, nullptr, false);
  return input.is_object() ? input : ordered_json::object();
}

ordered_json usage_json(const engine::RequestStats& stats) {
  return {{"input_tokens", stats.prompt_tokens - stats.cached_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", stats.cached_tokens},
          {"output_tokens", stats.completion_tokens}};
}

// The stop string that ended the message, or null (also when it ended in tool calls).
ordered_json stop_sequence(const server::RelayEnd& end, bool called_tools) {
  return !called_tools && !end.stop.empty() ? ordered_json(end.stop) : ordered_json(nullptr);
}

}  // namespace

std::string stop_reason(const server::RelayEnd& end, bool called_tools) {
  if (called_tools) return "tool_use";
  if (end.finish == engine::FinishReason::Length) return "max_tokens";
  if (!end.stop.empty()) return "stop_sequence";
  return "end_turn";
}

ordered_json message_json(const std::string& id, const std::string& model, const server::AnswerPieces& answer,
                          const server::RelayEnd& end) {
  ordered_json content = ordered_json::array();
  if (!answer.reasoning.empty())
    content.push_back({{"type", "thinking"}, {"thinking", answer.reasoning}, {"signature", ""}});
  if (!answer.content.empty()) content.push_back({{"type", "text"}, {"text", answer.content}});
  for (const server::ToolCall& call : answer.calls)
    content.push_back(
        {{"type", "tool_use"}, {"id", tool_use_id(call)}, {"name", call.name}, {"input", tool_input(call)}});
  const bool called = !answer.calls.empty();
  return {{"id", id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", model},
          {"content", std::move(content)},
          {"stop_reason", stop_reason(end, called)},
          {"stop_sequence", stop_sequence(end, called)},
          {"usage", usage_json(end.stats)},
          {"nanoserve", server::engine_stats_json(end.stats)}};
}

ordered_json anthropic_error_body(const server::ApiError& error) {
  auto type = [&]() -> std::string {
    switch (error.status) {
      case 401: return "authentication_error";
      case 403: return "permission_error";
      case 404: return "not_found_error";
      case 413: return "request_too_large";
      case 429: return "rate_limit_error";
      case 503: return "overloaded_error";
      default: return error.status >= 500 ? "api_error" : "invalid_request_error";
    }
  };
  return {{"type", "error"}, {"error", {{"type", type()}, {"message", error.what()}}}};
}

MessageEvents::MessageEvents(server::SseWriter& sse, std::string id, std::string model)
    : sse_(sse), id_(std::move(id)), model_(std::move(model)) {}

bool MessageEvents::send(const char* type, const ordered_json& fields) {
  ordered_json event = {{"type", type}};
  for (const auto& [key, value] : fields.items()) event[key] = value;
  return sse_.send_named(type, event);
}

bool MessageEvents::start(int32_t prompt_tokens) {
  const ordered_json message = {{"id", id_},
                                {"type", "message"},
                                {"role", "assistant"},
                                {"model", model_},
                                {"content", ordered_json::array()},
                                {"stop_reason", nullptr},
                                {"stop_sequence", nullptr},
                                {"usage", {{"input_tokens", prompt_tokens},
                                           {"cache_creation_input_tokens", 0},
                                           {"cache_read_input_tokens", 0},
                                           {"output_tokens", 0}}}};
  return send("message_start", {{"message", message}});
}

bool MessageEvents::start_block(Block block, ordered_json content_block) {
  if (!close()) return false;
  open_ = block;
  ++index_;
  if (!send("content_block_start", {{"index", index_}, {"content_block", std::move(content_block)}})) return false;
  // Anthropic's service pings once the first block has started.
  return index_ > 0 || send("ping", ordered_json::object());
}

bool MessageEvents::close() {
  if (open_ == Block::None) return true;
  open_ = Block::None;
  return send("content_block_stop", {{"index", index_}});
}

bool MessageEvents::delta(ordered_json delta) {
  return send("content_block_delta", {{"index", index_}, {"delta", std::move(delta)}});
}

bool MessageEvents::add(const server::AnswerPieces& pieces) {
  if (!pieces.reasoning.empty()) {
    if (open_ != Block::Thinking &&
        !start_block(Block::Thinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}))
      return false;
    if (!delta({{"type", "thinking_delta"}, {"thinking", pieces.reasoning}})) return false;
  }
  if (!pieces.content.empty()) {
    if (open_ != Block::Text && !start_block(Block::Text, {{"type", "text"}, {"text", ""}})) return false;
    if (!delta({{"type", "text_delta"}, {"text", pieces.content}})) return false;
  }
  // A tool use is a block of its own, read whole: its input arrives as one piece of JSON.
  for (const server::ToolCall& call : pieces.calls) {
    called_tools_ = true;
    if (!start_block(Block::ToolUse, {{"type", "tool_use"}, {"id", tool_use_id(call)}, {"name", call.name},
                                      {"input", ordered_json::object()}}) ||
        !delta({{"type", "input_json_delta"}, {"partial_json", server::json_text(tool_input(call))}}) || !close())
      return false;
  }
  return true;
}

void MessageEvents::finish(const server::RelayEnd& end) {
  close();
  if (index_ < 0) send("ping", ordered_json::object());
  send("message_delta", {{"delta", {{"stop_reason", stop_reason(end, called_tools_)},
                                     {"stop_sequence", stop_sequence(end, called_tools_)}}},
                         {"usage", usage_json(end.stats)},
                         {"nanoserve", server::engine_stats_json(end.stats)}});
  send("message_stop", ordered_json::object());
}

void MessageEvents::fail(const server::ApiError& error) { sse_.send_named("error", anthropic_error_body(error)); }

}  // namespace nanoserve::anthropic
