// Where an OpenAI-compatible server listens: "http://host:port" with an optional path
// prefix. A trailing "/v1" is accepted and dropped (clients often write base URLs so), so
// "http://127.0.0.1:8080" and "http://127.0.0.1:8080/v1" name the same endpoint.
#pragma once

#include <string>

namespace nanoserve::bench {

struct Endpoint {
  std::string scheme = "http";  // "http" or "https"
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string prefix;   // path before /v1/..., "" or "/something" (no trailing slash)
  std::string api_key;  // sent as "Authorization: Bearer KEY" when not empty

  // "http://host:port" (the prefix is not part of it).
  std::string origin() const;
  // prefix + path, e.g. "/v1/completions".
  std::string path(const std::string& route) const { return prefix + route; }
};

// Throws std::invalid_argument with the reason for anything else than
// http[s]://host[:port][/prefix] (port 1..65535; default 80 or 443).
Endpoint parse_endpoint(const std::string& url);

Endpoint local_endpoint(int port);  // http://127.0.0.1:port

}  // namespace nanoserve::bench
