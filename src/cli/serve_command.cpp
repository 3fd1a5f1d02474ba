// `nanoserve serve`: the OpenAI-compatible HTTP API. Every flag also reads a NANOSERVE_*
// environment variable. It binds first and says where ("listening on http://host:port"),
// so /health answers 503 "loading" while the model loads, then 200.
#include <fmt/format.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "anthropic/anthropic_api.h"
#include "cli/commands.h"
#include "cli/kv_type_option.h"
#include "cli/model_argument.h"
#include "engine/engine_factory.h"
#include "hub/model_cache.h"
#include "ollama/ollama_api.h"
#include "responses/responses_api.h"
#include "server/http_server.h"
#include "server/server_drain.h"
#include "server/served_model.h"
#include "synth/synth.h"

namespace nanoserve::cli {
namespace {

namespace fs = std::filesystem;

struct ServeArgs {
  server::ServerOptions server;
  engine::EngineOptions engine;
  double request_timeout_s = 30;  // set into server.connections
  double idle_timeout_s = 60;
  double drain_timeout_s = 30;  // after SIGTERM (server_drain.h)
  std::vector<std::string> logit_bias;  // "ID+BIAS" or "ID-BIAS", as llama-server takes them
};

// --logit-bias values into token -> bias; throws std::invalid_argument naming the one at fault.
std::map<int32_t, float> parse_serve_logit_bias(const std::vector<std::string>& values) {
  std::map<int32_t, float> out;
  for (const std::string& v : values) {
    const size_t sign = v.find_first_of("+-", 1);
    int32_t token = -1;
    float bias = 0;
    const bool ok = sign != std::string::npos &&
                    std::from_chars(v.data(), v.data() + sign, token).ptr == v.data() + sign && token >= 0 &&
                    std::from_chars(v.data() + sign + (v[sign] == '+'), v.data() + v.size(), bias).ptr ==
                        v.data() + v.size() &&
                    bias >= -100 && bias <= 100;
    if (!ok)
      throw std::invalid_argument(fmt::format("--logit-bias {}: expected TOKEN+BIAS or TOKEN-BIAS (a token id, a "
                                              "bias from -100 to 100), e.g. 151645+5", v));
    out[token] = bias;
  }
  return out;
}

std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// Each connection is a descriptor: the soft limit goes up to the hard one (often 1024 of
// 500,000), and the connection cap stays below it, with room for what else the process opens
// (model files, the engine's) and for the connections the HTTP layer lets past its caps.
size_t connections_within_descriptors(size_t wanted) {
  constexpr rlim_t kOtherDescriptors = 256;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return wanted;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= wanted + kOtherDescriptors) return wanted;
  const size_t fitting = limit.rlim_cur > 2 * kOtherDescriptors ? limit.rlim_cur - kOtherDescriptors : limit.rlim_cur / 2;
  fmt::print(stderr, "nanoserve: --max-connections {} lowered to {}: this process may open {} descriptors\n", wanted,
             fitting, limit.rlim_cur);
  return fitting;
}

// Without --model and without the default model: a small qwen3 with random weights and a
// byte-level vocabulary, written once into the cache (a few seconds), so the API can be tried.
std::string demo_model() {
  const fs::path path = hub::nanoserve_cache_dir() / "nanoserve-demo-qwen3-Q8_0.gguf";
  fmt::print(stderr,
             "nanoserve: serving {}, a small qwen3 with RANDOM weights. It exercises the API; its replies are "
             "noise. Serve a real model with --model FILE.gguf or --model owner/repo (a Hugging Face GGUF repo).\n",
             path.string());
  if (fs::exists(path)) return path.string();
  fs::create_directories(path.parent_path());
  synth::SynthOptions o;
  o.config = {.arch = "qwen3", .n_layer = 8, .n_embd = 512, .n_ff = 1536, .n_head = 8, .n_head_kv = 4,
              .head_dim = 64, .n_vocab = 259, .n_ctx_train = 4096, .rope_base = 1000000.0f, .rms_eps = 1e-6f,
              .tied_output = true, .rope_scaling = std::nullopt};
  o.name = "nanoserve-demo";
  o.type = "Q8_0";
  // Written beside its final name, then renamed: a concurrent start never reads half a file.
  o.out_path = path.string() + fmt::format(".{}.tmp", getpid());
  const auto start = std::chrono::steady_clock::now();
  synth::synthesize(o);
  fs::rename(o.out_path, path);
  fmt::print(stderr, "nanoserve: wrote the demo model in {:.1f} s\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return path.string();
}

// Without --model: the default model, from the cache or the Hub, else the demo model with why.
std::string default_model() {
  const hub::ModelName name{.repo = "Qwen/Qwen2.5-0.5B-Instruct-GGUF", .quant = "Q8_0", .file = ""};
  try {
    hub::HubConfig hub = hub::HubConfig::from_environment();
    hub.connect_timeout = std::chrono::seconds(3);  // offline, the demo model comes within seconds
    fmt::print(stderr, "nanoserve: no --model given: serving {}\n", name.text());
    return model_file(name, hub);
  } catch (const std::exception& e) {
    fmt::print(stderr,
               "nanoserve: the default model {} is not in the cache and could not be pulled: {}\n"
               "nanoserve: pull it when the Hub can be reached (nanoserve pull {}), then serve again\n",
               name.text(), e.what(), name.repo);
    return demo_model();
  }
}

void serve(ServeArgs a) {
  engine::check_engine_options(a.engine);  // before binding: bad flags never open a port
  // A fixed threshold: glibc raises its own after each large block freed, and then keeps a
  // request's large buffers (a 1M-character prompt, its tokens) in the heap after it ends.
  // From 256 KiB they are mapped for themselves and go back to the system when freed.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  std::map<int32_t, float> logit_bias = parse_serve_logit_bias(a.logit_bias);
  // Generating and queued requests each hold a worker thread; a few more keep /v1/models
  // and /metrics answering, and let a full queue be told 429. (Connections that have not
  // sent a whole request hold none; /health is answered without one.)
  a.server.http_threads = static_cast<size_t>(engine::parallel_of(a.engine) + a.engine.queue_limit) + 4;
  a.server.connections.request_timeout = milliseconds_of(a.request_timeout_s);
  a.server.connections.idle_timeout = milliseconds_of(a.idle_timeout_s);
  a.server.connections.max_connections = connections_within_descriptors(a.server.connections.max_connections);

  // SIGINT/SIGTERM are taken by sigwait below, so every thread started from here blocks
  // them; a client that leaves must not kill the server with SIGPIPE.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  // OpenAI's API is the server's own; the others are translations onto the same path.
  server::HttpServer http(a.server, {anthropic::anthropic_api(), responses::responses_api(), ollama::ollama_api()});
  const int port = http.start();
  fmt::print(stderr, "nanoserve: listening on http://{}:{}\n", a.server.host, port);
  // A pull can take minutes: until the model is found, Ctrl-C stops this thread, and the process
  // (a partial download is kept for the next pull). The engine's threads start blocked again.
  pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
  a.engine.model_path = a.engine.model_path.empty() ? default_model() : model_file(a.engine.model_path);
  if (!a.engine.draft_model.empty()) a.engine.draft_model = model_file(a.engine.draft_model);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const auto start = std::chrono::steady_clock::now();
  auto model = std::make_shared<const server::ServedModel>(engine::make_engine(a.engine), std::move(logit_bias));
  fmt::print(stderr, "nanoserve: {} engine serving \"{}\" (context {} tokens), loaded in {:.1f} s: ready\n",
             a.engine.kind, model->name(), model->engine().context_size(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (const engine::EngineMetrics m = model->engine().metrics(); m.kv_total_blocks > 0)
    fmt::print(stderr, "nanoserve: KV cache: {} blocks of {} bytes ({:.1f} MiB, {}), up to {} sequences at once\n",
               m.kv_total_blocks, m.kv_total_bytes / m.kv_total_blocks, m.kv_total_bytes / 1048576.0,
               model->engine().model_facts().kv_type,
               engine::parallel_of(a.engine));
  http.serve_model(std::move(model));
  fmt::print(stderr, "nanoserve: chat with it in a browser: http://{}:{}/\n", a.server.host, port);
  int signal = 0;
  sigwait(&stop_signals, &signal);
  fmt::print(stderr, "nanoserve: {}: finishing requests in flight, then stopping\n", strsignal(signal));
  server::drain_and_stop(http, stop_signals, milliseconds_of(a.drain_timeout_s));
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "Serve the OpenAI-compatible HTTP API");
  auto a = std::make_shared<ServeArgs>();
  server::ServerOptions& s = a->server;
  engine::EngineOptions& e = a->engine;
  cmd->add_option("--host", s.host, "Address to listen on")->envname("NANOSERVE_HOST")->capture_default_str();
  cmd->add_option("--port", s.port, "Port (0: any free one; the log line says which)")
      ->envname("NANOSERVE_PORT")->capture_default_str();
  cmd->add_option("-m,--model", e.model_path,
                  "GGUF file, or a Hugging Face name pulled into the cache first: owner/repo[:QUANT] or "
                  "owner/repo/FILE.gguf (default: Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q8_0, else a random-weight demo "
                  "model when the Hub cannot be reached)")
      ->envname("NANOSERVE_MODEL");
  cmd->add_option("--engine", e.kind,
                  "Engine: batch (continuous batching), sequential (one request at a time), or mock (no weights: "
                  "a fixed passage)")
      ->envname("NANOSERVE_ENGINE")->check(CLI::IsMember({"batch", "sequential", "mock"}))->capture_default_str();
  cmd->add_option("-t,--threads", e.threads, "Compute threads (default: physical cores)")->envname("NANOSERVE_THREADS");
  cmd->add_option("-c,--ctx", e.context_size,
                  "Context size of one request in tokens (default: the trained one, at most 4096)")
      ->envname("NANOSERVE_CTX");
  cmd->add_option("--parallel", e.parallel, "Requests generated at once (default: batch 8, mock 4, sequential 1)")
      ->envname("NANOSERVE_PARALLEL");
  cmd->add_option("--kv-memory", e.kv_memory_bytes,
                  "Batch: the KV cache pool in bytes, e.g. 512M or 2G (default: --ctx x --parallel positions)")
      ->envname("NANOSERVE_KV_MEMORY")->transform(CLI::AsSizeValue(false));
  add_kv_type_option(cmd, e.kv_type);
  cmd->add_option("--step-tokens", e.step_tokens,
                  "Batch: tokens one forward step takes, decode rows first, then prefill chunks (default 512)")
      ->envname("NANOSERVE_STEP_TOKENS");
  cmd->add_option("--prefix-cache", e.prefix_cache,
                  "Batch: reuse the KV cache of earlier prompts that begin with the same tokens: on or off "
                  "(default on)")
      ->envname("NANOSERVE_PREFIX_CACHE")->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--cache-dir", e.cache_dir,
                  "Batch: keep the prefix cache's blocks in this folder too, across restarts (default: none)")
      ->envname("NANOSERVE_CACHE_DIR");
  cmd->add_option("--cache-disk", e.cache_disk_bytes,
                  "Batch: the most bytes --cache-dir may hold, e.g. 8G (default 4G)")
      ->envname("NANOSERVE_CACHE_DISK")->transform(CLI::AsSizeValue(false));
  cmd->add_option("--spec", e.spec,
                  "Batch: speculative decoding, guesses checked in the batch step: off, lookup (the text's own "
                  "repeats), draft (--draft-model) or mtp (the model's multi-token-prediction block) (default mtp "
                  "where the file has the block, else lookup)")
      ->envname("NANOSERVE_SPEC")->check(CLI::IsMember({"off", "lookup", "draft", "mtp"}));
  cmd->add_option("--draft-max", e.draft_max, "Batch: draft tokens one request checks per step at most (default 8)")
      ->envname("NANOSERVE_DRAFT_MAX");
  cmd->add_option("--draft-policy", e.draft_policy,
                  "Batch: adaptive (each request's drafts as long as its measured acceptance pays for, none where "
                  "they do not) or always (drafts as long as the drafter can, up to --draft-max) (default adaptive)")
      ->envname("NANOSERVE_DRAFT_POLICY")->check(CLI::IsMember({"adaptive", "always"}));
  cmd->add_option("--draft-model", e.draft_model,
                  "Batch, --spec draft: a smaller GGUF model (file or name, as --model) with the same vocabulary "
                  "that drafts the tokens")
      ->envname("NANOSERVE_DRAFT_MODEL");
  cmd->add_option("--cors-origin", s.cors_origin,
                  "Let browser apps from this origin call the API (e.g. http://localhost:3000, or * for any)")
      ->envname("NANOSERVE_CORS_ORIGIN");
  cmd->add_option("--api-key", s.api_key,
                  "Require 'Authorization: Bearer KEY' or 'x-api-key: KEY' (except on /health)")
      ->envname("NANOSERVE_API_KEY");
  cmd->add_option("--max-body-bytes", s.limits.max_body_bytes, "Largest request body (413 beyond)")
      ->envname("NANOSERVE_MAX_BODY_BYTES")->capture_default_str();
  cmd->add_option("--request-timeout", a->request_timeout_s,
                  "Seconds a request's headers and body may take to arrive, in all (408 after)")
      ->envname("NANOSERVE_REQUEST_TIMEOUT")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--drain-timeout", a->drain_timeout_s,
                  "Seconds the requests in flight get to finish after SIGTERM/SIGINT (health then answers 503 and "
                  "new requests are refused); the rest then end with an error event")
      ->envname("NANOSERVE_DRAIN_TIMEOUT")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--idle-timeout", a->idle_timeout_s, "Seconds a keep-alive connection may wait between requests")
      ->envname("NANOSERVE_IDLE_TIMEOUT")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--max-connections", s.connections.max_connections,
                  "Open connections in all; past it, and past --max-connections-per-client, new ones get 503 "
                  "(but /health)")
      ->envname("NANOSERVE_MAX_CONNECTIONS")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--max-connections-per-client", s.connections.max_connections_per_client,
                  "Open connections from one client address")
      ->envname("NANOSERVE_MAX_CONNECTIONS_PER_CLIENT")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--max-queue", e.queue_limit, "Requests waiting for the engine (429 beyond)")
      ->envname("NANOSERVE_MAX_QUEUE")->capture_default_str();
  cmd->add_option("--max-tokens", s.limits.max_tokens, "Most tokens one request may generate")
      ->envname("NANOSERVE_MAX_TOKENS")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--logit-bias", a->logit_bias,
                  "Added to every request's logit bias, e.g. 151645+5 (token 151645's logit +5); repeatable")
      ->envname("NANOSERVE_LOGIT_BIAS");
  cmd->add_option("--mock-token-delay-us", e.mock_token_delay_us, "Mock engine: time per token")
      ->envname("NANOSERVE_MOCK_TOKEN_DELAY_US")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--mock-passage", e.mock_passage,
                  "Mock engine: the text it answers with, repeated (default: a passage about a lighthouse keeper)")
      ->envname("NANOSERVE_MOCK_PASSAGE");
  cmd->add_flag("--mock-echo", e.mock_echo,
                "Mock engine: answer with the request's own prompt, as the chat template rendered it (to see what "
                "reached the model)")
      ->envname("NANOSERVE_MOCK_ECHO");
  cmd->callback([a] { serve(*a); });
}

}  // namespace nanoserve::cli
