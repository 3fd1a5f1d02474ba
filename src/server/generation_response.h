// Submits a generation to the engine and answers with it: one JSON object, or a stream of
// server-sent events (OpenAI's chunk format, then `data: [DONE]`).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "engine/engine.h"
#include "http/response_writer.h"
#include "server/generation_params.h"
#include "server/chat_readers.h"
#include "server/response_json.h"
#include "server/server_state.h"

namespace nanoserve::server {

// How one endpoint shapes its answers (chat completions and text completions differ).
struct ResponseShape {
  std::string chunk_object;  // the `object` of streamed chunks
  bool opens_with_role = false;  // a chat stream's first chunk is {"role": "assistant", "content": ""}
  nlohmann::ordered_json (*whole)(const ResponseHeader&, const std::string& text, engine::FinishReason,
                          const engine::RequestStats&);
  nlohmann::ordered_json (*text_chunk)(const ResponseHeader&, const std::string& text);
  nlohmann::ordered_json (*finish_chunk)(const ResponseHeader&, engine::FinishReason);
  // A choice's logprobs object for these tokens, the first `text_offset` characters into the text.
  nlohmann::ordered_json (*logprobs)(std::span<const engine::TokenLogprobs>, size_t text_offset);
};

// Submits `request` (engine::QueueFull and std::invalid_argument propagate, before anything
// is sent). A stream's last chunk before [DONE] carries the `nanoserve` object; with
// include_usage that is the usage chunk (choices: []), else the finish chunk. With `readers`
// (chat), the model's thinking goes to message.reasoning_content (delta.reasoning_content) and
// its tool calls to message.tool_calls (delta.tool_calls; finish_reason "tool_calls").
void respond_with_generation(http::ResponseWriter& res, ServerState& state, std::shared_ptr<const ServedModel> model,
                             engine::GenerationRequest request, const GenerationParams& params,
                             const ResponseShape& shape, ChatReaders readers = {});

}  // namespace nanoserve::server
