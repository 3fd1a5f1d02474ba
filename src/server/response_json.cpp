#include "server/response_json.h"

namespace nanoserve::server {
namespace {

using json = nlohmann::ordered_json;

json object_header(const ResponseHeader& header, const char* object) {
  return {{"id", header.id}, {"object", object}, {"created", header.created}, {"model", header.model}};
}

}  // namespace

std::string json_text(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

http::Response json_response(const json& body, int status) {
  return {.status = status, .content_type = "application/json", .headers = {}, .body = json_text(body)};
}

json usage_json(const engine::RequestStats& stats) {
  return {{"prompt_tokens", stats.prompt_tokens},
          {"completion_tokens", stats.completion_tokens},
          {"total_tokens", stats.prompt_tokens + stats.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", stats.cached_tokens}}}};
}

json engine_stats_json(const engine::RequestStats& stats) {
  return {{"cached_tokens", stats.cached_tokens},
          {"queue_ms", stats.queue_ms},
          {"ttft_ms", stats.ttft_ms},
          {"prefill_tok_s", stats.prefill_tok_s},
          {"decode_tok_s", stats.decode_tok_s},
          {"peak_memory_bytes", stats.peak_memory_bytes},
          {"kv_blocks", stats.kv_blocks},
          {"kv_peak_bytes", stats.kv_peak_bytes},
          {"decode_steps", stats.decode_steps},
          {"tokens_per_step", stats.tokens_per_step()},
          {"draft_tokens", stats.draft_tokens},
          {"accepted_tokens", stats.accepted_tokens},
          {"verify_steps", stats.verify_steps},
          {"tokens_per_verify_step", stats.tokens_per_verify_step()},
          {"drafted_at", stats.drafted_at},
          {"accepted_at", stats.accepted_at}};
}

json chat_completion(const ResponseHeader& header, const std::string& text, engine::FinishReason finish,
                     const engine::RequestStats& stats) {
  json out = object_header(header, "chat.completion");
  out["choices"] = json::array({{{"index", 0},
                                 {"message", {{"role", "assistant"}, {"content", text}}},
                                 {"finish_reason", engine::finish_reason_name(finish)},
                                 {"logprobs", nullptr}}});
  out["usage"] = usage_json(stats);
  out["nanoserve"] = engine_stats_json(stats);
  return out;
}

json text_completion(const ResponseHeader& header, const std::string& text, engine::FinishReason finish,
                     const engine::RequestStats& stats) {
  json out = object_header(header, "text_completion");
  out["choices"] = json::array(
      {{{"index", 0}, {"text", text}, {"finish_reason", engine::finish_reason_name(finish)}, {"logprobs", nullptr}}});
  out["usage"] = usage_json(stats);
  out["nanoserve"] = engine_stats_json(stats);
  return out;
}

json chat_chunk(const ResponseHeader& header, json delta) {
  json out = object_header(header, "chat.completion.chunk");
  out["choices"] =
      json::array({{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", nullptr}, {"logprobs", nullptr}}});
  return out;
}

json chat_finish_chunk(const ResponseHeader& header, engine::FinishReason finish) {
  json out = chat_chunk(header, json::object());
  out["choices"][0]["finish_reason"] = engine::finish_reason_name(finish);
  return out;
}

json text_chunk(const ResponseHeader& header, const std::string& text) {
  json out = object_header(header, "text_completion");
  out["choices"] =
      json::array({{{"index", 0}, {"text", text}, {"finish_reason", nullptr}, {"logprobs", nullptr}}});
  return out;
}

json text_finish_chunk(const ResponseHeader& header, engine::FinishReason finish) {
  json out = text_chunk(header, "");
  out["choices"][0]["finish_reason"] = engine::finish_reason_name(finish);
  return out;
}

json usage_chunk(const ResponseHeader& header, const std::string& object, const engine::RequestStats& stats) {
  json out = object_header(header, object.c_str());
  out["choices"] = json::array();
  out["usage"] = usage_json(stats);
  return out;
}

}  // namespace nanoserve::server
