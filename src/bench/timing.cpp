#include "bench/timing.h"

#include <algorithm>
#include <cmath>

namespace nanoserve::bench {

std::optional<double> percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (rank - static_cast<double>(below));
}

std::optional<Spread> spread(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return Spread{median, values.front(), values.back(), n};
}

ClientFigures client_figures(const StreamRecord& r) {
  ClientFigures f;
  f.end_ms = static_cast<double>(r.end_us) / 1e3;
  if (r.chunk_us.empty()) return f;
  f.ttft_ms = static_cast<double>(r.chunk_us.front()) / 1e3;
  f.last_chunk_ms = static_cast<double>(r.chunk_us.back()) / 1e3;
  std::vector<double> gaps;
  for (size_t i = 1; i < r.chunk_us.size(); ++i) gaps.push_back(static_cast<double>(r.chunk_us[i] - r.chunk_us[i - 1]) / 1e3);
  f.gap_p50_ms = percentile(gaps, 50);
  f.gap_p99_ms = percentile(gaps, 99);
  const int64_t decode_us = r.chunk_us.back() - r.chunk_us.front();
  if (r.chunk_us.size() > 1 && decode_us > 0)
    f.decode_tok_s = static_cast<double>(r.chunk_us.size() - 1) / (static_cast<double>(decode_us) / 1e6);
  return f;
}

std::optional<double> engine_last_token_ms(const EngineClock& engine, std::optional<int64_t> completion_tokens) {
  if (!engine.ttft_ms || !completion_tokens) return std::nullopt;
  if (*completion_tokens <= 1) return engine.ttft_ms;
  if (!engine.decode_tok_s || !(*engine.decode_tok_s > 0) || !std::isfinite(*engine.decode_tok_s)) return std::nullopt;
  return *engine.ttft_ms + static_cast<double>(*completion_tokens - 1) / *engine.decode_tok_s * 1e3;
}

Overhead overhead(const StreamRecord& r) {
  Overhead o;
  if (!r.engine) return o;
  const ClientFigures client = client_figures(r);
  if (client.ttft_ms && r.engine->ttft_ms) o.ttft_ms = *client.ttft_ms - *r.engine->ttft_ms;
  const auto engine_last = engine_last_token_ms(*r.engine, r.completion_tokens);
  if (client.last_chunk_ms && engine_last) o.total_ms = *client.last_chunk_ms - *engine_last;
  return o;
}

}  // namespace nanoserve::bench
