#include "http/request_parser.h"

#include <algorithm>
#include <utility>

#include "http/token.h"

namespace nanoserve::http {
namespace {

constexpr size_t kMaxChunkLineBytes = 4096;  // a chunk-size line with its extensions
constexpr size_t kMaxChunkSizeDigits = 15;   // < 2^60: no overflow, far beyond any limit
// A chunked body's room is reserved up front, up to this: address space, not memory, until
// bytes arrive. Growing the body by doubling instead would hold the old and the new copy at
// once (12 MiB to receive 8).
constexpr size_t kChunkedReserveBytes = 64u << 20;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
  return -1;
}

// Appends `c` to a line kept without its CR: false when the bytes break CRLF pairing.
// `*ended` turns true at the LF that ends the line.
bool push_line_byte(std::string& line, char c, bool* ended) {
  *ended = false;
  const bool after_cr = !line.empty() && line.back() == '\r';
  if (c == '\n') {
    if (!after_cr) return false;  // a bare LF
    line.pop_back();
    *ended = true;
    return true;
  }
  if (after_cr) return false;  // a bare CR
  line.push_back(c);
  return true;
}

}  // namespace

RequestParser::RequestParser(ParseLimits limits) : limits_(limits) {}

RequestParser::Result RequestParser::fail(int status, std::string message) {
  phase_ = Phase::Failed;
  error_ = ParseError{status, std::move(message)};
  std::string().swap(request_.body);  // a refused body's memory goes back at once (assigning would keep it)
  return Result::Failed;
}

RequestParser::Result RequestParser::body_too_large() {
  return fail(413, "the request body is larger than this server's limit of " + std::to_string(limits_.max_body_bytes) +
                       " bytes");
}

void RequestParser::reset() {
  phase_ = Phase::Head;
  head_.clear();
  line_.clear();
  trailer_bytes_ = 0;
  remaining_ = 0;
  expects_continue_ = false;
  request_ = Request{};
}

Request RequestParser::take_request() {
  Request out = std::move(request_);
  reset();
  return out;
}

RequestParser::Result RequestParser::feed(std::string_view data, size_t& used) {
  used = 0;
  switch (phase_) {
    case Phase::Head:
      return feed_head(data, used);
    case Phase::FixedBody: {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size()));
      request_.body.append(data.data(), take);
      used = take;
      remaining_ -= take;
      if (remaining_ > 0) return Result::NeedMore;
      phase_ = Phase::Done;
      return Result::Done;
    }
    case Phase::Done:
      return Result::Done;
    case Phase::Failed:
      return Result::Failed;
    default:
      return feed_chunked(data, used);
  }
}

RequestParser::Result RequestParser::feed_head(std::string_view data, size_t& used) {
  for (; used < data.size();) {
    const char c = data[used++];
    if (head_.size() >= limits_.max_head_bytes)
      return fail(431, "the request line and headers are larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
    const bool after_cr = !head_.empty() && head_.back() == '\r';
    if (c == '\n' && !after_cr) return fail(400, "a line ends with a bare LF (HTTP needs CRLF)");
    if (c != '\n' && after_cr) return fail(400, "a bare CR inside the request head");
    head_.push_back(c);
    if (c != '\n') continue;
    // Blank lines before a request line are skipped (RFC 9112 §2.2): clients send a CRLF
    // after a body now and then.
    if (head_ == "\r\n") {
      head_.clear();
      continue;
    }
    if (head_.size() >= 4 && head_.compare(head_.size() - 4, 4, "\r\n\r\n") == 0) return parse_head();
  }
  return Result::NeedMore;
}

RequestParser::Result RequestParser::parse_head() {
  std::string_view rest(head_);
  rest.remove_suffix(2);  // the blank line
  bool first = true;
  while (!rest.empty()) {
    const size_t end = rest.find("\r\n");
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + 2);
    const Result r = first ? parse_request_line(line) : parse_header_line(line, false);
    if (r == Result::Failed) return r;
    first = false;
  }
  return choose_framing();
}

RequestParser::Result RequestParser::parse_request_line(std::string_view line) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(400, "the request line is not 'METHOD TARGET HTTP/1.1'");
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return fail(400, "the request method is not a token");
  if (version == "HTTP/1.1") {
    request_.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    request_.minor_version = 0;
  } else {
    return fail(400, "unsupported HTTP version (this server speaks HTTP/1.1 and HTTP/1.0)");
  }
  if (target.size() > limits_.max_target_bytes)
    return fail(414, "the request target is longer than " + std::to_string(limits_.max_target_bytes) + " bytes");
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
    return fail(400, "the request target holds a byte that a URI may not");
  request_.method = std::string(method);
  request_.target = std::string(target);
  // The absolute form (`http://host/path`) names the same resource as its path.
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (target.size() >= scheme.size() && equals_ignoring_case(target.substr(0, scheme.size()), scheme)) {
      const size_t slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
  }
  if (target.front() != '/') return fail(400, "the request target must be a path starting with '/'");
  request_.path = std::string(target.substr(0, target.find('?')));
  return Result::NeedMore;
}

