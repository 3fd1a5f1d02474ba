#include "lab/lab_context.h"

#include <algorithm>
#include <stdexcept>

#include "bench/timing.h"
#include "lab/procedure_helpers.h"
#include "lab/quantities.h"
#include "machine/bandwidth.h"

namespace nanoserve::lab {
namespace {

constexpr int kShortPrompt = 256, kProbeTokens = 32, kProbeRequests = 3;
constexpr size_t kBandwidthBytes = size_t{512} << 20;  // far beyond any cache
constexpr int kHealthTrips = 21;

}  // namespace

LabContext::LabContext(ModelFacts facts, const ServerSettings& settings, int64_t max_context, std::ostream& log)
    : facts_(std::move(facts)),
      threads_(settings.threads),
      context_limit_(max_context > 0 ? std::min(max_context, facts_.context_length) : facts_.context_length),
      log_(log),
      servers_(settings, log) {}

double LabContext::quantity(const std::string& name) {
  const ModelFacts& f = facts_;
  if (name == "weight_bytes_per_token") return static_cast<double>(f.model.weight_bytes_per_token);
  if (name == "model_bytes") return static_cast<double>(f.model.file_bytes);
  if (name == "n_layer") return static_cast<double>(f.n_layer);
  if (name == "kv_layers") return static_cast<double>(f.kv_layers);
  if (name == "n_head_kv") return static_cast<double>(f.n_head_kv);
  if (name == "head_dim") return static_cast<double>(f.head_dim);
  if (name == "kv_value_bytes") return f.kv_value_bytes;
  if (name == "context_length") return static_cast<double>(f.context_length);
  if (name == "threads") return threads_;
  if (const auto found = measured_.find(name); found != measured_.end()) return found->second;

  if (name == "bandwidth_gb_s") {
    log_ << "  measuring this machine's memory read bandwidth (" << threads_ << " threads)\n";
    measured_[name] = machine::read_bandwidth(threads_, kBandwidthBytes) / 1e9;
  } else if (name == "prefill_tok_s_short" || name == "decode_tok_s_single" || name == "short_prompt_tokens") {
    probe_server();
  } else if (name == "health_round_trip_ms") {
    measured_[name] = servers_.get(probe_config()).health_round_trip_ms(kHealthTrips);
  } else {
    const QuantityInfo* info = find_quantity(name);
    throw std::invalid_argument(info ? "'" + name + "' is the measurement's own, not the session's"
                                     : "unknown quantity '" + name + "'");
  }
  return measured_.at(name);
}

ServerConfig LabContext::probe_config() const { return {.context = std::min<int64_t>(context_limit_, 512)}; }

// A short prompt's prefill rate and one stream's decode rate: the median of a few requests
// after a warm-up.
void LabContext::probe_server() {
  const int prompt = static_cast<int>(std::min<int64_t>(kShortPrompt, context_limit_ / 2));
  const int generated = static_cast<int>(std::min<int64_t>(kProbeTokens, context_limit_ / 4));
  LabServer& server = servers_.get(probe_config());
  log_ << "  measuring the prefill rate of a " << prompt << "-token prompt and one stream's decode rate\n";
  std::vector<double> prefill, decode;
  for (int i = -1; i < kProbeRequests; ++i) {  // -1: the warm-up
    const bench::StreamRecord r = server.complete(lab_request(*this, prompt, generated, 1000 + i));
    if (i < 0) continue;
    const bench::ClientFigures client = bench::client_figures(r);
    // Another server than nanoserve reports no engine clock: the client's figures stand in.
    const double client_prefill = client.ttft_ms ? prompt / (*client.ttft_ms / 1000) : 0;
    prefill.push_back(r.engine && r.engine->prefill_tok_s ? *r.engine->prefill_tok_s : client_prefill);
    decode.push_back(r.engine && r.engine->decode_tok_s ? *r.engine->decode_tok_s : client.decode_tok_s.value_or(0));
  }
  measured_["prefill_tok_s_short"] = median(prefill);
  measured_["decode_tok_s_single"] = median(decode);
  measured_["short_prompt_tokens"] = prompt;
}

}  // namespace nanoserve::lab
