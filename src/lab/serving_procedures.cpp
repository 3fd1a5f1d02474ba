// server_overhead: what the server adds to its engine's clock. prefix_cache: a prompt cold,
// resent exactly, and resent with new tokens after it.
#include <fmt/format.h>

#include <algorithm>

#include "bench/timing.h"
#include "lab/procedure_helpers.h"
#include "lab/procedures.h"
#include "model/kv_cache.h"

namespace nanoserve::lab {
namespace {

constexpr int kOverheadWarmups = 2;

class ServerOverhead final : public Procedure {
 public:
  ServerOverhead(LabContext& lab, const nlohmann::json& p)
      : requests_(parameter_int(p, "requests")),
        max_tokens_(std::min<int64_t>(parameter_int(p, "max_tokens"), lab.context_limit() / 4)),
        prompt_(std::min<int64_t>(parameter_int(p, "prompt_tokens"), prompt_limit(lab, max_tokens_))) {}

  std::map<std::string, double> known() const override {
    return {{"requests", requests_}, {"prompt_tokens", prompt_}, {"max_tokens", max_tokens_}};
  }

  Measurement measure(LabContext& lab) override {
    // The server health_round_trip_ms is measured on: the same process, so the two compare.
    LabServer& server = lab.servers().get(lab.probe_config());
    std::vector<double> ttft, total, engine_ttft, client_ttft;
    for (int i = -kOverheadWarmups; i < requests_; ++i) {
      const bench::StreamRecord r = server.complete(lab_request(lab, prompt_, max_tokens_, 6000 + i));
      engine_clock(r, "the server's overhead");
      if (i < 0) continue;
      const bench::Overhead o = bench::overhead(r);
      if (o.ttft_ms) ttft.push_back(*o.ttft_ms);
      if (o.total_ms) total.push_back(*o.total_ms);
      engine_ttft.push_back(engine_ttft_ms(r));
      client_ttft.push_back(client_ttft_ms(r));
    }
    const auto spread = bench::spread(ttft);
    if (!spread) throw std::runtime_error("no request had both clocks' TTFT");
    Point point{.label = "TTFT overhead", .measured = spread->median};
    point.details["ttft_overhead_min_ms"] = spread->min;
    point.details["ttft_overhead_max_ms"] = spread->max;
    point.details["last_token_overhead_ms"] = median(total);
    point.details["client_ttft_ms"] = median(client_ttft);
    point.details["engine_ttft_ms"] = median(engine_ttft);
    return {.points = {point}};
  }

 private:
  int requests_;
  int64_t max_tokens_, prompt_;
};

class PrefixCache final : public Procedure {
 public:
  PrefixCache(LabContext& lab, const nlohmann::json& p)
      : max_tokens_(parameter_int(p, "max_tokens")), extra_(parameter_int(p, "extra_tokens")) {
    const int64_t limit = prompt_limit(lab, max_tokens_ + extra_);
    FittedLengths fitted = fit_lengths({parameter_int(p, "tokens")}, limit, limit_reason(lab));
    // Whole blocks of the cache: a partial last block is computed again, and an exact resend
    // would then not show what a full hit costs.
    const int64_t block = model::KvCache::kDefaultBlockSize;
    tokens_ = std::max(block, fitted.lengths.front() / block * block);
    if (!fitted.note.empty())
      notes_.push_back(fitted.note + fmt::format(", {} in whole blocks of {} positions", tokens_, block));
  }

  std::map<std::string, double> known() const override { return {{"tokens", tokens_}, {"extra_tokens", extra_}}; }

  Measurement measure(LabContext& lab) override {
    LabServer& server =
        lab.servers().get({.context = server_context(lab, tokens_ + extra_, max_tokens_), .prefix_cache = true});
    server.complete(lab_request(lab, 16, max_tokens_, 7000));  // warm-up, a prompt of its own
    bench::BenchRequest prompt = lab_request(lab, tokens_, max_tokens_, 7001);
    bench::BenchRequest follow_up = prompt;
    const bench::BenchRequest tail = lab_request(lab, extra_, max_tokens_, 7002);
    follow_up.prompt.insert(follow_up.prompt.end(), tail.prompt.begin(), tail.prompt.end());
    // In this order: the resend finds the cold request's cache; the follow-up finds the prompt's.
    Point cold = measure_one(server, prompt, "cold", tokens_);
    Point resend = measure_one(server, prompt, "exact resend", 0);
    Point extended = measure_one(server, follow_up, fmt::format("resend + {} new tokens", extra_), extra_);
    Measurement m{.points = {resend, extended, cold}};
    if (lab.servers().external())
      m.notes.push_back("with --url the server's own prefix cache setting holds (nanoserve: on by default)");
    return m;
  }

 private:
  static Point measure_one(LabServer& server, const bench::BenchRequest& request, const std::string& label,
                           int64_t uncached) {
    const bench::StreamRecord r = server.complete(request);
    Point point{.label = label, .variables = {{"uncached_tokens", static_cast<double>(uncached)}},
                .measured = client_ttft_ms(r)};
    point.details["prompt_tokens"] = request.prompt.size();
    if (r.cached_tokens) point.details["cached_tokens"] = *r.cached_tokens;
    point.details["engine_ttft_ms"] = engine_ttft_ms(r);
    return point;
  }

  int64_t max_tokens_, extra_, tokens_ = 0;
};

}  // namespace

std::unique_ptr<Procedure> make_server_overhead(LabContext& lab, const nlohmann::json& p) {
  return std::make_unique<ServerOverhead>(lab, p);
}
std::unique_ptr<Procedure> make_prefix_cache(LabContext& lab, const nlohmann::json& p) {
  return std::make_unique<PrefixCache>(lab, p);
}

}  // namespace nanoserve::lab
