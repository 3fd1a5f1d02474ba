// `nanoserve bench client`: streaming requests to any OpenAI-compatible server, one after
// another, each timed by StreamClient; prints a line per request and a summary, and can
// write the same JSONL rows the suite writes.
#pragma once

#include <string>

namespace nanoserve::bench {

struct ClientOptions {
  std::string url = "http://127.0.0.1:8080";
  std::string api_key;
  std::string model_path;    // GGUF: token-id prompts and the tokens to ban (logit_bias)
  std::string model_name;    // the request's "model" (default: the first of /v1/models)
  std::string prompt;        // a text prompt (default: --prompt-tokens random token ids)
  int prompt_tokens = 128;   // with --model
  uint64_t seed = 0;         // request i's random prompt comes from seed + i (another seed: other prompts)
  int max_tokens = 64;
  int requests = 5;
  int warmup = 1;
  bool chat = false;         // /v1/chat/completions (text prompt as a user message)
  bool ban_silent = true;    // with --model: logit_bias -100 on tokens that stream no text
  int timeout_s = 600;
  std::string out_path;      // JSONL rows, when given
};

// Returns the exit status (0, or 1 when a request failed).
int run_client(const ClientOptions& options);

}  // namespace nanoserve::bench
