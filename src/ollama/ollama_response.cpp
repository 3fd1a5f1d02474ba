#include "ollama/ollama_response.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cmath>

#include "server/response_json.h"

namespace nanoserve::ollama {
namespace {

using nlohmann::ordered_json;

int64_t nanoseconds(double milliseconds) { return std::llround(milliseconds * 1e6); }

ordered_json head_fields(const AnswerHead& head) { return {{"model", head.model}, {"created_at", timestamp_now()}}; }

// message (chat) or response (generate), with its thinking and tool calls.
void add_answer(ordered_json& line, const AnswerHead& head, const server::AnswerPieces& pieces) {
  if (!head.chat) {
    line["response"] = pieces.content;
    if (!pieces.reasoning.empty()) line["thinking"] = pieces.reasoning;
    return;
  }
  ordered_json message = {{"role", "assistant"}, {"content", pieces.content}};
  if (!pieces.reasoning.empty()) message["thinking"] = pieces.reasoning;
  for (const server::ToolCall& call : pieces.calls) {
    ordered_json arguments = ordered_json::parse(call.arguments, nullptr, false);
    if (!arguments.is_object()) arguments = ordered_json::object();
    message["tool_calls"].push_back({{"function", {{"name", call.name}, {"arguments", std::move(arguments)}}}});
  }
  line["message"] = std::move(message);
}

}  // namespace

std::string rfc3339(std::chrono::system_clock::time_point t) {
  const auto since_epoch = t.time_since_epoch();
  const auto seconds = std::chrono::floor<std::chrono::seconds>(since_epoch);
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count();
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:09d}Z", std::chrono::sys_seconds(seconds), nanos);
}

std::string timestamp_now() { return rfc3339(std::chrono::system_clock::now()); }

ordered_json piece_line(const AnswerHead& head, const server::AnswerPieces& pieces) {
  ordered_json line = head_fields(head);
  add_answer(line, head, pieces);
  line["done"] = false;
  return line;
}

ordered_json final_line(const AnswerHead& head, const server::AnswerPieces& answer, const server::RelayEnd& end,
                        std::chrono::steady_clock::duration total) {
  const engine::RequestStats& s = end.stats;
  ordered_json line = head_fields(head);
  add_answer(line, head, answer);
  line["done"] = true;
  line["done_reason"] = end.finish == engine::FinishReason::Length ? "length" : "stop";
  line["total_duration"] = std::chrono::duration_cast<std::chrono::nanoseconds>(total).count();
  line["load_duration"] = 0;
  line["prompt_eval_count"] = s.prompt_tokens;
  line["prompt_eval_duration"] = nanoseconds(s.ttft_ms - s.queue_ms);
  line["eval_count"] = s.completion_tokens;
  line["eval_duration"] =
      s.decode_tok_s > 0 ? std::llround((s.completion_tokens - 1) / s.decode_tok_s * 1e9) : int64_t{0};
  line["nanoserve"] = server::engine_stats_json(s);
  return line;
}

ordered_json load_line(const AnswerHead& head) {
  ordered_json line = head_fields(head);
  add_answer(line, head, {});
  line["done"] = true;
  line["done_reason"] = "load";
  return line;
}

ordered_json ollama_error_body(const server::ApiError& error) { return {{"error", error.what()}}; }

}  // namespace nanoserve::ollama
