// One HTTP/1.1 request as the parser hands it on: header names in lower case, the body
// already decoded from any chunked framing.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace nanoserve::http {

struct Header {
  std::string name;  // lower case
  std::string value;  // without the whitespace around it
};

struct Request {
  std::string method;
  std::string target;  // as sent (origin form: path and query)
  std::string path;    // the target up to '?'
  int minor_version = 1;  // HTTP/1.<minor_version>: 0 or 1
  std::vector<Header> headers;
  std::string body;
  std::string peer;  // the client's address
  std::chrono::steady_clock::time_point received;  // when its first byte came

  // The first value of the header named `lowercase_name`; nullptr when absent.
  const std::string* find_header(std::string_view lowercase_name) const;
  // Its value, or "" when absent.
  std::string header(std::string_view lowercase_name) const;
  // Whether the client lets the connection live on after this request: HTTP/1.1 unless it
  // sent `Connection: close`, HTTP/1.0 only when it sent `Connection: keep-alive`.
  bool keep_alive() const;
};

// Whether `list` (a comma-separated header value) holds `token`, ignoring case.
bool header_list_has(std::string_view list, std::string_view token);

}  // namespace nanoserve::http
