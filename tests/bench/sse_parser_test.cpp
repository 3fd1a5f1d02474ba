// The SSE parser against the event stream format (WHATWG HTML, "server-sent events"):
// events end at a blank line, data lines join with "\n", CRLF works, comments and other
// fields are skipped, and bytes may arrive split anywhere.
#include <gtest/gtest.h>

#include "bench/sse_parser.h"

namespace nanoserve::bench {
namespace {

using Events = std::vector<std::string>;

TEST(SseParser, EventsEndAtABlankLine) {
  SseParser p;
  EXPECT_EQ(p.feed("data: {\"a\":1}\n\ndata: [DONE]\n\n"), (Events{"{\"a\":1}", "[DONE]"}));
  EXPECT_FALSE(p.has_partial_event());
}

TEST(SseParser, BytesSplitAnywhereGiveTheSameEvents) {
  const std::string stream = "data: one\n\n: a comment\ndata:two\r\n\r\nevent: x\ndata: three\ndata: lines\n\n";
  const Events whole = SseParser().feed(stream);
  EXPECT_EQ(whole, (Events{"one", "two", "three\nlines"}));
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    SseParser p;
    Events got = p.feed(stream.substr(0, cut));
    for (auto& e : p.feed(stream.substr(cut))) got.push_back(e);
    EXPECT_EQ(got, whole) << "split at " << cut;
  }
  SseParser bytewise;
  Events got;
  for (char c : stream)
    for (auto& e : bytewise.feed(std::string(1, c))) got.push_back(e);
  EXPECT_EQ(got, whole);
}

TEST(SseParser, AnUnfinishedEventWaits) {
  SseParser p;
  EXPECT_TRUE(p.feed("data: partial").empty());
  EXPECT_TRUE(p.has_partial_event());
  EXPECT_TRUE(p.feed("\n").empty());
  EXPECT_EQ(p.feed("\n"), Events{"partial"});
}

TEST(SseParser, BlankLinesWithoutDataMakeNoEvent) {
  EXPECT_TRUE(SseParser().feed("\n\n: keep-alive\n\nid: 3\n\n").empty());
  EXPECT_EQ(SseParser().feed("data\n\n"), Events{""});  // a field with no colon has an empty value
}

}  // namespace
}  // namespace nanoserve::bench
