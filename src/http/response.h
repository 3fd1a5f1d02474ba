// An answer's status line and headers on the wire, for a whole body or for a stream sent in
// chunks (Transfer-Encoding: chunked).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "http/request.h"

namespace nanoserve::http {

struct Response {
  int status = 200;
  std::string content_type = "application/json";  // empty: no Content-Type (a 204)
  std::vector<Header> headers;  // besides Content-Type, Content-Length, Connection and Date
  std::string body;
};

std::string_view reason_phrase(int status);

// The head of `response`, with Content-Length for its body, or `Transfer-Encoding: chunked`
// when `chunked`. `keep_alive` false adds `Connection: close`.
std::string response_head(const Response& response, bool chunked, bool keep_alive);
// Head and body of a whole (not chunked) answer.
std::string whole_response(const Response& response, bool keep_alive);
// The interim answer to `Expect: 100-continue`.
std::string continue_response();
// One chunk of a chunked body (empty `data` gives nothing: the last chunk is chunk_end()).
std::string chunk(std::string_view data);
std::string chunk_end();

}  // namespace nanoserve::http
