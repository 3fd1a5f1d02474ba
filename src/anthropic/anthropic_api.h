// Anthropic's Messages API, as Claude Code and Anthropic's SDKs speak it:
//   POST /v1/messages               a message, whole or streamed (messages_response.h)
//   POST /v1/messages/count_tokens  {"input_tokens": n}: the prompt the messages render to
// Errors in Anthropic's shape under /v1/messages. The key is checked like every route's
// (x-api-key or Authorization: Bearer); anthropic-version and anthropic-beta are read past.
#pragma once

#include "server/api_family.h"

namespace nanoserve::anthropic {

server::ApiFamily anthropic_api();

}  // namespace nanoserve::anthropic
