// Ollama's answers: lines of JSON (NDJSON when streamed, one object when not). Each piece is
// a line with done: false (chat: message.content, message.thinking, message.tool_calls;
// generate: response, thinking); the last line has done: true, done_reason ("stop",
// "length"; "load" for a request that only loads the model) and the clock in nanoseconds:
// total_duration, load_duration (0: the model is loaded when the server is up),
// prompt_eval_count, prompt_eval_duration, eval_count, eval_duration. Extra field on the last
// line: `nanoserve`, the engine's clock. Errors are {"error": "..."}.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

#include "server/api_error.h"
#include "server/chat_readers.h"
#include "server/generation_relay.h"

namespace nanoserve::ollama {

// What every line of one answer repeats.
struct AnswerHead {
  std::string model;  // as the request named it
  bool chat = true;   // /api/chat (message) or /api/generate (response)
};

// Now as Ollama writes times: RFC 3339 in UTC with nanoseconds.
std::string timestamp_now();
std::string rfc3339(std::chrono::system_clock::time_point t);

nlohmann::ordered_json piece_line(const AnswerHead& head, const server::AnswerPieces& pieces);
// The last line; `answer` is the whole answer when it is not streamed (else empty).
nlohmann::ordered_json final_line(const AnswerHead& head, const server::AnswerPieces& answer,
                                  const server::RelayEnd& end, std::chrono::steady_clock::duration total);
nlohmann::ordered_json load_line(const AnswerHead& head);

nlohmann::ordered_json ollama_error_body(const server::ApiError& error);

}  // namespace nanoserve::ollama
