// The logprobs object of a choice, in each endpoint's shape:
// A token that is a piece of a UTF-8 character is named "bytes:\\xNN..." (its bytes are exact in
// chat's "bytes").
//   chat:        {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}],
//                 "refusal": null}
//   completions: {"tokens": [...], "token_logprobs": [...], "top_logprobs": [{token: logprob}],
//                 "text_offset": [...]}  (offsets in characters from the start of the completion)
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <span>

#include "engine/engine.h"

namespace nanoserve::server {

nlohmann::ordered_json chat_logprobs_json(std::span<const engine::TokenLogprobs> tokens, size_t text_offset);
// `text_offset`: the characters of the completion before the first of `tokens`.
nlohmann::ordered_json completion_logprobs_json(std::span<const engine::TokenLogprobs> tokens, size_t text_offset);

// How many characters `bytes` adds to a text (its UTF-8 lead bytes).
size_t utf8_characters(std::string_view bytes);

}  // namespace nanoserve::server
