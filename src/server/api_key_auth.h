// The optional API key: clients send `Authorization: Bearer <key>` (OpenAI's SDKs, Ollama's)
// or `x-api-key: <key>` (Anthropic's).
#pragma once

#include <string>

namespace nanoserve::server {

// Whether `authorization` (the header's value) carries `api_key`. Compares in time that
// does not depend on where the strings differ.
bool bearer_token_matches(const std::string& authorization, const std::string& api_key);
// Whether `x_api_key` (that header's value) is `api_key`, compared the same way.
bool api_key_matches(const std::string& x_api_key, const std::string& api_key);

}  // namespace nanoserve::server
