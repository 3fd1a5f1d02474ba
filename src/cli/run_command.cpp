// `nanoserve run -m MODEL.gguf -p "prompt"`: one generation, streamed to stdout, then one
// timing line (to stderr, so stdout holds only the text). It is a client of the same engine,
// prompt rules and request options as `nanoserve serve`: the same prompt and options give the
// same greedy text in both.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/kv_type_option.h"
#include "cli/model_argument.h"
#include "engine/engine_factory.h"
#include "engine/prompt.h"
#include "machine/host.h"

namespace nanoserve::cli {
namespace {

struct RunArgs {
  engine::EngineOptions engine;
  std::string prompt;
  bool chat = false;
  engine::GenerationRequest request;
  std::vector<std::string> logit_bias;  // TOKEN=BIAS
};

std::map<int32_t, float> parse_run_logit_bias(const std::vector<std::string>& entries) {
  std::map<int32_t, float> bias;
  for (const std::string& entry : entries) {
    const size_t eq = entry.find('=');
    size_t token_end = 0, bias_end = 0;
    try {
      if (eq == std::string::npos) throw std::invalid_argument(entry);
      const int token = std::stoi(entry.substr(0, eq), &token_end);
      const float value = std::stof(entry.substr(eq + 1), &bias_end);
      if (token_end != eq || bias_end != entry.size() - eq - 1) throw std::invalid_argument(entry);
      if (value < -100.0f || value > 100.0f) throw std::out_of_range(entry);
      bias[token] = value;
    } catch (const std::logic_error&) {
      throw std::invalid_argument("--logit-bias \"" + entry + "\": expected TOKEN=BIAS, a token id and a number "
                                  "from -100 to 100");
    }
  }
  return bias;
}

void run_generate(RunArgs a) {
  a.engine.parallel = 1;  // one request
  a.engine.model_path = model_file(a.engine.model_path);
  if (!a.engine.draft_model.empty()) a.engine.draft_model = model_file(a.engine.draft_model);
  std::unique_ptr<engine::Engine> engine = engine::make_engine(a.engine);
  const tokenizer::Tokenizer& tok = engine->tokenizer();
  if (a.chat) {
    templates::ChatTemplateInputs inputs;
    inputs.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", a.prompt}}});
    a.request.prompt =
        engine::chat_prompt_tokens(engine::model_chat_template(engine->chat_template(), tok), tok, inputs);
  } else {
    a.request.prompt = engine::text_prompt_tokens(tok, a.prompt);
  }
  a.request.logit_bias = parse_run_logit_bias(a.logit_bias);
  const std::shared_ptr<engine::Stream> stream = engine->submit(std::move(a.request));

  for (;;) {
    std::optional<engine::Event> event = stream->next(std::chrono::hours(1));
    if (!event) continue;
    if (event->kind == engine::Event::Kind::Error) throw std::runtime_error(event->error);
    if (event->kind == engine::Event::Kind::Text) {
      std::fputs(event->text.c_str(), stdout);
      std::fflush(stdout);
      continue;
    }
    std::fputs("\n", stdout);
    std::fflush(stdout);  // the text before the timing line on a shared terminal
    const engine::RequestStats& s = event->stats;
    const int threads = a.engine.threads > 0 ? a.engine.threads : machine::physical_cores();
    fmt::print(stderr,
               "prompt {} tokens | TTFT {:.1f} ms | prefill {:.1f} tok/s | decode {:.1f} tok/s ({} tokens, {:.2f} per step, "
               "{}/{} drafts accepted) | {} threads | peak RSS {:.1f} MB | {} engine, context {}, finish: {}\n",
               s.prompt_tokens, s.ttft_ms, s.prefill_tok_s, s.decode_tok_s, s.completion_tokens,
               s.tokens_per_step(),
               s.accepted_tokens, s.draft_tokens, threads,
               s.peak_memory_bytes / 1048576.0, a.engine.kind, engine->context_size(), engine::finish_reason_name(event->finish));
    return;
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt in-process (streams to stdout)");
  auto a = std::make_shared<RunArgs>();
  engine::EngineOptions& e = a->engine;
  engine::GenerationRequest& r = a->request;
  r.max_tokens = 128;
  cmd->add_option("-m,--model", e.model_path, "GGUF file, or a Hugging Face name (as serve's --model)")->required();
  cmd->add_option("-p,--prompt", a->prompt, "Prompt text")->required();
  cmd->add_flag("--chat", a->chat, "Send the prompt as a user message through the model's chat template");
  cmd->add_option("-n,--n-predict,--max-tokens", r.max_tokens, "Tokens to generate at most")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--engine", e.kind, "Engine: batch or sequential (as serve's --engine)")
      ->check(CLI::IsMember({"batch", "sequential"}))->capture_default_str();
  cmd->add_option("-t,--threads", e.threads, "Compute threads (default: physical cores)");
  cmd->add_option("-c,--ctx", e.context_size, "Context size in tokens (default: the trained one, at most 4096)");
  add_kv_type_option(cmd, e.kv_type);
  cmd->add_option("--spec", e.spec, "Batch: speculative decoding, off, lookup, draft or mtp (as serve's --spec)")
      ->check(CLI::IsMember({"off", "lookup", "draft", "mtp"}));
  cmd->add_option("--draft-max", e.draft_max, "Batch: draft tokens per step at most (default 8)");
  cmd->add_option("--draft-policy", e.draft_policy, "Batch: adaptive or always (as serve's --draft-policy)")
      ->check(CLI::IsMember({"adaptive", "always"}));
  cmd->add_option("--draft-model", e.draft_model, "Batch, --spec draft: the draft model (file or name)");
  // The bounds of the API's fields of the same names (server/generation_params.cpp).
  auto& s = r.sampling;
  cmd->add_option("--temp", s.temperature, "Temperature; 0 = greedy")->check(CLI::Range(0.0, 2.0))->capture_default_str();
  cmd->add_option("--seed", s.seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--top-k", s.top_k, "Keep the k most likely tokens (0 = all)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--top-p", s.top_p, "Nucleus sampling threshold")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--min-p", s.min_p, "Drop tokens below min-p × the best one's probability")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--repeat-penalty", s.repeat_penalty, "Penalty for recently seen tokens")
      ->check(CLI::Range(0.01, 10.0))->capture_default_str();
  cmd->add_option("--presence-penalty", s.presence_penalty, "Flat penalty for seen tokens")
      ->check(CLI::Range(-2.0, 2.0))->capture_default_str();
  cmd->add_option("--frequency-penalty", s.frequency_penalty, "Penalty per occurrence")
      ->check(CLI::Range(-2.0, 2.0))->capture_default_str();
  cmd->add_option("--stop", r.stop, "Stop before this text (repeatable; never printed)");
  cmd->add_option("--logit-bias", a->logit_bias, "TOKEN=BIAS added to a token's logit, -100 to 100 (repeatable)");
  cmd->add_flag("--ignore-eos", r.ignore_eos, "Keep generating past end-of-generation tokens");
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace nanoserve::cli
