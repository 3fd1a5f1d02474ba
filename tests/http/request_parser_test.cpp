// The strict HTTP/1.1 parser: what it accepts (fed whole and byte by byte), and what framing
// it refuses with which status (RFC 9112), so that no proxy in front can read a request's
// bytes differently from us.
#include "http/request_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace nanoserve::http {
namespace {

struct Parsed {
  RequestParser::Result result;
  Request request;
  ParseError error;
  size_t heads = 0;   // how often Head was returned
  size_t left = 0;    // bytes not taken after Done or Failed
};

// Feeds `bytes` in pieces of `piece` bytes, as a connection would, until Done or Failed.
Parsed parse(const std::string& bytes, size_t piece = SIZE_MAX, ParseLimits limits = {}) {
  RequestParser parser(limits);
  Parsed out{RequestParser::Result::NeedMore, {}, {}, 0, 0};
  std::string buffer;
  size_t fed = 0;
  for (;;) {
    size_t used = 0;
    out.result = parser.feed(buffer, used);
    buffer.erase(0, used);
    switch (out.result) {
      case RequestParser::Result::Head:
        ++out.heads;
        continue;
      case RequestParser::Result::Done:
        out.request = parser.take_request();
        out.left = buffer.size() + bytes.size() - fed;
        return out;
      case RequestParser::Result::Failed:
        out.error = parser.error();
        out.left = buffer.size() + bytes.size() - fed;
        return out;
      case RequestParser::Result::NeedMore:
        if (fed == bytes.size()) return out;
        const size_t n = std::min(piece, bytes.size() - fed);
        buffer.append(bytes, fed, n);
        fed += n;
    }
  }
}

const std::string kPost = "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n";

TEST(RequestParser, AContentLengthRequestWholeAndByteByByte) {
  const std::string bytes = kPost + "Content-Length: 11\r\n\r\n{\"a\": true}";
  for (const size_t piece : {SIZE_MAX, size_t{1}, size_t{7}}) {
    const Parsed p = parse(bytes, piece);
    ASSERT_EQ(p.result, RequestParser::Result::Done) << piece << " " << p.error.message;
    EXPECT_EQ(p.heads, 1u);
    EXPECT_EQ(p.request.method, "POST");
    EXPECT_EQ(p.request.target, "/v1/chat/completions?x=1");
    EXPECT_EQ(p.request.path, "/v1/chat/completions");
    EXPECT_EQ(p.request.header("content-type"), "application/json");
    EXPECT_EQ(p.request.body, "{\"a\": true}");
    EXPECT_TRUE(p.request.keep_alive());
  }
}

TEST(RequestParser, AChunkedBodyIsDecodedWithExtensionsAndTrailers) {
  const std::string bytes = kPost + "Transfer-Encoding: chunked\r\n\r\n"
                                    "4\r\nWiki\r\n5;name=value\r\npedia\r\nE \r\n in\r\n\r\nchunks.\r\n0\r\nX-Sum: 1\r\n\r\n";
  for (const size_t piece : {SIZE_MAX, size_t{1}, size_t{3}}) {
    const Parsed p = parse(bytes, piece);
    ASSERT_EQ(p.result, RequestParser::Result::Done) << piece << " " << p.error.message;
    EXPECT_EQ(p.request.body, "Wikipedia in\r\n\r\nchunks.");
    EXPECT_EQ(p.left, 0u);
  }
}

TEST(RequestParser, PipelinedRequestsLeaveTheNextOnesBytes) {
  const std::string one = "GET /health HTTP/1.1\r\nHost: a\r\n\r\n";
  const Parsed p = parse(one + "\r\n" + one);
  ASSERT_EQ(p.result, RequestParser::Result::Done);
  EXPECT_EQ(p.request.path, "/health");
  EXPECT_EQ(p.left, one.size() + 2);
  // The blank line before a request line is skipped (RFC 9112 section 2.2).
  EXPECT_EQ(parse("\r\n" + one).result, RequestParser::Result::Done);
}

TEST(RequestParser, ConnectionHeaderAndVersionDecideKeepAlive) {
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n").request.keep_alive());
  EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").request.keep_alive());
  EXPECT_TRUE(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").request.keep_alive());
  EXPECT_EQ(parse("GET http://example.com/v1/models HTTP/1.1\r\nHost: a\r\n\r\n").request.path, "/v1/models");
}

TEST(RequestParser, ExpectContinueIsSeenOnTheHead) {
  RequestParser parser(ParseLimits{});
  const std::string head = kPost + "Content-Length: 2\r\nExpect: 100-continue\r\n\r\n";
  size_t used = 0;
  ASSERT_EQ(parser.feed(head, used), RequestParser::Result::Head);
  EXPECT_EQ(used, head.size());
  EXPECT_TRUE(parser.expects_continue());
  EXPECT_TRUE(parser.expects_body());
  EXPECT_EQ(parser.feed("{}", used), RequestParser::Result::Done);
}

struct Refused {
  std::string name;
  std::string bytes;
  int status;
};

class RequestParserRefuses : public testing::TestWithParam<Refused> {};

TEST_P(RequestParserRefuses, WithItsStatus) {
  ParseLimits limits;
  limits.max_body_bytes = 1000;
  for (const size_t piece : {SIZE_MAX, size_t{1}}) {
    const Parsed p = parse(GetParam().bytes, piece, limits);
    ASSERT_EQ(p.result, RequestParser::Result::Failed) << GetParam().name << " piece " << piece;
    EXPECT_EQ(p.error.status, GetParam().status) << p.error.message;
    EXPECT_FALSE(p.error.message.empty());
  }
}

const std::string kHost = "POST / HTTP/1.1\r\nHost: a\r\n";

INSTANTIATE_TEST_SUITE_P(
    Framing, RequestParserRefuses,
    testing::Values(
        Refused{"TwoDifferentContentLengths", kHost + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400},
        Refused{"TwoEqualContentLengths", kHost + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400},
        Refused{"SignedContentLength", kHost + "Content-Length: +5\r\n\r\nhello", 400},
        Refused{"ListContentLength", kHost + "Content-Length: 5, 5\r\n\r\nhello", 400},
        Refused{"HexContentLength", kHost + "Content-Length: 0x5\r\n\r\nhello", 400},
        Refused{"HugeContentLength", kHost + "Content-Length: 99999999999999999999999\r\n\r\n", 400},
        Refused{"ContentLengthOverTheLimit", kHost + "Content-Length: 1001\r\n\r\n", 413},
        Refused{"ContentLengthAndChunked", kHost + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                400},
        Refused{"GzipTransferCoding", kHost + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400},
        Refused{"UnknownTransferCoding", kHost + "Transfer-Encoding: xchunked\r\n\r\n", 400},
        Refused{"TwoTransferEncodings", kHost + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
        Refused{"ChunkedInHttp10", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
        Refused{"ContentEncodingGzip", kHost + "Content-Encoding: gzip\r\nContent-Length: 2\r\n\r\nxx", 415},
        Refused{"ChunkedBodyOverTheLimit",
                kHost + "Transfer-Encoding: chunked\r\n\r\n200\r\n" + std::string(512, 'x') + "\r\n200\r\n" +
                    std::string(512, 'x') + "\r\n0\r\n\r\n",
                413},
        Refused{"ChunkSizeNotHex", kHost + "Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
        Refused{"ChunkSizeNegative", kHost + "Transfer-Encoding: chunked\r\n\r\n-1\r\n", 400},
        Refused{"ChunkSizeHuge", kHost + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n", 413},
        Refused{"ChunkDataWithoutCrlf", kHost + "Transfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n", 400},
        Refused{"ChunkLineBareLf", kHost + "Transfer-Encoding: chunked\r\n\r\n2\nab\r\n0\r\n\r\n", 400},
        Refused{"BareLfInHead", "GET / HTTP/1.1\nHost: a\n\n", 400},
        Refused{"BareCrInHeaderValue", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\rc\r\n\r\n", 400},
        Refused{"NulInHeaderValue", std::string("GET / HTTP/1.1\r\nHost: a\r\nX-A: b") + '\0' + "c\r\n\r\n", 400},
        Refused{"HeaderWithoutColon", "GET / HTTP/1.1\r\nHost: a\r\nNoColonHere\r\n\r\n", 400},
        Refused{"SpaceBeforeColon", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length : 5\r\n\r\n", 400},
        Refused{"FoldedHeader", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n  c\r\n\r\n", 400},
        Refused{"NoHost", "GET / HTTP/1.1\r\n\r\n", 400},
        Refused{"TwoHosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
        Refused{"Http2", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 400},
        Refused{"GarbageLine", std::string("\x16\x03\x01\x02\x00\x01\r\n\r\n", 10), 400},
        Refused{"TwoSpaces", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
        Refused{"TargetWithoutSlash", "GET abc HTTP/1.1\r\nHost: a\r\n\r\n", 400},
        Refused{"TargetTooLong", "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", 414},
        Refused{"HeadTooLarge", "GET / HTTP/1.1\r\nHost: a\r\nX-A: " + std::string(17000, 'a') + "\r\n\r\n", 431},
        Refused{"TooManyHeaders",
                [] {
                  std::string s = "GET / HTTP/1.1\r\nHost: a\r\n";
                  for (int i = 0; i < 101; ++i) s += "X-" + std::to_string(i) + ": 1\r\n";
                  return s + "\r\n";
                }(),
                431},
        Refused{"UnknownExpectation", kHost + "Expect: 200-ok\r\n\r\n", 417}),
    [](const testing::TestParamInfo<Refused>& info) { return info.param.name; });

}  // namespace
}  // namespace nanoserve::http
