#include "server/api_key_auth.h"

#include <string_view>

namespace nanoserve::server {

bool bearer_token_matches(const std::string& authorization, const std::string& api_key) {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() != kScheme.size() + api_key.size()) return false;
  if (std::string_view(authorization).substr(0, kScheme.size()) != kScheme) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < api_key.size(); ++i)
    difference |= static_cast<unsigned char>(authorization[kScheme.size() + i] ^ api_key[i]);
  return difference == 0;
}

}  // namespace nanoserve::server
