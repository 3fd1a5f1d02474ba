#include "server/api_family.h"

namespace nanoserve::server {

ErrorBody error_body_for(const std::vector<ApiFamily>& families, std::string_view path) {
  for (const ApiFamily& family : families)
    for (const std::string& prefix : family.path_prefixes)
      if (path.starts_with(prefix)) return family.error_body;
  return error_body;
}

}  // namespace nanoserve::server
