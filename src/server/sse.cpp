#include "server/sse.h"

#include <nlohmann/json.hpp>

#include <utility>

#include "server/response_json.h"

namespace nanoserve::server {

std::string sse_event(const nlohmann::ordered_json& data) {
  // Compact JSON escapes control characters: no raw newline can end the data line early.
  return "data: " + json_text(data) + "\n\n";
}

std::string sse_named_event(std::string_view name, const nlohmann::ordered_json& data) {
  return "event: " + std::string(name) + "\n" + sse_event(data);
}

std::string sse_done() { return "data: [DONE]\n\n"; }

SseWriter start_event_stream(http::ResponseWriter& res) {
  res.start_stream({.status = 200, .content_type = "text/event-stream", .headers = {{"Cache-Control", "no-cache"}},
                    .body = {}});
  return SseWriter([&res](std::string_view bytes) { return res.write(bytes); });
}

SseWriter::SseWriter(std::function<bool(std::string_view)> write) : write_(std::move(write)) {}

bool SseWriter::send(const nlohmann::ordered_json& data) { return send_raw(sse_event(data)); }

bool SseWriter::send_named(std::string_view name, const nlohmann::ordered_json& data) {
  return send_raw(sse_named_event(name, data));
}

bool SseWriter::send_done() { return send_raw(sse_done()); }

bool SseWriter::send_raw(const std::string& bytes) {
  if (ok_) ok_ = write_(bytes);
  return ok_;
}

}  // namespace nanoserve::server
