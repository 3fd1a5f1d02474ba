// Anthropic's answers: a whole `message` object, or the stream of events that builds one:
//   message_start, then per content block (thinking, text, tool_use) content_block_start,
//   content_block_delta (thinking_delta, text_delta, input_json_delta) and content_block_stop
//   (a ping after the first block starts), then message_delta (stop_reason, stop_sequence,
//   usage) and message_stop.
// Usage counts the prompt tokens read from the prefix cache apart (cache_read_input_tokens),
// as Anthropic counts its cache: input_tokens are the others. Extra field: `nanoserve`, the
// engine's clock.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "server/api_error.h"
#include "server/chat_readers.h"
#include "server/generation_relay.h"
#include "server/sse.h"

namespace nanoserve::anthropic {

// What ended the message: end_turn, max_tokens, stop_sequence or tool_use.
std::string stop_reason(const server::RelayEnd& end, bool called_tools);

// The whole message for a non-streamed request.
nlohmann::ordered_json message_json(const std::string& id, const std::string& model, const server::AnswerPieces& answer,
                                    const server::RelayEnd& end);

// Anthropic's error body: {"type": "error", "error": {"type": "invalid_request_error", "message": ...}},
// the type from the status (401 authentication_error, 404 not_found_error, 413
// request_too_large, 429 rate_limit_error, 5xx api_error, ...).
nlohmann::ordered_json anthropic_error_body(const server::ApiError& error);

// Writes one message's events as its pieces arrive.
class MessageEvents {
 public:
  MessageEvents(server::SseWriter& sse, std::string id, std::string model);

  bool start(int32_t prompt_tokens);
  bool add(const server::AnswerPieces& pieces);
  void finish(const server::RelayEnd& end);
  void fail(const server::ApiError& error);

 private:
  enum class Block { None, Thinking, Text, ToolUse };
  // An event `type` with `fields` after its "type".
  bool send(const char* type, const nlohmann::ordered_json& fields);
  // Closes the open block, starts this one.
  bool start_block(Block block, nlohmann::ordered_json content_block);
  bool close();
  bool delta(nlohmann::ordered_json delta);

  server::SseWriter& sse_;
  std::string id_, model_;
  Block open_ = Block::None;
  int index_ = -1;  // of the last block started (-1: none yet)
  bool called_tools_ = false;
};

}  // namespace nanoserve::anthropic
