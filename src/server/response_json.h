// Response bodies in OpenAI's shapes: chat.completion, chat.completion.chunk,
// text_completion (whole and streamed), usage, and nanoserve's own `nanoserve` object with
// the engine's clock for the request.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "http/response.h"

namespace nanoserve::server {

// What every object of one response repeats.
struct ResponseHeader {
  std::string id;       // "chatcmpl-..." or "cmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
};

// Serialized compactly; invalid UTF-8 is replaced (U+FFFD), never thrown on mid-response.
std::string json_text(const nlohmann::ordered_json& value);
// A whole answer whose body is `body`.
http::Response json_response(const nlohmann::ordered_json& body, int status = 200);


nlohmann::ordered_json usage_json(const engine::RequestStats& stats);
// {queue_ms, ttft_ms, prefill_tok_s, decode_tok_s, peak_memory_bytes, kv_blocks, kv_peak_bytes}
nlohmann::ordered_json engine_stats_json(const engine::RequestStats& stats);

// Whole responses, with usage and the nanoserve object.
nlohmann::ordered_json chat_completion(const ResponseHeader& header, const std::string& text, engine::FinishReason finish,
                               const engine::RequestStats& stats);
nlohmann::ordered_json text_completion(const ResponseHeader& header, const std::string& text, engine::FinishReason finish,
                               const engine::RequestStats& stats);

// Streamed pieces. `delta` is the chat message delta ({"role": ...} or {"content": ...}).
nlohmann::ordered_json chat_chunk(const ResponseHeader& header, nlohmann::ordered_json delta);
nlohmann::ordered_json chat_finish_chunk(const ResponseHeader& header, engine::FinishReason finish);
nlohmann::ordered_json text_chunk(const ResponseHeader& header, const std::string& text);
nlohmann::ordered_json text_finish_chunk(const ResponseHeader& header, engine::FinishReason finish);
// The chunk after the last choice when the client asked for stream_options.include_usage.
nlohmann::ordered_json usage_chunk(const ResponseHeader& header, const std::string& object, const engine::RequestStats& stats);

}  // namespace nanoserve::server
