// What every phase of the suite shares: the options, the machine, the progress bar, the
// models (inspected once), and the helpers that start a target, measure one request and
// turn a failure into an error row instead of the end of the suite.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/bench_model.h"
#include "bench/child_server.h"
#include "bench/host_info.h"
#include "bench/progress.h"
#include "bench/request_body.h"
#include "bench/result_row.h"
#include "bench/stream_client.h"
#include "bench/suite_options.h"

namespace nanoserve::bench {

class SuiteEnv {
 public:
  SuiteEnv(SuiteOptions options, HostInfo host, std::string run_id, Progress& progress);

  const SuiteOptions& options() const { return options_; }
  Progress& progress() { return progress_; }
  int threads() const { return threads_; }
  bool external() const { return !options_.url.empty(); }
  std::chrono::seconds request_timeout() const { return std::chrono::seconds(options_.request_timeout_s); }

  // --model, or the synthesized main model; inspected once.
  const BenchModel& main_model();
  // A synthesized model (made and cached on first use).
  const BenchModel& synth_model(const ModelSpec& spec);
  // A GGUF file of the user's (or of ../shared); inspected once.
  const BenchModel& file_model(const std::string& path) { return inspected(path, ""); }

  RowContext row_context(const std::string& phase, const std::string& engine, const std::string& target,
                         const BenchModel* model) const;

 private:
  const BenchModel& inspected(const std::string& path, const std::string& preset);

  SuiteOptions options_;
  HostInfo host_;
  std::string run_id_;
  Progress& progress_;
  int threads_;
  std::map<std::string, std::unique_ptr<BenchModel>> models_;  // by path
};

// The server a part measures: the one at --url, or a `nanoserve serve` started with
// `serve_args` (and killed when this goes).
class Target {
 public:
  Target(SuiteEnv& env, const std::vector<std::string>& serve_args);
  Endpoint endpoint() const { return endpoint_; }
  // The first id /v1/models lists (sent as "model"; some servers require it).
  const std::string& model_name() const { return model_name_; }
  // Throws RequestFailed with the server's log tail when the server has died (waiting up to
  // a second for a dying one to exit). Thread-safe.
  void check_alive();
  StreamClient client() const { return StreamClient(endpoint_, timeouts_); }

 private:
  std::unique_ptr<ChildServer> child_;
  std::mutex child_mutex_;  // concurrent streams may all find it dead at once
  Endpoint endpoint_;
  ClientTimeouts timeouts_;
  std::string model_name_;
};

struct RequestFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One request through HTTP; throws RequestFailed (with the server's log when it died).
StreamRecord measure_served(Target& target, StreamClient& client, const BenchRequest& request);
// The same on a connection of its own, opened before the clock starts: some servers close a
// kept-alive connection after a few requests (llama-server's HTTP library after 5).
StreamRecord measure_fresh(Target& target, const BenchRequest& request);

// Planned work of one request, in the progress bar's units (about one decode step each).
double request_units(int prompt_tokens, int max_tokens);
// Planned work of starting a server.
inline constexpr double kServerStartUnits = 10;

// Runs one part of a phase (one server configuration, say). Throwing ends the part only:
// an error row and a message say why, and the suite goes on. Returns whether it completed.
bool run_part(SuiteEnv& env, RowWriter& rows, const RowContext& context, const nlohmann::ordered_json& extra,
              const std::string& label, const std::function<void()>& body);

// A seed for a prompt, from the numbers that name it (phase point, repeat, ...).
uint64_t prompt_seed(std::initializer_list<int64_t> parts);

}  // namespace nanoserve::bench
