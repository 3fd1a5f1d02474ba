#include "bench/stream_client.h"

#include <httplib.h>

#include <algorithm>

#include "bench/sse_parser.h"

namespace nanoserve::bench {
namespace {

constexpr size_t kMaxErrorBody = 2000;

int64_t us_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t).count();
}

std::optional<double> number_at(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// An array of whole numbers (empty when absent or not one).
std::vector<int64_t> integers_at(const nlohmann::json& object, const char* key) {
  std::vector<int64_t> out;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_number_integer()) out.push_back(v.get<int64_t>());
  return out;
}

EngineClock engine_clock(const nlohmann::json& stats) {
  EngineClock c;
  c.queue_ms = number_at(stats, "queue_ms");
  c.ttft_ms = number_at(stats, "ttft_ms");
  c.prefill_tok_s = number_at(stats, "prefill_tok_s");
  c.decode_tok_s = number_at(stats, "decode_tok_s");
  if (auto peak = number_at(stats, "peak_memory_bytes")) c.peak_memory_bytes = static_cast<int64_t>(*peak);
  if (auto n = number_at(stats, "decode_steps")) c.decode_steps = static_cast<int64_t>(*n);
  if (auto n = number_at(stats, "draft_tokens")) c.draft_tokens = static_cast<int64_t>(*n);
  if (auto n = number_at(stats, "accepted_tokens")) c.accepted_tokens = static_cast<int64_t>(*n);
  c.drafted_at = integers_at(stats, "drafted_at");
  c.accepted_at = integers_at(stats, "accepted_at");
  return c;
}

// The text a chunk carries: completions put it in choices[0].text, chat in .delta.content.
std::string chunk_text(const nlohmann::json& choice) {
  if (const auto text = choice.find("text"); text != choice.end() && text->is_string()) return *text;
  if (const auto delta = choice.find("delta"); delta != choice.end() && delta->is_object())
    if (const auto content = delta->find("content"); content != delta->end() && content->is_string()) return *content;
  return {};
}

std::string error_message(const nlohmann::json& error) {
  if (error.is_object() && error.contains("message") && error["message"].is_string()) return error["message"];
  return error.dump();
}

}  // namespace

bool read_stream_event(const std::string& data, int64_t arrival_us, StreamRecord& record) {
  if (data == "[DONE]") {
    record.end_us = arrival_us;
    return false;
  }
  const nlohmann::json event = nlohmann::json::parse(data, nullptr, false);
  if (event.is_discarded() || !event.is_object()) {
    if (record.error.empty()) record.error = "the server sent an event that is not a JSON object: " + data.substr(0, 200);
    return true;
  }
  if (const auto error = event.find("error"); error != event.end() && !error->is_null()) {
    if (record.error.empty()) record.error = "the server reported an error mid-stream: " + error_message(*error);
    return true;
  }
  if (const auto choices = event.find("choices"); choices != event.end() && choices->is_array() && !choices->empty()) {
    const nlohmann::json& choice = choices->front();
    if (choice.is_object()) {
      const std::string text = chunk_text(choice);
      if (!text.empty()) {
        record.chunk_us.push_back(arrival_us);
        record.text_bytes += text.size();
      }
      if (const auto finish = choice.find("finish_reason"); finish != choice.end() && finish->is_string())
        record.finish_reason = *finish;
    }
  }
  if (const auto usage = event.find("usage"); usage != event.end() && usage->is_object()) {
    if (auto n = number_at(*usage, "prompt_tokens")) record.prompt_tokens = static_cast<int64_t>(*n);
    if (auto n = number_at(*usage, "completion_tokens")) record.completion_tokens = static_cast<int64_t>(*n);
    if (const auto details = usage->find("prompt_tokens_details"); details != usage->end() && details->is_object())
      if (auto n = number_at(*details, "cached_tokens")) record.cached_tokens = static_cast<int64_t>(*n);
  }
  if (const auto stats = event.find("nanoserve"); stats != event.end() && stats->is_object())
    record.engine = engine_clock(*stats);
  return true;
}

StreamClient::StreamClient(Endpoint endpoint, ClientTimeouts timeouts)
    : endpoint_(std::move(endpoint)), http_(std::make_unique<httplib::Client>(endpoint_.origin())) {
  http_->set_keep_alive(true);
  http_->set_tcp_nodelay(true);
  http_->set_connection_timeout(timeouts.connect_s, 0);
  http_->set_read_timeout(timeouts.read_s, 0);
  http_->set_write_timeout(timeouts.read_s, 0);
}

StreamClient::~StreamClient() = default;

StreamRecord StreamClient::stream(const std::string& route, nlohmann::json body, const std::atomic<bool>* stop) {
  body["stream"] = true;
  httplib::Request req;
  req.method = "POST";
  req.path = endpoint_.path(route);
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  if (!endpoint_.api_key.empty()) req.set_header("Authorization", "Bearer " + endpoint_.api_key);

  StreamRecord record;
  SseParser parser;
  std::string error_body;
  bool done = false;
  req.response_handler = [&](const httplib::Response& res) {
    record.http_status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    const int64_t arrival = us_since(record.sent);
    if (record.http_status != 200) {
      error_body.append(data, std::min(size, kMaxErrorBody - std::min(kMaxErrorBody, error_body.size())));
      return true;
    }
    for (const std::string& event : parser.feed({data, size}))
      if (!read_stream_event(event, arrival, record)) done = true;
    return !(stop && stop->load());
  };
  record.sent = Clock::now();
  const httplib::Result result = http_->send(req);
  const int64_t finished = us_since(record.sent);

  if (stop && stop->load()) {
    record.error = "interrupted";
  } else if (!result) {
    record.error = "no answer from " + endpoint_.origin() + req.path + ": " + httplib::to_string(result.error());
  } else if (record.http_status != 200) {
    record.error = "HTTP " + std::to_string(record.http_status) + " from " + req.path + ": " + error_body;
  } else if (record.error.empty() && !done) {
    record.error = "the event stream ended without [DONE]";
  }
  if (record.end_us < 0) record.end_us = finished;
  return record;
}

int StreamClient::get(const std::string& route, std::string* body) {
  httplib::Headers headers;
  if (!endpoint_.api_key.empty()) headers.emplace("Authorization", "Bearer " + endpoint_.api_key);
  const httplib::Result result = http_->Get(endpoint_.path(route), headers);
  if (!result) return 0;
  if (body) *body = result->body;
  return result->status;
}

}  // namespace nanoserve::bench
