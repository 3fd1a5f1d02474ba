// OpenAI's Responses API, as Codex and the openai SDKs (responses.create, responses.stream)
// speak it: POST /v1/responses, a response whole or as its stream of typed events
// (response_output.h). Stateless: nothing is stored, so a request carries its whole
// conversation. Errors in OpenAI's shape.
#pragma once

#include "server/api_family.h"

namespace nanoserve::responses {

server::ApiFamily responses_api();

}  // namespace nanoserve::responses
