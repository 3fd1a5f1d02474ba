// POST /v1/responses: the body of OpenAI's Responses API, checked and turned into the chat
// request every API shares. Supported: input (a string, or items: messages of input_text /
// output_text parts, function_call, function_call_output and reasoning items), instructions,
// tools of type function (name, description, parameters, strict), tool_choice (auto, none,
// required, a function), parallel_tool_calls, text.format (text, json_object, json_schema),
// reasoning.effort (none/minimal: the chat template's enable_thinking false), max_output_tokens,
// temperature, top_p, stream, store, metadata. nanoserve keeps no responses: previous_response_id,
// conversation and item references are refused, as are images and files; tools the
// service runs itself (web_search, file_search, ...) are not offered to the model.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "server/chat_request.h"
#include "server/limits.h"

namespace nanoserve::responses {

struct ResponsesRequest {
  server::ChatRequest chat;
  // What the response object repeats of the request.
  nlohmann::ordered_json echo = nlohmann::ordered_json::object();
};

// Throws server::ApiError (400) naming the field at fault.
ResponsesRequest parse_responses_request(const nlohmann::ordered_json& body, const server::ServerLimits& limits,
                                         uint64_t random_seed);

}  // namespace nanoserve::responses
