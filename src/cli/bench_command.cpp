// `nanoserve bench client|suite|charts`: the benchmark suite (src/bench/). `client` times
// streams from any OpenAI-compatible server, `suite` runs the phases into JSONL rows,
// `charts` draws the PNG charts and writes the summary tables.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <stdexcept>

#include "bench/charts.h"
#include "bench/client_session.h"
#include "bench/suite.h"
#include "bench/suite_options.h"
#include "cli/commands.h"

namespace nanoserve::cli {
namespace {

// Sizes and counts: 0 or less is refused with the flag's name.
const CLI::Range kAtLeastOne(1, 100000000);

// Exits with `status` when it is not 0 (CLI11 callbacks return nothing).
void exit_with(int status) {
  if (status != 0) throw CLI::RuntimeError(status);
}

void add_client(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("client", "Stream requests to an OpenAI-compatible server and time every chunk");
  auto o = std::make_shared<bench::ClientOptions>();
  cmd->add_option("--url", o->url, "Server base URL (nanoserve, llama-server, vLLM, Ollama, ...)")->capture_default_str();
  cmd->add_option("--api-key", o->api_key, "Sent as 'Authorization: Bearer KEY'")->envname("NANOSERVE_API_KEY");
  cmd->add_option("-m,--model", o->model_path,
                  "GGUF of the served model: random token-id prompts, and logit_bias bans on tokens that stream no text");
  cmd->add_option("--model-name", o->model_name, "The request's \"model\" (default: the first of /v1/models)");
  cmd->add_option("-p,--prompt", o->prompt, "Text prompt (instead of random token ids)");
  cmd->add_option("--prompt-tokens", o->prompt_tokens, "Random prompt length with --model")->capture_default_str();
  cmd->add_option("--seed", o->seed,
                  "Request i's random prompt comes from seed + i (runs with other seeds send other prompts, "
                  "which a prefix cache has not seen)")
      ->capture_default_str();
  cmd->add_option("-n,--max-tokens", o->max_tokens, "Tokens to generate (ignore_eos is sent)")->capture_default_str();
  cmd->add_option("-r,--requests", o->requests, "Measured requests, one after another")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Requests before measuring")->capture_default_str();
  cmd->add_flag("--chat", o->chat, "Use /v1/chat/completions (the prompt as a user message)");
  cmd->add_flag("!--no-ban", o->ban_silent, "Do not ban the tokens that stream no text");
  cmd->add_option("--timeout", o->timeout_s, "Longest silence from the server, seconds")->capture_default_str();
  cmd->add_option("-o,--out", o->out_path, "Also write one JSONL row per measured request");
  cmd->callback([o] { exit_with(bench::run_client(*o)); });
}

void add_suite(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("suite", "Run the benchmark phases into results/suite/PHASE.jsonl");
  auto o = std::make_shared<bench::SuiteOptions>();
  cmd->add_option("phases", o->phases,
                  fmt::format("Phases to run: {} (default: all)", fmt::join(bench::phase_names(), " ")));
  cmd->add_flag("--quick", o->quick, "The smaller sweep (about 15 minutes on 2 cores)");
  cmd->add_option("--out", o->out_dir, "Folder of the JSONL files")->capture_default_str();
  cmd->add_option("--url", o->url, "Measure a running server instead of starting nanoserve (needs --model)");
  cmd->add_option("--api-key", o->api_key, "With --url: sent as 'Authorization: Bearer KEY'");
  cmd->add_option("-m,--model", o->model_path, "GGUF model for every phase but models (default: --main-model, synthesized)");
  cmd->add_option("--main-model", o->main_model, "preset:type synthesized for the phases when --model is not given")
      ->capture_default_str();
  cmd->add_option("--tokenizers", o->tokenizers_dir,
                  "Folder with qwen2_5/, qwen3/, llama3/ tokenizer.json for synthesized models")->capture_default_str();
  cmd->add_option("-t,--threads", o->threads, "Compute threads (default: physical cores)")->check(CLI::Range(1, 1024));
  cmd->add_option("--repeats", o->repeats, "Measured requests per point after a warm-up (default 3)")->check(kAtLeastOne);
  cmd->add_option("--request-timeout", o->request_timeout_s, "Longest silence from a server, seconds")
      ->capture_default_str();
  cmd->add_option("--ready-timeout", o->ready_timeout_s, "Longest wait for a server's /health, seconds")
      ->capture_default_str();
  cmd->add_option("--context-lengths", o->context_lengths, "context: prompt lengths")
      ->delimiter(',')->check(kAtLeastOne);
  cmd->add_option("--context-max-tokens", o->context_max_tokens, "context: tokens generated per request")->check(kAtLeastOne);
  cmd->add_option("--context-kv-types", o->context_kv_types, "context: KV cache types, each a server per length (default f16,q8_0)")
      ->delimiter(',');
  cmd->add_option("--raw-pairs", o->raw_pairs, "raw: ABBA pairs per arm (sequential engine; batch engine, one stream and --streams)")->check(kAtLeastOne);
  cmd->add_option("--raw-prompt", o->raw_prompt, "raw: prompt tokens")->check(kAtLeastOne);
  cmd->add_option("--raw-max-tokens", o->raw_max_tokens, "raw: tokens generated")->check(kAtLeastOne);
  cmd->add_option("--overhead-mock-requests", o->overhead_mock_requests, "overhead: requests to the mock engine")->check(kAtLeastOne);
  cmd->add_option("--overhead-engine-requests", o->overhead_engine_requests, "overhead: requests to the real engine")->check(kAtLeastOne);
  cmd->add_option("--streams", o->streams, "concurrency, raw and spec: simultaneous streams")->check(CLI::Range(1, 256));
  cmd->add_option("--concurrency-engines", o->concurrency_engines, "concurrency: engines to compare")->delimiter(',');
  cmd->add_option("--concurrency-prompt", o->concurrency_prompt, "concurrency: prompt tokens")->check(kAtLeastOne);
  cmd->add_option("--concurrency-max-tokens", o->concurrency_max_tokens, "concurrency: tokens generated per stream")->check(kAtLeastOne);
  cmd->add_option("--prefix-prompt", o->prefix_prompt, "prefix: the conversation's tokens")->check(kAtLeastOne);
  cmd->add_option("--prefix-new-tokens", o->prefix_new_tokens, "prefix: tokens the follow-up adds")->check(kAtLeastOne);
  cmd->add_option("--prefix-restart-prompt", o->prefix_restart_prompt, "prefix: prompt tokens across a restart")
      ->check(kAtLeastOne);
  cmd->add_option("--prefix-shared-prompt", o->prefix_shared_prompt, "prefix: the shared system prompt's tokens")
      ->check(kAtLeastOne);
  cmd->add_option("--prefix-shared-distinct", o->prefix_shared_distinct, "prefix: each stream's own tokens")
      ->check(kAtLeastOne);
  cmd->add_option("--prefix-max-tokens", o->prefix_max_tokens, "prefix: tokens generated per request")
      ->check(kAtLeastOne);
  cmd->add_option("--spec-model-dir", o->spec_model_dir, "spec: the folder of pycoder's GGUF files")
      ->capture_default_str();
  cmd->add_option("--spec-source-dir", o->spec_source_dir, "spec: the folder of the Python files continued")
      ->capture_default_str();
  cmd->add_option("--spec-rows", o->spec_rows, "spec: a step of 1..N rows is timed")->check(CLI::Range(1, 64));
  cmd->add_option("--spec-files", o->spec_files, "spec: Python files continued")->check(kAtLeastOne);
  cmd->add_option("--spec-prompt", o->spec_prompt, "spec: prompt tokens from each file")->check(kAtLeastOne);
  cmd->add_option("--spec-max-tokens", o->spec_max_tokens, "spec: tokens generated per request")->check(kAtLeastOne);
  cmd->add_option("--spec-pairs", o->spec_pairs, "spec: ABBA pairs on the random-weight model")->check(kAtLeastOne);
  cmd->add_option("--spec-mtp-model", o->spec_mtp_model,
                  "spec: a GGUF file with a multi-token-prediction block (default: qwen3.5-0.8b Q4_K_M, synthesized)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--models", o->models, "models: preset:type list")->delimiter(',');
  cmd->add_option("--models-max-tokens", o->models_max_tokens, "models: tokens generated for the decode rate")->check(kAtLeastOne);
  cmd->add_option("--models-ttft-prompt", o->models_ttft_prompt, "models: prompt tokens for TTFT")->check(kAtLeastOne);
  cmd->callback([o] { exit_with(bench::run_suite(*o)); });
}

void add_charts(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("charts", "Draw the suite's charts (gnuplot) and write summary.md");
  auto o = std::make_shared<bench::ChartsOptions>();
  cmd->add_option("--in", o->results_dir, "Folder of the suite's JSONL files")->capture_default_str();
  cmd->add_option("--docs", o->docs_dir, "Where the PNG charts go")->capture_default_str();
  cmd->add_option("--readme", o->readme_path, "Also splice the tables into this README, between its markers");
  cmd->callback([o] { bench::make_charts(*o); });
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks: a timing client, the suite, its charts");
  bench->require_subcommand(1);
  add_client(*bench);
  add_suite(*bench);
  add_charts(*bench);
}

}  // namespace nanoserve::cli
