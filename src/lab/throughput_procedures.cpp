// decode_rate: one stream's decode rate. streams: N streams at once on the batch engine and on
// the sequential one, aggregate and per-stream rates.
#include <algorithm>

#include "lab/procedure_helpers.h"
#include "lab/procedures.h"

namespace nanoserve::lab {
namespace {

class DecodeRate final : public Procedure {
 public:
  DecodeRate(LabContext& lab, const nlohmann::json& p)
      : max_tokens_(std::min<int64_t>(parameter_int(p, "max_tokens"), lab.context_limit() / 2)),
        prompt_(std::min<int64_t>(parameter_int(p, "prompt_tokens"), prompt_limit(lab, max_tokens_))),
        requests_(parameter_int(p, "requests")) {}

  std::map<std::string, double> known() const override {
    return {{"prompt_tokens", prompt_}, {"max_tokens", max_tokens_}, {"requests", requests_}};
  }

  Measurement measure(LabContext& lab) override {
    ServerConfig config = lab.probe_config();  // the session's quantities' server, where the request fits
    if (prompt_ + max_tokens_ + kContextMargin > config.context) config.context = server_context(lab, prompt_, max_tokens_);
    LabServer& server = lab.servers().get(config);
    std::vector<double> rates;
    nlohmann::ordered_json each = nlohmann::ordered_json::array();
    for (int i = -1; i < requests_; ++i) {  // -1: a warm-up
      const bench::StreamRecord r = server.complete(lab_request(lab, prompt_, max_tokens_, 2000 + i));
      if (i < 0) continue;
      rates.push_back(decode_tok_s(r));
      each.push_back(rates.back());
    }
    Point point{.label = "one stream", .measured = median(rates)};
    point.details["decode_tok_s_each"] = each;
    point.details["weights_read_gb_s"] =
        point.measured * static_cast<double>(lab.facts().model.weight_bytes_per_token) / 1e9;
    return {.points = {point}};
  }

 private:
  int64_t max_tokens_, prompt_;
  int requests_;
};

class Streams final : public Procedure {
 public:
  Streams(LabContext& lab, const nlohmann::json& p)
      : streams_(parameter_int(p, "streams")),
        max_tokens_(std::min<int64_t>(parameter_int(p, "max_tokens"), lab.context_limit() / 2)),
        prompt_(std::min<int64_t>(parameter_int(p, "prompt_tokens"), prompt_limit(lab, max_tokens_))) {}

  std::map<std::string, double> known() const override {
    return {{"streams", streams_}, {"prompt_tokens", prompt_}, {"max_tokens", max_tokens_}};
  }

  Measurement measure(LabContext& lab) override {
    Measurement m;
    const int64_t context = server_context(lab, prompt_, max_tokens_);
    if (lab.servers().external()) {
      m.points.push_back(round_on(lab, lab.servers().get({}), "the server at --url", streams_));
      m.notes.push_back("with --url only that server is measured: start it with --engine sequential and run "
                        "again to compare; its point assumes it batches the streams");
      return m;
    }
    m.points.push_back(round_on(lab, lab.servers().get({.context = context, .parallel = streams_}), "batch", streams_));
    m.points.push_back(round_on(lab, lab.servers().get({.engine = "sequential", .context = context}), "sequential", 1));
    m.details["batching_gain"] = m.points[0].measured / m.points[1].measured;
    return m;
  }

 private:
  // A warm-up request, then `streams_` requests at once. rows_per_step: the streams one weight
  // read serves.
  Point round_on(LabContext& lab, LabServer& server, const std::string& label, int rows_per_step) {
    server.complete(lab_request(lab, prompt_, 4, 3000));
    std::vector<bench::BenchRequest> requests;
    for (int s = 0; s < streams_; ++s) requests.push_back(lab_request(lab, prompt_, max_tokens_, 3001 + s));
    const Round round = server.at_once(requests);
    std::vector<double> per_stream, while_running;
    for (const bench::StreamRecord& r : round.records) {
      const double done_s =
          std::chrono::duration<double>(r.sent + std::chrono::microseconds(r.end_us) - round.released).count();
      per_stream.push_back(static_cast<double>(r.completion_tokens.value_or(max_tokens_)) / done_s);
      while_running.push_back(decode_tok_s(r));
    }
    Point point{.label = label, .variables = {{"rows_per_step", rows_per_step}}, .measured = round.aggregate_tok_s()};
    point.details["aggregate_tok_s"] = point.measured;
    point.details["per_stream_tok_s"] = median(per_stream);  // tokens / (release -> its end): what a user sees
    point.details["per_stream_decode_tok_s"] = median(while_running);  // while it was generating
    return point;
  }

  int streams_;
  int64_t max_tokens_, prompt_;
};

}  // namespace

std::unique_ptr<Procedure> make_decode_rate(LabContext& lab, const nlohmann::json& p) {
  return std::make_unique<DecodeRate>(lab, p);
}
std::unique_ptr<Procedure> make_streams(LabContext& lab, const nlohmann::json& p) {
  return std::make_unique<Streams>(lab, p);
}

}  // namespace nanoserve::lab
