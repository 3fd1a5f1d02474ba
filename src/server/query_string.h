// The query of a request target (`/v1/timelines?id=cmpl-1&last=8`): its parameters by name,
// percent-decoded ('+' is a space, as HTML forms send it).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace nanoserve::server {

// Throws ApiError 400 for a malformed escape (`%` not followed by two hex digits) or a name
// given twice; a target without '?' has no parameters.
std::map<std::string, std::string> query_parameters(std::string_view target);

}  // namespace nanoserve::server
