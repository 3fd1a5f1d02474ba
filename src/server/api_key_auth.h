// The optional API key: clients send `Authorization: Bearer <key>`.
#pragma once

#include <string>

namespace nanoserve::server {

// Whether `authorization` (the header's value) carries `api_key`. Compares in time that
// does not depend on where the strings differ.
bool bearer_token_matches(const std::string& authorization, const std::string& api_key);

}  // namespace nanoserve::server
