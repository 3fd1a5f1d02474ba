// POST /v1/messages and /v1/messages/count_tokens: Anthropic's request body, checked and
// turned into the chat request every API shares. Supported: system (a string or text blocks),
// user and assistant turns of text, thinking, tool_use and tool_result blocks, tools (custom
// ones: name, description, input_schema), tool_choice (auto, any, tool, none,
// disable_parallel_tool_use), thinking (enabled, adaptive, between_tools or disabled: the chat
// template's enable_thinking), output_config.format (json_schema), max_tokens, stop_sequences,
// temperature, top_p, top_k, stream and metadata. Images, documents and server tools are
// refused; cache_control, service_tier and the other hints of Anthropic's service are read past.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "server/chat_request.h"
#include "server/limits.h"

namespace nanoserve::anthropic {

struct MessagesRequest {
  server::ChatRequest chat;
};

// Throws server::ApiError (400) naming the field at fault. `count_only`: the body of
// count_tokens, which has no max_tokens.
MessagesRequest parse_messages_request(const nlohmann::ordered_json& body, const server::ServerLimits& limits,
                                       uint64_t random_seed, bool count_only);

}  // namespace nanoserve::anthropic
