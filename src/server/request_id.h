// Random identifiers for responses ("chatcmpl-…", "cmpl-…") and sampling seeds.
#pragma once

#include <cstdint>
#include <string>

namespace nanoserve::server {

// `prefix` + 24 random letters and digits.
std::string random_request_id(const std::string& prefix);
uint64_t random_seed();

}  // namespace nanoserve::server
