#include "bench/client_session.h"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "bench/bench_model.h"
#include "bench/host_info.h"
#include "bench/interrupt.h"
#include "bench/request_body.h"
#include "bench/result_row.h"
#include "bench/stream_client.h"
#include "bench/timing.h"

namespace nanoserve::bench {
namespace {

void check(const ClientOptions& o) {
  if (o.max_tokens < 1) throw std::invalid_argument("--max-tokens must be at least 1");
  if (o.requests < 1) throw std::invalid_argument("--requests must be at least 1");
  if (o.warmup < 0) throw std::invalid_argument("--warmup must not be negative");
  if (o.timeout_s < 1) throw std::invalid_argument("--timeout must be at least 1 second");
  if (o.prompt.empty() && o.model_path.empty())
    throw std::invalid_argument("give --prompt TEXT, or --model FILE.gguf to send --prompt-tokens random token ids");
  if (o.prompt.empty() && o.prompt_tokens < 1) throw std::invalid_argument("--prompt-tokens must be at least 1");
  if (o.chat && o.prompt.empty()) throw std::invalid_argument("--chat needs a text --prompt");
}

BenchRequest bench_request_for(const ClientOptions& o, const BenchModel* model, int i) {
  BenchRequest request;
  request.max_tokens = o.max_tokens;
  if (model) {
    request = bench_request(*model, o.prompt.empty() ? o.prompt_tokens : 0, o.max_tokens,
                            o.seed + static_cast<uint64_t>(i));
    if (!o.ban_silent) request.banned.clear();
  }
  return request;
}

// The request body and the route.
std::pair<std::string, nlohmann::json> body_for(const ClientOptions& o, const BenchRequest& request,
                                                const std::string& model_name) {
  nlohmann::json body = completion_body(request, model_name);
  if (o.prompt.empty()) return {"/v1/completions", body};
  body.erase("prompt");
  if (!o.chat) {
    body["prompt"] = o.prompt;
    return {"/v1/completions", body};
  }
  body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", o.prompt}}});
  return {"/v1/chat/completions", body};
}

std::string ms_text(std::optional<double> ms) { return ms ? fmt::format("{:.1f} ms", *ms) : "-"; }

void print_summary(const std::vector<StreamRecord>& records) {
  std::vector<double> ttft, decode, p50, p99, over_ttft, over_total;
  for (const StreamRecord& r : records) {
    const ClientFigures f = client_figures(r);
    const Overhead o = overhead(r);
    if (f.ttft_ms) ttft.push_back(*f.ttft_ms);
    if (f.decode_tok_s) decode.push_back(*f.decode_tok_s);
    if (f.gap_p50_ms) p50.push_back(*f.gap_p50_ms);
    if (f.gap_p99_ms) p99.push_back(*f.gap_p99_ms);
    if (o.ttft_ms) over_ttft.push_back(*o.ttft_ms);
    if (o.total_ms) over_total.push_back(*o.total_ms);
  }
  auto line = [](const char* name, const std::vector<double>& v, const char* unit) {
    if (const auto s = spread(v))
      fmt::print("  {:<28} median {:.3f} {}  (min {:.3f}, max {:.3f}, {} requests)\n", name, s->median, unit, s->min,
                 s->max, s->n);
  };
  fmt::print("summary\n");
  line("TTFT", ttft, "ms");
  line("decode", decode, "tok/s");
  line("inter-token gap p50", p50, "ms");
  line("inter-token gap p99", p99, "ms");
  line("overhead: TTFT - engine", over_ttft, "ms");
  line("overhead: last chunk - engine", over_total, "ms");
}

}  // namespace

int run_client(const ClientOptions& o) {
  check(o);
  install_interrupt_handlers();
  Endpoint endpoint = parse_endpoint(o.url);
  endpoint.api_key = o.api_key;
  std::unique_ptr<BenchModel> model;
  if (!o.model_path.empty()) model = std::make_unique<BenchModel>(inspect_model(o.model_path));
  StreamClient client(endpoint, {.connect_s = 10, .read_s = o.timeout_s});
  std::string model_name = o.model_name;
  if (model_name.empty()) {
    std::string body;
    if (client.get("/v1/models", &body) == 200) {
      const auto list = nlohmann::json::parse(body, nullptr, false);
      if (!list.is_discarded() && list.contains("data") && list["data"].is_array() && !list["data"].empty())
        model_name = list["data"][0].value("id", "");
    }
  }
  std::unique_ptr<RowWriter> rows;
  HostInfo host;
  if (!o.out_path.empty()) {
    rows = std::make_unique<RowWriter>(o.out_path);
    host = probe_host();
  }
  const RowContext rc{.host = &host, .run_id = utc_timestamp(), .phase = "client", .engine = "external",
                      .target = "served", .model = model.get(), .threads = 0};

  std::vector<StreamRecord> measured;
  for (int i = 0; i < o.warmup + o.requests && !interrupted(); ++i) {
    const bool warmup = i < o.warmup;
    const BenchRequest request = bench_request_for(o, model.get(), i);
    auto [route, body] = body_for(o, request, model_name);
    const StreamRecord r = client.stream(route, body, &interrupt_flag());
    if (!r.ok()) {
      fmt::print(stderr, "nanoserve bench client: request {} failed: {}\n", i, r.error);
      return 1;
    }
    const ClientFigures f = client_figures(r);
    const Overhead over = overhead(r);
    fmt::print("{:<9} TTFT {:>10}  {} chunks  decode {}  gap p50 {} p99 {}  overhead TTFT {}  finish {}\n",
               warmup ? "warm-up" : fmt::format("request {}", i - o.warmup + 1), ms_text(f.ttft_ms), r.chunk_us.size(),
               f.decode_tok_s ? fmt::format("{:.1f} tok/s", *f.decode_tok_s) : "-", ms_text(f.gap_p50_ms),
               ms_text(f.gap_p99_ms), ms_text(over.ttft_ms), r.finish_reason.empty() ? "-" : r.finish_reason);
    if (warmup) continue;
    measured.push_back(r);
    if (rows) rows->write(request_row(rc, {{"request_index", i - o.warmup}}, request, r));
  }
  print_summary(measured);
  return interrupted() ? 130 : 0;
}

}  // namespace nanoserve::bench
