// peak_memory and ttft: one prompt of each of a few lengths (4k and 16k tokens unless the file
// says otherwise, scaled alike to fit the context), a point per length.
#include <fmt/format.h>

#include <algorithm>

#include "lab/procedure_helpers.h"
#include "lab/procedures.h"

namespace nanoserve::lab {
namespace {

class ByLength : public Procedure {
 public:
  ByLength(LabContext& lab, const nlohmann::json& p) : max_tokens_(parameter_int(p, "max_tokens")) {
    FittedLengths fitted = fit_lengths(parameter_ints(p, "tokens"), prompt_limit(lab, max_tokens_), limit_reason(lab));
    lengths_ = std::move(fitted.lengths);
    if (!fitted.note.empty()) notes_.push_back(fitted.note);
  }

  std::map<std::string, double> known() const override {
    return {{"tokens", lengths_.front()},
            {"long_tokens", *std::max_element(lengths_.begin(), lengths_.end())}};
  }

 protected:
  Point point_for(int64_t tokens) const {
    return {.label = fmt::format("{} tokens", tokens), .variables = {{"tokens", static_cast<double>(tokens)}}};
  }

  int64_t max_tokens_;
  std::vector<int64_t> lengths_;
};

class PeakMemory final : public ByLength {
 public:
  using ByLength::ByLength;

  Measurement measure(LabContext& lab) override {
    Measurement m;
    if (lab.servers().external())
      m.notes.push_back("with --url the server is not fresh: its peak includes everything it did before");
    for (const int64_t tokens : lengths_) {
      // A process of its own: peak RSS is the whole history of a process.
      const std::unique_ptr<LabServer> server = lab.servers().fresh({.context = server_context(lab, tokens, max_tokens_)});
      const bench::StreamRecord r = server->complete(lab_request(lab, tokens, max_tokens_, 4000 + tokens));
      const bench::EngineClock& clock = engine_clock(r, "peak memory");
      if (!clock.peak_memory_bytes) throw std::runtime_error("the server reported no peak_memory_bytes");
      Point point = point_for(tokens);
      point.measured = static_cast<double>(*clock.peak_memory_bytes) / 1e6;
      point.details["peak_memory_bytes"] = *clock.peak_memory_bytes;
      m.points.push_back(std::move(point));
    }
    if (m.points.size() >= 2) {
      // What one more position costs, measured: the difference of two peaks over the difference
      // of their lengths (the weights and the fixed buffers cancel).
      const Point &a = m.points.front(), &b = m.points.back();
      const double positions = b.variables.at("tokens") - a.variables.at("tokens");
      if (positions > 0) m.details["kv_bytes_per_token_measured"] = (b.measured - a.measured) * 1e6 / positions;
    }
    return m;
  }
};

class Ttft final : public ByLength {
 public:
  using ByLength::ByLength;

  Measurement measure(LabContext& lab) override {
    const int64_t longest = *std::max_element(lengths_.begin(), lengths_.end());
    LabServer& server = lab.servers().get({.context = server_context(lab, longest, max_tokens_)});
    server.complete(lab_request(lab, std::min<int64_t>(longest, 16), max_tokens_, 5000));  // warm-up
    Measurement m;
    for (const int64_t tokens : lengths_) {
      const bench::StreamRecord r = server.complete(lab_request(lab, tokens, max_tokens_, 5000 + tokens));
      Point point = point_for(tokens);
      point.measured = client_ttft_ms(r);
      point.details["engine_ttft_ms"] = engine_ttft_ms(r);
      if (r.engine && r.engine->prefill_tok_s) point.details["prefill_tok_s"] = *r.engine->prefill_tok_s;
      m.points.push_back(std::move(point));
    }
    return m;
  }
};

}  // namespace

std::unique_ptr<Procedure> make_peak_memory(LabContext& lab, const nlohmann::json& p) {
  return std::make_unique<PeakMemory>(lab, p);
}
std::unique_ptr<Procedure> make_ttft(LabContext& lab, const nlohmann::json& p) {
  return std::make_unique<Ttft>(lab, p);
}

}  // namespace nanoserve::lab
