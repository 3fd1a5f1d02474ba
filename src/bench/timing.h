// The figures derived from one StreamRecord, computed one way for every phase and arm:
// what the client saw (TTFT, gaps between text chunks, decode rate) and what the server
// added to its engine's clock (overhead = client − engine on the same request).
#pragma once

#include <optional>
#include <vector>

#include "bench/stream_record.h"

namespace nanoserve::bench {

// The p-th percentile (0..100) by linear interpolation between the nearest ranks (numpy's
// default); empty input gives nullopt.
std::optional<double> percentile(std::vector<double> values, double p);

struct Spread {
  double median = 0, min = 0, max = 0;
  size_t n = 0;
};
// Median (the mean of the middle two for an even count), min and max; nullopt when empty.
std::optional<Spread> spread(std::vector<double> values);

struct ClientFigures {
  std::optional<double> ttft_ms;        // request sent -> first text chunk
  std::optional<double> last_chunk_ms;  // request sent -> last text chunk
  double end_ms = 0;                    // request sent -> end of stream ([DONE])
  std::optional<double> gap_p50_ms;     // between consecutive text chunks
  std::optional<double> gap_p99_ms;
  std::optional<double> decode_tok_s;   // (chunks - 1) / (first -> last chunk)
};
ClientFigures client_figures(const StreamRecord& record);

// The engine's submit -> last token, from its clock: ttft + (completion tokens - 1) /
// decode rate. nullopt without the figures it needs.
std::optional<double> engine_last_token_ms(const EngineClock& engine, std::optional<int64_t> completion_tokens);

struct Overhead {
  std::optional<double> ttft_ms;   // client TTFT - engine TTFT
  std::optional<double> total_ms;  // client's last chunk - engine's last token
};
Overhead overhead(const StreamRecord& record);

}  // namespace nanoserve::bench
