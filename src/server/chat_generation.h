// A checked chat request made ready for the engine, the same for every API that takes chats:
// the messages through the model's chat template, the grammar that holds the output
// (response_format's, or that of a tool call tool_choice forces), and the readers that take
// the reasoning and the tool calls out of the answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/chat_readers.h"
#include "server/chat_request.h"
#include "server/limits.h"
#include "server/served_model.h"

namespace nanoserve::server {

struct ChatGeneration {
  engine::GenerationRequest request;
  ChatReaders readers;
};

// Throws ApiError (400): messages the template refuses (param "messages"), a prompt or
// max_tokens past the context, a forced tool call together with a response format.
ChatGeneration prepare_chat_generation(const ServedModel& model, const ChatRequest& chat, std::string id,
                                       const ServerLimits& limits);

// A prompt that is text, not chat (/v1/completions, Ollama's raw generate), made ready the
// same way: no template, no readers. Throws ApiError (400) naming `prompt_param` for a prompt
// past the context.
engine::GenerationRequest prepare_text_generation(const ServedModel& model, std::vector<int32_t> prompt,
                                                  const GenerationParams& params, std::string id,
                                                  const ServerLimits& limits, const std::string& prompt_param);

}  // namespace nanoserve::server
