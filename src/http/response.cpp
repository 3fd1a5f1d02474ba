#include "http/response.h"

#include <fmt/format.h>

namespace nanoserve::http {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return status < 400 ? "OK" : status < 500 ? "Client Error" : "Server Error";
  }
}

std::string response_head(const Response& response, bool chunked, bool keep_alive) {
  std::string head = fmt::format("HTTP/1.1 {} {}\r\n", response.status, reason_phrase(response.status));
  if (!response.content_type.empty()) head += fmt::format("Content-Type: {}\r\n", response.content_type);
  for (const Header& h : response.headers) head += fmt::format("{}: {}\r\n", h.name, h.value);
  // A 204 has no body, and says nothing of its length (RFC 9110, 8.6); nor does a 304, whose
  // length would have to be that of the body it stands for.
  if (chunked) {
    head += "Transfer-Encoding: chunked\r\n";
  } else if (response.status != 204 && response.status != 304) {
    head += fmt::format("Content-Length: {}\r\n", response.body.size());
  }
  if (!keep_alive) head += "Connection: close\r\n";
  head += "\r\n";
  return head;
}

std::string whole_response(const Response& response, bool keep_alive) {
  return response_head(response, false, keep_alive) + response.body;
}

std::string continue_response() { return "HTTP/1.1 100 Continue\r\n\r\n"; }

std::string chunk(std::string_view data) {
  if (data.empty()) return {};
  return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

std::string chunk_end() { return "0\r\n\r\n"; }

}  // namespace nanoserve::http
