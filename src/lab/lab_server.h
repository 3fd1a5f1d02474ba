// The servers an experiment measures: `nanoserve serve` processes the lab starts (one per
// configuration, kept for the session; a fresh one where a process's history matters, as its
// peak memory), or the one server at --url, which then stands in for every configuration.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "bench/child_server.h"
#include "bench/request_body.h"
#include "bench/stream_client.h"

namespace nanoserve::lab {

struct ServerConfig {
  std::string engine = "batch";  // batch or sequential
  int64_t context = 512;          // --ctx
  int parallel = 1;
  std::string spec = "off";       // batch only: off or lookup
  bool prefix_cache = false;      // batch only

  std::string label() const;  // "batch, ctx 512, spec off, prefix cache off"
  auto operator<=>(const ServerConfig&) const = default;
};

struct ServerSettings {  // what every server the lab starts shares
  std::string model_path;
  int threads = 1;
  std::string kv_type = "f16";
  std::string url;      // the server to measure instead of starting any
  std::string api_key;  // sent to it
};

// Streams sent at once: each stream's record, and the instant they were released.
struct Round {
  std::vector<bench::StreamRecord> records;
  bench::Clock::time_point released;
  // All streams' tokens / (release -> the last stream's end).
  double aggregate_tok_s() const;
};

class LabServer {
 public:
  // Starts `nanoserve serve` for `config` (settings.url empty) or connects to settings.url.
  LabServer(const ServerSettings& settings, const ServerConfig& config);

  bool external() const { return child_ == nullptr; }
  // One streamed /v1/completions request on a connection of its own. Throws std::runtime_error
  // when it fails (with the server's log when the server died).
  bench::StreamRecord complete(const bench::BenchRequest& request);
  // One request per stream, all released at once.
  Round at_once(const std::vector<bench::BenchRequest>& requests);
  // The median of `n` GET /health round trips on one kept-alive connection, in ms.
  double health_round_trip_ms(int n);

 private:
  void check(const bench::StreamRecord& record);

  std::unique_ptr<bench::ChildServer> child_;
  bench::Endpoint endpoint_;
  std::string model_name_;  // the "model" of requests (the first /v1/models lists)
};

class Servers {
 public:
  Servers(ServerSettings settings, std::ostream& log) : settings_(std::move(settings)), log_(log) {}

  bool external() const { return !settings_.url.empty(); }
  const std::string& url() const { return settings_.url; }
  // The server for `config`, started on first use and kept (with --url, that server).
  LabServer& get(const ServerConfig& config);
  // A server process of its own (with --url, a connection to that server).
  std::unique_ptr<LabServer> fresh(const ServerConfig& config);

 private:
  ServerSettings settings_;
  std::ostream& log_;
  std::map<ServerConfig, std::unique_ptr<LabServer>> started_;
};

}  // namespace nanoserve::lab