RequestParser::Result RequestParser::parse_header_line(std::string_view line, bool trailer) {
  if (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
    return fail(400, "a header line continues the one before (obsolete line folding)");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return fail(400, "a header line has no colon");
  const std::string_view name = line.substr(0, colon);
  if (!is_token(name)) return fail(400, "a header name is empty or holds a byte a token may not (space, control)");
  const std::string_view value = trim_whitespace(line.substr(colon + 1));
  for (const char c : value)
    if (!is_field_value_char(static_cast<unsigned char>(c)))
      return fail(400, "the value of header '" + std::string(name) + "' holds a control byte");
  if (trailer) return Result::NeedMore;  // trailers are checked, never used
  if (request_.headers.size() >= limits_.max_headers)
    return fail(431, "more than " + std::to_string(limits_.max_headers) + " headers");
  request_.headers.push_back(Header{lower_case(name), std::string(value)});
  return Result::NeedMore;
}

RequestParser::Result RequestParser::choose_framing() {
  const std::string *content_length = nullptr, *transfer_encoding = nullptr;
  int hosts = 0;
  for (const Header& h : request_.headers) {
    if (h.name == "host") ++hosts;
    if (h.name == "content-length") {
      if (content_length) return fail(400, "more than one Content-Length header");
      content_length = &h.value;
    }
    if (h.name == "transfer-encoding") {
      if (transfer_encoding) return fail(400, "more than one Transfer-Encoding header");
      transfer_encoding = &h.value;
    }
    if (h.name == "content-encoding" && !equals_ignoring_case(h.value, "identity"))
      return fail(415, "request bodies with Content-Encoding '" + h.value + "' are not accepted: send them uncompressed");
    if (h.name == "expect") {
      if (!equals_ignoring_case(h.value, "100-continue")) return fail(417, "the only expectation served is 100-continue");
      expects_continue_ = true;
    }
  }
  if (request_.minor_version == 1 && hosts != 1) return fail(400, "an HTTP/1.1 request needs exactly one Host header");
  if (transfer_encoding) {
    if (content_length) return fail(400, "a request may not have both Content-Length and Transfer-Encoding");
    if (request_.minor_version == 0) return fail(400, "Transfer-Encoding is not part of HTTP/1.0");
    if (!equals_ignoring_case(*transfer_encoding, "chunked"))
      return fail(400, "unsupported Transfer-Encoding '" + *transfer_encoding + "' (only chunked is accepted)");
    request_.body.reserve(std::min(limits_.max_body_bytes, kChunkedReserveBytes));
    phase_ = Phase::ChunkSize;
    return Result::Head;
  }
  if (content_length) {
    const std::string& v = *content_length;
    if (v.empty() || v.size() > 19 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return fail(400, "Content-Length must be a decimal number of bytes");
    remaining_ = std::stoull(v);
    if (remaining_ > limits_.max_body_bytes) return body_too_large();
    if (remaining_ > 0) {
      request_.body.reserve(static_cast<size_t>(remaining_));
      phase_ = Phase::FixedBody;
      return Result::Head;
    }
  }
  phase_ = Phase::Done;
  expects_continue_ = false;  // nothing to wait for
  return Result::Head;
}

RequestParser::Result RequestParser::feed_chunked(std::string_view data, size_t& used) {
  while (used < data.size()) {
    switch (phase_) {
      case Phase::ChunkData: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size() - used));
        request_.body.append(data.data() + used, take);
        used += take;
        remaining_ -= take;
        if (remaining_ == 0) {
          phase_ = Phase::ChunkDataEnd;
          line_.clear();
        }
        break;
      }
      case Phase::ChunkDataEnd: {
        const char c = data[used++];
        const char expected = line_.empty() ? '\r' : '\n';
        if (c != expected) return fail(400, "a chunk's data is not followed by CRLF");
        if (c == '\r') {
          line_.push_back(c);
        } else {
          line_.clear();
          phase_ = Phase::ChunkSize;
        }
        break;
      }
      case Phase::ChunkSize:
      case Phase::Trailers: {
        bool ended = false;
        if (!push_line_byte(line_, data[used++], &ended)) return fail(400, "a chunk line does not end with CRLF");
        if (phase_ == Phase::ChunkSize && line_.size() > kMaxChunkLineBytes)
          return fail(400, "a chunk-size line is longer than " + std::to_string(kMaxChunkLineBytes) + " bytes");
        if (phase_ == Phase::Trailers && trailer_bytes_ + line_.size() > limits_.max_head_bytes)
          return fail(431, "the trailer section is larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
        if (!ended) break;
        const Result r = phase_ == Phase::ChunkSize ? end_of_chunk_size_line() : end_of_trailer_line();
        if (r != Result::NeedMore) return r;
        break;
      }
      default:
        return phase_ == Phase::Done ? Result::Done : Result::Failed;
    }
  }
  return Result::NeedMore;
}

RequestParser::Result RequestParser::end_of_chunk_size_line() {
  std::string_view line(line_);
  size_t digits = 0;
  uint64_t size = 0;
  for (; digits < line.size() && hex_value(line[digits]) >= 0; ++digits) {
    if (digits == kMaxChunkSizeDigits) return fail(413, "a chunk size beyond any body this server accepts");
    size = size * 16 + static_cast<uint64_t>(hex_value(line[digits]));
  }
  if (digits == 0) return fail(400, "a chunk size is not a hexadecimal number");
  // What may follow the size: chunk extensions, `;name[=value]`, after optional whitespace.
  const std::string_view rest = trim_whitespace(line.substr(digits));
  if (!rest.empty() && rest.front() != ';') return fail(400, "a chunk size is followed by something other than ';'");
  for (const char c : rest)
    if (!is_field_value_char(static_cast<unsigned char>(c))) return fail(400, "a chunk extension holds a control byte");
  line_.clear();
  if (size == 0) {
    phase_ = Phase::Trailers;
    return Result::NeedMore;
  }
  if (request_.body.size() + size > limits_.max_body_bytes) return body_too_large();
  remaining_ = size;
  phase_ = Phase::ChunkData;
  return Result::NeedMore;
}

RequestParser::Result RequestParser::end_of_trailer_line() {
  if (line_.empty()) {
    phase_ = Phase::Done;
    return Result::Done;
  }
  trailer_bytes_ += line_.size() + 2;
  const Result r = parse_header_line(line_, true);
  line_.clear();
  return r;
}

}  // namespace nanoserve::http
