// Server-sent events as OpenAI streams them: each event is one `data: <json>` line and a
// blank line; the stream ends with `data: [DONE]`. Anthropic's API and the Responses API name
// each event too: an `event: <type>` line before its data, and no [DONE].
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "http/response_writer.h"

namespace nanoserve::server {

std::string sse_event(const nlohmann::ordered_json& data);
std::string sse_named_event(std::string_view name, const nlohmann::ordered_json& data);
std::string sse_done();

// Writes events to a connection, one write (and so one HTTP chunk on the wire) per event.
class SseWriter;

// Starts `res`'s answer as an event stream (200, text/event-stream, not cached) and returns the
// writer of its events.
SseWriter start_event_stream(http::ResponseWriter& res);

class SseWriter {
 public:
  // `write` sends bytes to the client and says whether it could.
  explicit SseWriter(std::function<bool(std::string_view)> write);

  // False once a write has failed (the client went away); later sends do nothing.
  bool send(const nlohmann::ordered_json& data);
  bool send_named(std::string_view name, const nlohmann::ordered_json& data);
  bool send_done();
  bool ok() const { return ok_; }

 private:
  bool send_raw(const std::string& bytes);

  std::function<bool(std::string_view)> write_;
  bool ok_ = true;
};

}  // namespace nanoserve::server
