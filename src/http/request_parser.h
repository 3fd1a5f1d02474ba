// A strict, incremental HTTP/1.1 request parser (RFC 9112). Whatever framing a proxy in front
// could read differently is refused, never guessed at: two Content-Length headers, a sign or
// a list in one, Content-Length beside Transfer-Encoding, a coding other than chunked, bare
// CR or LF, NUL and other control bytes, header lines without a colon or folded over lines,
// malformed chunk sizes. Sizes are bounded: the head, the target, the number of headers, and
// the body as decoded from its chunks, so a chunked upload counts against the same limit as
// a Content-Length one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "http/request.h"

namespace nanoserve::http {

struct ParseLimits {
  size_t max_head_bytes = 16u << 10;   // request line and headers: 431 beyond
  size_t max_target_bytes = 8u << 10;  // 414 beyond
  size_t max_headers = 100;            // 431 beyond
  size_t max_body_bytes = 8u << 20;    // after chunked decoding: 413 beyond
};

struct ParseError {
  int status = 400;
  std::string message;
};

class RequestParser {
 public:
  enum class Result {
    NeedMore,  // every byte given was taken; send more
    Head,      // request line and headers complete: request() has them, the body is next
    Done,      // the whole request: take_request()
    Failed,    // error() says why; the connection's framing is lost
  };

  explicit RequestParser(ParseLimits limits);

  // Takes bytes from the front of `data` and sets `used` to how many. Returns Head once per
  // request (possibly with bytes left over), then Done once the body is complete.
  Result feed(std::string_view data, size_t& used);

  const Request& request() const { return request_; }
  Request take_request();  // after Done; the parser is then ready for the next request
  const ParseError& error() const { return error_; }

  // After Head: whether a body follows, and whether the client waits for `100 Continue`.
  bool expects_body() const { return phase_ != Phase::Done; }
  bool expects_continue() const { return expects_continue_; }
  // Whether any byte of a request (not counting blank lines between requests) has come.
  bool started() const { return !head_.empty() || phase_ != Phase::Head; }

 private:
  enum class Phase { Head, FixedBody, ChunkSize, ChunkData, ChunkDataEnd, Trailers, Done, Failed };

  Result fail(int status, std::string message);
  Result body_too_large();
  Result feed_head(std::string_view data, size_t& used);
  Result parse_head();
  Result parse_request_line(std::string_view line);
  Result parse_header_line(std::string_view line, bool trailer);
  Result choose_framing();
  Result feed_chunked(std::string_view data, size_t& used);
  Result end_of_chunk_size_line();
  Result end_of_trailer_line();
  void reset();

  const ParseLimits limits_;
  Phase phase_ = Phase::Head;
  std::string head_;  // the head's bytes so far
  std::string line_;  // a chunk-size or trailer line so far
  size_t trailer_bytes_ = 0;
  uint64_t remaining_ = 0;  // of a fixed body or of the current chunk
  bool expects_continue_ = false;
  Request request_;
  ParseError error_;
};

}  // namespace nanoserve::http
