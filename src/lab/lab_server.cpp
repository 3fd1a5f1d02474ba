#include "lab/lab_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <latch>
#include <stdexcept>
#include <thread>

#include "bench/endpoint.h"
#include "bench/interrupt.h"

namespace nanoserve::lab {
namespace {

constexpr std::chrono::seconds kReadyTimeout{300};  // a large model loads for a while
const bench::ClientTimeouts kTimeouts{.connect_s = 10, .read_s = 1800};  // a 16k prefill on a slow machine

std::vector<std::string> serve_args(const ServerSettings& s, const ServerConfig& c) {
  std::vector<std::string> args = {"--model",   s.model_path,      "--threads", std::to_string(s.threads),
                                   "--engine",  c.engine,          "--ctx",     std::to_string(c.context),
                                   "--parallel", std::to_string(c.parallel), "--kv-type", s.kv_type,
                                   "--max-queue", std::to_string(c.parallel + 8)};
  // The sequential engine has neither; the batch engine's defaults (lookup, on) would blur
  // what an experiment measures unless it asks for them.
  if (c.engine == "batch") args.insert(args.end(), {"--spec", c.spec, "--prefix-cache", c.prefix_cache ? "on" : "off"});
  return args;
}

int64_t tokens_of(const bench::StreamRecord& r) {
  return r.completion_tokens.value_or(static_cast<int64_t>(r.chunk_us.size()));
}

}  // namespace

std::string ServerConfig::label() const {
  if (engine != "batch") return fmt::format("{}, ctx {}", engine, context);
  return fmt::format("{}, ctx {}, parallel {}, spec {}, prefix cache {}", engine, context, parallel, spec,
                     prefix_cache ? "on" : "off");
}

double Round::aggregate_tok_s() const {
  int64_t tokens = 0;
  bench::Clock::time_point last = released;
  for (const bench::StreamRecord& r : records) {
    tokens += tokens_of(r);
    last = std::max(last, r.sent + std::chrono::microseconds(r.end_us));
  }
  const double seconds = std::chrono::duration<double>(last - released).count();
  return seconds > 0 ? static_cast<double>(tokens) / seconds : 0;
}

LabServer::LabServer(const ServerSettings& settings, const ServerConfig& config) {
  if (settings.url.empty()) {
    child_ = std::make_unique<bench::ChildServer>(serve_args(settings, config), kReadyTimeout);
    endpoint_ = child_->endpoint();
  } else {
    endpoint_ = bench::parse_endpoint(settings.url);
    endpoint_.api_key = settings.api_key;
  }
  bench::StreamClient probe(endpoint_, {.connect_s = 10, .read_s = 30});
  std::string body;
  const int status = probe.get("/v1/models", &body);
  if (status == 0) throw std::runtime_error("no answer from " + endpoint_.origin() + endpoint_.prefix + "/v1/models");
  const nlohmann::json models = nlohmann::json::parse(body, nullptr, false);
  // A server without /v1/models is still measured; its requests carry no "model".
  if (status == 200 && models.is_object() && models.contains("data") && models["data"].is_array() &&
      !models["data"].empty() && models["data"][0].contains("id") && models["data"][0]["id"].is_string())
    model_name_ = models["data"][0]["id"];
}

void LabServer::check(const bench::StreamRecord& record) {
  if (record.ok()) return;
  if (bench::interrupted()) throw std::runtime_error("interrupted");
  if (child_) {
    // A killed server closes its sockets a moment before it can be reaped.
    for (int i = 0; i < 50 && child_->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!child_->running()) throw std::runtime_error("the server died; its log ends with:\n" + child_->log_tail());
  }
  throw std::runtime_error("request failed: " + record.error);
}

bench::StreamRecord LabServer::complete(const bench::BenchRequest& request) {
  bench::StreamClient client(endpoint_, kTimeouts);
  client.get("/health");  // the connection is opened before the clock starts
  bench::StreamRecord record =
      client.stream("/v1/completions", bench::completion_body(request, model_name_), &bench::interrupt_flag());
  check(record);
  return record;
}

Round LabServer::at_once(const std::vector<bench::BenchRequest>& requests) {
  const size_t n = requests.size();
  Round round;
  round.records.resize(n);
  std::latch connected(static_cast<std::ptrdiff_t>(n)), go(1);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      bench::StreamClient client(endpoint_, kTimeouts);
      client.get("/health");
      connected.count_down();
      go.wait();
      round.records[i] =
          client.stream("/v1/completions", bench::completion_body(requests[i], model_name_), &bench::interrupt_flag());
    });
  connected.wait();
  round.released = bench::Clock::now();
  go.count_down();
  for (std::thread& t : threads) t.join();
  for (const bench::StreamRecord& r : round.records) check(r);
  return round;
}

double LabServer::health_round_trip_ms(int n) {
  bench::StreamClient client(endpoint_, kTimeouts);
  client.get("/health");  // opens the connection
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    const auto start = bench::Clock::now();
    if (client.get("/health") != 200) throw std::runtime_error("GET /health did not answer 200");
    ms.push_back(std::chrono::duration<double, std::milli>(bench::Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

LabServer& Servers::get(const ServerConfig& config) {
  auto& slot = started_[external() ? ServerConfig{} : config];
  if (!slot) slot = fresh(config);
  return *slot;
}

std::unique_ptr<LabServer> Servers::fresh(const ServerConfig& config) {
  if (external())
    log_ << "  (measuring " << settings_.url << " as it is configured; the lab would have started: " << config.label()
         << ")\n";
  else
    log_ << "  starting nanoserve serve: " << config.label() << "\n";
  return std::make_unique<LabServer>(settings_, config);
}

}  // namespace nanoserve::lab
