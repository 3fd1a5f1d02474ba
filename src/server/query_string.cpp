#include "server/query_string.h"

#include <fmt/format.h>

#include "server/api_error.h"

namespace nanoserve::server {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decoded(std::string_view part) {
  std::string out;
  for (size_t i = 0; i < part.size(); ++i) {
    if (part[i] == '+') {
      out += ' ';
    } else if (part[i] == '%') {
      const int hi = i + 2 < part.size() ? hex_value(part[i + 1]) : -1;
      const int lo = hi >= 0 ? hex_value(part[i + 2]) : -1;
      if (lo < 0) throw invalid_request(fmt::format("the query has a malformed escape at \"{}\"", part.substr(i, 3)));
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += part[i];
    }
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> query_parameters(std::string_view target) {
  std::map<std::string, std::string> parameters;
  const size_t mark = target.find('?');
  if (mark == std::string_view::npos) return parameters;
  std::string_view query = target.substr(mark + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    std::string name = decoded(pair.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : decoded(pair.substr(eq + 1));
    if (!parameters.emplace(name, std::move(value)).second)
      throw invalid_request(fmt::format("the query gives \"{}\" twice", name), name);
  }
  return parameters;
}

}  // namespace nanoserve::server
