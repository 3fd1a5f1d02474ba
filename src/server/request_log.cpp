#include "server/request_log.h"

#include <fmt/format.h>

namespace nanoserve::server {

std::string request_log_line(const std::string& method, const std::string& path, int status,
                             const RequestLogRecord& record, Clock::time_point now) {
  const double total_ms = std::chrono::duration<double, std::milli>(now - record.received).count();
  std::string line = fmt::format("{} {} {}", method, path, status);
  if (!record.id.empty()) line += " " + record.id;
  if (record.stats) {
    const engine::RequestStats& s = *record.stats;
    line += fmt::format(" prompt={} completion={} queue={:.1f}ms ttft={:.1f}ms decode={:.1f}tok/s", s.prompt_tokens,
                        s.completion_tokens, s.queue_ms, s.ttft_ms, s.decode_tok_s);
  }
  if (record.cancelled) line += " cancelled (client disconnected)";
  line += fmt::format(" total={:.1f}ms", total_ms);
  return line;
}

RequestLogRecord& this_thread_request_log() {
  thread_local RequestLogRecord record;
  return record;
}

}  // namespace nanoserve::server
