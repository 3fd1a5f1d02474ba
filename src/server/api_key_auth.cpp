#include "server/api_key_auth.h"

#include <string_view>

namespace nanoserve::server {

bool api_key_matches(const std::string& x_api_key, const std::string& api_key) {
  if (x_api_key.size() != api_key.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < api_key.size(); ++i) difference |= static_cast<unsigned char>(x_api_key[i] ^ api_key[i]);
  return difference == 0;
}

bool bearer_token_matches(const std::string& authorization, const std::string& api_key) {
  constexpr std::string_view kScheme = "Bearer ";
  if (std::string_view(authorization).substr(0, kScheme.size()) != kScheme) return false;
  return api_key_matches(authorization.substr(kScheme.size()), api_key);
}

}  // namespace nanoserve::server
