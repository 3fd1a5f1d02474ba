#include "bench/endpoint.h"

#include <charconv>
#include <stdexcept>

namespace nanoserve::bench {

std::string Endpoint::origin() const { return scheme + "://" + host + ":" + std::to_string(port); }

Endpoint parse_endpoint(const std::string& url) {
  auto bad = [&](const std::string& why) { return std::invalid_argument("--url " + url + ": " + why); };
  Endpoint e;
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) throw bad("expected http://host:port");
  e.scheme = url.substr(0, scheme_end);
  if (e.scheme != "http" && e.scheme != "https") throw bad("the scheme must be http or https");
  std::string rest = url.substr(scheme_end + 3);
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  e.prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!e.prefix.empty() && e.prefix.back() == '/') e.prefix.pop_back();
  if (e.prefix.size() >= 3 && e.prefix.compare(e.prefix.size() - 3, 3, "/v1") == 0) e.prefix.resize(e.prefix.size() - 3);
  if (authority.find('@') != std::string::npos) throw bad("credentials in the URL are not supported (use --api-key)");
  e.port = e.scheme == "https" ? 443 : 80;
  const size_t colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']', colon) == std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    int value = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || error != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535)
      throw bad("the port must be a number from 1 to 65535");
    e.port = value;
    authority.resize(colon);
  }
  if (authority.size() >= 2 && authority.front() == '[' && authority.back() == ']')
    authority = authority.substr(1, authority.size() - 2);
  if (authority.empty()) throw bad("no host");
  e.host = authority;
  return e;
}

Endpoint local_endpoint(int port) {
  Endpoint e;
  e.port = port;
  return e;
}

}  // namespace nanoserve::bench
