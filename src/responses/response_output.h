// A response of OpenAI's Responses API, built item by item as the answer's pieces arrive:
// a reasoning item (its text as reasoning_text), a message (one output_text part), a
// function_call item per call. Streamed, each step is a typed event with a sequence number:
//   response.created, response.in_progress,
//   per item: response.output_item.added, (response.content_part.added,)
//     response.output_text.delta / response.reasoning_text.delta /
//     response.function_call_arguments.delta, then the matching .done events,
//     (response.content_part.done,) response.output_item.done,
//   and response.completed, or response.incomplete (max_output_tokens), with the whole
//   response and its usage; response.failed when the engine fails.
// Whole, the same items make the response's output. Extra field: `nanoserve`, the engine's clock.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "server/api_error.h"
#include "server/chat_readers.h"
#include "server/generation_relay.h"
#include "server/sse.h"

namespace nanoserve::responses {

class ResponseOutput {
 public:
  // `response`: the response object's fields so far (id, created_at, model, what it echoes of
  // the request). `sse`: null for a whole response (items are only gathered).
  ResponseOutput(nlohmann::ordered_json response, server::SseWriter* sse);

  bool start();
  bool add(const server::AnswerPieces& pieces);
  // The finished response (streamed: after its items' last events and response.completed).
  nlohmann::ordered_json finish(const server::RelayEnd& end);
  void fail(const server::ApiError& error);

 private:
  enum class Item { None, Reasoning, Message };
  bool emit(const std::string& type, nlohmann::ordered_json fields);
  // Starts an item of reasoning or message text (closing the open one).
  bool open_text_item(Item kind);
  bool close_item();
  bool add_call(const server::ToolCall& call);
  nlohmann::ordered_json snapshot(const std::string& status) const;

  nlohmann::ordered_json response_;
  server::SseWriter* sse_;
  nlohmann::ordered_json output_ = nlohmann::ordered_json::array();
  Item open_ = Item::None;
  std::string text_;  // of the open item
  int64_t sequence_ = 0;
};

}  // namespace nanoserve::responses
