// `nanoserve run -m MODEL.gguf -p "prompt"`: generates text in-process and streams it to
// stdout, then prints one timing line (to stderr, so stdout holds only the text).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "engine/sampler.h"
#include "machine/peak_rss.h"
#include "model/model.h"
#include "tokenizer/stream_decoder.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct RunArgs {
  std::string model;
  std::string prompt;
  int n_predict = 128;
  int threads = 0;
  int64_t ctx = 0;
  bool chat = false;
  engine::SamplingParams sampling;
};

// The prompt as the model's ChatML turn (the format of the Qwen models this runs). Text
// between the special tokens is encoded without parsing specials, so user text cannot
// inject them.
std::vector<int32_t> chat_prompt(const tokenizer::Tokenizer& tok, const std::string& user) {
  const auto start = tok.find_token("<|im_start|>"), end = tok.find_token("<|im_end|>");
  if (!start || !end) throw std::invalid_argument("--chat: this model's vocabulary has no ChatML tokens");
  std::vector<int32_t> ids = {*start};
  auto append = [&](const std::string& text) {
    auto piece = tok.encode(text, false);
    ids.insert(ids.end(), piece.begin(), piece.end());
  };
  append("user\n" + user);
  ids.push_back(*end);
  append("\n");
  ids.push_back(*start);
  append("assistant\n");
  return ids;
}

double peak_rss_mb() { return machine::peak_rss_bytes() / 1048576.0; }

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

void run_generate(const RunArgs& a) {
  model::Model m(a.model, {.threads = a.threads});
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(m.file().metadata());
  std::vector<int32_t> prompt;
  if (a.chat) {
    prompt = chat_prompt(tok, a.prompt);
  } else {
    if (tok.add_bos() && tok.bos_id()) prompt.push_back(*tok.bos_id());
    const auto ids = tok.encode(a.prompt, true);
    prompt.insert(prompt.end(), ids.begin(), ids.end());
  }
  if (prompt.empty()) throw std::invalid_argument("the prompt is empty");
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  const int64_t n_ctx = a.ctx > 0 ? a.ctx : std::min<int64_t>(m.config().n_ctx_train, n_prompt + a.n_predict);
  if (n_prompt >= n_ctx) throw std::invalid_argument(fmt::format("the prompt ({} tokens) does not fit the context ({})", n_prompt, n_ctx));

  model::KvCache cache(m.config(), n_ctx);
  engine::Sampler sampler(a.sampling);
  for (int32_t t : prompt) sampler.remember(t);
  tokenizer::StreamDecoder decoder(tok);
  model::Batch batch;
  model::Logits logits;

  const auto t_start = Clock::now();
  constexpr int64_t kChunk = 512;  // prompt rows per forward call
  for (int64_t begin = 0; begin < n_prompt; begin += kChunk) {
    batch.clear();
    const int64_t end = std::min(n_prompt, begin + kChunk);
    for (int64_t p = begin; p < end; ++p) batch.add(0, p, prompt[p], p == n_prompt - 1);
    m.forward(batch, cache, logits);
  }
  int32_t token = sampler.sample(logits.row(0));
  const auto t_first = Clock::now();

  int generated = 0;
  for (int64_t pos = n_prompt;; ++pos) {
    const bool stop = token == tok.eos_id() || tok.token_type(token) == tokenizer::TokenType::kControl;
    if (stop) break;
    std::fputs(decoder.push(token).c_str(), stdout);
    std::fflush(stdout);
    if (++generated >= a.n_predict || pos >= n_ctx) break;
    batch.clear();
    batch.add(0, pos, token, true);
    m.forward(batch, cache, logits);
    token = sampler.sample(logits.row(0));
  }
  std::fputs(decoder.flush().c_str(), stdout);
  std::fputs("\n", stdout);
  std::fflush(stdout);  // the text before the timing line on a shared terminal
  const auto t_end = Clock::now();

  const double prefill_s = seconds(t_first - t_start), decode_s = seconds(t_end - t_first);
  std::fprintf(stderr,
               "prompt %lld tokens | TTFT %.1f ms | prefill %.1f tok/s | decode %.1f tok/s (%d tokens) | %d threads | "
               "peak RSS %.1f MB\n",
               static_cast<long long>(n_prompt), prefill_s * 1e3, n_prompt / prefill_s,
               generated > 1 ? (generated - 1) / decode_s : 0.0, generated, m.threads(), peak_rss_mb());
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt in-process (streams to stdout)");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("-m,--model", a->model, "GGUF model")->required();
  cmd->add_option("-p,--prompt", a->prompt, "Prompt text")->required();
  cmd->add_option("-n,--n-predict", a->n_predict, "Tokens to generate at most")->capture_default_str();
  cmd->add_flag("--chat", a->chat, "Wrap the prompt as a user turn of the chat format");
  cmd->add_option("-t,--threads", a->threads, "Threads (default: physical cores)");
  cmd->add_option("-c,--ctx", a->ctx, "Context size (default: prompt + n-predict, at most the trained context)");
  auto& s = a->sampling;
  cmd->add_option("--temp", s.temperature, "Temperature; 0 = greedy")->capture_default_str();
  cmd->add_option("--seed", s.seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--top-k", s.top_k, "Keep the k most likely tokens (0 = all)")->capture_default_str();
  cmd->add_option("--top-p", s.top_p, "Nucleus sampling threshold")->capture_default_str();
  cmd->add_option("--min-p", s.min_p, "Drop tokens below min-p × the best one's probability")->capture_default_str();
  cmd->add_option("--repeat-penalty", s.repeat_penalty, "Penalty for recently seen tokens")->capture_default_str();
  cmd->add_option("--presence-penalty", s.presence_penalty, "Flat penalty for seen tokens")->capture_default_str();
  cmd->add_option("--frequency-penalty", s.frequency_penalty, "Penalty per occurrence")->capture_default_str();
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace nanoserve::cli
