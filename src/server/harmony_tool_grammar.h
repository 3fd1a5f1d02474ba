// The grammar that makes a gpt-oss model call a tool (tool_choice "required" or a named
// function) in its harmony format, from the first token after the prompt's "<|start|>assistant":
//   <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{arguments}
// then an end token (the model's <|call|>), which harmony_reader.h reads as the call. The markup
// is the control tokens themselves (grammar/special_token.h), never their text spelled out.
// The call comes first, without an analysis message: no grammar can tell when free reasoning
// would end, and a forced call must not be crowded out by max_tokens. One call per answer, as
// harmony ends the output at <|call|>.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>

#include "grammar/grammar.h"
#include "server/tool_calls.h"

namespace nanoserve::server {

// The functions `choice` allows among `tools` (the chat form), each with arguments of its
// `parameters` schema. Throws ApiError (400) as forced_tool_call_grammar does.
std::shared_ptr<const grammar::Grammar> forced_harmony_call_grammar(const nlohmann::ordered_json& tools,
                                                                    const ToolChoice& choice);

}  // namespace nanoserve::server
