#include "responses/response_output.h"

#include <utility>

#include "server/request_id.h"
#include "server/response_json.h"

namespace nanoserve::responses {
namespace {

using nlohmann::ordered_json;

ordered_json usage_json(const engine::RequestStats& stats) {
  return {{"input_tokens", stats.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", stats.cached_tokens}}},
          {"output_tokens", stats.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", stats.prompt_tokens + stats.completion_tokens}};
}

// A text item's one content part: a message's output_text, or reasoning's reasoning_text.
ordered_json text_part(bool message, const std::string& text) {
  if (!message) return {{"type", "reasoning_text"}, {"text", text}};
  return {{"type", "output_text"}, {"text", text}, {"annotations", ordered_json::array()},
          {"logprobs", ordered_json::array()}};
}

}  // namespace

ResponseOutput::ResponseOutput(ordered_json response, server::SseWriter* sse)
    : response_(std::move(response)), sse_(sse) {}

bool ResponseOutput::emit(const std::string& type, ordered_json fields) {
  if (!sse_) return true;
  ordered_json event = {{"type", type}, {"sequence_number", sequence_++}};
  for (auto& [key, value] : fields.items()) event[key] = std::move(value);
  return sse_->send_named(type, event);
}

ordered_json ResponseOutput::snapshot(const std::string& status) const {
  ordered_json r = response_;
  r["status"] = status;
  r["error"] = nullptr;
  r["incomplete_details"] = nullptr;
  r["output"] = output_;
  r["previous_response_id"] = nullptr;
  r["store"] = false;
  r["truncation"] = "disabled";
  r["usage"] = nullptr;
  return r;
}

bool ResponseOutput::start() {
  if (!sse_) return true;
  const ordered_json now = snapshot("in_progress");
  return emit("response.created", {{"response", now}}) && emit("response.in_progress", {{"response", now}});
}

bool ResponseOutput::open_text_item(Item kind) {
  if (open_ == kind) return true;
  if (!close_item()) return false;
  open_ = kind;
  text_.clear();
  const bool message = kind == Item::Message;
  ordered_json item = message ? ordered_json{{"id", server::random_request_id("msg_")}, {"type", "message"},
                                             {"status", "in_progress"}, {"role", "assistant"},
                                             {"content", ordered_json::array()}}
                              : ordered_json{{"id", server::random_request_id("rs_")}, {"type", "reasoning"},
                                             {"summary", ordered_json::array()}, {"content", ordered_json::array()},
                                             {"status", "in_progress"}};
  output_.push_back(item);
  const size_t index = output_.size() - 1;
  const ordered_json part = text_part(message, "");
  return emit("response.output_item.added", {{"output_index", index}, {"item", std::move(item)}}) &&
         emit("response.content_part.added",
              {{"item_id", output_.back()["id"]}, {"output_index", index}, {"content_index", 0}, {"part", part}});
}

bool ResponseOutput::close_item() {
  if (open_ == Item::None) return true;
  const bool message = open_ == Item::Message;
  open_ = Item::None;
  ordered_json& item = output_.back();
  const size_t index = output_.size() - 1;
  ordered_json part = text_part(message, text_);
  item["content"].push_back(part);
  item["status"] = "completed";
  ordered_json done = {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0}, {"text", text_}};
  if (message) done["logprobs"] = ordered_json::array();
  return emit(message ? "response.output_text.done" : "response.reasoning_text.done", std::move(done)) &&
         emit("response.content_part.done",
              {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0}, {"part", std::move(part)}}) &&
         emit("response.output_item.done", {{"output_index", index}, {"item", item}});
}

bool ResponseOutput::add_call(const server::ToolCall& call) {
  if (!close_item()) return false;
  ordered_json item = {{"id", server::random_request_id("fc_")}, {"type", "function_call"}, {"status", "in_progress"},
                       {"call_id", call.id}, {"name", call.name}, {"arguments", ""}};
  const size_t index = output_.size();
  const std::string id = item["id"];
  if (!emit("response.output_item.added", {{"output_index", index}, {"item", item}})) return false;
  item["arguments"] = call.arguments;
  item["status"] = "completed";
  output_.push_back(item);
  return emit("response.function_call_arguments.delta",
              {{"item_id", id}, {"output_index", index}, {"delta", call.arguments}}) &&
         emit("response.function_call_arguments.done",
              {{"item_id", id}, {"output_index", index}, {"name", call.name}, {"arguments", call.arguments}}) &&
         emit("response.output_item.done", {{"output_index", index}, {"item", std::move(item)}});
}

bool ResponseOutput::add(const server::AnswerPieces& pieces) {
  auto add_text = [&](Item kind, const std::string& text) {
    if (text.empty()) return true;
    if (!open_text_item(kind)) return false;
    text_ += text;
    if (!sse_) return true;  // a whole response: the text is all it needs
    const bool message = kind == Item::Message;
    ordered_json delta = {{"item_id", output_.back()["id"]}, {"output_index", output_.size() - 1},
                          {"content_index", 0}, {"delta", text}};
    if (message) delta["logprobs"] = ordered_json::array();
    return emit(message ? "response.output_text.delta" : "response.reasoning_text.delta", std::move(delta));
  };
  if (!add_text(Item::Reasoning, pieces.reasoning) || !add_text(Item::Message, pieces.content)) return false;
  for (const server::ToolCall& call : pieces.calls)
    if (!add_call(call)) return false;
  return true;
}

ordered_json ResponseOutput::finish(const server::RelayEnd& end) {
  close_item();
  const bool cut = end.finish == engine::FinishReason::Length;
  ordered_json r = snapshot(cut ? "incomplete" : "completed");
  if (cut) r["incomplete_details"] = {{"reason", "max_output_tokens"}};
  r["usage"] = usage_json(end.stats);
  r["nanoserve"] = server::engine_stats_json(end.stats);
  emit(cut ? "response.incomplete" : "response.completed", {{"response", r}});
  return r;
}

void ResponseOutput::fail(const server::ApiError& error) {
  ordered_json r = snapshot("failed");
  r["error"] = {{"code", "server_error"}, {"message", error.what()}};
  emit("response.failed", {{"response", std::move(r)}});
}

}  // namespace nanoserve::responses
