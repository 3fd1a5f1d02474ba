// Ollama's /api/chat and /api/generate bodies, checked and turned into the requests every API
// shares. Supported: messages (system, user, assistant with thinking and tool_calls, tool with
// tool_name), tools, format ("json" or a JSON schema), think (true, false, or an effort),
// options (num_predict, temperature, top_k, top_p, min_p, seed, stop, repeat_penalty,
// presence_penalty, frequency_penalty; num_ctx up to the served context; the others, which
// tune Ollama's runner, are read past as Ollama does), stream (default true), keep_alive; for
// generate, prompt, system and raw. Images, suffix (fill-in-the-middle), template, context and
// logprobs are refused.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "server/chat_request.h"
#include "server/limits.h"

namespace nanoserve::ollama {

struct OllamaRequest {
  std::string model;         // as the client named it; the answer repeats it
  server::ChatRequest chat;  // the messages (generate: system and prompt), tools, params
  // generate with raw: the prompt as text, no template.
  std::optional<std::string> raw_prompt;
  // No messages (chat) or an empty prompt (generate): the client only asks for the model to be
  // loaded; the answer is done at once, done_reason "load".
  bool load_only = false;
};

// Throw server::ApiError (400) naming the field at fault. `context_size`: the served context,
// which options.num_ctx may not exceed.
OllamaRequest parse_chat(const nlohmann::ordered_json& body, const server::ServerLimits& limits, uint64_t random_seed,
                         int64_t context_size);
OllamaRequest parse_generate(const nlohmann::ordered_json& body, const server::ServerLimits& limits,
                             uint64_t random_seed, int64_t context_size);

}  // namespace nanoserve::ollama
